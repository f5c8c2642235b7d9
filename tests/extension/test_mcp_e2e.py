"""Agents outside the browser, end to end: real headless Chromium with the real
extension, the real host Chrome starts through the native-messaging manifest, and a
real ``trimtab mcp`` subprocess driven by the ``mcp`` SDK's own client."""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
from pathlib import Path
from typing import Any

import pytest
import trio
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.support import LOCAL_NAMES, StaticServer
from tests.support.e2e import answer_question
from tests.support.outside import (
    TIMEOUT,
    Places,
    browser,
    call,
    eid_on_line,
    mcp_client,
    open_shared,
    places,
    share,
)
from trimtab.link import LinkError, connect, list_endpoints
from trimtab.tools import TOOLS

pytestmark = pytest.mark.browser

__all__ = ["places"]  # the fixture


async def test_mcp_handshake_tabs_snapshot_tracker_and_diff(
    places: Places, pages_server: StaticServer
) -> None:
    """Through trimtab mcp: handshake, the tool list, tabs, a snapshot, a repeat answered
    by the tracker, and a click answered with a diff, on a shared fixture tab; the side
    panel's log of outside agents says the click in words."""
    async with browser(places) as ext, mcp_client(places) as client:
        tab = await open_shared(ext, pages_server.url("handlers-shop.html"))
        assert client.server_info is not None
        assert client.server_info.name == "trimtab"
        assert "<page" in (client.instructions or "")
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        # `tabs` is the link's listing over MCP; every tool names its tab (no switch_tab);
        # the routine tools are the server's own.
        offered = [s for s in TOOLS if s.name not in ("tabs", "switch_tab")]
        routine_tools = {"routines", "run_routine", "save_routine"}
        assert set(tools) == {"tabs", *(spec.name for spec in offered), *routine_tools}
        for spec in offered:
            assert tools[spec.name].description == spec.description
            assert "tab" in tools[spec.name].input_schema["properties"]
        resource = await client.read_resource("trimtab://format")
        assert "<page" in resource.contents[0].text  # type: ignore[union-attr]

        listed, is_error, _ = await call(client, "tabs")
        assert not is_error
        assert f'<tab id="{tab}"' in listed
        assert "Handlers shop" in listed

        xml, is_error, meta = await call(client, "capture_snapshot", tab=tab)
        assert not is_error, xml
        assert "Outdoor shop" in xml
        assert meta["kind"] == "baseline"
        again, _, repeat = await call(client, "capture_snapshot", tab=tab)
        assert repeat["cached"]
        assert repeat["cached_from"] == meta["call_id"]
        assert "Same result as call" in again

        clicked, is_error, meta = await call(
            client, "click", tab=tab, id=eid_on_line(xml, "Add to bag")
        )
        assert not is_error, clicked
        assert meta["kind"] == "diff"
        assert "Clicks: 1" in clicked
        # The side panel's list of clients shows the client and what it did (the host
        # tells the extension of the action beside answering the client: no order).
        with trio.fail_after(TIMEOUT):
            while True:
                clients = await ext.worker.evaluate("trimtab.agents.status().clients")
                if [a["tool"] for a in clients[0]["actions"]][-1:] == ["click"]:
                    break
                await trio.sleep(0.05)
        assert clients[0]["client"] == "e2e-agent 1.0"
        # The real side panel's log says it in the words of its own agent's steps,
        # from the button as the client's snapshot showed it.
        panel = await ext.open_side_panel()
        log = "document.getElementById('agents-clients').textContent"
        with trio.fail_after(TIMEOUT):
            while "Clicked “Add to bag” (button) in" not in await panel.evaluate(log):
                await trio.sleep(0.05)
        assert "Read the page in" in await panel.evaluate(log)


