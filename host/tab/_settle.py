"""Waiting until a page settles after an action or a navigation.

A person looks at the page once it stops moving: the navigation an action started
has loaded, the requests it made have answered, and the DOM has been quiet for a
moment. `Activity` follows the tab's CDP events (main-frame loading, network
requests, windows the page opens) from before the action; `settle` then waits for no
navigation in progress, no request in flight and `QUIET_MS` without a DOM mutation,
bounded by a deadline. A window the page opens takes the browser to another tab;
`watch` brings the tab back to the front, where its timers are not throttled. A tab
left in the background whose page keeps animating is rendered about once a second,
which holds the action's input: `watch` has it rendered while the action lasts.

DOM quiet is measured by the tab's page observer (``page-observer.js``, run by
`PageRevisions` in an isolated world): the page's own scripts cannot see it, and a
page that patches `MutationObserver` cannot break it.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import attrs
import trio

from pycdp_bridge import CDPError, DialogOpenError, Event, Target, TargetClosedError, note_wait
from pycdp_bridge import protocol as cdp

from ._download_guard import guard_downloads
from ._guard import Guarding, deadline_waits_for_judge, guard_requests
from ._revisions import PageRevisions

__all__ = [
    "ACTIVITY_EVENTS",
    "FRAME_PROBE_MS",
    "QUIET_MS",
    "Activity",
    "Ahead",
    "Scope",
    "rendered",
    "settle",
    "watch",
]

QUIET_MS = 300
# A tab the person is not looking at, whose page keeps animating (a ticker, a marquee),
# is rendered about once a second, and Chromium holds mouse moves and wheel turns for
# the next frame: a click waited up to a second for its move, a scroll two for its
# wheel turn. While an action lasts, the page is asked every `_PROBE_EVERY` seconds
# whether it renders a frame within `FRAME_PROBE_MS`; once it does not, a screencast
# of the tab `_SCREENCAST_PIXELS` wide has the browser render it as if it were shown.
# (Asking once is not enough: the first action in a tab turns focus emulation on,
# which lets a hidden page render for a moment before it is throttled again. A
# screencast through every action cost 4 ms per answer in front.)
FRAME_PROBE_MS = 50
# Seconds a screenshot waits for its frame before the browser is asked to render the
# tab (`rendered`): a capture in front takes a frame or two.
RENDER_AFTER = 0.2
_PROBE_EVERY = 0.1
_SCREENCAST_PIXELS = 8
# Seconds the screencast's stop may take once the action is over.
_STOP_TIMEOUT = 2.0
# Requests that stay open by design (streams, pushes): waiting for them never ends.
_ENDLESS_TYPES = frozenset({"WebSocket", "EventSource"})
# Seconds a response body may go without data before it stops counting as activity.
# A page that never reads a fetch's body leaves it stalled once the browser's buffer
# is full (no `loadingFinished` ever comes): what it does not read cannot change the
# page, so settle does not wait for it. A body still arriving is waited for.
BODY_STALL = QUIET_MS / 1000

ACTIVITY_EVENTS = (
    cdp.events.PAGE_FRAME_STARTED_LOADING,
    cdp.events.PAGE_FRAME_STOPPED_LOADING,
    cdp.events.PAGE_FRAME_NAVIGATED,
    cdp.events.PAGE_NAVIGATED_WITHIN_DOCUMENT,
    cdp.events.PAGE_LIFECYCLE_EVENT,
    cdp.events.NETWORK_REQUEST_WILL_BE_SENT,
    cdp.events.NETWORK_LOADING_FINISHED,
    cdp.events.NETWORK_LOADING_FAILED,
    cdp.events.NETWORK_RESPONSE_RECEIVED,
    cdp.events.NETWORK_DATA_RECEIVED,
    cdp.events.PAGE_WINDOW_OPEN,
    cdp.events.PAGE_FRAME_REQUESTED_NAVIGATION,
)


@attrs.frozen
class Scope:
    """Where an action may have its effect, for `settle`: elements of the tab's own
    session (backend ids), and out-of-process iframes it acted in (their sessions),
    each watched whole: another site's widget answers inside itself."""

    nodes: tuple[int, ...] = ()
    frames: tuple[str, ...] = ()


