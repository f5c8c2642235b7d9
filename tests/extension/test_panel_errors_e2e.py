"""Errors in the side panel that say what to do: real extension and host, a scripted
model on 127.0.0.1 that turns requests away (529, 401) before it answers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from tests.support import StaticServer
from tests.support.agent import (
    API_KEY,
    Refusal,
    ScriptedModel,
    open_agent,
    send_message,
    serve_model,
    use_model,
)
from tests.support.e2e import ExtensionBrowser, kill_process, launch_with_extension

pytestmark = pytest.mark.browser

NEW_KEY = "sk-test-the-fixed-key"


@pytest.fixture
async def ext(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[ExtensionBrowser]:
    monkeypatch.setenv("TRIMTAB_LOG_DIR", str(tmp_path / "logs"))
    async with launch_with_extension(tmp_path / "profile") as browser:
        yield browser


@attrs.define
class _Wrapped:
    """The scripted model behind a provider that misbehaves in one way (``answer``)."""

    inner: ScriptedModel
    port: int = 0
    requests: list[tuple[dict[str, str], dict[str, Any]]] = attrs.field(factory=list)
    responses: list[dict[str, Any]] = attrs.field(factory=list)

    @property
    def provider(self) -> str:
        return self.inner.provider

    @property
    def base_url(self) -> str:
        self.inner.port = self.port
        return self.inner.base_url


@attrs.define
class Overloaded(_Wrapped):
    """The scripted model, overloaded (HTTP 529, Retry-After: 1) for its first calls."""

    refusals: int = 0

    def answer(self, body: dict[str, Any]) -> dict[str, Any] | Refusal:
        if self.refusals:
            self.refusals -= 1
            return Refusal(
                529,
                "Overloaded",
                {"Retry-After": "1", "Access-Control-Expose-Headers": "Retry-After"},
            )
        return self.inner.answer(body)


@attrs.define
class Keyed(_Wrapped):
    """The scripted model, which refuses (HTTP 401) any key but ``NEW_KEY``."""

    def answer(self, body: dict[str, Any]) -> dict[str, Any] | Refusal:
        if self.requests[-1][0].get("x-api-key") != NEW_KEY:
            return Refusal(401, "invalid x-api-key")
        return self.inner.answer(body)


async def test_an_overloaded_provider_is_retried_visibly(
    ext: ExtensionBrowser, pages_server: StaticServer
) -> None:
    """Two 529 answers are retried after the wait the provider asked, each retry shown
    in words ("retrying in 1 s, attempt k of 3"), and the task then completes."""
    async with trio.open_nursery() as nursery:
        model = await nursery.start(serve_model, Overloaded(ScriptedModel("anthropic"), refusals=2))
        panel, _ = await open_agent(ext, model, pages_server.url("e2e-agent-start.html"))
        run = await send_message(panel, "What is the forecast for Lisbon?")
        shown = await panel.evaluate(
            "[...document.querySelectorAll('#steps li.retry')].map((li) => li.textContent)"
        )
        nursery.cancel_scope.cancel()
    assert run.steps[-1]["kind"] == "done", run.steps
    assert "Forecast for Lisbon: sunny" in run.steps[-1]["text"]
    assert shown == [
        "The provider is busy (HTTP 529): retrying in 1 s, attempt 1 of 3.",
        "The provider is busy (HTTP 529): retrying in 1 s, attempt 2 of 3.",
    ]
    # The same request, sent three times: two refused, the third answered.
    assert len(model.requests) == len(model.responses) + 2
    assert model.requests[0][1] == model.requests[2][1]


async def test_a_refused_key_says_open_settings_and_reply_uses_the_fixed_one(
    ext: ExtensionBrowser, pages_server: StaticServer
) -> None:
    """A 401 ends the task with an "Open Settings" action that opens the settings at the
    key field; after the key is changed, Reply sends its next model call with the new
    key and the conversation goes on."""
    async with trio.open_nursery() as nursery:
        model = await nursery.start(serve_model, Keyed(ScriptedModel("anthropic")))
        panel, _ = await open_agent(ext, model, pages_server.url("e2e-agent-start.html"))
        first = await send_message(panel, "What is the forecast for Lisbon?")
        action = await panel.evaluate(
            """(() => {
                const button = document.querySelector('#steps li.error button.step-action');
                if (!button) return null;
                const text = button.textContent;
                button.click();
                return {text, open: document.getElementById('settings').open,
                        focused: document.activeElement.id,
                        run: document.getElementById('run').textContent};
            })()"""
        )
        await use_model(ext, model, apiKey=NEW_KEY)
        second = await send_message(panel, "Try again, please.")
        nursery.cancel_scope.cancel()
    error = first.steps[-1]
    assert error["kind"] == "error", first.steps
    assert error["action"] == "settings"
    assert "refused the API key" in error["message"]
    assert "HTTP 401" in error["message"]
    assert action == {"text": "Open Settings", "open": True, "focused": "api-key", "run": "Reply"}
    keys = [headers.get("x-api-key") for headers, _ in model.requests]
    assert keys[0] == API_KEY
    assert set(keys[1:]) == {NEW_KEY}
    assert second.steps[-1]["kind"] == "done", second.steps
    # The reply carried on the same conversation: the first request's task is in it.
    said = model.inner.person_said(model.requests[1][1]["messages"])
    assert said[0][1].endswith("What is the forecast for Lisbon?")
    assert said[-1][1] == "Try again, please."


async def test_a_chrome_page_disables_run_and_share_and_leaves_no_stale_xml(
    ext: ExtensionBrowser, pages_server: StaticServer
) -> None:
    """On a chrome:// tab, Inspect shows the reason and none of the previous tab's title,
    figures or XML; Run and Share are disabled with the reason beside them, and a task
    submitted anyway spends no model call."""
    async with trio.open_nursery() as nursery:
        model = await nursery.start(serve_model, ScriptedModel("anthropic"))
        panel, _ = await open_agent(ext, model, pages_server.url("e2e-agent-start.html"))
        await panel.evaluate("trimtabPanel.showView('inspect'); trimtabPanel.refresh()")
        before = await panel.evaluate(
            "({xml: trimtabPanel.state.xml.length, title: "
            "document.getElementById('inspect-tab').textContent})"
        )
        await ext.open_tab("chrome://version/")
        with trio.fail_after(20):
            while not await panel.evaluate("trimtabPanel.state.closed !== ''"):
                await trio.sleep(0.05)
            while await panel.evaluate("!document.getElementById('agents-share').disabled"):
                await trio.sleep(0.05)
        inspect = await panel.evaluate(
            """({error: document.getElementById('inspect-error').textContent,
                 errorShown: !document.getElementById('inspect-error').hidden,
                 title: document.getElementById('inspect-tab').textContent,
                 figures: document.querySelectorAll('#figures div').length,
                 xml: document.getElementById('xml').textContent,
                 stateXml: trimtabPanel.state.xml})"""
        )
        await panel.evaluate("trimtabPanel.showView('agent'); true")
        agent = await panel.evaluate(
            """({run: document.getElementById('run').disabled,
                 note: document.getElementById('closed-note').textContent,
                 noteShown: !document.getElementById('closed-note').hidden,
                 share: document.getElementById('agents-share').disabled,
                 shareWhy: document.getElementById('agents-share').title,
                 agentsNote: document.getElementById('agents-note').textContent})"""
        )
        await panel.evaluate(
            """document.getElementById('task').value = 'Read this page.';
            document.getElementById('task-form').requestSubmit(); true"""
        )
        with trio.fail_after(20):
            while not await panel.evaluate("trimtabPanel.state.steps.length"):
                await trio.sleep(0.05)
        steps = await panel.evaluate("trimtabPanel.state.steps")
        nursery.cancel_scope.cancel()
    assert before["xml"] > 0
    assert before["title"]
    reason = "Chrome does not let extensions read or act on its own pages"
    assert reason in inspect["error"]
    assert inspect["errorShown"]
    assert before["title"] not in inspect["title"]
    assert inspect == {**inspect, "figures": 0, "xml": "", "stateXml": ""}
    assert agent["run"]
    assert agent["share"]
    assert agent["noteShown"]
    assert reason in agent["note"]
    assert reason in agent["shareWhy"]
    assert reason in agent["agentsNote"]
    assert [s["kind"] for s in steps] == ["error"]
    assert reason in steps[0]["message"]
    assert model.requests == []


async def test_the_host_disconnected_error_clears_itself_on_reconnect(
    ext: ExtensionBrowser, pages_server: StaticServer
) -> None:
    """When the host dies, Inspect says the tab was lost "(host_disconnected)"; once the
    panel finds the host again the error is gone and the XML is back, with no click,
    even while the person looks at the Agent view."""
    _, tab = await ext.open_tab(pages_server.url("e2e-agent-start.html"))
    await ext.wait_loaded(tab)
    panel = await ext.open_side_panel()
    with trio.fail_after(45):
        while not await panel.evaluate("trimtabPanel.state.xml.length"):
            await trio.sleep(0.05)
    await panel.evaluate("trimtabPanel.showView('agent'); true")
    [pid] = ext.host_pids()
    kill_process(pid)
    with trio.fail_after(45):
        while "host_disconnected" not in await panel.evaluate("trimtabPanel.state.inspectError"):
            await trio.sleep(0.05)
        while await panel.evaluate("trimtabPanel.state.host?.again !== true"):
            await trio.sleep(0.05)
        while await panel.evaluate("trimtabPanel.state.inspectError"):
            await trio.sleep(0.05)
    shown = await panel.evaluate(
        """({error: document.getElementById('inspect-error').hidden,
             xml: trimtabPanel.state.xml.length,
             status: document.getElementById('host-status').textContent})"""
    )
    assert shown["error"] is True
    assert shown["xml"] > 0
    assert shown["status"] == "host connected again"


async def test_a_host_not_installed_shows_the_command_to_run(
    ext: ExtensionBrowser, pages_server: StaticServer
) -> None:
    """With the host's registration gone, the panel says the host is not installed and
    shows `.venv/bin/trimtab install` with a Copy button; once it is registered again
    the panel finds the host by itself and the help goes away."""
    _, tab = await ext.open_tab(pages_server.url("e2e-agent-start.html"))
    await ext.wait_loaded(tab)
    panel = await ext.open_side_panel()
    [manifest] = list(ext.profile.rglob("NativeMessagingHosts/com.trimtab.host.json"))
    saved = manifest.read_bytes()
    manifest.unlink()
    [pid] = ext.host_pids()
    kill_process(pid)
    help_shown = "!document.getElementById('host-help').hidden"
    with trio.fail_after(45):
        while not await panel.evaluate(help_shown):
            await trio.sleep(0.05)
    shown = await panel.evaluate(
        """({why: document.getElementById('host-help-why').textContent,
             command: document.getElementById('host-command').textContent,
             copy: document.getElementById('host-copy').textContent,
             status: document.getElementById('host-status').textContent})"""
    )
    manifest.write_bytes(saved)
    with trio.fail_after(45):
        while await panel.evaluate(help_shown):
            await trio.sleep(0.05)
    status = await panel.evaluate("document.getElementById('host-status').textContent")
    assert shown == {
        "why": "The Trimtab host is not installed for this browser.",
        "command": ".venv/bin/trimtab install",
        "copy": "Copy",
        "status": "host disconnected, retrying…",
    }
    assert status == "host connected again"
