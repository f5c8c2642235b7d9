"""The doors the agent-memory state machine (``tests/tracker/test_belief.py``) plays its agent
through: a real Chromium and a host in front of it, run by trio in a thread of their
own so that Hypothesis's state machine (plain calls) can drive them.

`DirectDriver` calls the side panel's request handlers in-process (the direct
transport behind a relay peer). `McpDriver` calls through a real ``trimtab mcp``
process under the official SDK's client, the link and the host, and reads each answer
as a model does: the page's words are what the untrusted block holds, and what
follows the block (a repeat's note) is Trimtab's.

Both give the machine the same face: `open` a new host on a new tab, `tool` (an
`Answer`), `evaluate` on the page (its own scripts), `loaded` after a reload, and
`fresh`: a full compaction of the page now, with the ids the host reserved for the
client, taken under the tab's lock so that no tool runs meanwhile.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import attrs
import trio
from mcp import Client

from pycdp_bridge import PageTarget, launch_browser
from tests.support import LAUNCHED_PROFILES, StaticServer, serve_static
from tests.support.handlers_host import TAB, Host, open_host
from tests.support.link_host import LinkHost, open_link_host
from trimtab.pipeline import Compaction, compact
from trimtab.tab import Tab
from trimtab.wire import DecodedMessage, FrameDecoder, RequestError

__all__ = ["Answer", "DirectDriver", "Driver", "McpDriver", "page_data"]

T = TypeVar("T")


@attrs.frozen
class Answer:
    """One tool call's answer as the agent reads it: the content (the page's words, out
    of any untrusted block), whether the tool said it failed, and the code of a reply
    that is no tool result at all (the host refused the request)."""

    content: str
    is_error: bool = False
    refused: str | None = None
    note: str = ""  # Trimtab's words after the block (MCP: a repeated result's note)


@attrs.define
class Driver:
    """A real Chromium and a static server for the generated pages, in a trio thread;
    a subclass puts a host and a client door in front of one tab (`_hold`)."""

    folder: Path
    browser: Any = None
    server: StaticServer | None = None
    _token: trio.lowlevel.TrioToken | None = None
    _thread: threading.Thread | None = None
    _stop: trio.Event | None = None
    _started: threading.Event = attrs.field(factory=threading.Event)
    _failure: BaseException | None = None
    _nursery: trio.Nursery | None = None
    _close_host: trio.Event | None = None
    _host_closed: trio.Event | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._main, daemon=True)
        self._thread.start()
        self._started.wait(120)
        if self._failure is not None:
            raise self._failure
        assert self._token is not None, "the browser did not start within 120 s"

    def _main(self) -> None:
        try:
            trio.run(self._serve)
        except BaseException as exc:  # reported to the thread that waits on it
            self._failure = exc
            self._started.set()

    async def _serve(self) -> None:
        async with launch_browser() as browser:
            LAUNCHED_PROFILES.append(browser.user_data_dir)
            self.browser = browser
            async with trio.open_nursery() as nursery:
                self.server = await nursery.start(serve_static, self.folder)
                self._nursery = nursery
                self._stop = trio.Event()
                self._token = trio.lowlevel.current_trio_token()
                self._started.set()
                await self._stop.wait()
                nursery.cancel_scope.cancel()

    def run(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        async def bounded() -> T:
            with trio.fail_after(90):
                return await fn(*args)

        return trio.from_thread.run(bounded, trio_token=self._token)

    def stop(self) -> None:
        if self._token is not None and self._stop is not None:
            stop = self._stop
            trio.from_thread.run_sync(stop.set, trio_token=self._token)
        if self._thread is not None:
            self._thread.join(60)

    # -- one host on one tab ---------------------------------------------------------

    def open(self, url: str) -> None:
        """A new host (fresh memory and tracker) on a new tab (a history of its own),
        loaded with `url`, and the client's door to it."""
        self.run(self._open, url)

    async def _open(self, url: str) -> None:
        self._close_host = trio.Event()
        self._host_closed = trio.Event()
        close, closed = self._close_host, self._host_closed

        async def hold(task_status: trio.TaskStatus[None]) -> None:
            page = await self.browser.new_page()
            try:
                async with self._hold(page, url):
                    task_status.started()
                    await close.wait()
            finally:
                with trio.CancelScope(shield=True), trio.move_on_after(10):
                    await page.close()
                closed.set()

        assert self._nursery is not None
        await self._nursery.start(hold)

    def _hold(self, page: PageTarget, url: str) -> contextlib.AbstractAsyncContextManager[None]:
        raise NotImplementedError

    def close(self) -> None:
        """End the host and close its tab."""
        if self._close_host is None:
            return
        close, closed = self._close_host, self._host_closed
        assert closed is not None

        async def wait() -> None:
            close.set()
            await closed.wait()

        self.run(wait)
        self._close_host = None

    # -- what the machine does -------------------------------------------------------

    def tool(self, name: str, **args: Any) -> Answer:
        return self.run(self._tool, name, args)

    async def _tool(self, name: str, args: dict[str, Any]) -> Answer:
        raise NotImplementedError

    def evaluate(self, expression: str) -> Any:
        """Run the page's own script (no tool, no host)."""
        return self.run(self._evaluate, expression)

    async def _evaluate(self, expression: str) -> Any:
        with trio.fail_after(10):
            return await self._page().evaluate(expression)

    def loaded(self) -> None:
        """Until a reload's new document is complete (the agent's think time)."""
        self.run(self._loaded)

    async def _loaded(self) -> None:
        await trio.sleep(0.1)
        while await self._evaluate("document.readyState") != "complete":
            await trio.sleep(0.05)

    def fresh(self) -> Compaction | None:
        """A full compaction of the page now, with the ids the host reserved for the
        client's view of the tab; None when the page is no longer the document the
        latest answer showed (a navigation that came after the answer, which the
        client is told of at its next call)."""
        return self.run(self._fresh)

    async def _fresh(self) -> Compaction | None:
        view = self._view()
        async with view.lock:  # no tool runs meanwhile
            model = await view.memory.capture()
            if model.document_id != view.memory.latest_document:
                return None
            return compact(model, count=False, reserved=view.memory.reserved(model))

    def _page(self) -> PageTarget:
        raise NotImplementedError

    def _view(self) -> Tab:
        raise NotImplementedError