@attrs.define(eq=False)
class Activity:
    """What the tab is doing, as its events say: loading, requests in flight."""

    frame_id: str
    loading: bool = False
    # Main-frame commits (new documents and same-document history moves) so far.
    commits: int = 0
    # Main-frame navigations to another document the browser reported the page asked
    # for (`Page.frameRequestedNavigation`), and those the page observer saw the page
    # begin (`Quiet.leaving`), so far.
    requested: int = 0
    leavings: int = 0
    loaded: set[str] = attrs.field(factory=set)  # loader ids whose load event fired
    in_flight: set[str] = attrs.field(factory=set)
    # Requests whose response headers are in, other than documents: when their body
    # last received data (trio clock). Past `BODY_STALL` they no longer count.
    bodies: dict[str, float] = attrs.field(factory=dict)
    # Requests the request guard holds while it decides (maybe asking the person).
    holding: int = 0
    # URLs the page opened in other tabs or windows (a target=_blank link, window.open).
    opened: list[str] = attrs.field(factory=list)
    # What kept changing while `settle` waited, without being waited for (a ticker).
    churn: tuple[str, ...] = ()
    # When the action began (trio clock): changes running since before it are churn.
    started: float = attrs.field(factory=trio.current_time)
    changed: trio.Event = attrs.field(factory=trio.Event)
    # Set when `settle` begins: the action's own input is sent, its effect under way.
    settling: trio.Event = attrs.field(factory=trio.Event)
    # The request guard of the call whose action this is (None: nothing is held), for
    # what the page sends meanwhile and for the time limits that wait for its judge.
    guard: Guarding | None = None

    @property
    def busy(self) -> bool:
        return self.loading or bool(self.in_flight) or self.holding > 0 or self._streaming()

    def _streaming(self) -> bool:
        """Whether a response body received data within the last `BODY_STALL`."""
        return self._stalls_at() > trio.current_time()

    def _stalls_at(self) -> float:
        """When the last body still arriving counts as stalled (-inf: none arrives)."""
        return max(self.bodies.values(), default=-math.inf) + BODY_STALL

    def feed(self, event: Event) -> None:
        params = event.params
        method = event.method
        if method in (cdp.events.NETWORK_LOADING_FINISHED, cdp.events.NETWORK_LOADING_FAILED):
            # From any session: a request may finish in the session it was handed to.
            request = str(params.get("requestId"))
            self.in_flight.discard(request)
            self.bodies.pop(request, None)
            self._changed()
            return
        if method == cdp.events.NETWORK_DATA_RECEIVED:
            request = str(params.get("requestId"))
            if request in self.bodies:
                self.bodies[request] = trio.current_time()
            return  # no change of what `idle` waits for: a stall is waited for by time
        if method == cdp.events.NETWORK_RESPONSE_RECEIVED:
            request = str(params.get("requestId"))
            # A document's body is read by its parser, and its frame's loading is
            # followed on its own; any other body counts only while data arrives.
            if params.get("type") != "Document" and request in self.in_flight:
                self.in_flight.discard(request)
                self.bodies[request] = trio.current_time()
                self._changed()
            return
        if event.session_id is not None:
            return  # out-of-process iframes do not hold up the page
        main = params.get("frameId") == self.frame_id
        if method == cdp.events.PAGE_FRAME_STARTED_LOADING and main:
            self.loading = True
        elif method == cdp.events.PAGE_FRAME_STOPPED_LOADING and main:
            self.loading = False
        elif method == cdp.events.PAGE_FRAME_NAVIGATED:
            frame = params.get("frame", {})
            if frame.get("id") != self.frame_id or frame.get("parentId"):
                return
            self.commits += 1
        elif method == cdp.events.PAGE_NAVIGATED_WITHIN_DOCUMENT and main:
            self.commits += 1
        elif method == cdp.events.PAGE_WINDOW_OPEN:
            self.opened.append(str(params.get("url", "")))
        elif method == cdp.events.PAGE_FRAME_REQUESTED_NAVIGATION and main:
            if params.get("disposition", "currentTab") == "currentTab":
                self.requested += 1
        elif method == cdp.events.PAGE_LIFECYCLE_EVENT and main and params.get("name") == "load":
            self.loaded.add(str(params.get("loaderId")))
        elif method == cdp.events.NETWORK_REQUEST_WILL_BE_SENT:
            kind = params.get("type")
            # An iframe's document may load in another process, which reports its end
            # in a session whose Network domain is off: the frame does not hold us up.
            subframe_document = kind == "Document" and not main
            if kind not in _ENDLESS_TYPES and not subframe_document:
                self.in_flight.add(str(params.get("requestId")))
        else:
            return
        self._changed()

    def _changed(self) -> None:
        self.changed.set()
        self.changed = trio.Event()

    async def committed(self, since: int) -> None:
        """Return once the main frame committed a navigation after `since` commits."""
        while self.commits <= since:
            await self.changed.wait()

    async def reported(self, commits: int) -> None:
        """Return once the browser reported every navigation the page observer saw the
        page begin (`leavings`), or a main-frame commit after `commits` commits."""
        while self.requested < self.leavings and self.commits <= commits:
            await self.changed.wait()

    async def load_of(self, loader_id: str) -> None:
        """Return once the document of `loader_id` fired its load event."""
        while loader_id not in self.loaded:
            await self.changed.wait()

    async def idle(self) -> None:
        """Return once nothing is loading, no request is in flight or held, and no
        response body received data within `BODY_STALL`."""
        while self.busy:
            stalls = self._stalls_at()
            # A body still arriving wakes the wait when it would count as stalled.
            with trio.move_on_at(stalls if stalls > trio.current_time() else math.inf):
                await self.changed.wait()

    def hold(self) -> None:
        """The request guard holds a request: the page is not settled before it is let go."""
        self.holding += 1
        self._changed()

    def release(self) -> None:
        """The request guard let a held request go (on, or failed)."""
        self.holding -= 1
        self._changed()


