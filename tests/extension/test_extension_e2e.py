"""End to end with the real extension in headless Chromium.

Two kinds of host sit behind the extension here: the real ``trimtab-host`` (ping,
chunked replies, reconnection, the side panel) and a `FakeHost` the test plays itself
over a bridge (the CDP relay, where the test must decide the commands).
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import trio

from pycdp_bridge import PageModel, PageTarget, RelayHub, capture
from tests.support import StaticServer, serve_static
from tests.support.e2e import (
    ARTIFACTS,
    ExtensionBrowser,
    FakeHost,
    kill_process,
    launch_with_extension,
    serve_fake_host,
    write_bridge,
)
from tests.support.png import Image, decode_png
from tests.support.xmltree import ids_shown
from trimtab.install import host_launcher
from trimtab.tab import SnapshotMemory

pytestmark = pytest.mark.browser

PAGES = Path(__file__).resolve().parents[1] / "pages"
#: Seconds for the side panel to show what the worker learnt (its pings back off to
#: 5 s apart, and a host starts in seconds on a loaded machine).
TIMEOUT = 45


@pytest.fixture
async def real(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[ExtensionBrowser]:
    # Chrome hands its environment to the host: logs into tmp, and the test-only
    # debug_* requests (chunking, slow requests) switched on.
    monkeypatch.setenv("TRIMTAB_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.setenv("TRIMTAB_HOST_DEBUG", "1")
    async with launch_with_extension(tmp_path / "profile") as ext:
        yield ext


@pytest.fixture
async def faked(tmp_path: Path) -> AsyncIterator[tuple[ExtensionBrowser, FakeHost]]:
    async with trio.open_nursery() as nursery:
        host: FakeHost = await nursery.start(serve_fake_host)
        bridge = write_bridge(tmp_path, host.port)
        async with launch_with_extension(tmp_path / "profile", host_path=bridge) as ext:
            with trio.fail_after(30):
                await host.connected.wait()
            yield ext, host
        nursery.cancel_scope.cancel()


_BOX_JS = (
    "(() => { const r = document.querySelector('%s').getBoundingClientRect();"
    " return {x: r.x, y: r.y, width: r.width, height: r.height, scale: 1}; })()"
)


async def _shot(page: PageTarget, box: dict[str, float]) -> Image:
    """The pixels inside one box of the page (whole pixels, one in from each edge).

    The whole viewport is captured and cropped: clipped screenshots of fractional
    boxes are not rendered the same way twice.
    """
    shot = await page.send("Page.captureScreenshot", {"format": "png"})
    image = decode_png(base64.b64decode(shot["data"]))
    left, top = math.ceil(box["x"]) + 1, math.ceil(box["y"]) + 1
    right = math.floor(box["x"] + box["width"]) - 1
    bottom = math.floor(box["y"] + box["height"]) - 1
    rows = tuple(row[left:right] for row in image.rows[top:bottom])
    return Image(right - left, bottom - top, rows)


def _shape(model: PageModel) -> list[tuple[Any, ...]]:
    """What must not depend on the transport: every node's type, name, attributes, text."""
    return [
        (n.node_type, n.name, sorted(n.attributes.items()), n.text, n.input_value, n.checked)
        for n in model.nodes
    ]


# --------------------------------------------------------------------------- real host


async def test_ping_through_the_extension(real: ExtensionBrowser) -> None:
    """A request from the service worker reaches the real host and its reply comes back."""
    reply = await real.worker.evaluate("trimtab.host.request({type: 'ping'})")
    assert reply["pong"] is True
    assert reply["version"]


