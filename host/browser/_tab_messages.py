"""Trimtab's own messages about tabs over the extension's port, beside the CDP relay.

The extension tells the host of tabs opened from the tabs it relays, closed, taken out
of a task, or kept from their first document by a gate (``tab_opened``,
``tab_closed``, ``tab_left``, ``tab_gated``: `TabEvent`), and the host asks it to open,
close, group, gate and let pass tabs and to decide downloads. None of it is CDP, so it
lives here rather than in ``pycdp_bridge``: `TabRelayHub` is that package's `RelayHub`
(the transport) given the handler of these messages, and the host's requests on top
of `RelayHub.request` (``host/PROTOCOL.md``, "The CDP relay").
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Final, Literal

import attrs
import trio

from pycdp_bridge import RelayHub, SendMessage

__all__ = ["TAB_MESSAGE_TYPES", "GateTurn", "TabEvent", "TabRelayHub"]

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
    kept from its first document by a gate (`TabRelayHub.gate`: ``url`` is the
    document's)."""

    kind: Literal["opened", "closed", "left", "gated"]
    tab: int
    opener: int | None = None
    url: str = ""
    popup: bool = False  # opened as a window of its own
    # The browser holds the tab before its first request until the host sends it
    # ``Runtime.runIfWaitingForDebugger`` (the request guard is set up first).
    waiting: bool = False


@attrs.define(eq=False)
class GateTurn:
    """One gate request's place among those of its tab (`TabRelayHub.gate_turn`)."""

    hub: TabRelayHub
    tab: int
    previous: trio.Event | None
    done: trio.Event = attrs.field(factory=trio.Event)

    async def ready(self) -> None:
        """Return once the tab's previous gate request was answered (or given up)."""
        if self.previous is not None:
            await self.previous.wait()

    async def send(self, domains: Sequence[str] | None) -> None:
        """Set (``domains``) or lift (None) the tab's gate once the tab's previous gate
        request was answered (see `TabRelayHub.gate`)."""
        try:
            await self.ready()
            params: dict[str, Any] = {
                "tab": self.tab,
                "domains": None if domains is None else [*domains],
            }
            await self.hub.request("tab_gate", params)
        finally:
            self.give_up()

    def give_up(self) -> None:
        """The turn is over (answered, failed, or never sent): the next may go."""
        self.done.set()
        self.hub._turn_over(self)


class TabRelayHub(RelayHub):
    """The CDP relay of one extension connection with the extension's tab messages:
    `tab_events` to follow tabs, and the host's requests about tabs and downloads."""

    def __init__(self, send_message: SendMessage) -> None:
        super().__init__(send_message, handlers=dict.fromkeys(TAB_MESSAGE_TYPES, self._feed_tab))
        self._tab_listeners: set[trio.MemorySendChannel[TabEvent]] = set()
        # Per tab, the latest gate request's turn (`gate_turn`).
        self._gate_turns: dict[int, GateTurn] = {}

    def close(self, reason: str = "extension disconnected") -> None:
        """Fail every tab's pending commands and end every `tab_events` stream."""
        super().close(reason)
        for listener in list(self._tab_listeners):
            listener.close()
        self._tab_listeners.clear()

    @asynccontextmanager
    async def tab_events(self) -> AsyncIterator[trio.MemoryReceiveChannel[TabEvent]]:
        """Receive every `TabEvent` from now on, until the block ends or the hub closes."""
        sender, receiver = trio.open_memory_channel[TabEvent](_TAB_EVENT_BUFFER)
        if self.closed:
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
        result = await self.request("cdp_new_tab", params)
        tab = result.get("tab")
        if isinstance(tab, bool) or not isinstance(tab, int):
            raise ValueError(f"cdp_new_tab answered without an integer tab: {tab!r:.60}")
        return tab

    async def close_tab(self, tab: int) -> None:
        """Close the tab (the person sees it go, as if they had closed it)."""
        await self.request("cdp_close_tab", {"tab": tab})

    async def tab_group(self, tabs: Sequence[int], title: str) -> int | None:
        """Put ``tabs`` in one tab group titled ``title`` (created or extended): its id."""
        result = await self.request("tab_group", {"tabs": list(tabs), "title": title})
        group = result.get("group")
        return group if isinstance(group, int) and not isinstance(group, bool) else None

    async def gate(self, tab: int, domains: Sequence[str] | None) -> None:
        """While an action in ``tab`` runs, keep every tab that opens meanwhile from
        loading a first document outside ``domains`` (the browser blocks it before it
        is sent; the extension reports it ``tab_gated``); None lifts the gate. Sent in
        its turn among the tab's gate requests (`gate_turn`)."""
        await self.gate_turn(tab).send(domains)

    def gate_turn(self, tab: int) -> GateTurn:
        """The next turn to send ``tab`` a gate request, taken now: the request is sent
        once the tab's previous one was answered (or given up), so a lift still on its
        way in the background goes before the next action's gate, which it would
        otherwise take away."""
        previous = self._gate_turns.get(tab)
        turn = GateTurn(self, tab, previous.done if previous is not None else None)
        self._gate_turns[tab] = turn
        return turn

    def _turn_over(self, turn: GateTurn) -> None:
        if self._gate_turns.get(turn.tab) is turn:
            del self._gate_turns[turn.tab]

    async def pass_tab(self, tab: int, url: str) -> None:
        """Let a tab a gate kept from ``url`` go there after all (the host allowed it)."""
        await self.request("tab_pass", {"tab": tab, "url": url})

    async def decide_download(self, download: int, allow: bool) -> None:
        """Let a download the extension holds (``download_held``) be saved, or cancel
        and erase it."""
        await self.request("download_decide", {"download": download, "allow": allow})

    def _feed_tab(self, message: Mapping[str, Any]) -> int:
        """Hand a ``tab_opened``/``tab_closed``/``tab_left``/``tab_gated`` to the
        listeners; a tab that closed also ends its target (its pending commands fail as
        closed). Returns how many deliveries failed (the hub counts them unroutable)."""
        tab = message.get("tab")
        if isinstance(tab, bool) or not isinstance(tab, int):
            return 1
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
            self.close_target(tab, "the tab closed")
        dropped = 0
        for listener in list(self._tab_listeners):
            try:
                listener.send_nowait(event)
            except trio.WouldBlock:
                dropped += 1
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                self._tab_listeners.discard(listener)
        return dropped
