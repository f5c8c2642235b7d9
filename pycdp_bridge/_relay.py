"""The relay transport: CDP through the extension's ``chrome.debugger``.

The host decides every command; the extension's service worker runs it with
``chrome.debugger.sendCommand`` and sends back results and events as native
messages (``host/PROTOCOL.md``, "The CDP relay"). `RelayHub` is the host's end:
the host's dispatcher passes every ``cdp_result``/``cdp_event``/``cdp_detached``
message to `RelayHub.feed`, and `RelayHub.target` gives a `Target` per tab that
attaches the debugger on first use. All tabs share one id space because a
``cdp_result`` carries only the id.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Final, Literal

import attrs
import trio

from ._connection import CDPConnection, Request
from ._target import CommandChannel, SessionTarget

__all__ = ["TAB_MESSAGE_TYPES", "RelayHub", "RelayTarget", "TabEvent"]

SendMessage = Callable[[dict[str, Any]], Awaitable[None]]

_ATTACH = "cdp_attach"
_DETACH = "cdp_detach"
_ID_PREFIX = "c"
# What the extension tells of tabs coming and going (not replies, not CDP).
TAB_MESSAGE_TYPES: Final = frozenset({"tab_opened", "tab_closed", "tab_left", "tab_gated"})
_TAB_EVENT_KINDS: Final[dict[str, Literal["opened", "closed", "left", "gated"]]] = {
    "tab_opened": "opened",
    "tab_closed": "closed",
    "tab_left": "left",
    "tab_gated": "gated",
}
# A tab's listeners may fall this far behind before its events are dropped (counted).
_TAB_EVENT_BUFFER: Final = 1024


@attrs.frozen
class TabEvent:
    """A tab opened from one the relay is attached to, closed, taken out of a task, or
    kept from its first document by a gate (`RelayHub.gate`: ``url`` is the document's)."""

    kind: Literal["opened", "closed", "left", "gated"]
    tab: int
    opener: int | None = None
    url: str = ""
    popup: bool = False  # opened as a window of its own
    # The browser holds the tab before its first request until the host sends it
    # ``Runtime.runIfWaitingForDebugger`` (the request guard is set up first).
    waiting: bool = False


@attrs.frozen
class RelayStatistics:
    """A snapshot of a relay hub's counters."""

    tabs: int
    messages_fed: int
    unroutable: int


class RelayTarget(SessionTarget):
    """One tab reached through the extension; attaches the debugger on first use."""

    def __init__(self, hub: RelayHub, tab_id: int) -> None:
        super().__init__(CommandChannel(self._transmit, hub._new_connection()), None)
        self.tab_id = tab_id
        self._hub = hub
        self._attach_lock = trio.Lock()
        self._attached = False

    async def send(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        session_id: str | None = None,
    ) -> dict[str, Any]:
        if not self._attached:
            async with self._attach_lock:
                if not self._attached:
                    await self._channel.call(_ATTACH)
                    self._attached = True
        return await super().send(method, params, session_id=session_id)

    async def detach(self) -> None:
        """Ask the extension to detach the debugger; the target is closed afterwards."""
        if self._attached and not self.closed:
            await self._channel.call(_DETACH)
        self._channel.close("detached by the host")
        self._hub._forget(self)

    async def _transmit(self, request: Request) -> None:
        message: dict[str, Any] = {"type": "cdp", "id": f"{_ID_PREFIX}{request.id}"}
        if request.method in (_ATTACH, _DETACH):
            message = {"type": request.method, "id": message["id"], "tab": self.tab_id}
        else:
            message.update(
                tab=self.tab_id,
                session=request.session_id,
                method=request.method,
                params=request.params,
            )
        await self._hub._send_message(message)


class RelayHub:
    """The host's side of the CDP relay for every tab of one extension connection."""

    def __init__(self, send_message: SendMessage) -> None:
        self._send_message = send_message
        self._ids = itertools.count(1)
        self._targets: dict[int, RelayTarget] = {}
        self._messages_fed = 0
        self._unroutable = 0
        self._tab_listeners: set[trio.MemorySendChannel[TabEvent]] = set()
        # The host's requests about tabs (open, close, group), which no tab's target sends.
        self._tabs_channel = CommandChannel(self._transmit_tabs, self._new_connection())

    def target(self, tab_id: int) -> RelayTarget:
        """The tab's target; a closed one (tab detached) is replaced by a fresh one."""
        existing = self._targets.get(tab_id)
        if existing is None or existing.closed:
            existing = self._targets[tab_id] = RelayTarget(self, tab_id)
        return existing

    def feed(self, message: Mapping[str, Any]) -> None:
        """Route one ``cdp_result``, ``cdp_event`` or ``cdp_detached`` message."""
        self._messages_fed += 1
        kind = message.get("type")
        if kind == "cdp_result":
            self._feed_result(message)
        elif kind == "cdp_event":
            target = self._targets.get(_tab_of(message))
            if target is None:
                self._unroutable += 1
                return
            event: dict[str, Any] = {
                "method": message.get("method"),
                "params": message.get("params") or {},
            }
            if message.get("session") is not None:
                event["sessionId"] = message["session"]
            target._channel.feed(event)
        elif kind in TAB_MESSAGE_TYPES:
            self._feed_tab(message)
        elif kind == "cdp_detached":
            target = self._targets.pop(_tab_of(message), None)
            if target is None:
                self._unroutable += 1
                return
            target._channel.close(f"debugger detached: {message.get('reason', 'unknown')}")
        else:
            raise ValueError(f"not a CDP relay message: type {kind!r}")

    def close(self, reason: str = "extension disconnected") -> None:
        """Fail every tab's pending commands (the native port closed)."""
        for target in self._targets.values():
            target._channel.close(reason)
        self._targets.clear()
        self._tabs_channel.close(reason)
        for listener in list(self._tab_listeners):
            listener.close()
        self._tab_listeners.clear()

    @asynccontextmanager
    async def tab_events(self) -> AsyncIterator[trio.MemoryReceiveChannel[TabEvent]]:
        """Receive every `TabEvent` from now on, until the block ends or the hub closes."""
        sender, receiver = trio.open_memory_channel[TabEvent](_TAB_EVENT_BUFFER)
        if self._tabs_channel.closed:
            sender.close()
        else:
            self._tab_listeners.add(sender)
        try:
            async with receiver:
                yield receiver
        finally:
            self._tab_listeners.discard(sender)
            sender.close()

    async def new_tab(self, url: str, *, opener: int | None = None, active: bool = False) -> int:
        """Open a tab at ``url`` (beside ``opener``; in front when ``active``): its id."""
        params: dict[str, Any] = {"url": url, "active": active}
        if opener is not None:
            params["opener"] = opener
        result = await self._tabs_channel.call("cdp_new_tab", params)
        tab = result.get("tab")
        if isinstance(tab, bool) or not isinstance(tab, int):
            raise ValueError(f"cdp_new_tab answered without an integer tab: {tab!r:.60}")
        return tab

    async def close_tab(self, tab: int) -> None:
        """Close the tab (the person sees it go, as if they had closed it)."""
        await self._tabs_channel.call("cdp_close_tab", {"tab": tab})

    async def tab_group(self, tabs: Sequence[int], title: str) -> int | None:
        """Put ``tabs`` in one tab group titled ``title`` (created or extended): its id."""
        result = await self._tabs_channel.call("tab_group", {"tabs": list(tabs), "title": title})
        group = result.get("group")
        return group if isinstance(group, int) and not isinstance(group, bool) else None

    async def gate(self, tab: int, domains: Sequence[str] | None) -> None:
        """While an action in ``tab`` runs, keep every tab that opens meanwhile from
        loading a first document outside ``domains`` (the browser blocks it before it
        is sent; the extension reports it ``tab_gated``); None lifts the gate."""
        params: dict[str, Any] = {"tab": tab, "domains": None if domains is None else [*domains]}
        await self._tabs_channel.call("tab_gate", params)

    async def pass_tab(self, tab: int, url: str) -> None:
        """Let a tab a gate kept from ``url`` go there after all (the host allowed it)."""
        await self._tabs_channel.call("tab_pass", {"tab": tab, "url": url})

    async def decide_download(self, download: int, allow: bool) -> None:
        """Let a download the extension holds (``download_held``) be saved, or cancel
        and erase it."""
        await self._tabs_channel.call("download_decide", {"download": download, "allow": allow})

    def statistics(self) -> RelayStatistics:
        return RelayStatistics(
            tabs=len(self._targets), messages_fed=self._messages_fed, unroutable=self._unroutable
        )

    async def _transmit_tabs(self, request: Request) -> None:
        message: dict[str, Any] = {"type": request.method, "id": f"{_ID_PREFIX}{request.id}"}
        message.update(request.params or {})
        await self._send_message(message)

    def _feed_tab(self, message: Mapping[str, Any]) -> None:
        """Hand a ``tab_opened``/``tab_closed``/``tab_left`` to the listeners; a tab that
        closed also ends its target (its pending commands fail as closed)."""
        tab = message.get("tab")
        if isinstance(tab, bool) or not isinstance(tab, int):
            self._unroutable += 1
            return
        kind = str(message.get("type"))
        opener = message.get("opener")
        event = TabEvent(
            kind=_TAB_EVENT_KINDS[kind],
            tab=tab,
            opener=opener if isinstance(opener, int) and not isinstance(opener, bool) else None,
            url=str(message.get("url") or "")[:8192],
            popup=message.get("popup") is True,
            waiting=message.get("waiting") is True,
        )
        if event.kind == "closed":
            target = self._targets.pop(tab, None)
            if target is not None:
                target._channel.close("the tab closed")
        for listener in list(self._tab_listeners):
            try:
                listener.send_nowait(event)
            except trio.WouldBlock:
                self._unroutable += 1
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                self._tab_listeners.discard(listener)

    def _new_connection(self) -> CDPConnection:
        return CDPConnection(self._ids)

    def _forget(self, target: RelayTarget) -> None:
        if self._targets.get(target.tab_id) is target:
            del self._targets[target.tab_id]

    def _feed_result(self, message: Mapping[str, Any]) -> None:
        raw_id = str(message.get("id", ""))
        number = raw_id.removeprefix(_ID_PREFIX)
        if not (raw_id.startswith(_ID_PREFIX) and number.isdigit()):
            self._unroutable += 1
            return
        command_id = int(number)
        channels = [self._tabs_channel, *(t._channel for t in self._targets.values())]
        for channel in channels:
            if channel.connection.is_pending(command_id):
                reply: dict[str, Any] = {"id": command_id}
                if "error" in message:
                    reply["error"] = message["error"]
                else:
                    reply["result"] = message.get("result") or {}
                channel.feed(reply)
                return
        self._unroutable += 1


def _tab_of(message: Mapping[str, Any]) -> int:
    tab = message.get("tab")
    if not isinstance(tab, int):
        raise ValueError(f"CDP relay message without an integer tab: {tab!r}")
    return tab