async def test_a_change_inside_another_sites_frame_is_not_answered_from_the_cache(
    places: Places, pages_server: StaticServer
) -> None:
    """Through the real extension's debugger: a repeated read of a page is answered from
    the cache until the partner's frame, which runs out of process, changes its own
    text; the next read runs again and shows it."""
    async with (
        browser(places, extra_args=(LOCAL_NAMES,)) as ext,
        mcp_client(places) as client,
    ):
        tab = await open_shared(ext, pages_server.url("partner-offers.html"))
        xml, is_error, _ = await call(client, "capture_snapshot", tab=tab)
        assert not is_error, xml
        assert "Ten percent off tents" in xml
        # Until the cache answers: the frame's observer goes in once a capture reached it.
        with trio.fail_after(TIMEOUT):
            while not (await call(client, "capture_snapshot", tab=tab))[2]["cached"]:
                await trio.sleep(0.1)
        # The partner's own script, in its frame (the test's own session to it).
        targets = (await ext.browser.send("Target.getTargets"))["targetInfos"]
        (widget,) = [t for t in targets if t["type"] == "iframe" and "partner.test" in t["url"]]
        frame = await ext.attach(widget["targetId"])
        await frame.evaluate("document.getElementById('offer').textContent = 'Sold out'")
        again, is_error, meta = await call(client, "capture_snapshot", tab=tab)
        assert not is_error, again
        assert not meta["cached"]
        assert "Sold out" in again


async def test_unshared_tab_refused_then_allowed_in_the_side_panel(
    places: Places, pages_server: StaticServer
) -> None:
    """A call on an unshared tab asks in the real side panel, naming the client: Deny is
    refused, Allow lets it through, and Stop ends the session with a plain error."""
    async with browser(places) as ext, mcp_client(places, "claude-code") as client:
        _target, tab = await ext.open_tab(pages_server.url("handlers-shop.html"))
        await ext.wait_loaded(tab)
        panel = await ext.open_side_panel()
        for answer in ("deny", "allow"):
            results: list[tuple[str, bool, dict[str, Any]]] = []
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_collect, results, client, tab)
                question = await _answer_in_panel(panel, answer)
                assert "claude-code 1.0 asks to read and act in" in question
            text, is_error, _ = results[0]
            if answer == "deny":
                assert is_error
                assert "refused" in text
            else:
                assert not is_error, text
                assert "Outdoor shop" in text
        await panel.evaluate("document.getElementById('agents-stop').click(); true")
        with trio.fail_after(TIMEOUT):
            while await ext.worker.evaluate("trimtab.agents.status().shared.length"):
                await trio.sleep(0.05)
            while any(
                c["connected"] for c in await ext.worker.evaluate("trimtab.agents.status().clients")
            ):
                await trio.sleep(0.05)
        text, is_error, _ = await call(client, "capture_snapshot", tab=tab)
        assert is_error
        assert text.startswith("stopped: the person stopped outside agents")


async def _collect(results: list[Any], client: Client, tab: int) -> None:
    results.append(await call(client, "capture_snapshot", tab=tab))


async def test_two_clients_secret_modes_and_no_tcp_port(
    places: Places, pages_server: StaticServer
) -> None:
    """Two MCP clients at once each get their own baseline; a wrong secret is refused; the
    folder is 0700, the socket and secret 0600; the host listens on no TCP port."""
    async with browser(places) as ext:
        tab = await open_shared(ext, pages_server.url("handlers-shop.html"))
        async with mcp_client(places, "one") as first, mcp_client(places, "two") as second:
            results: dict[str, dict[str, Any]] = {}

            async def snapshot(name: str, client: Client) -> None:
                xml, is_error, meta = await call(client, "capture_snapshot", tab=tab)
                assert not is_error, xml
                results[name] = meta

            async with trio.open_nursery() as nursery:
                nursery.start_soon(snapshot, "one", first)
                nursery.start_soon(snapshot, "two", second)
            assert results["one"]["kind"] == results["two"]["kind"] == "baseline"
            assert not results["one"]["cached"]
            assert not results["two"]["cached"]
        [endpoint] = list_endpoints(places.endpoints)
        with pytest.raises(LinkError, match="wrong secret"):
            async with connect(endpoint.socket, "f" * 64):
                pass
        assert stat.S_IMODE(places.endpoints.stat().st_mode) == 0o700
        assert stat.S_IMODE(endpoint.socket.lstat().st_mode) == 0o600
        assert stat.S_IMODE(places.secret.stat().st_mode) == 0o600
        [pid] = ext.host_pids()
        assert endpoint.info.pid == pid
        assert _listening_tcp(pid) == []


