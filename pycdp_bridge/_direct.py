"""The direct transport: CDP over the pipe of a Chromium that Trimtab launched.

`PipeTransport` frames JSON messages with NUL bytes on two trio streams. `Browser`
is the browser-level target; `Browser.new_page` opens a tab and attaches to it with a
flattened session, giving a `PageTarget` that shares the browser's connection. Its
downloads go to the run's own folder (`Browser.downloads`, in the profile) and are
reported to the tab's session (``Browser.downloadWillBegin``/``downloadProgress``).
`Browser.opened_pages` attaches to every page the browser opens (a pop-up, a link's
new tab) before its first request, with the page that opened it.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import attrs
import trio

from . import _protocol as cdp
from ._connection import Request
from ._errors import CDPError, NavigationError, PageCrashedError, TargetClosedError
from ._gc import gc_paused
from ._javascript import evaluate
from ._json import loads_json
from ._target import CommandChannel, SessionTarget

__all__ = ["Browser", "OpenedPage", "PageTarget", "PipeTransport"]

READ_CHUNK = 1 << 20
# Replies this long (a large page's DOM or snapshot) are decoded with the garbage
# collector paused: see `_gc`.
LARGE_MESSAGE = 1 << 16


@attrs.frozen
class TransportStatistics:
    """A snapshot of a pipe transport's byte and message counters."""

    messages_sent: int
    messages_received: int
    bytes_sent: int
    bytes_received: int
    #: Seconds spent parsing the received messages' JSON (what a capture's breakdown
    #: tells apart from the browser's time and the pipe's).
    parse_seconds: float = 0.0


