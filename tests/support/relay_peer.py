"""A fake extension service worker for host-side tests of the CDP relay."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Awaitable, Callable
from typing import Any

import trio
import trio.testing

from pycdp_bridge import (
    Browser,
    CDPError,
    DialogOpenError,
    OpenedPage,
    PageTarget,
    TargetClosedError,
)
from pycdp_bridge import protocol as cdp
from trimtab.browser import TabRelayHub as RelayHub

__all__ = ["HOLD", "OPENED_TABS", "RelayPeer"]

# A method the peer never answers: a command left pending, for detach and close tests.
HOLD = "Test.neverAnswered"
# Tab ids the peer gives the tabs opened from its tabs: far from the tests' own.
OPENED_TABS = 9000
# window.open features that make a window of its own rather than a tab.
_WINDOW_FEATURES = ("width", "height", "left", "top", "popup")


class RelayPeer:
    """Plays the extension's service worker: relays the host's CDP to real pages.

    Answers ``cdp_attach``/``cdp_detach`` itself, runs ``cdp`` commands on the tab's
    page (child sessions included) and forwards the page's events once attached, the
    way ``chrome.debugger`` would: results and errors as ``cdp_result``, a page that
    went away as ``cdp_detached``.

    With ``follow_opened`` (the tabs of a task), it also reports every page opened from
    one of its tabs as ``tab_opened`` (held by the browser before its first request,
    ``waiting``: the direct transport can, `Browser.opened_pages`), and such a tab that
    closes as ``tab_closed``; and it runs the host's ``cdp_new_tab``, ``cdp_close_tab``
    and ``tab_group`` requests.

    ``before_command(method)``, when given, runs before each of the host's CDP commands
    reaches the page: a test makes the page do something at that exact moment (open a
    dialog as the host's first ``Page.enable`` is on its way). A ``tab_gate`` is
    answered after ``gate_delay`` seconds, and logged (``gate_log``).
    """

    def __init__(
        self,
        page: PageTarget,
        tab: int,
        *,
        follow_opened: bool = False,
        before_command: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        self.page = page
        self.tab = tab
        self.pages: dict[int, PageTarget] = {tab: page}
        self.follow_opened = follow_opened
        self.before_command = before_command
        self.hub = RelayHub(self.send_message)
        self.sent: list[dict[str, Any]] = []
        # Seconds the peer takes to answer a ``tab_gate``, and when each was asked for
        # and answered (trio clock), with its domains (None: a lift).
        self.gate_delay = 0.0
        self.gate_log: list[tuple[str, float, object]] = []
        self._inbox_send, self._inbox = trio.open_memory_channel[dict[str, Any]](1000)
        self.attached = trio.Event()
        self._attached: dict[int, trio.Event] = {tab: self.attached}
        self._ids = itertools.count(OPENED_TABS)
        self._nursery: trio.Nursery | None = None
        # Tabs the peer opened itself (`cdp_new_tab`): reported by its own reply.
        self._creating: set[str] = set()
        # What each tab's page asked of ``window.open`` (Page.windowOpen), and how many
        # of those were reported opened: a window with features is a pop-up.
        self._window_opens: dict[int, list[dict[str, Any]]] = {}
        self._reported: dict[int, int] = {}
        self._window_opened = trio.Event()

    async def send_message(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        await self._inbox_send.send(message)

    def kinds(self) -> list[str]:
        """Message types sent to the peer, with CDP commands by method name."""
        return [m["type"] if m["type"] != "cdp" else m["method"] for m in self.sent]

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            nursery.start_soon(self._forward_events, self.page, self.tab)
            if self.follow_opened:
                nursery.start_soon(self._window_opens_of, self.page, self.tab)
                await nursery.start(self._follow_opened)
            task_status.started()
            async for message in self._inbox:
                nursery.start_soon(self._handle, message)

    def detach(self, reason: str, tab: int | None = None) -> None:
        """What the worker reports when Chrome detaches the debugger."""
        self.hub.feed(
            {"type": "cdp_detached", "tab": self.tab if tab is None else tab, "reason": reason}
        )

    async def _follow_opened(self, *, task_status: trio.TaskStatus[None]) -> None:
        async with self.page.browser.opened_pages() as opened:
            task_status.started()
            async for found in opened:
                assert self._nursery is not None
                self._nursery.start_soon(self._opened, found)

    async def _opened(self, found: OpenedPage) -> None:
        opener = next(
            (tab for tab, page in self.pages.items() if page.target_id == found.opener), None
        )
        if found.page.target_id in self._creating or opener is None:
            # Not opened from a tab of ours (a test's own new page): not the task's.
            if found.waiting:
                with contextlib.suppress(CDPError, TargetClosedError):
                    await found.page.execute(cdp.runtime_run_if_waiting_for_debugger())
            return
        # chrome.windows knows a pop-up window from a tab; here the opener's window.open
        # says it: a size, a place or "popup" make a window of its own (a link's new
        # tab has only menubar, toolbar and the like).
        index = self._reported.get(opener, 0)
        self._reported[opener] = index + 1
        with trio.move_on_after(1):
            while len(self._window_opens.get(opener, ())) <= index:
                await self._window_opened.wait()
        asked = self._window_opens.get(opener, [])
        features = asked[index].get("windowFeatures", []) if index < len(asked) else []
        popup = any(str(f).startswith(_WINDOW_FEATURES) for f in features)
        tab = self._add(found.page)
        self.hub.feed(
            {
                "type": "tab_opened",
                "tab": tab,
                "opener": opener,
                "url": found.url,
                "popup": popup,
                "waiting": found.waiting,
            }
        )

    def _add(self, page: PageTarget) -> int:
        tab = next(self._ids)
        self.pages[tab] = page
        self._attached[tab] = trio.Event()
        assert self._nursery is not None
        self._nursery.start_soon(self._forward_events, page, tab)
        self._nursery.start_soon(self._watch_closed, page, tab)
        self._nursery.start_soon(self._window_opens_of, page, tab)
        return tab

    async def _window_opens_of(self, page: PageTarget, tab: int) -> None:
        async with page.listen(cdp.events.PAGE_WINDOW_OPEN) as opens:
            async for event in opens:
                if event.session_id is None:
                    self._window_opens.setdefault(tab, []).append(dict(event.params))
                    self._window_opened.set()
                    self._window_opened = trio.Event()

    async def _watch_closed(self, page: PageTarget, tab: int) -> None:
        browser = page.browser
        async with browser.listen(cdp.events.TARGET_DETACHED_FROM_TARGET) as events:
            async for event in events:
                if (
                    event.params.get("targetId") == page.target_id
                    or event.params.get("sessionId") == page.session_id
                ):
                    break
        # Chrome detaches the debugger from a closed tab, then says the tab closed.
        self.pages.pop(tab, None)
        self.detach("target_closed", tab)
        self.hub.feed({"type": "tab_closed", "tab": tab})

    async def _handle(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind in ("cdp_new_tab", "cdp_close_tab", "tab_group", "tab_gate", "tab_pass"):
            await self._tabs_request(message)
            return
        tab = message.get("tab", self.tab)
        if kind in ("cdp_attach", "cdp_detach"):
            if kind == "cdp_attach" and tab in self._attached:
                self._attached[tab].set()
            reply = {"type": "cdp_result", "id": message["id"], "result": {}}
            if tab not in self.pages:
                reply = {
                    "type": "cdp_result",
                    "id": message["id"],
                    "error": {"code": -32000, "message": f"No tab with given id {tab}."},
                }
            self.hub.feed(reply)
            return
        if message["method"] == HOLD:
            return
        if self.before_command is not None:
            await self.before_command(message["method"])
        page = self.pages.get(tab)
        reply = {"type": "cdp_result", "id": message["id"]}
        if page is None:
            self.detach("target_closed", tab)
            return
        try:
            reply["result"] = await page.send(
                message["method"], message["params"], session_id=message["session"]
            )
        except CDPError as error:
            reply["error"] = {"code": error.code, "message": error.message}
        except TargetClosedError:
            self.detach("target_closed", tab)
            return
        except DialogOpenError:
            # The page shows a dialog the host's connection has not heard of yet. Chrome
            # keeps such a command waiting until the dialog is answered; the host fails
            # it itself once the dialog's event reaches it.
            return
        # chrome.debugger hands over a command's events (Target.attachedToTarget for the
        # frames Target.setAutoAttach finds) before its result. Here they travel through
        # the forwarding task: let it pass on everything already received first.
        await trio.testing.wait_all_tasks_blocked()
        self.hub.feed(reply)

    async def _tabs_request(self, message: dict[str, Any]) -> None:
        """``cdp_new_tab``, ``cdp_close_tab``, ``tab_group``, ``tab_gate`` and
        ``tab_pass``, as the worker runs them."""
        reply: dict[str, Any] = {"type": "cdp_result", "id": message["id"]}
        browser = self.page.browser
        try:
            if message["type"] == "cdp_new_tab":
                created = await browser.execute(cdp.target_create_target("about:blank"))
                self._creating.add(created["targetId"])
                attached = await browser.execute(
                    cdp.target_attach_to_target(created["targetId"], flatten=True)
                )
                page = PageTarget(browser, created["targetId"], attached["sessionId"])
                tab = self._add(page)
                # chrome.tabs.create({url}): the tab starts loading its URL at once.
                await page.execute(cdp.page_navigate(str(message["url"])))
                reply["result"] = {"tab": tab}
            elif message["type"] == "cdp_close_tab":
                page = self.pages.get(message["tab"])
                if page is None:
                    raise CDPError("tabs.remove", -32000, f"No tab with id: {message['tab']}.")
                await browser.execute(cdp.target_close_target(page.target_id))
                # chrome.tabs.remove resolves once the tab is gone; closeTarget answers
                # before the browser has taken its target down.
                await _gone(browser, page.target_id)
                reply["result"] = {}
            elif message["type"] == "tab_pass":
                # Never asked for here: the browser's own hold keeps every new page
                # before its first request, so no gate is needed (`tab_gate` is a no-op).
                page = self.pages.get(message["tab"])
                if page is None:
                    raise CDPError("tabs.update", -32000, f"No tab with id: {message['tab']}.")
                await page.execute(cdp.page_navigate(str(message["url"])))
                reply["result"] = {}
            elif message["type"] == "tab_gate":
                # What the extension's rule update takes, made longer by a test.
                self.gate_log.append(("asked", trio.current_time(), message["domains"]))
                await trio.sleep(self.gate_delay)
                self.gate_log.append(("answered", trio.current_time(), message["domains"]))
                reply["result"] = {}
            else:
                reply["result"] = {"group": 1}
        except CDPError as error:
            reply["error"] = {"code": error.code, "message": error.message}
        self.hub.feed(reply)

    async def _forward_events(self, page: PageTarget, tab: int) -> None:
        async with page.listen() as events:
            await self._attached[tab].wait()
            async for event in events:
                self.hub.feed(
                    {
                        "type": "cdp_event",
                        "tab": tab,
                        "session": event.session_id,
                        "method": event.method,
                        "params": dict(event.params),
                    }
                )


# Seconds a closed tab's target may take to leave the browser's list.
_CLOSE_TIMEOUT = 10.0


async def _gone(browser: Browser, target_id: str) -> None:
    """Wait until the browser no longer lists target ``target_id`` (at most
    `_CLOSE_TIMEOUT`, as a tab that stays is the browser's to report, not the peer's)."""
    with trio.move_on_after(_CLOSE_TIMEOUT):
        while True:
            listed = await browser.execute(cdp.target_get_targets())
            if all(t["targetId"] != target_id for t in listed["targetInfos"]):
                return
            await trio.sleep(0.02)