def _listening_tcp(pid: int) -> list[str]:
    """TCP sockets in LISTEN state that process ``pid`` holds."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    found = []
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:
                found.append(line)
    return found


async def test_browser_closed_and_restarted_under_a_connected_client(
    places: Places, pages_server: StaticServer
) -> None:
    """With the browser closed the client gets a clear error; once it is back the same
    client works again without restarting."""
    async with mcp_client(places) as client:
        async with browser(places) as ext:
            tab = await open_shared(ext, pages_server.url("handlers-shop.html"))
            text, is_error, _ = await call(client, "capture_snapshot", tab=tab)
            assert not is_error, text
        text, is_error, _ = await call(client, "tabs")
        assert is_error
        assert "no_browser" in text or "link_closed" in text
        async with browser(places) as ext:
            tab = await open_shared(ext, pages_server.url("handlers-shop.html"))
            text, is_error, _ = await call(client, "capture_snapshot", tab=tab)
            assert not is_error, text
            assert "Outdoor shop" in text


async def _answer_in_panel(panel: Any, answer: str) -> str:
    """Wait for the side panel's question about an outside agent, answer it, return it."""
    with trio.fail_after(TIMEOUT):
        while (question := await answer_question(panel, allow=answer == "allow")) is None:
            await trio.sleep(0.05)
    return question


async def _type_an_email(client: Client, tab: int) -> None:
    """Type an e-mail address into the consent shop's field, so that Enter submits."""
    xml, is_error, _ = await call(client, "capture_snapshot", tab=tab)
    assert not is_error, xml
    typed, is_error, _ = await call(
        client, "type", tab=tab, id=eid_on_line(xml, 'type="email"'), text="a@b.c"
    )
    assert not is_error, typed


async def _press_enter(results: list[Any], client: Client, tab: int) -> None:
    results.append(await call(client, "press", tab=tab, key="Enter"))


#: Records, in the service worker, every `highlight` it asks the host for and the
#: host's answer: [eid, found] or [eid, error code].
_SPY_HIGHLIGHTS = """(() => {
    globalThis.highlights = [];
    const request = trimtab.host.request.bind(trimtab.host);
    trimtab.host.request = (r, options) => {
        const sent = request(r, options);
        if (r.type === 'highlight') {
            sent.then((x) => highlights.push([r.eid, x.found]),
                (e) => highlights.push([r.eid, e.code]));
        }
        return sent;
    };
    return true;
})()"""


async def test_an_outside_agents_question_highlights_its_element(
    places: Places, pages_server: StaticServer
) -> None:
    """An outside agent's click that would submit asks in the side panel, naming the
    button, and the host highlights that button (an id of the client's own view) while
    the question is open; the answer clears it."""
    async with browser(places) as ext, mcp_client(places, "cursor") as client:
        tab = await open_shared(ext, pages_server.url("consent-shop.html"))
        panel = await ext.open_side_panel()
        await ext.worker.evaluate(_SPY_HIGHLIGHTS)
        xml, is_error, _ = await call(client, "capture_snapshot", tab=tab)
        assert not is_error, xml
        found = re.search(r'<button id="([^"]+)" type="submit">Buy now', xml)
        assert found is not None, xml
        buy = found.group(1)
        results: list[Any] = []
        async with trio.open_nursery() as nursery:

            async def click() -> None:
                results.append(await call(client, "click", tab=tab, id=buy))

            nursery.start_soon(click)
            asked_by = trio.current_time() + TIMEOUT // 2
            with trio.fail_after(TIMEOUT):
                while not await ext.worker.evaluate("highlights.length"):
                    # The click ended without a question, or its question is not the
                    # panel's: say what the click was told and what the worker holds.
                    assert not results, results
                    if trio.current_time() > asked_by:
                        held = await ext.worker.evaluate(
                            "JSON.stringify([...trimtab.questions.open.values()])"
                        )
                        pytest.fail(f"no highlight after {TIMEOUT // 2} s; open: {held}")
                    await trio.sleep(0.05)
            question = await _answer_in_panel(panel, "deny")
        with trio.fail_after(TIMEOUT):
            while len(highlights := await ext.worker.evaluate("highlights")) < 2:
                await trio.sleep(0.05)
    assert highlights == [[buy, True], [None, False]]
    assert question.startswith("cursor 1.0 wants to click the button below (a tab on ")
    assert f"Acts on: a button (id {buy}, highlighted in the page)" in question
    assert "the button's text: “Buy now”" in question
    text, is_error, _ = results[0]
    assert is_error
    assert "refused" in text