async def test_chunked_reply_is_reassembled(real: ExtensionBrowser) -> None:
    """A reply over Chrome's 1 MB message limit arrives as chunks and is rebuilt whole."""
    size = 2_500_000
    got = await real.worker.evaluate(
        f"""trimtab.host.request({{type: 'debug_blob', size: {size}, alphabet: 'abc€'}})
            .then((r) => [r.blob.length, r.blob.slice(0, 8), r.blob.slice(-4)])"""
    )
    expected = ("abc€" * (size // 4 + 1))[:size]
    assert got == [size, expected[:8], expected[-4:]]


async def test_host_error_reply_keeps_its_code(real: ExtensionBrowser) -> None:
    """An error reply from the host rejects the request with the host's code and message."""
    got = await real.worker.evaluate(
        "trimtab.host.request({type: 'no_such_request'})"
        ".then(() => null, (e) => [e.code, e.message])"
    )
    assert got[0] == "unknown_type"
    assert "no_such_request" in got[1]


async def test_host_killed_mid_session_reconnects(real: ExtensionBrowser) -> None:
    """When the host dies, requests in flight fail plainly and the next request succeeds."""
    assert await real.worker.evaluate("trimtab.host.request({type: 'ping'}).then((r) => r.pong)")
    [pid] = real.host_pids()
    await real.worker.evaluate(
        """globalThis.inFlight = trimtab.host.request({type: 'debug_sleep', seconds: 600})
            .then(() => 'answered', (e) => e.code); true"""
    )
    kill_process(pid)
    assert await real.worker.evaluate("globalThis.inFlight") == "host_unavailable"
    # The worker reconnects on its own (backoff); wait for that, then use it.
    while not await real.worker.evaluate("trimtab.host.status().connects >= 2"):
        await trio.sleep(0.05)
    reply = await real.worker.evaluate("trimtab.host.request({type: 'ping'})")
    new_pids = real.host_pids()
    assert reply["pong"] is True
    assert new_pids
    assert pid not in new_pids


async def test_side_panel_opens_with_a_trusted_click(real: ExtensionBrowser) -> None:
    """The real side panel opens headless, reaches the host, and its screenshot is saved."""
    panel = await real.open_side_panel()
    while (await panel.evaluate("document.getElementById('host-status').className")) != (
        "status ok"
    ):
        await trio.sleep(0.05)
    views = await panel.evaluate(
        "[...document.querySelectorAll('[role=tab]')].map((t) => t.textContent)"
    )
    shot = await panel.send("Page.captureScreenshot", {"format": "png"})
    assert views == ["Inspect", "Agent", "Routines"]
    png = base64.b64decode(shot["data"])
    assert png.startswith(b"\x89PNG")
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "sidepanel.png").write_bytes(png)


async def _handler_missing(ext: ExtensionBrowser, kind: str) -> bool:
    code = await ext.worker.evaluate(
        f"trimtab.host.request({{type: '{kind}'}}).then(() => null, (e) => e.code)"
    )
    return bool(code == "unknown_type")


async def test_inspect_shows_the_xml_and_highlights(
    real: ExtensionBrowser, pages_server: StaticServer
) -> None:
    """Inspect renders the active tab's XML, and hovering an id puts the overlay on it."""
    for kind in ("snapshot", "highlight"):
        if await _handler_missing(real, kind):
            pytest.skip(reason=f"the host has no {kind!r} handler yet")
    target_id, tab_id = await real.open_tab(pages_server.url("e2e-relay.html"))
    await real.wait_loaded(tab_id)
    panel = await real.open_side_panel()
    await panel.evaluate("trimtabPanel.refresh()")
    state = await panel.evaluate(
        "({xml: trimtabPanel.state.xml, tab: trimtabPanel.state.tab.id,"
        " error: trimtabPanel.state.inspectError,"
        " ids: [...document.querySelectorAll('#xml .eid')].map((e) => e.dataset.eid),"
        " regions: document.querySelectorAll('#xml details.region').length})"
    )
    assert state["error"] == ""
    assert state["tab"] == tab_id
    assert "Order a sandwich" in state["xml"]
    assert state["ids"], "the XML view shows no element ids"
    eid = state["ids"][0]
    page = await real.attach(target_id)
    link_box = await page.evaluate(_BOX_JS % "a")
    # The link next to it, on the same line (the overlay's info label goes below).
    far_box = await page.evaluate(_BOX_JS % "a:nth-of-type(2)")
    before_link = await _shot(page, link_box)
    before_far = await _shot(page, far_box)
    # A person clicks the id in the panel; the panel asks the host to highlight.
    await panel.evaluate(
        f"""document.querySelector('#xml .eid[data-eid="{eid}"]')
            .dispatchEvent(new MouseEvent('click', {{bubbles: true}})); true"""
    )
    after_link = before_link
    while after_link.changed_share(before_link) < 0.25:
        await trio.sleep(0.05)
        after_link = await _shot(page, link_box)
    after_far = await _shot(page, far_box)
    highlighted = await real.worker.evaluate(
        f"trimtab.host.request({{type: 'highlight', tab: {tab_id}, eid: {json.dumps(eid)}}})"
    )
    ARTIFACTS.mkdir(exist_ok=True)
    shot = await page.send("Page.captureScreenshot", {"format": "png"})
    (ARTIFACTS / "inspect-highlight.png").write_bytes(base64.b64decode(shot["data"]))
    panel_shot = await panel.send("Page.captureScreenshot", {"format": "png"})
    (ARTIFACTS / "sidepanel-inspect.png").write_bytes(base64.b64decode(panel_shot["data"]))
    # The overlay tints the element's own box (the first id is the first link, "Next
    # page"; the loop above waited for it) and leaves the link next to it alone.
    assert after_far.changed_share(before_far) < 0.02
    assert highlighted["found"] is True


# --------------------------------------------------------------------------- relay


async def test_relay_capture_equals_direct_capture(
    faked: tuple[ExtensionBrowser, FakeHost], pages_server: StaticServer
) -> None:
    """A page captured through the extension's chrome.debugger relay equals a direct capture."""
    ext, host = faked
    hub = RelayHub(host.send)
    host.relay = hub.feed
    target_id, tab_id = await ext.open_tab(pages_server.url("e2e-relay.html"))
    await ext.wait_loaded(tab_id)
    relayed = await capture(hub.target(tab_id))
    attached = await ext.browser.send(
        "Target.attachToTarget", {"targetId": target_id, "flatten": True}
    )
    direct = await capture(PageTarget(ext.browser, target_id, attached["sessionId"]))
    assert relayed.url == direct.url == pages_server.url("e2e-relay.html")
    assert relayed.title == direct.title == "Relay fixture"
    assert _shape(relayed) == _shape(direct)
    assert any(n.text.strip() == "Order a sandwich" for n in relayed.nodes)


async def _relay_and_direct_xml(ext: ExtensionBrowser, host: FakeHost, url: str) -> tuple[str, str]:
    """The first snapshot of one tab, taken through the extension's relay and directly."""
    hub = RelayHub(host.send)
    host.relay = hub.feed
    target_id, tab_id = await ext.open_tab(url)
    await ext.wait_loaded(tab_id)
    relayed = await SnapshotMemory(hub.target(tab_id)).snapshot()
    attached = await ext.browser.send(
        "Target.attachToTarget", {"targetId": target_id, "flatten": True}
    )
    page = PageTarget(ext.browser, target_id, attached["sessionId"])
    direct = await SnapshotMemory(page).snapshot()
    return relayed.xml, direct.xml


async def test_relay_gives_the_same_xml_as_the_direct_transport(
    faked: tuple[ExtensionBrowser, FakeHost], pages_server: StaticServer
) -> None:
    """A fixture page snapshotted through the extension relay gives the direct transport's XML."""
    ext, host = faked
    relayed, direct = await _relay_and_direct_xml(ext, host, pages_server.url("e2e-relay.html"))
    assert "Order a sandwich" in relayed
    assert relayed == direct


async def test_relay_gives_the_same_xml_on_a_corpus_page(
    faked: tuple[ExtensionBrowser, FakeHost], corpus: Path
) -> None:
    """A real corpus page snapshotted through the extension relay gives the direct XML."""
    ext, host = faked
    async with trio.open_nursery() as nursery:
        server: StaticServer = await nursery.start(serve_static, corpus)
        with trio.fail_after(90):
            relayed, direct = await _relay_and_direct_xml(
                ext, host, server.url("pages/ebay-home-2017/index.html")
            )
        nursery.cancel_scope.cancel()
    assert ids_shown(relayed) > 100  # a real page: hundreds of controls
    assert relayed == direct


async def test_relay_commands_events_and_errors(
    faked: tuple[ExtensionBrowser, FakeHost], pages_server: StaticServer
) -> None:
    """The relay attaches, runs commands, forwards events with the tab id, returns CDP errors."""
    ext, host = faked
    _, tab_id = await ext.open_tab(pages_server.url("e2e-relay.html"))
    await ext.wait_loaded(tab_id)
    assert await host.command({"type": "cdp_attach", "tab": tab_id}) == {
        "type": "cdp_result",
        "id": "c1",
        "result": {},
    }
    evaluated = await host.command(
        {
            "type": "cdp",
            "tab": tab_id,
            "session": None,
            "method": "Runtime.evaluate",
            "params": {"expression": "document.title", "returnByValue": True},
        }
    )
    refused = await host.command(
        {"type": "cdp", "tab": tab_id, "session": None, "method": "No.such", "params": {}}
    )
    await host.command({"type": "cdp", "tab": tab_id, "method": "Page.enable"})
    await host.command({"type": "cdp", "tab": tab_id, "method": "Page.reload", "params": {}})
    event = await host.next_message("cdp_event")
    while event["method"] != "Page.loadEventFired":
        event = await host.next_message("cdp_event")
    detached = await host.command({"type": "cdp_detach", "tab": tab_id})
    after = await host.command(
        {
            "type": "cdp",
            "tab": tab_id,
            "method": "Runtime.evaluate",
            "params": {"expression": "1"},
        }
    )
    assert evaluated["result"]["result"]["value"] == "Relay fixture"
    assert refused["error"]["code"] == -32601
    assert "No.such" in refused["error"]["message"]
    assert event["tab"] == tab_id
    assert event["session"] is None
    assert detached["result"] == {}
    assert "not attached" in after["error"]["message"]


async def test_tab_closed_reaches_host_and_side_panel(
    faked: tuple[ExtensionBrowser, FakeHost], pages_server: StaticServer
) -> None:
    """Closing a debugged tab sends cdp_detached to the host, and the side panel that showed
    it moves on to the tab Chrome shows next, whichever of the two news comes first."""
    ext, host = faked
    target_id, tab_id = await ext.open_tab(pages_server.url("e2e-relay.html"))
    await ext.wait_loaded(tab_id)
    await host.command({"type": "cdp_attach", "tab": tab_id})
    panel = await ext.open_side_panel()
    # The fake host never answers the panel's snapshot; the panel still knows its tab.
    while await panel.evaluate("trimtabPanel.state.shownTab") != tab_id:
        await trio.sleep(0.05)
    await ext.browser.send("Target.closeTarget", {"targetId": target_id})
    detached = await host.next_message("cdp_detached")
    active = "chrome.tabs.query({active: true, currentWindow: true}).then(([t]) => t?.id ?? null)"
    while (shown := await panel.evaluate("trimtabPanel.state.shownTab")) in (tab_id, None) or (
        shown != await panel.evaluate(active)
    ):
        await trio.sleep(0.05)
    error = await panel.evaluate("document.getElementById('inspect-error').textContent")
    attached = await ext.worker.evaluate("trimtab.relay.attachedTabs()")
    assert detached == {"type": "cdp_detached", "tab": tab_id, "reason": "target_closed"}
    assert "lost access" not in error
    assert tab_id not in attached


async def test_side_panel_finds_the_host_again_by_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pages_server: StaticServer
) -> None:
    """While the host cannot start, the side panel says so and "Share this tab" says why it
    did not share; once the host can start, the panel finds it without a Refresh, says
    "host connected again", and sharing works."""
    monkeypatch.setenv("TRIMTAB_LOG_DIR", str(tmp_path / "logs"))
    gate = tmp_path / "host-may-start"
    launcher = tmp_path / "gated-host"
    launcher.write_text(
        f'#!/bin/sh\n[ -e "{gate}" ] || exit 1\nexec "{host_launcher()}" "$@"\n', encoding="utf-8"
    )
    launcher.chmod(0o755)
    status = "document.getElementById('host-status').textContent"
    async with launch_with_extension(tmp_path / "profile", host_path=launcher) as ext:
        _, tab = await ext.open_tab(pages_server.url("e2e-relay.html"))
        await ext.wait_loaded(tab)
        panel = await ext.open_side_panel()
        with trio.fail_after(TIMEOUT):
            while not str(await panel.evaluate(status)).startswith("host disconnected"):
                await trio.sleep(0.05)
        await panel.evaluate("document.getElementById('agents-share').click(); true")
        note = "document.getElementById('agents-note')"
        with trio.fail_after(TIMEOUT):
            while not await panel.evaluate(f"{note}.classList.contains('error')"):
                await trio.sleep(0.05)
        refused = await panel.evaluate(f"{note}.textContent")
        assert refused.startswith("This tab was not shared: "), refused
        assert await ext.worker.evaluate("trimtab.agents.status().shared") == []
        gate.touch()
        with trio.fail_after(TIMEOUT):
            while await panel.evaluate(status) != "host connected again":
                await trio.sleep(0.05)
        await panel.evaluate("document.getElementById('agents-share').click(); true")
        # The worker counts the tab shared before the panel's share call returns (it
        # still stores the list and pushes it to the host): until then the note shows
        # the first click's error. Wait for the panel's own answer, not the worker's.
        with trio.fail_after(TIMEOUT):
            while not await ext.worker.evaluate("trimtab.agents.status().shared.length"):
                await trio.sleep(0.05)
            while await panel.evaluate(f"{note}.textContent") == refused:
                await trio.sleep(0.05)
        shared = await panel.evaluate(f"{note}.textContent")
        assert shared.startswith("Shared with outside agents"), shared


