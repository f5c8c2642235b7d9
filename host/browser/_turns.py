"""Whose turn it is in a tab: one tool call at a time, in arrival order, with a bound.

Two clients on one tab (two outside agents, or one and the side panel's agent) must
never interleave their actions: a click of one between another's type and its
submit question would act on a page that client never saw. So a call takes its
tab's turn before it opens the page and keeps it until its answer is built,
including the time the person takes to answer its question. A call that would wait
longer than `turn_wait` (``TRIMTAB_TAB_WAIT`` seconds, default 10) is answered at once
with who holds the tab and what it is doing, instead of hanging behind a question
nobody may answer. Tabs have their own turns: a slow page in one tab never delays a
call in another. A tab that closes (`TabTurns.close`) fails the calls waiting for its
turn at once (``target_closed``), instead of letting each in turn find it gone.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Final

import attrs
import trio

from ..envelope import Answer, Ask, Question
from ..wire import JSONObject, RequestError, seconds_setting
from ._call import ToolCall

__all__ = ["TAB_WAIT", "TabBusy", "TabTurns", "Turn", "turn_wait"]

#: How long a call waits for another call's turn in its tab, by default (seconds).
TAB_WAIT: Final = 10.0


def turn_wait() -> float:
    """How long a call waits for its tab's turn: ``TRIMTAB_TAB_WAIT`` seconds, else
    `TAB_WAIT`."""
    return seconds_setting("TRIMTAB_TAB_WAIT", TAB_WAIT)


class TabBusy(Exception):
    """A call did not get its tab's turn in time; the message says who holds it."""


@attrs.define(eq=False)
class Turn:
    """The call holding a tab now: who, doing what, since when, and whether it waits
    for the person's answer."""

    call: ToolCall
    element: str  # the name of the element it acts on, as its caller saw it ('' : none)
    since: float
    asking: int = 0  # questions open now

    def asks(self, ask: Ask) -> Ask:
        """``ask``, marking this turn as waiting for the person while it asks."""

        async def asking(question: Question) -> Answer:
            self.asking += 1
            try:
                return await ask(question)
            finally:
                self.asking -= 1

        return asking

    def words(self, tab: int) -> str:
        """What the busy answer says of this turn (the element's name is the page's)."""
        who = self.call.client or "another agent"
        doing = f"running {self.call.name}"
        if self.element:
            doing += f" on “{self.element}”"
        held = max(0, round(trio.current_time() - self.since))
        waiting = " (waiting for the person's answer in the side panel)" if self.asking else ""
        return (
            f"tab {tab} is busy: {who} is {doing}{waiting}, for {held} s so far. "
            "Calls on one tab run one at a time; try again when it is done."
        )


@attrs.define(eq=False)
class _TabTurn:
    lock: trio.Lock = attrs.field(factory=trio.Lock)
    holder: Turn | None = None
    waiting: int = 0
    # The waits of the calls waiting now, which the tab's closing cancels.
    waits: set[trio.CancelScope] = attrs.field(factory=set)
    closed: bool = False


@attrs.define(eq=False)
class TabTurns:
    """Each tab's turn, by browser tab id; a tab's entry lives while calls hold or
    wait for it."""

    wait: float = attrs.field(factory=turn_wait)
    _by_tab: dict[int, _TabTurn] = attrs.field(factory=dict, init=False)

    @contextlib.asynccontextmanager
    async def turn(self, call: ToolCall, elements: Mapping[str, JSONObject]) -> AsyncIterator[Turn]:
        """Hold ``call.tab``'s turn for the block, after the calls that came before it;
        `TabBusy` when that takes longer than `wait`. ``elements``: what the call names,
        as its caller saw them (for what the busy answer says it is doing)."""
        tab = call.tab
        entry = self._by_tab.setdefault(tab, _TabTurn())
        entry.waiting += 1
        try:
            # trio's Lock is fair: calls get the turn in the order they asked for it.
            with trio.move_on_after(self.wait) as waited:
                entry.waits.add(waited)
                try:
                    await entry.lock.acquire()
                finally:
                    entry.waits.discard(waited)
        finally:
            entry.waiting -= 1
        if entry.closed:
            if not waited.cancelled_caught:
                entry.lock.release()  # it got the turn as the tab closed
            self._drop_if_idle(tab, entry)
            raise RequestError(
                "target_closed",
                f"tab {tab} closed while this call waited for its turn; nothing was done in it",
            )
        if waited.cancelled_caught:
            holder = entry.holder
            self._drop_if_idle(tab, entry)
            raise TabBusy(holder.words(tab) if holder is not None else f"tab {tab} is busy")
        named = next(iter(elements.values()), {})
        name = named.get("name") if isinstance(named, dict) else None
        turn = Turn(call, name if isinstance(name, str) else "", trio.current_time())
        entry.holder = turn
        try:
            yield turn
        finally:
            entry.holder = None
            entry.lock.release()
            self._drop_if_idle(tab, entry)

    def close(self, tab: int) -> None:
        """``tab`` closed: the calls waiting for its turn fail now (``target_closed``);
        the call holding it ends on its own (its page is gone, its question withdrawn)."""
        entry = self._by_tab.get(tab)
        if entry is None:
            return
        entry.closed = True
        # A call that comes later finds no entry and the tab gone when it opens the page.
        del self._by_tab[tab]
        for waiting in list(entry.waits):
            waiting.cancel()

    def waiting(self, tab: int) -> int:
        """How many calls wait for ``tab``'s turn now."""
        entry = self._by_tab.get(tab)
        return entry.waiting if entry is not None else 0

    def holder(self, tab: int) -> Turn | None:
        """The call holding ``tab`` now, if any."""
        entry = self._by_tab.get(tab)
        return entry.holder if entry is not None else None

    def _drop_if_idle(self, tab: int, entry: _TabTurn) -> None:
        if entry.waiting == 0 and not entry.lock.locked() and self._by_tab.get(tab) is entry:
            del self._by_tab[tab]