@attrs.define
class DirectDriver(Driver):
    """The side panel's request handlers, called in-process (`handlers_host`)."""

    host: Host | None = None

    @contextlib.asynccontextmanager
    async def _hold(self, page: PageTarget, url: str) -> AsyncIterator[None]:
        async with trio.open_nursery() as inner, open_host(page, url, inner) as host:
            self.host = host
            try:
                yield
            finally:
                self.host = None
                inner.cancel_scope.cancel()

    async def _tool(self, name: str, args: dict[str, Any]) -> Answer:
        assert self.host is not None
        try:
            answer = await self.host.tool(name, **args)
        except RequestError as exc:  # the host's error reply: nothing was shown
            return Answer(str(exc), is_error=True, refused=exc.code)
        return Answer(answer["content"], is_error=answer["is_error"])

    def _page(self) -> PageTarget:
        assert self.host is not None
        return self.host.page

    def _view(self) -> Tab:
        assert self.host is not None
        tab = self.host.state.tab(TAB)
        assert tab is not None
        return tab


# The block an MCP answer carries the page's words in (host/link/server/_untrusted.py).
_OPENING = re.compile(r"<<<PAGE DATA ([0-9a-f]{16})>>>\n")


def page_data(text: str, marker: str | None) -> tuple[str, str, str | None]:
    """What a model reads in one MCP answer: the page's words, Trimtab's words after
    them, and the block's marker. The page's words are the inside of the block the
    answer opens with (marked as every earlier block: a page cannot write a marker);
    what follows the block is Trimtab's (a repeat's note), never the page's. An answer
    that opens with no block is Trimtab's words alone (an error of the call)."""
    opening = _OPENING.match(text)
    if opening is None:
        assert "<<<" not in text, f"an answer with a block that is not its start: {text!r}"
        return text, "", marker
    found = opening.group(1)
    assert marker in (None, found), f"a block marked {found}, the session's is {marker}"
    end = f"\n<<<END PAGE DATA {found}>>>"
    inside, closed, after = text[opening.end() :].partition(end)
    assert closed, f"a block that never ends: {text!r}"
    assert "<<<" not in inside, f"a block inside the block: {text!r}"
    assert after == "" or re.fullmatch(r"\n\[[^\n]*\]", after), f"after the block: {after!r}"
    return inside, after.strip(), found


@attrs.define
class McpDriver(Driver):
    """A real ``trimtab mcp`` process under the official SDK's client, through the link
    to a real host state on the tab (`link_host`); the tab is shared with agents, and the
    person says yes to every question."""

    link_host: LinkHost | None = None
    client: Client | None = None
    marker: str | None = None

    @contextlib.asynccontextmanager
    async def _hold(self, page: PageTarget, url: str) -> AsyncIterator[None]:
        async with open_link_host(page, url) as link_host:
            await link_host.share(TAB)
            async with trio.open_nursery() as inner:
                inner.start_soon(_say_yes, link_host)
                async with link_host.mcp_client("belief-agent") as client:
                    self.link_host, self.client, self.marker = link_host, client, None
                    try:
                        yield
                    finally:
                        self.link_host = self.client = None
                inner.cancel_scope.cancel()

    async def _tool(self, name: str, args: dict[str, Any]) -> Answer:
        assert self.client is not None
        result = await self.client.call_tool(name, {"tab": TAB, **args})
        text = "".join(getattr(part, "text", "") for part in result.content)
        content, note, self.marker = page_data(text, self.marker)
        return Answer(content, is_error=bool(result.is_error), note=note)

    def _page(self) -> PageTarget:
        assert self.link_host is not None
        return self.link_host.page

    def _view(self) -> Tab:
        """The link client's own view of the tab: the one client of this host."""
        assert self.link_host is not None
        held = self.link_host.link.state.tabs[TAB]
        (view,) = held.views.values()
        return view


async def _say_yes(host: LinkHost) -> None:
    """The person at the side panel: yes to every question the link asks them."""
    decoder = FrameDecoder()
    while True:
        data = await host.extension.receive.receive_some()
        for event in decoder.feed(data):
            if isinstance(event, DecodedMessage) and event.message.get("type") == "ask":
                host.panel.answer(event.message["ask"], allow=True, always=True)