@attrs.frozen
class Ahead:
    """Work `watch` starts `after` seconds into the block while the settle waits (the
    answer's capture, `Tab.prepare`), unless the page is loading or navigated by then."""

    prepare: Callable[[], Awaitable[None]]
    after: float


@asynccontextmanager
async def watch(
    revisions: PageRevisions,
    frame_id: str | None = None,
    ahead: Ahead | None = None,
    *,
    guard: Guarding | None = None,
) -> AsyncIterator[Activity]:
    """Follow the tab's activity for the duration of the block (open it before acting),
    and hold what the page sends meanwhile for the call's request `guard`
    (`guard_requests`; None: nothing is held), and the downloads it begins
    (`guard_downloads`).

    The block (the action's input) begins once the relay's gate on the tabs the
    action may open is up (`Guarding.gated`).

    `frame_id`: the main frame's id when the caller has it (`Tab.main_frame_id`, read
    alongside its other reads before acting); else the page observer's, or the
    browser's. `ahead`: work to do while the block waits for the page (see `Ahead`);
    once begun it is finished before the block ends, and not begun, it is dropped.
    """
    target = revisions.target
    await revisions.enable_activity_events()
    if frame_id is None:
        frame_id = await revisions.main_frame_id()
    activity = Activity(frame_id, guard=guard)
    try:
        async with (
            target.listen(*ACTIVITY_EVENTS) as events,
            guard_requests(target, activity),
            guard_downloads(target, activity),
            trio.open_nursery() as nursery,
        ):

            async def pump() -> None:
                async for event in events:
                    activity.feed(event)
                    if event.method == cdp.events.PAGE_WINDOW_OPEN and event.session_id is None:
                        # The browser switched to the new tab. Ours comes back to the
                        # front: in the background its timers run at most once a
                        # second, and settling would take seconds.
                        with contextlib.suppress(CDPError):
                            await target.execute(cdp.page_bring_to_front())

            nursery.start_soon(pump)  # neither of these two ever fails
            nursery.start_soon(_keep_rendering, revisions)
            early = _Early(ahead, activity)
            if ahead is not None:
                nursery.start_soon(early.run)
            if guard is not None and guard.gated is not None:
                # The action's input goes once the gate on the tabs it may open is up.
                began = time.perf_counter()
                await guard.gated.wait()
                note_wait("wait: gate", began)
            yield activity
            await early.finish()
            nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        # The pump and `_keep_rendering` never fail, so a group holds the block's own
        # exception: hand it back as it was raised, so callers catch it by its type.
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise


@contextlib.asynccontextmanager
async def rendered(target: Target, *, after: float = RENDER_AFTER) -> AsyncIterator[None]:
    """Once the block has run `after` seconds, the browser renders the tab as if it were
    shown, until the block ends: a screenshot of a tab not in front waits for a frame
    such a tab is not given otherwise, and gets it once the screencast starts. A tab in
    front answers before then, and pays nothing."""

    async def later() -> None:
        await trio.sleep(after)
        await _screencast(target)

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(later)
            yield
            nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        # The screencast never fails: a group holds the block's own exception, handed
        # back as it was raised, so callers catch it by its type.
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise


async def _keep_rendering(revisions: PageRevisions) -> None:
    """Until cancelled (the action is over), have the browser render the tab once its page
    renders no frame (see `FRAME_PROBE_MS`). A tab that goes away is left as it is."""
    with contextlib.suppress(CDPError, DialogOpenError, TargetClosedError):
        while await revisions.renders(FRAME_PROBE_MS):
            await trio.sleep(_PROBE_EVERY)
        await _screencast(revisions.target)


