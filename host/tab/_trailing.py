"""The request guard after an action: a trailing window.

A page may send what the agent's input set off after the action and its settle are
over: an autosave of a comment 1.5 s after typing stops, a beacon on a timer, a search
fired after a pause. After an action that typed, changed a field or clicked, the call's
guard hands the tab's Fetch over to a `_Window` (`Trailing.start`, called by the guard
as its action ends, while its own listener is still open, so that no request passes
unjudged in between). The window keeps pausing what the action's guard paused (and
the requests holding a watched text) for `TRAILING_SECONDS`, and puts each to its own
judge, which the browser builds to ask in words that say the action is over.

It ends at the first of:

* its time (`TRAILING_SECONDS`, on the page's clock too: the timers that fell due
  within it have run, see `_page_caught_up`): it stops pausing, decides what it paused
  (a question already asked waits for its answer, bounded by the side panel's own time
  limit, after which the request is failed), then turns Fetch off once the action's
  guard has decided everything it paused;
* the tab's next guarded action (`close`, from ``_guard``): its questions are answered
  first, Fetch stays on, and the new guard takes the tab from there;
* `end_trailing` (the person's Stop, an outside client's session ending): whatever it
  holds is failed at once, and its questions are withdrawn.

It only ever holds requests of its own tab: other tabs never wait for it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import Final

import attrs
import trio

from pycdp_bridge import CDPError, Event, JavaScriptError, Target, evaluate
from pycdp_bridge import protocol as cdp

from ._guard import Guarding, Watch, disable_fetch, each_session, guard_owners
from ._paused import FLUSHES, LET_GO_TIMEOUT, Held, Judge, PausedKey
from ._scripts import page_script
from ._settle import Activity

__all__ = ["TRAILING_SECONDS", "Trailing", "end_trailing", "trailing_windows"]

log = logging.getLogger("trimtab.tab")

# Seconds the guard stays on after an action. Debounces in common use wait 0.3-2 s after
# the last keystroke or click (search boxes 0.3-0.5 s, autosaves 1-2 s, lodash's and most
# form libraries' defaults within that); the window starts once the action has settled,
# which already took at least `QUIET_MS` (0.3 s) of quiet, so 3 s covers a debounce of up
# to 3.3 s and the request it then sends. Longer, it would catch more of the page's own
# traffic that the agent did not set off (polls, analytics) and keep the tab's requests
# passing through the host for nothing.
TRAILING_SECONDS: Final = 3.0
# How long the window waits past its seconds for the page to run the timers that fell
# due within them (`_page_caught_up`).
_CATCH_UP_LIMIT: Final = 5.0
_WORLD: Final = "trimtab-trailing"
# How long the window still pauses after the page caught up, for the requests its last
# timers sent to reach Fetch (an IPC hop from the renderer, well under this).
_SENT_GRACE: Final = 0.5


@attrs.frozen
class Trailing:
    """How a call's guard stays on after its action: for ``seconds``, in ``nursery`` (one
    that outlives the call), with ``judge`` (asking as after the action), for the
    client ``session``; what it holds is added to ``held`` (the browser tells the
    client in its next answer)."""

    seconds: float
    nursery: trio.Nursery
    judge: Judge
    session: str
    held: list[Held]
    # The tab's id, for the log.
    tab: int = 0

    async def start(
        self,
        target: Target,
        sessions: list[str | None],
        frame_id: str,
        action: Guarding,
        skip: set[PausedKey],
    ) -> _Window | None:
        """Begin listening for the tab's paused requests and take over its Fetch once
        the action's guard says so (`_Window.begin`); None when the window cannot run
        (the host is shutting down, the tab went away)."""
        guard = Guarding(self.judge, acting=action.acting, watched=action.watched)
        guard.held = self.held
        window = _Window(self, target, sessions, guard, skip, frame_id)
        stack = contextlib.AsyncExitStack()
        try:
            window.events = await stack.enter_async_context(
                target.listen(
                    cdp.events.FETCH_REQUEST_PAUSED, cdp.events.PAGE_FRAME_REQUESTED_NAVIGATION
                )
            )
            window.stack = stack
            self.nursery.start_soon(window.run, name=f"trailing request guard of tab {self.tab}")
        except RuntimeError:
            await stack.aclose()  # the nursery is closed: the host is going away
            return None
        guard_owners[target] = window
        return window


@attrs.define(eq=False)
class _Window:
    """One tab's trailing window (see the module)."""

    spec: Trailing
    target: Target
    sessions: list[str | None]
    guard: Guarding
    skip: set[PausedKey]
    frame_id: str
    events: trio.MemoryReceiveChannel[Event] | None = None
    stack: contextlib.AsyncExitStack | None = None
    began: trio.Event = attrs.field(factory=trio.Event)
    acted: trio.Event = attrs.field(factory=trio.Event)
    done: trio.Event = attrs.field(factory=trio.Event)
    # Set by `close`: the tab's next guard takes Fetch over; this one leaves it on.
    handed_over: bool = False
    scope: trio.CancelScope = attrs.field(factory=trio.CancelScope)
    pumping: trio.CancelScope = attrs.field(factory=trio.CancelScope)
    _watch: Watch | None = None

    @property
    def taken(self) -> set[PausedKey]:
        return self._watch.taken if self._watch is not None else set()

    @property
    def session(self) -> str:
        return self.spec.session

    def begin(self) -> None:
        self.began.set()

    def action_done(self) -> None:
        self.acted.set()

    def cancel(self) -> None:
        self.scope.cancel()

    async def close(self) -> None:
        self.handed_over = True
        self.pumping.cancel()
        self.began.set()
        await self.done.wait()

    async def run(self) -> None:
        """Decide what the tab sends until the window ends (see the module)."""
        assert self.events is not None
        assert self.stack is not None
        events = self.events
        # The action's settle is over: the window's activity only counts what it holds.
        watch = self._watch = Watch(self.target, Activity(self.frame_id), self.guard)
        watch.skip = self.skip
        decided = False
        try:
            with self.scope:
                await self.began.wait()
                async with trio.open_nursery() as deciders:

                    async def pump() -> None:
                        async for event in events:
                            request = watch.note(event)
                            if request is not None:
                                deciders.start_soon(watch.decide, event, request)

                    with self.pumping:
                        with trio.move_on_after(self.spec.seconds):
                            await pump()
                        async with trio.open_nursery() as catching_up:
                            catching_up.start_soon(pump)
                            await _page_caught_up(self.target, self.frame_id)
                            # What those timers sent reaches Fetch from the network
                            # process, in no order with the page's answer.
                            await trio.sleep(_SENT_GRACE)
                            catching_up.cancel_scope.cancel()
                    if self.handed_over:
                        # What reached this window before the next guard took over.
                        for event in _received(events):
                            if (request := watch.note(event)) is not None:
                                deciders.start_soon(watch.decide, event, request)
                    else:
                        for _ in range(FLUSHES):
                            await each_session(self.target, self.sessions, cdp.fetch_enable, ())
                            for event in _received(events):
                                if (request := watch.note(event)) is not None:
                                    deciders.start_soon(watch.decide, event, request)
                await self.acted.wait()
                decided = True
        except Exception as exc:
            # The person could not be asked (the tab closed meanwhile, the browser went
            # away): what is still held is failed below, as on Stop.
            log.warning("the trailing request guard of tab %d ended: %r", self.spec.tab, exc)
        finally:
            with trio.CancelScope(shield=True), trio.move_on_after(LET_GO_TIMEOUT):
                if not decided and not self.handed_over:
                    # Stop (or a failure): nothing more is paused, what is paused is
                    # failed if it would ask, and Fetch goes off once the action's
                    # guard is done with what it paused.
                    for _ in range(FLUSHES):
                        await each_session(self.target, self.sessions, cdp.fetch_enable, ())
                        for event in _received(events):
                            if (request := watch.note(event)) is not None:
                                await watch.decide_at_once(event, request)
                    await self.acted.wait()
                if not self.handed_over:
                    await each_session(self.target, self.sessions, disable_fetch, ())
            with trio.CancelScope(shield=True):
                await self.stack.aclose()
            if guard_owners.get(self.target) is self:
                del guard_owners[self.target]
            self.done.set()


