"""Outside agents under bad input and faults, end to end: real headless Chromium with the
real extension, the real host Chrome starts, and real ``trimtab mcp`` subprocesses.

Malformed and oversized MCP messages, clients that go away in the middle of a call,
two clients acting on one tab, and the side panel's own agent working while an
outside agent acts.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio

from tests.support import StaticServer
from tests.support.agent import ScriptedModel, run_task, serve_model
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
from trimtab.mcp._stdio import MAX_MESSAGE

pytestmark = pytest.mark.browser

__all__ = ["places"]  # the fixture


# --------------------------------------------------------------------------- helpers


async def _serve_beacon(
    arrived: trio.Event, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED
) -> None:
    """On 127.0.0.1: answer any request at once, and set ``arrived`` on the first."""

    async def handle(stream: trio.SocketStream) -> None:
        async with stream:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = await stream.receive_some(4096)
                if not chunk:
                    return
                data += chunk
            arrived.set()
            with contextlib.suppress(trio.BrokenResourceError):
                await stream.send_all(
                    b"HTTP/1.1 204 No Content\r\nAccess-Control-Allow-Origin: *\r\n"
                    b"Connection: close\r\n\r\n"
                )

    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    task_status.started(listeners[0].socket.getsockname()[1])
    await trio.serve_listeners(handle, listeners)


def _mcp_server_pids() -> list[int]:
    """The ``trimtab mcp`` processes this test process started."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            if int(fields[1]) == os.getpid() and argv[1:4] == [b"-m", b"trimtab", b"mcp"]:
                found.append(int(entry.name))
    return found


async def _clients(ext: Any) -> list[dict[str, Any]]:
    return list(await ext.worker.evaluate("trimtab.agents.status().clients"))


async def _until_left(ext: Any, name: str) -> dict[str, Any]:
    """The extension's entry for client ``name`` once the host said it disconnected:
    the host sends that only after the client's calls have ended."""
    with trio.fail_after(TIMEOUT):
        while True:
            for client in await _clients(ext):
                if client["client"] == name and not client["connected"]:
                    return client
            await trio.sleep(0.05)


def _log_text(places: Places) -> str:
    path = Path(os.environ["TRIMTAB_LOG_DIR"]) / "host.log"
    return path.read_text(encoding="utf-8") if path.exists() else ""


async def _until_logged(needle: str) -> None:
    """Wait until the host's log has a line with ``needle``."""
    path = Path(os.environ["TRIMTAB_LOG_DIR"]) / "host.log"
    with trio.fail_after(TIMEOUT):
        while not (path.exists() and needle in path.read_text(encoding="utf-8")):
            await trio.sleep(0.05)


async def _page_reader(ext: Any, target: str) -> Any:
    """A function that evaluates an expression in the page of ``target`` over a CDP
    session of the test's own (the agents' calls go through the extension)."""
    attached = await ext.browser.send(
        "Target.attachToTarget", {"targetId": target, "flatten": True}
    )

    async def read(expression: str) -> Any:
        reply = await ext.browser.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True},
            session_id=str(attached["sessionId"]),
        )
        return reply["result"].get("value")

    return read


# ------------------------------------------------------------------ malformed input


class _RawClient:
    """A client that writes raw lines to ``trimtab mcp`` and reads its answers."""

    def __init__(self, process: trio.Process) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self.process = process
        self.stdin = process.stdin
        self.stdout = process.stdout
        self.buffer = b""

    async def send(self, line: bytes) -> None:
        await self.stdin.send_all(line + b"\n")

    async def send_json(self, message: dict[str, Any]) -> None:
        await self.send(json.dumps(message).encode())

    async def next(self) -> dict[str, Any]:
        with trio.fail_after(TIMEOUT):
            while b"\n" not in self.buffer:
                chunk = await self.stdout.receive_some(65536)
                assert chunk, "trimtab mcp closed its output"
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return dict(json.loads(line))

    async def answer_to(self, request_id: Any) -> dict[str, Any]:
        """The next message with ``request_id`` (answers may come in any order)."""
        while True:
            message = await self.next()
            if message.get("id") == request_id:
                return message