async def _screencast(
    target: Target, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
) -> None:
    """A screencast whose frames are acknowledged and dropped, until cancelled; started
    once the browser took it. A tab that goes away is left as it is."""
    with contextlib.suppress(CDPError, DialogOpenError, TargetClosedError):
        async with target.listen(cdp.events.PAGE_SCREENCAST_FRAME) as frames:
            try:
                await target.execute(
                    cdp.page_start_screencast(
                        max_width=_SCREENCAST_PIXELS, max_height=_SCREENCAST_PIXELS
                    )
                )
                task_status.started()
                async for frame in frames:
                    # Unacknowledged, the browser stops sending frames, and rendering.
                    await target.execute(cdp.page_screencast_frame_ack(frame.params["sessionId"]))
            finally:
                with trio.CancelScope(shield=True), trio.move_on_after(_STOP_TIMEOUT):
                    await target.execute(cdp.page_stop_screencast())
    # Not started (the tab went away): the caller's own command says so.
    with contextlib.suppress(RuntimeError):
        task_status.started()


@attrs.define(eq=False)
class _Early:
    """`watch`'s `Ahead` work: begun at its time, or dropped."""

    ahead: Ahead | None
    activity: Activity
    scope: trio.CancelScope = attrs.field(factory=trio.CancelScope)
    begun: bool = False
    done: trio.Event = attrs.field(factory=trio.Event)

    async def run(self) -> None:
        assert self.ahead is not None
        try:
            with self.scope:
                await trio.sleep_until(self.activity.started + self.ahead.after)
                # Not before the action's input is sent (a press on a loaded machine
                # can outlast `after`): a capture then would miss the effect and be
                # taken again.
                await self.activity.settling.wait()
                # Loading or gone to another document: a capture now is of a page in
                # the making, and would only compete with it for the renderer.
                if self.activity.busy or self.activity.commits:
                    return
                self.begun = True
                await self.ahead.prepare()
        finally:
            self.done.set()

    async def finish(self) -> None:
        if self.ahead is None:
            return
        if not self.begun:
            self.scope.cancel()
        await self.done.wait()


async def settle(
    revisions: PageRevisions, activity: Activity, timeout: float, scope: Scope = Scope()
) -> bool:
    """Wait until the page is idle and its DOM quiet for `QUIET_MS`; False on timeout.

    `scope`: where the action used elements. With elements of the tab's own session,
    only changes where it could have had its effect count: those elements, their
    forms and landmarks, dialogs it opened (navigations are followed by `activity`);
    a page that keeps changing elsewhere answers as soon as that part is quiet. The
    out-of-process iframes it acted in must be quiet too. What kept changing without
    being waited for is left in ``activity.churn``.

    DOM quiet is watched by the tab's page observer (`PageRevisions.quiet`), the
    same one that tells the call tracker the page changed.
    """
    activity.settling.set()
    # The time the person takes to answer about a held request does not count.
    with (
        trio.move_on_after(timeout) as scope_timer,
        deadline_waits_for_judge(activity.guard, scope_timer),
    ):
        while True:
            await activity.idle()
            remaining = scope_timer.deadline - trio.current_time()
            if remaining <= 0:
                break
            # While the person is asked about a held request the clock stands still
            # (an infinite deadline): one wait for quiet is then capped at the whole
            # settle's time, as at its start.
            cap_ms = max(QUIET_MS, math.floor(min(remaining, timeout) * 1000))
            since_ms = (trio.current_time() - activity.started) * 1000
            # After a navigation the element's document is gone: the whole page counts.
            within = scope if activity.commits == 0 else Scope()
            commits = activity.commits
            quiet = await revisions.quiet(
                activity.frame_id, QUIET_MS, cap_ms, within.nodes, since_ms, within.frames
            )
            if quiet is None:
                # The document went away under the observer: a navigation is starting,
                # and its events may still be on the way.
                await trio.sleep(0.05)
                continue
            if quiet.leaving:
                # The page began a navigation (a form it submitted, even on a mere
                # hover), which the browser reports only once it starts it, maybe
                # after this wait: the page is not settled before that report.
                activity.leavings += 1
                await activity.reported(commits)
                continue
            activity.churn = quiet.churn
            # A navigation or request that began meanwhile means the page is not done.
            if not activity.busy:
                return quiet.settled  # False: it kept mutating for the whole remaining time
    return False