class PipeTransport:
    """NUL-separated JSON over a pair of byte streams (``--remote-debugging-pipe``)."""

    def __init__(self, send_stream: trio.abc.SendStream, receive_stream: trio.abc.ReceiveStream):
        self._send_stream = send_stream
        self._receive_stream = receive_stream
        self._send_lock = trio.Lock()
        self._messages_sent = self._messages_received = 0
        self._bytes_sent = self._bytes_received = 0
        self._parse_seconds = 0.0

    async def transmit(self, request: Request) -> None:
        data = json.dumps(request.to_message(), separators=(",", ":")).encode() + b"\0"
        async with self._send_lock:
            try:
                await self._send_stream.send_all(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                raise TargetClosedError("browser pipe closed", request.method) from exc
        self._messages_sent += 1
        self._bytes_sent += len(data)

    async def run(
        self,
        channel: CommandChannel,
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Read messages into ``channel`` until the browser closes the pipe."""
        task_status.started()
        buffer = bytearray()
        reason = "browser closed the pipe"
        try:
            while True:
                try:
                    chunk = await self._receive_stream.receive_some(READ_CHUNK)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    break
                if not chunk:
                    break
                self._bytes_received += len(chunk)
                start = 0
                # Only the new chunk can hold the terminator of the buffered message.
                end = chunk.find(b"\0")
                while end >= 0:
                    buffer += chunk[start:end]
                    self._messages_received += 1
                    parsing = time.perf_counter()
                    if len(buffer) < LARGE_MESSAGE:
                        message = loads_json(buffer)
                    else:
                        with gc_paused():
                            message = loads_json(buffer)
                    self._parse_seconds += time.perf_counter() - parsing
                    channel.feed(message)
                    buffer.clear()
                    start = end + 1
                    end = chunk.find(b"\0", start)
                buffer += chunk[start:]
        finally:
            channel.close(reason)

    async def aclose(self) -> None:
        await self._send_stream.aclose()
        await self._receive_stream.aclose()

    def statistics(self) -> TransportStatistics:
        return TransportStatistics(
            messages_sent=self._messages_sent,
            messages_received=self._messages_received,
            bytes_sent=self._bytes_sent,
            bytes_received=self._bytes_received,
            parse_seconds=self._parse_seconds,
        )


@attrs.frozen
class OpenedPage:
    """A page the browser opened, attached before its first request (`waiting`: held
    until ``Runtime.runIfWaitingForDebugger`` in its session)."""

    page: PageTarget
    opener: str | None  # the target id of the page that opened it, if one did
    url: str
    waiting: bool


class Browser(SessionTarget):
    """The browser-level CDP target of a launched Chromium (see `launch_browser`)."""

    def __init__(self, transport: PipeTransport, *, pid: int, user_data_dir: Path) -> None:
        super().__init__(CommandChannel(transport.transmit), None)
        self.transport = transport
        self.pid = pid
        self.user_data_dir = user_data_dir

    @property
    def downloads(self) -> Path:
        """Where this run's tabs save downloads: a folder of its own profile."""
        return self.user_data_dir / "Downloads"

    async def new_page(self, url: str | None = None, *, timeout: float = 30.0) -> PageTarget:
        """Open a tab and attach to it; navigate to ``url`` (waiting for load) if given."""
        created = await self.execute(cdp.target_create_target("about:blank"))
        target_id = created["targetId"]
        attached = await self.execute(cdp.target_attach_to_target(target_id, flatten=True))
        page = PageTarget(self, target_id, attached["sessionId"])
        await page.execute(cdp.page_enable())
        await page.execute(cdp.page_set_lifecycle_events_enabled(enabled=True))
        # Never the person's own Downloads folder; the tab's session hears of each one.
        await page.execute(cdp.browser_set_download_behavior(str(self.downloads)))
        if url is not None:
            await page.navigate(url, timeout=timeout)
        return page

    @contextlib.asynccontextmanager
    async def opened_pages(self) -> AsyncIterator[trio.MemoryReceiveChannel[OpenedPage]]:
        """Every page the browser opens during the block, attached to it before it sends
        its first request (browser-level ``Target.setAutoAttach`` with
        ``waitForDebuggerOnStart``: the browser defers the new page's navigation until
        the debugger lets it run). The receiver must let each `waiting` page run
        (``Runtime.runIfWaitingForDebugger``), or it never loads; a page the opener's
        renderer also runs keeps that renderer waiting too."""
        async with self.listen(cdp.events.TARGET_ATTACHED_TO_TARGET) as attached:
            sender, receiver = trio.open_memory_channel[OpenedPage](256)

            async def announce() -> None:
                async for event in attached:
                    info: Mapping[str, Any] = event.params.get("targetInfo") or {}
                    session = event.params.get("sessionId")
                    if event.session_id is not None or info.get("type") != "page":
                        continue  # a frame or worker of a page, or not a page
                    if not isinstance(session, str):
                        continue
                    page = PageTarget(self, str(info.get("targetId")), session)
                    opener = info.get("openerId")
                    waiting = bool(event.params.get("waitingForDebugger"))
                    opened = OpenedPage(page, opener, str(info.get("url", "")), waiting)
                    try:
                        sender.send_nowait(opened)
                    except (trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError):
                        # Nobody will let it run: it runs now, unwatched.
                        with contextlib.suppress(CDPError, TargetClosedError):
                            await page.execute(cdp.runtime_run_if_waiting_for_debugger())

            async with trio.open_nursery() as nursery:
                nursery.start_soon(announce)
                await self.execute(cdp.target_set_auto_attach(wait_for_debugger_on_start=True))
                try:
                    async with receiver:
                        yield receiver
                finally:
                    with (
                        trio.CancelScope(shield=True),
                        trio.move_on_after(5),
                        contextlib.suppress(CDPError, TargetClosedError),
                    ):
                        await self.execute(cdp.target_set_auto_attach(auto_attach=False))
                    nursery.cancel_scope.cancel()
                    sender.close()


class PageTarget(SessionTarget):
    """One tab of a launched browser, reached through a flattened session."""

    def __init__(self, browser: Browser, target_id: str, session_id: str) -> None:
        super().__init__(browser._channel, session_id)
        self.browser = browser
        self.target_id = target_id

    async def navigate(self, url: str, *, timeout: float = 30.0) -> None:
        """Load ``url`` in the tab and wait for its load event."""
        with trio.fail_after(timeout):
            lifecycle = cdp.events.PAGE_LIFECYCLE_EVENT
            crashed = cdp.events.INSPECTOR_TARGET_CRASHED
            async with self.listen(lifecycle, crashed) as events:
                # The protocol types claim loaderId is always present; it is not for
                # same-document navigations, so read the result as a plain mapping.
                result: Mapping[str, Any] = await self.execute(cdp.page_navigate(url))
                if result.get("errorText"):
                    raise NavigationError(url, result["errorText"])
                loader_id = result.get("loaderId")
                if loader_id is None:
                    return  # same-document navigation: no new load event comes
                async for event in events:
                    if event.method == crashed and event.session_id is None:
                        raise PageCrashedError("Page.navigate")
                    if (
                        event.session_id is None
                        and event.params.get("name") == "load"
                        and event.params.get("loaderId") == loader_id
                    ):
                        return
        raise TargetClosedError("page closed while navigating", "Page.navigate")

    async def evaluate(self, expression: str) -> Any:
        """Evaluate JavaScript in the page (awaiting promises) and return its JSON value."""
        return await evaluate(self, expression, await_promise=True)

    async def close(self) -> None:
        """Close the tab; commands sent afterwards raise TargetClosedError."""
        if not self.browser.closed:
            await self.browser.execute(cdp.target_close_target(self.target_id))