async def _page_caught_up(target: Target, frame_id: str) -> None:
    """Return once the page has run every timer that fell due by now.

    The window's seconds are the host's; a debounce counts the page's. A renderer
    starved of CPU (a busy machine, a heavy page) runs a timer due within the window
    after it, so its request would pass unjudged. A timer set now runs after every
    timer already due, so its firing means they all ran (and sent what they send). It
    is set in Trimtab's own world of the tab's main frame, where the page cannot replace
    ``setTimeout``. A page that does not answer within `_CATCH_UP_LIMIT` (hung, gone)
    ends the window anyway."""
    with trio.move_on_after(_CATCH_UP_LIMIT):
        try:
            world = await target.execute(
                cdp.page_create_isolated_world(frame_id, world_name=_WORLD)
            )
            await evaluate(
                target,
                page_script("trimtab.tab", "timers-due.js"),
                context_id=int(world["executionContextId"]),
                await_promise=True,
            )
        except (CDPError, JavaScriptError, KeyError, TypeError, ValueError):
            pass  # the page went away: nothing of it is left to send


def _received(events: trio.MemoryReceiveChannel[Event]) -> list[Event]:
    """The events received so far, without waiting."""
    found: list[Event] = []
    while True:
        try:
            found.append(events.receive_nowait())
        except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
            return found


def end_trailing(session: str | None = None, *, when: Callable[[str], bool] | None = None) -> int:
    """End at once the trailing windows of client ``session`` (None: every client's, or
    those whose session ``when`` accepts): what they hold is failed and their questions
    are withdrawn. How many were running."""
    ended = 0
    for window in list(guard_owners.values()):
        if not isinstance(window, _Window):
            continue
        if (session is None or window.session == session) and (
            when is None or when(window.session)
        ):
            window.cancel()
            ended += 1
    return ended


def trailing_windows() -> int:
    """How many trailing windows hold a tab now (for tests and diagnostics)."""
    return len(guard_owners)
