"""Tabs an action opens: guarded from their first request, and told in the answer.

While a call's action runs in a tab, the host hands every tab the browser reports
opened from it (``tab_opened``) to the call's `OpenedByCall`: each is guarded by the
call's request guard (`trimtab.tab.guard_opened`: the browser holds it before its
first request, so a pop-up on another site asks the site question before anything
leaves the browser), and the call's answer says what became of it (`notes`).
"""

from __future__ import annotations

import contextlib
from typing import Final

import attrs
import trio

from pycdp_bridge import CDPError, DialogOpenError, RelayHub, TabEvent, TargetClosedError

from ..tab import Activity, OpenedTab, guard_opened, stretched

__all__ = ["OPENED_WAIT", "OpenedByCall", "OpenedRecord", "opened_note"]

# Seconds a call waits, once its tool is done, for the first request of a tab it opened
# to be decided (the person's answer does not count): a tab the browser has not sent
# its first request for by then is left to load unguarded, which `notes` says.
OPENED_WAIT: Final = 3.0


@attrs.define(eq=False)
class OpenedRecord:
    """One tab the call's action opened, and what its guard saw."""

    event: TabEvent
    opened: OpenedTab | None = None
    closed: bool = False  # it closed before the call ended
    blocked: bool = False  # past the task's limit: closed at once
    problem: str | None = None  # why it could not be guarded


@attrs.define(eq=False)
class OpenedByCall:
    """The tabs one call's action opened from its tab (`tab`)."""

    tab: int
    records: list[OpenedRecord] = attrs.field(factory=list)
    _send: trio.MemorySendChannel[OpenedRecord] = attrs.field(init=False)
    _receive: trio.MemoryReceiveChannel[OpenedRecord] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._send, self._receive = trio.open_memory_channel[OpenedRecord](1000)

    def opened(self, event: TabEvent, *, blocked: bool) -> None:
        """The browser opened ``event.tab`` from the call's tab (``blocked``: past the
        task's limit, closed by the host, not guarded)."""
        record = OpenedRecord(event, blocked=blocked)
        self.records.append(record)
        if not blocked:
            with contextlib.suppress(trio.WouldBlock, trio.ClosedResourceError):
                self._send.send_nowait(record)

    def closed(self, tab: int) -> None:
        for record in self.records:
            if record.event.tab == tab:
                record.closed = True

    async def guard_each(self, hub: RelayHub) -> None:
        """Guard every opened tab until cancelled (the call is over)."""
        async with trio.open_nursery() as nursery:
            async for record in self._receive:
                nursery.start_soon(self._guard, hub, record)

    async def _guard(self, hub: RelayHub, record: OpenedRecord) -> None:
        target = hub.target(record.event.tab)
        try:
            async with guard_opened(target, Activity("")) as opened:
                record.opened = opened
                await trio.sleep_forever()
        except (CDPError, TargetClosedError, DialogOpenError) as exc:
            record.problem = str(exc)
            if record.opened is not None:
                record.opened.decided.set()

    async def decisions(self) -> None:
        """Wait (at most `OPENED_WAIT`, not counting the person's answer) until the first
        request of every opened tab was decided."""
        with trio.move_on_after(OPENED_WAIT) as limit, stretched(limit):
            for record in list(self.records):
                while record.opened is None and not (record.blocked or record.problem):
                    await trio.sleep(0.01)
                if record.opened is not None and not record.closed:
                    await record.opened.decided.wait()


def opened_note(record: OpenedRecord, title: str, url: str) -> str:
    """What the answer says of one opened tab (page strings as they are: the answer's
    ``<note>`` escapes them)."""
    event = record.event
    what = "a pop-up" if event.popup else "a new tab"
    opened = record.opened
    if opened is not None and opened.sent is False:
        return f"it tried to open {what} on {opened.url[:200]}: blocked ({opened.why})"
    where = (url or (opened.url if opened else "") or event.url)[:300]
    named = f' "{title[:120]}"' if title else ""
    if record.closed:
        return f"it opened {what} (tab {event.tab}) at {where}, which closed again"
    if event.popup:
        return f"it opened {what}, tab {event.tab}, at {where}{named}: you are in it now"
    return (
        f"it opened {what} behind, tab {event.tab}, at {where}{named}; "
        f"switch_tab({event.tab}) to act in it"
    )