async def test_page_budget_limits_come_from_the_host(real: ExtensionBrowser) -> None:
    """The settings' page budget shows the host's default and keeps to the host's minimum,
    both read from the host's ``tools`` reply (the extension holds no copy of them)."""
    limits = await real.worker.evaluate("trimtab.host.request({type: 'tools'})")
    panel = await real.open_side_panel()
    with trio.fail_after(TIMEOUT):
        while not await panel.evaluate("trimtabPanel.state.pageBudget"):
            await trio.sleep(0.05)
    assert await panel.evaluate("trimtabPanel.state.pageBudget") == limits["budget"]
    field = "document.getElementById('page-budget')"
    assert await panel.evaluate(f"{field}.placeholder") == str(limits["budget"]["default"])
    await panel.evaluate(
        f"""trimtabPanel.showView('agent'); document.getElementById('settings').open = true;
        {field}.value = '5'; document.getElementById('model').value = 'm';
        document.getElementById('settings-form').requestSubmit(); true"""
    )
    with trio.fail_after(TIMEOUT):
        while not await panel.evaluate("document.getElementById('settings-note').textContent"):
            await trio.sleep(0.05)
    saved = await real.worker.evaluate("chrome.storage.local.get('settings')")
    assert saved["settings"]["pageBudget"] == limits["budget"]["min"]