async def test_ask_before_submit_through_mcp_in_the_side_panel(
    places: Places, pages_server: StaticServer
) -> None:
    """Enter that would submit, sent by an outside agent, asks in the real side panel:
    Deny is the tool's result and nothing is submitted; Allow submits."""
    async with browser(places) as ext, mcp_client(places, "cursor") as client:
        target, tab = await ext.open_tab(pages_server.url("consent-shop.html"))
        await ext.wait_loaded(tab)
        await share(ext, tab)
        panel = await ext.open_side_panel()
        await _type_an_email(client, tab)
        for answer in ("deny", "allow"):
            results: list[Any] = []
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_press_enter, results, client, tab)
                question = await _answer_in_panel(panel, answer)
            assert question.startswith("cursor 1.0 wants to press Enter")
            assert "submits the form" in question
            text, is_error, _ = results[0]
            location = await ext.worker.evaluate(f"chrome.tabs.get({tab}).then((t) => t.url)")
            if answer == "deny":
                assert is_error
                assert "refused" in text
                assert location.endswith("/consent-shop.html")
            else:
                assert not is_error, text
                assert "email=a%40b.c" in location
        del target


async def test_an_outside_agent_scrolls_a_background_tab_that_keeps_animating(
    places: Places, pages_server: StaticServer
) -> None:
    """Through trimtab mcp, in a shared tab behind another whose page animates on every
    frame, a scroll reaches the page and what the page renders on the next frame in
    answer (more items of a feed) is in the answer: the host has the hidden tab rendered
    through the extension while it acts, and the tab stays behind."""
    async with browser(places) as ext, mcp_client(places) as client:
        tab = await open_shared(ext, pages_server.url("tools-background-ticker.html"))
        xml, is_error, _ = await call(client, "capture_snapshot", tab=tab)
        assert not is_error, xml
        front, _ = await ext.open_tab("about:blank")
        await (await ext.attach(front)).send("Page.bringToFront")
        # Chromium throttles a hidden page's rendering once it has been hidden a moment.
        await trio.sleep(1.5)
        scrolled, is_error, _ = await call(client, "scroll", tab=tab, direction="down")
        assert not is_error, scrolled
        assert "Sleeping bag, $89" in scrolled
        assert not await ext.worker.evaluate(f"chrome.tabs.get({tab}).then((t) => t.active)")


async def test_a_cancelled_submit_leaves_the_side_panel_and_a_late_allow_does_nothing(
    places: Places, pages_server: StaticServer
) -> None:
    """Through trimtab mcp and the SDK's client, a submit the client gives up on (its own
    timeout) is cancelled: its question leaves the real side panel at once, an Allow sent
    after that does nothing and the panel says so, and the form is never submitted."""
    async with browser(places) as ext, mcp_client(places, "cursor") as client:
        tab = await open_shared(ext, pages_server.url("consent-shop.html"))
        panel = await ext.open_side_panel()
        await _type_an_email(client, tab)
        shown: list[dict[str, Any]] = []

        async def watch() -> None:
            while not (found := await panel.evaluate("trimtabPanel.questions.shown")):
                await trio.sleep(0.05)
            shown.append(found)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch)
            with trio.fail_after(TIMEOUT), pytest.raises(MCPError, match=r"[Tt]imed out"):
                await client.call_tool(
                    "press", {"tab": tab, "key": "Enter"}, read_timeout_seconds=3
                )
        [question] = shown
        assert question["client"] == "cursor 1.0"
        with trio.fail_after(10):
            while not await panel.evaluate("document.getElementById('question').hidden"):
                await trio.sleep(0.05)
        late = await panel.evaluate(
            f"trimtabPanel.answerQuestion({json.dumps(question['ask'])}, true)"
        )
        note = await panel.evaluate("document.getElementById('question-note').textContent")
        assert late == {"waiting": False}
        assert note == "That question had already been withdrawn; nothing was done."
        await trio.sleep(1)  # time for a submission to reach the browser, if one were sent
        location = await ext.worker.evaluate(f"chrome.tabs.get({tab}).then((t) => t.url)")
        assert location.endswith("/consent-shop.html"), location
