"""Fault paths through the real extension and the real host: a host killed mid-action or
while a request it holds waits for the person, a browser killed mid-capture, a tab
closed mid-action, a service worker restarted mid-task, and a page already hung before
the first request."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import trio

from tests.extension.test_consent_e2e import PlannedModel, Step, _id_of
from tests.support import TEST_PAGES, StaticServer
from tests.support.agent import run_task, send_message, serve_model, submit_message
from tests.support.e2e import (
    WORKER_PATH,
    ExtensionBrowser,
    _attach,
    kill_process,
    launch_with_extension,
)
from tests.support.recorder import Recorder, serve_recorder

pytestmark = pytest.mark.browser


@pytest.fixture
async def ext(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[ExtensionBrowser]:
    monkeypatch.setenv("TRIMTAB_LOG_DIR", str(tmp_path / "logs"))
    async with launch_with_extension(tmp_path / "profile") as browser:
        yield browser


def hold(seen: str) -> tuple[str, dict[str, Any]]:
    return "click", {"id": _id_of(seen, r'<button id="[^"]+">Hold to record')}


async def releasing(ext: ExtensionBrowser, tab_id: int) -> bool:
    """Whether the extension's relay still holds the gone host's input in the tab or
    has not yet detached the gone host's session from it (a new host may attach right
    after, so "attached" alone says nothing)."""
    return bool(
        await ext.worker.evaluate(
            f"trimtab.relay.held.has({tab_id}) || trimtab.relay.releasing.has({tab_id})"
        )
    )


async def test_host_killed_mid_click(ext: ExtensionBrowser, pages_server: StaticServer) -> None:
    """The host killed while its mouse press is in flight: the button is released in the
    page, the gone host's session is detached, and the next step of the task works."""
    plan: list[Step] = [
        lambda seen: ("capture_snapshot", {}),
        hold,
        lambda seen: ("capture_snapshot", {}),
    ]
    url = pages_server.url("consent-faults.html")
    async with trio.open_nursery() as nursery:
        model: PlannedModel = await nursery.start(serve_model, PlannedModel(plan))
        saved = {"provider": "anthropic", "baseUrl": model.base_url, "model": "scripted",
                 "apiKey": "sk-test", "askBeforeSubmit": True}  # fmt: skip
        await ext.worker.evaluate(f"chrome.storage.local.set({{settings: {json.dumps(saved)}}})")
        target_id, tab_id = await ext.open_tab(url)
        await ext.wait_loaded(tab_id)
        page = await ext.attach(target_id)
        panel = await ext.open_side_panel()
        await panel.evaluate("trimtabPanel.showView('agent'); true")
        await submit_message(panel, "Start recording.")
        # The press is on its way to the page (whose handler takes 4 s): pull the plug.
        while not await ext.worker.evaluate(f"trimtab.relay.held.has({tab_id})"):
            await trio.sleep(0.02)
        [pid] = ext.host_pids()
        kill_process(pid)
        while await releasing(ext, tab_id):
            await trio.sleep(0.05)
        while "mouseup" not in await page.evaluate("window.events"):
            await trio.sleep(0.05)
        events = await page.evaluate("window.events")
        ended = "trimtabPanel.state.steps.some((s) => s.kind === 'error')"
        while not await panel.evaluate(ended):
            await trio.sleep(0.05)
        # The same conversation goes on with a new host, which attaches again.
        run = await send_message(panel, "Go on.")
        nursery.cancel_scope.cancel()
    assert events.count("mousedown") == events.count("mouseup") == 1, events
    assert run.steps[-1]["kind"] == "done", run.steps
    last = [s for s in run.steps if s["kind"] == "tool"][-1]
    assert last["name"] == "capture_snapshot"
    assert not last["isError"], last
    assert pid not in ext.host_pids()