async def test_malformed_and_oversized_messages_get_an_error_and_serving_goes_on(
    places: Places, pages_server: StaticServer
) -> None:
    """Garbage, non-UTF-8 bytes, JSON that is not JSON-RPC and a line over the size limit
    each get a JSON-RPC error naming the problem (with the request's id where it has
    one), and the same client's next call on the same server still works."""
    async with browser(places) as ext:
        tab = await open_shared(ext, pages_server.url("handlers-shop.html"))
        async with trio.open_nursery() as nursery:
            # Started this way, trio kills the server if the test fails midway.
            process: trio.Process = await nursery.start(
                partial(
                    trio.run_process,
                    [sys.executable, "-m", "trimtab", "mcp"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    env={**os.environ, **places.env()},
                    check=False,
                )
            )
            raw = _RawClient(process)
            await raw.send_json(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "raw", "version": "1"},
                    },
                }
            )
            assert (await raw.answer_to(1))["result"]["serverInfo"]["name"] == "trimtab"
            await raw.send_json({"jsonrpc": "2.0", "method": "notifications/initialized"})

            await raw.send(b"this is not json {")
            garbage = await raw.answer_to(None)
            assert garbage["error"]["code"] == -32700
            assert "not UTF-8 JSON" in garbage["error"]["message"]

            await raw.send(b'{"jsonrpc": "2.0", "id": 2, "method": "ping"\xff\xfe}')
            assert (await raw.answer_to(None))["error"]["code"] == -32700

            await raw.send_json({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": 7})
            invalid = await raw.answer_to(3)
            assert invalid["error"]["code"] == -32600
            assert "params" in invalid["error"]["message"]

            await raw.send_json({"id": "four", "method": "tools/list"})
            assert (await raw.answer_to("four"))["error"]["code"] == -32600

            huge = "x" * (MAX_MESSAGE + 1000)
            await raw.send_json(
                {
                    "jsonrpc": "2.0",
                    "id": 5,
                    "method": "tools/call",
                    "params": {"name": "type", "arguments": {"tab": tab, "text": huge}},
                }
            )
            oversized = await raw.answer_to(5)
            assert oversized["error"]["code"] == -32600
            assert f"message too large: over {MAX_MESSAGE} bytes" in oversized["error"]["message"]

            # The same client, the same server: the next call works.
            await raw.send_json(
                {
                    "jsonrpc": "2.0",
                    "id": 6,
                    "method": "tools/call",
                    "params": {"name": "capture_snapshot", "arguments": {"tab": tab}},
                }
            )
            snapshot = await raw.answer_to(6)
            assert not snapshot["result"].get("isError"), snapshot
            assert "Outdoor shop" in snapshot["result"]["content"][0]["text"]
            assert process.returncode is None
            await raw.stdin.aclose()
            with trio.fail_after(TIMEOUT):
                assert await process.wait() == 0


# ------------------------------------------------------------ clients that go away


@pytest.mark.deadline(240)
async def test_client_killed_mid_click_leaves_no_button_down_and_frees_the_tab(
    places: Places, pages_server: StaticServer
) -> None:
    """A client killed while its click waits on a busy page: the host does not hang or
    lose its process, its session ends, the press gets its release (no button is left
    down), and the next client's click on the same tab works."""
    async with browser(places) as ext, trio.open_nursery() as nursery:
        arrived = trio.Event()
        port = await nursery.start(_serve_beacon, arrived)
        beacon = f"http://127.0.0.1:{port}/pressed"
        url = pages_server.url(f"mcp-slow-press.html?beacon={beacon}&busy=3000")
        target, tab = await ext.open_tab(url)
        await ext.wait_loaded(tab)
        await share(ext, tab)
        read = await _page_reader(ext, target)
        [host] = ext.host_pids()
        assert _mcp_server_pids() == []

        async def doomed() -> None:
            # Its server is killed under it: the client fails, as it should.
            with contextlib.suppress(Exception):
                async with mcp_client(places, "doomed") as client:
                    xml, is_error, _ = await call(client, "capture_snapshot", tab=tab)
                    assert not is_error, xml
                    await call(client, "click", tab=tab, id=eid_on_line(xml, "Slow button"))

        nursery.start_soon(doomed)
        with trio.fail_after(TIMEOUT):
            await arrived.wait()  # the press is in the page, which is busy for 3 s
        [server] = _mcp_server_pids()
        os.kill(server, signal.SIGKILL)
        left = await _until_left(ext, "doomed 1.0")
        # The click never finished: the person's log shows it ended without being done
        # (its client's connection broke under it).
        shown = [(action["tool"], action["error"]) for action in left["actions"]]
        assert shown[0] == ("capture_snapshot", None), shown
        assert shown[1:] == [("click", "cancelled")] or shown[1:] == [("click", "failed")], shown
        assert "input closed; 1 request(s) in flight" in _log_text(places)
        assert ext.host_pids() == [host]

        with trio.fail_after(TIMEOUT):
            while await read("document.getElementById('log').textContent") != (
                "Downs 1, ups 1, clicks 1"
            ):
                await trio.sleep(0.05)
        async with mcp_client(places, "next") as client:
            xml, is_error, _ = await call(client, "capture_snapshot", tab=tab)
            assert not is_error, xml
            clicked, is_error, _ = await call(client, "click", tab=tab, id=eid_on_line(xml, "Slow"))
            assert not is_error, clicked
            assert "Downs 2, ups 2, clicks 2" in clicked
        nursery.cancel_scope.cancel()


async def test_client_closed_mid_wait_for_ends_the_call_and_frees_the_tab(
    places: Places, pages_server: StaticServer
) -> None:
    """A client that closes while its `wait_for` waits for text that never comes: the
    host ends the call at once (not when the wait would have timed out), ends the
    session, and another client acts on the same tab right away."""
    async with browser(places) as ext:
        tab = await open_shared(ext, pages_server.url("handlers-shop.html"))
        [host] = ext.host_pids()
        async with trio.open_nursery() as nursery:
            cancel = trio.CancelScope()

            async def leaving() -> None:
                with cancel:
                    async with mcp_client(places, "leaving") as client:
                        await call(
                            client, "wait_for", tab=tab, text="Never on this page", timeout=30
                        )

            nursery.start_soon(leaving)
            await _until_logged("wait_for on tab")
            cancel.cancel()  # the client closes its server's input and goes
        left = await _until_left(ext, "leaving 1.0")
        # The wait never ran to its end: the person's log shows it cancelled.
        shown = [(action["tool"], action["error"]) for action in left["actions"]]
        assert shown in ([("wait_for", "cancelled")], [("wait_for", "failed")]), shown
        # The closing client's server cancels its call (or the host ends it at EOF).
        log = _log_text(places)
        assert re.search(r"tool \d+ cancelled by its sender|input closed; \d+ request", log)
        assert ext.host_pids() == [host]
        async with mcp_client(places, "next") as client:
            xml, is_error, _ = await call(client, "capture_snapshot", tab=tab)
            assert not is_error, xml
            clicked, is_error, _ = await call(
                client, "click", tab=tab, id=eid_on_line(xml, "Add to bag")
            )
            assert not is_error, clicked
            assert "Clicks: 1" in clicked


# ----------------------------------------------------------- two agents, one tab


async def test_two_clients_acting_on_one_tab_are_serialised_and_never_stale(
    places: Places, pages_server: StaticServer
) -> None:
    """Two clients clicking the same button at once are served one after the other (each
    click's diff shows its own count), and a read after the other client's click is
    read afresh, never answered from the reader's cache."""
    async with (
        browser(places) as ext,
        mcp_client(places, "one") as first,
        mcp_client(places, "two") as second,
    ):
        tab = await open_shared(ext, pages_server.url("handlers-shop.html"))
        seen = {}
        for name, client in (("one", first), ("two", second)):
            seen[name], is_error, _ = await call(client, "capture_snapshot", tab=tab)
            assert not is_error, seen[name]
            assert "Clicks: 0" in seen[name]
        clicked: dict[str, str] = {}

        async def click(name: str, client: Any) -> None:
            text, is_error, _ = await call(
                client, "click", tab=tab, id=eid_on_line(seen[name], "Add")
            )
            assert not is_error, text
            clicked[name] = text

        async with trio.open_nursery() as nursery:
            nursery.start_soon(click, "one", first)
            nursery.start_soon(click, "two", second)
        counts = sorted("Clicks: 1" in text for text in clicked.values())
        assert counts == [False, True], clicked  # one saw 1, the other 2: one at a time
        assert any("Clicks: 2" in text for text in clicked.values()), clicked

        # One client reads twice with the other's click between: the second read is
        # of the page as it is now.
        again, is_error, meta = await call(first, "capture_snapshot", tab=tab)
        assert not is_error, again
        clicked_two, is_error, _ = await call(
            second, "click", tab=tab, id=eid_on_line(seen["two"], "Add")
        )
        assert "Clicks: 3" in clicked_two
        fresh, is_error, fresh_meta = await call(first, "capture_snapshot", tab=tab)
        assert not is_error, fresh
        assert not fresh_meta["cached"], fresh
        assert "Clicks: 3" in fresh
        del meta


# ------------------------------------------------- the side panel's own agent too


@pytest.mark.deadline(240)
async def test_side_panel_agent_works_while_an_outside_agent_acts(
    places: Places, pages_server: StaticServer
) -> None:
    """While an outside MCP client keeps reading and clicking in a shared tab, the side
    panel's own agent (a scripted LLM on 127.0.0.1) completes its three-step task in
    another tab, and every outside call succeeds."""
    async with browser(places) as ext, mcp_client(places, "busy-agent") as client:
        target, shared = await ext.open_tab(pages_server.url("handlers-shop.html"))
        await ext.wait_loaded(shared)
        await share(ext, shared)
        read = await _page_reader(ext, target)
        xml, is_error, _ = await call(client, "capture_snapshot", tab=shared)
        assert not is_error, xml
        add = eid_on_line(xml, "Add to bag")
        outside: list[tuple[str, str, bool]] = []  # tool, text, is_error
        agent_done = trio.Event()
        spans: list[tuple[float, float]] = []  # when each outside call began and ended

        async def outside_agent(task_status: trio.TaskStatus[None]) -> None:
            task_status.started()
            while not agent_done.is_set():
                for tool, args in (("click", {"id": add}), ("capture_snapshot", {})):
                    began = trio.current_time()
                    text, is_error, _ = await call(client, tool, tab=shared, **args)
                    spans.append((began, trio.current_time()))
                    outside.append((tool, text, is_error))

        async with trio.open_nursery() as outside_nursery:
            await outside_nursery.start(outside_agent)
            async with trio.open_nursery() as nursery:
                model: ScriptedModel = await nursery.start(serve_model, ScriptedModel("anthropic"))
                agent_began = trio.current_time()
                run = await run_task(
                    ext,
                    model,
                    pages_server.url("e2e-agent-start.html"),
                    "What is the forecast for Lisbon?",
                )
                agent_ended = trio.current_time()
                agent_done.set()
                nursery.cancel_scope.cancel()
            # The outside agent finishes the call it is in, then stops.
        steps = run.steps
        assert steps[-1]["kind"] == "done", steps
        assert "Forecast for Lisbon: sunny" in steps[-1]["text"]
        tools = [s for s in steps if s["kind"] == "tool"]
        assert not any(t["isError"] for t in tools), tools
        assert [t["cached"] for t in tools] == [False] * 5 + [True]
        overlapping = [span for span in spans if span[0] < agent_ended and span[1] > agent_began]
        assert overlapping, "no outside call ran while the side panel's agent worked"
        assert not any(is_error for _tool, _text, is_error in outside), outside
        clicks = sum(1 for tool, _text, _error in outside if tool == "click")
        shown = await read("document.getElementById('count').textContent")
        assert shown == f"Clicks: {clicks}"


# ------------------------------------------------- closed tabs, a host restarted


@pytest.mark.deadline(240)
async def test_closed_tab_and_restarted_host_get_clear_errors_then_the_client_works(
    places: Places, pages_server: StaticServer
) -> None:
    """A call on a shared tab that has since closed is refused at once, naming the tab
    (the open side panel is not asked about a tab that is gone); when Chrome's host is
    killed and started again, the same client meets only plain errors until the new
    host listens, then works on, without restarting."""
    async with browser(places) as ext, mcp_client(places, "steady") as client:
        gone_target, gone = await ext.open_tab(pages_server.url("handlers-shop.html"))
        await ext.wait_loaded(gone)
        await share(ext, gone)
        tab = await open_shared(ext, pages_server.url("handlers-shop.html"))
        await ext.open_side_panel()
        text, is_error, _ = await call(client, "capture_snapshot", tab=gone)
        assert not is_error, text
        await ext.browser.send("Target.closeTarget", {"targetId": gone_target})
        # The host learns of the closed tab from the extension after the extension
        # does: wait until the host no longer lists it, as a client would see it.
        with trio.fail_after(TIMEOUT):
            while f'<tab id="{gone}"' in (await call(client, "tabs"))[0]:
                await trio.sleep(0.05)
        text, is_error, _ = await call(client, "capture_snapshot", tab=gone)
        assert is_error
        assert text.startswith("forbidden: ")
        assert f"there is no tab {gone}" in text

        [host] = ext.host_pids()
        os.kill(host, signal.SIGKILL)
        errors = []
        with trio.fail_after(TIMEOUT):
            while True:
                listed, is_error, _ = await call(client, "tabs")
                if not is_error and f'<tab id="{tab}"' in listed:
                    break
                if is_error:
                    errors.append(listed)
                await trio.sleep(0.1)
        assert all(e.startswith(("no_browser: ", "link_closed: ")) for e in errors), errors
        [restarted] = ext.host_pids()
        assert restarted != host
        text, is_error, _ = await call(client, "capture_snapshot", tab=tab)
        assert not is_error, text
        assert "Outdoor shop" in text