async def test_browser_killed_mid_capture(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pages_server: StaticServer
) -> None:
    """The browser killed while the host captures a big page: the host exits on its own."""
    monkeypatch.setenv("TRIMTAB_LOG_DIR", str(tmp_path / "logs"))
    async with launch_with_extension(tmp_path / "profile") as ext:
        _, tab_id = await ext.open_tab(pages_server.url("consent-faults.html?big=20000"))
        await ext.wait_loaded(tab_id)
        assert await ext.worker.evaluate("trimtab.host.request({type: 'ping'})")
        [pid] = ext.host_pids()
        await ext.worker.evaluate(
            f"trimtab.host.request({{type: 'snapshot', tab: {tab_id}}}).catch(() => 0); true"
        )
        await trio.sleep(0.5)  # the capture is under way
        os.kill(ext.browser.pid, signal.SIGKILL)
        while _alive(pid):
            await trio.sleep(0.1)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie has exited; its parent (the dead browser's reaper) collects it.
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        return stat.read().rsplit(")", 1)[-1].split()[0] != "Z"


async def test_tab_closed_mid_click(ext: ExtensionBrowser, pages_server: StaticServer) -> None:
    """The tab closed while a click is in flight: the agent's step fails plainly, the task
    ends, and the host goes on answering."""
    plan: list[Step] = [lambda seen: ("capture_snapshot", {}), hold]
    async with trio.open_nursery() as nursery:
        model: PlannedModel = await nursery.start(serve_model, PlannedModel(plan))
        saved = {"provider": "anthropic", "baseUrl": model.base_url, "model": "scripted",
                 "apiKey": "sk-test", "askBeforeSubmit": True}  # fmt: skip
        await ext.worker.evaluate(f"chrome.storage.local.set({{settings: {json.dumps(saved)}}})")
        target_id, tab_id = await ext.open_tab(pages_server.url("consent-faults.html"))
        await ext.wait_loaded(tab_id)
        panel = await ext.open_side_panel()
        await panel.evaluate("trimtabPanel.showView('agent'); true")
        await submit_message(panel, "Start recording.")
        while not await ext.worker.evaluate(f"trimtab.relay.held.has({tab_id})"):
            await trio.sleep(0.02)
        await ext.browser.send("Target.closeTarget", {"targetId": target_id})
        ended = "trimtabPanel.state.steps.some((s) => s.kind === 'done' || s.kind === 'error')"
        while not await panel.evaluate(ended):
            await trio.sleep(0.05)
        steps = await panel.evaluate("trimtabPanel.state.steps.map(({content, ...s}) => s)")
        pong = await ext.worker.evaluate("trimtab.host.request({type: 'ping'})")
        nursery.cancel_scope.cancel()
    clicks = [s for s in steps if s["kind"] == "tool" and s["name"] == "click"]
    errors = [s for s in steps if s["kind"] == "error"]
    assert (clicks and clicks[0]["isError"]) or errors, steps
    assert pong["pong"] is True


async def test_worker_restarted_mid_task(ext: ExtensionBrowser, pages_server: StaticServer) -> None:
    """The service worker stopped between two steps: the next step reconnects, the tab
    it had attached is taken over ("already attached"), and the task completes."""
    stopped = trio.Event()

    def after_restart(seen: str) -> tuple[str, dict[str, Any]] | None:
        # The first task ends here ("Done."); its follow-up takes the step.
        return ("capture_snapshot", {}) if stopped.is_set() else None

    plan: list[Step] = [lambda seen: ("capture_snapshot", {}), after_restart]
    async with trio.open_nursery() as nursery:
        model: PlannedModel = await nursery.start(serve_model, PlannedModel(plan))
        run = await run_task(ext, model, pages_server.url("consent-faults.html"), "Look.")
        assert run.steps[-1]["kind"] == "done", run.steps
        worker_url = f"chrome-extension://{ext.extension_id}/{WORKER_PATH}"
        await _stop_worker(ext)
        stopped.set()
        again = await send_message(run.panel, "Look again.")
        worker_id = await ext.wait_for_target("service_worker", worker_url)
        worker = await _attach(ext.browser, worker_id)
        attached = await worker.evaluate("trimtab.relay.attachedTabs()")
        nursery.cancel_scope.cancel()
    assert again.steps[-1]["kind"] == "done", again.steps
    tools = [s for s in again.steps if s["kind"] == "tool"]
    assert tools[-1]["name"] == "capture_snapshot"
    assert not tools[-1]["isError"], tools[-1]
    assert len(attached) == 1


async def _stop_worker(ext: ExtensionBrowser) -> None:
    """Stop the extension's service worker and return once it is gone.

    Chrome may start a new worker before a look at its targets finds none (the loop
    that waited for that ran until the test's timeout, once in about 20 runs on a
    loaded machine), so the sign is the end of our session to the stopped one:
    Chrome reports that worker as crashed, or the session as detached.
    """
    session = ext.worker.session_id
    ends = ("Inspector.targetCrashed", "Inspector.detached", "Target.detachedFromTarget")
    async with ext.browser.listen(*ends) as ended:
        await ext.browser.send("Target.closeTarget", {"targetId": ext.worker.target_id})
        async for event in ended:
            if session in (event.session_id, event.params.get("sessionId")):
                return


async def test_page_hung_before_the_first_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pages_server: StaticServer
) -> None:
    """A page stuck in a script before the host ever touched it: the first snapshot
    request is answered page_unresponsive at the host's page timeout (here
    TRIMTAB_PAGE_TIMEOUT, which Chrome hands to the host it starts), not left to the
    extension's own 60 s timeout."""
    monkeypatch.setenv("TRIMTAB_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.setenv("TRIMTAB_PAGE_TIMEOUT", "5")
    async with launch_with_extension(tmp_path / "profile") as ext:
        _, tab_id = await ext.open_tab(pages_server.url("consent-faults.html?hang=1"))
        await ext.wait_loaded(tab_id)
        await trio.sleep(0.5)  # the page's load handler has started its endless loop
        error = await ext.worker.evaluate(
            f"trimtab.host.request({{type: 'snapshot', tab: {tab_id}}})"
            ".then(() => 'answered', (e) => `${e.code}: ${e.message}`)"
        )
    assert error.startswith("page_unresponsive: "), error
    assert "did not answer within 5 s" in error, error


async def test_host_killed_while_a_request_is_held(
    ext: ExtensionBrowser, nursery: trio.Nursery
) -> None:
    """The host killed while the POST a click sent is held for the person's answer: the
    extension fails the request before it detaches (detached, Chrome would send it on),
    so the shop never gets it and the page sees it fail."""
    site: Recorder = await nursery.start(serve_recorder, TEST_PAGES)
    plan: list[Step] = [
        lambda seen: ("capture_snapshot", {}),
        lambda seen: ("click", {"id": _id_of(seen, r'<button id="[^"]+">1-Click buy')}),
    ]
    async with trio.open_nursery() as inner:
        model: PlannedModel = await inner.start(serve_model, PlannedModel(plan))
        saved = {"provider": "anthropic", "baseUrl": model.base_url, "model": "scripted",
                 "apiKey": "sk-test", "askBeforeSubmit": True}  # fmt: skip
        await ext.worker.evaluate(f"chrome.storage.local.set({{settings: {json.dumps(saved)}}})")
        target_id, tab_id = await ext.open_tab(site.url("127.0.0.1", "guard-shop.html"))
        await ext.wait_loaded(tab_id)
        page = await ext.attach(target_id)
        panel = await ext.open_side_panel()
        await panel.evaluate("trimtabPanel.showView('agent'); true")
        await submit_message(panel, "Buy it.")
        # The POST is paused and the person asked: nobody answers; pull the plug.
        while not await ext.worker.evaluate("trimtab.questions.open.size > 0"):
            await trio.sleep(0.05)
        assert await ext.worker.evaluate(f"trimtab.relay.paused.has({tab_id})")
        [pid] = ext.host_pids()
        kill_process(pid)
        status = "document.getElementById('status').textContent"
        while await page.evaluate(status) == "Nothing happened yet":
            await trio.sleep(0.05)
        inner.cancel_scope.cancel()
    assert await page.evaluate(status) == "The purchase failed (TypeError)"
    assert site.sent("/api/buy") == []
