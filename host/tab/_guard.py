"""The request guard: what an action sends is held until the host decides on it.

While an agent's action and its settle run (`watch`), the tab's requests that can
carry something to a site (documents, `fetch`, XHR, beacons and pings, "other") are
paused at the request stage with CDP's Fetch domain, in the tab's own session and in
the sessions of the out-of-process iframes attached so far. Each paused request is put
to the call's judge (`Guarding.judge`, which the browser builds on the envelope's one
decision, `trimtab.envelope.RequestJudge`): it goes on at once when it changes nothing
the person should be asked about, and otherwise waits for the person's answer, which
sends it once (``Fetch.continueRequest``) or fails it (``Fetch.failRequest``,
``BlockedByClient``: the page sees it fail; a document is ``Aborted``, so the page
stays where it was instead of showing the browser's error page). No request stays
paused once the guard ends, however it ends: those not decided yet are failed
(shielded), and only then is Fetch turned off, which would send whatever is still
paused.

A tab or pop-up the action opens is guarded the same way (`guard_opened`): the browser
holds it before its first request (the extension reports it ``waiting``), Fetch is
turned on in it, and only then is it let run, so its first document request is judged
like a navigation of the opener (a pop-up on another site asks the site question),
and so is every redirect of that load: the tab's guard stays on until the load lands
(`OpenedTab.landed`: a response that is no redirect, or the load refused or failed).
Through the extension, where the hold races the tab's first request, the browser
itself keeps a new tab from loading a first document outside the task's sites while
an action runs (a gate, `TabRelayHub.gate`): that document is judged the same way
(`judge_kept_document`), and loaded again only on a yes.

Not covered (documented in ``host/PROTOCOL.md``): out-of-process iframes attached while
the action runs, a tab opened that the browser did not hold (it is guarded from when
the host hears of it), service and shared workers, WebSockets, and requests the page
sends outside an agent's action and its trailing window.

Images, scripts, style sheets, fonts and media are paused only when their address holds
a watched text (below): otherwise they can only GET, and carry nothing of the agent's.

Document responses are paused too (Fetch's response stage), before the browser decides
what to do with them: one it will save as a file (`download_file`: an attachment, or a
type it does not show) goes to the judge as a download, and a no fails it, so nothing
is saved; every other response goes on at once.

The time the person takes to answer does not count against the action's time limits:
a limit registered with `deadline_waits_for_judge` stands still while the judge decides.

A page may send what the agent's input set off after the action is over (an autosave
1.5 s after typing stops, a delayed beacon, a search fired after a pause). A call may
therefore ask the guard to stay on after its action (`Guarding.trailing`): the action
hands the tab's Fetch over to a trailing window (``_trailing``) without a moment
unguarded, and the tab's next guarded action takes it back (`guard_owners`), the window's
open questions answered first. Either side skips the paused requests the other took.

Text the agent typed in this task and secret fields' values (`Guarding.watched`) are
looked for in what the page sends: requests of every kind whose address holds one are
paused too (a keystroke logger's image), so that the judge can keep them from another
site.
"""

from __future__ import annotations

import contextlib
import math
import weakref
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import attrs
import trio

from pycdp_bridge import CDPError, DialogOpenError, Event, Target, TargetClosedError
from pycdp_bridge import protocol as cdp

from ._downloads import Downloads, download_file
from ._paused import (
    FLUSHES,
    FORM_REASONS,
    GUARDED_TYPES,
    LET_GO_TIMEOUT,
    PATTERNS,
    REDIRECTS,
    Held,
    Judge,
    OpenedTab,
    PausedKey,
    PausedRequest,
    Ruling,
    body_of,
    patterns_for,
    paused_key,
)

if TYPE_CHECKING:
    from ._settle import Activity
    from ._trailing import Trailing

__all__ = [
    "GUARDED_TYPES",
    "Guarding",
    "Held",
    "Judge",
    "OpenedTab",
    "PausedRequest",
    "Ruling",
    "deadline_waits_for_judge",
    "guard_opened",
    "guard_requests",
    "judge_kept_document",
    "refusing_all",
]


class Owner(Protocol):
    """What holds a tab's Fetch between two actions (a trailing window, ``_trailing``)."""

    @property
    def taken(self) -> set[PausedKey]:
        """The paused requests it took (the next guard leaves them to it)."""

    async def close(self) -> None:
        """End now: decide what it took (maybe asking), leave Fetch on, and return."""


# The trailing window holding each tab's Fetch, if any.
guard_owners: weakref.WeakKeyDictionary[Target, Owner] = weakref.WeakKeyDictionary()


@attrs.define(eq=False)
class Guarding:
    """One tool call's guard: the judge, what the call acts on, what was held, and the
    time limits that stand still while the judge decides.

    The browser makes one for every call and hands it to the call (the tools' call
    context); a tab's `watch` holds what the page sends for it, and a tab the action
    opens is guarded by it (`guard_opened`). Without one (the command line, tests of
    bare tools) nothing is held. ``watched``: also pause requests whose address holds
    one of these texts; ``trailing``: stay on after the action as it says;
    ``downloads``: hold the downloads the action starts there."""

    judge: Judge
    # The element the action acts on (escaped, as the model sees it), set by the tools.
    acting: str | None = None
    held: list[Held] = attrs.field(factory=list)
    # How many of `held` a tool's answer told the model of already (`untold`).
    told: int = 0
    # Texts looked for in every request's address (what the agent typed, secrets).
    watched: tuple[str, ...] = ()
    # After the action, the guard stays on in a trailing window (None: it ends with it).
    trailing: Trailing | None = None
    # Where the downloads the action starts are held and claimed (the browser's record;
    # None, as in tests of bare tools: the download guard lets the block run as is).
    downloads: Downloads | None = None
    # Set once the relay's gate on the tabs the action may open is up, or could not be
    # set (the browser's, which sets it beside the tool's first steps); the action's
    # input waits for it (`watch`). None: nothing to wait for.
    gated: trio.Event | None = None
    _limits: dict[trio.CancelScope, float] = attrs.field(factory=dict, init=False)
    _deciding: int = attrs.field(default=0, init=False)

    @contextlib.contextmanager
    def stretch(self, scope: trio.CancelScope) -> Iterator[None]:
        """Let `scope`'s deadline stand still while the judge decides, for the block."""
        self._limits[scope] = scope.deadline - trio.current_time()
        if self._deciding:
            scope.deadline = math.inf
        try:
            yield
        finally:
            self._limits.pop(scope, None)

    @contextlib.contextmanager
    def deciding(self) -> Iterator[None]:
        """The judge decides (maybe asking the person): the registered limits stand still."""
        if self._deciding == 0:
            now = trio.current_time()
            for scope in self._limits:
                self._limits[scope] = scope.deadline - now
                scope.deadline = math.inf
        self._deciding += 1
        try:
            yield
        finally:
            self._deciding -= 1
            if self._deciding == 0:
                now = trio.current_time()
                for scope, remaining in self._limits.items():
                    scope.deadline = now + remaining

    def untold(self) -> tuple[Held, ...]:
        """What the guard held since this was last asked: the answer that says so takes
        them, and the browser says the rest."""
        told, self.told = self.told, len(self.held)
        return tuple(self.held[told:])


@contextlib.contextmanager
def deadline_waits_for_judge(guard: Guarding | None, scope: trio.CancelScope) -> Iterator[None]:
    """Let `scope`'s deadline stand still while `guard` decides (no guard: as is)."""
    if guard is None:
        yield
        return
    with guard.stretch(scope):
        yield


@attrs.define(eq=False)
class Watch:
    """The guard of one action: the paused requests and what is known about them."""

    target: Target
    activity: Activity
    guard: Guarding
    # Navigations the browser reported a form started: (frame id, URL).
    forms: set[tuple[str, str]] = attrs.field(factory=set)
    # Paused requests the judge let go after holding them (their redirects follow).
    sent: set[str] = attrs.field(factory=set)
    # A tab the action opened: its main frame is that of its first document request.
    opened: OpenedTab | None = None
    # The paused requests this guard took, and those another took (left to it).
    taken: set[PausedKey] = attrs.field(factory=set)
    skip: set[PausedKey] = attrs.field(factory=set)

    def note(self, event: Event) -> PausedRequest | None:
        """Take in one event; the paused request it reports, if it does."""
        params: Mapping[str, Any] = event.params
        if event.method == cdp.events.PAGE_FRAME_REQUESTED_NAVIGATION:
            if params.get("reason") in FORM_REASONS:
                self.forms.add((str(params.get("frameId")), str(params.get("url"))))
            return None
        key = paused_key(event)
        if key in self.skip or key in self.taken:
            return None  # another guard of the tab decides it (or this one already does)
        self.taken.add(key)
        request: Mapping[str, Any] = params.get("request", {})
        method = str(request.get("method", "")).upper()
        url = str(request.get("url", ""))
        kind = str(params.get("resourceType", ""))
        frame = str(params.get("frameId", ""))
        document = kind == "Document"
        opened_first = self.opened is not None and not self.activity.frame_id
        if opened_first and document and event.session_id is None:
            self.activity.frame_id = frame  # the new tab's first document
        navigation = document and event.session_id is None and frame == self.activity.frame_id
        status = params.get("responseStatusCode")
        # The load of an opened tab lands with a response that is no redirect (or fails).
        lands = self.opened is not None and navigation and status not in REDIRECTS
        download = None
        if params.get("responseErrorReason") is not None:
            # The request failed on the network: nothing to judge, the load is over.
            return PausedRequest(
                method, url, kind, navigation=False, form=False, response=True, lands=lands
            )
        if isinstance(status, int):
            download = download_file(url, status, params.get("responseHeaders") or ())
            if download is None:
                # A page or an error the browser shows: it goes on without a judge.
                return PausedRequest(
                    method, url, kind, navigation=False, form=False, response=True, lands=lands
                )
        return PausedRequest(
            method=method,
            url=url,
            kind=kind,
            navigation=navigation,
            # Only a form sends a document with a body; a GET form is known by the
            # navigation the browser reported for it.
            form=document and (method == "POST" or (frame, url) in self.forms),
            # A download the person let go, resumed by the browser, is not asked again.
            redirect_of_sent=str(params.get("redirectedRequestId")) in self.sent
            or (download is not None and str(params.get("requestId")) in self.sent),
            download=download,
            opened=self.opened is not None and navigation and status is None,
            lands=lands and download is not None,
            body=body_of(request),
        )

    async def decide(self, event: Event, request: PausedRequest) -> None:
        """Put one paused request to the judge, then let it go or fail it, whatever
        happens meanwhile: a request left paused would hang the person's page."""
        if request.response and request.download is None:
            await self.let_go(event, request, Ruling(send=True))
            return
        ruling: Ruling | None = None
        self.activity.hold()
        try:
            with self.guard.deciding():
                ruling = await self.guard.judge(request, self.guard.acting)
        finally:
            self.activity.release()
            await self.let_go(event, request, ruling)

    async def let_go(self, event: Event, request: PausedRequest, ruling: Ruling | None) -> None:
        """Send the request on (a yes) or fail it (a no, or no decision)."""
        request_id = str(event.params.get("requestId"))
        if ruling is None:
            # The judge was waiting (for the person, for the site policy) when the action
            # ended: what is sent without a wait never gets here undecided.
            unsent = "not saved" if request.download is not None else "not sent"
            ruling = Ruling(
                send=False, held=True, why=f"{unsent}: the action ended before it was decided"
            )
        send = ruling.send
        opened = self.opened
        if opened is not None and request.opened:
            opened.ruled(request.url, send, ruling.why)
        if ruling.held and not request.opened:  # an opened tab's answer tells of it
            if send:
                self.sent.add(request_id)
            self.guard.held.append(
                Held(
                    request.method,
                    request.url,
                    sent=send,
                    form=request.form,
                    why=ruling.why,
                    download=request.download,
                )
            )
        if send:
            command = cdp.fetch_continue_request(request_id)
        else:
            # A document failed as "blocked" would show the browser's error page in
            # place of the person's page; aborted, the page stays as it is.
            reason = "Aborted" if request.kind == "Document" else "BlockedByClient"
            command = cdp.fetch_fail_request(request_id, reason)
        with (
            trio.CancelScope(shield=True),
            trio.move_on_after(LET_GO_TIMEOUT),
            contextlib.suppress(CDPError, TargetClosedError, DialogOpenError),
        ):
            await self.target.execute(command, session_id=event.session_id)
        if opened is not None and request.lands:
            opened.landed.set()

    async def decide_at_once(self, event: Event, request: PausedRequest) -> None:
        """A request paused as the action ends: sent when the judge lets it go without
        asking anyone, failed when it would ask (the action it belonged to is over)."""
        if request.response and request.download is None:
            await self.let_go(event, request, Ruling(send=True))
            return
        ruling: Ruling | None = None
        with trio.CancelScope() as scope:
            scope.cancel()
            ruling = await self.guard.judge(request, self.guard.acting)
        await self.let_go(event, request, ruling)


@contextlib.asynccontextmanager
async def refusing_all(target: Target) -> AsyncIterator[None]:
    """Fail every request the tab sends during the block (a tab opened past a task's
    limit, which the browser holds before its first request: let run only to close)."""
    async with (
        target.listen(cdp.events.FETCH_REQUEST_PAUSED) as events,
        trio.open_nursery() as nursery,
    ):
        await target.execute(cdp.fetch_enable(PATTERNS))

        async def fail_each() -> None:
            async for event in events:
                with contextlib.suppress(CDPError, TargetClosedError, DialogOpenError):
                    request_id = str(event.params.get("requestId"))
                    await target.execute(cdp.fetch_fail_request(request_id, "Aborted"))

        nursery.start_soon(fail_each)
        await target.execute(cdp.runtime_run_if_waiting_for_debugger())
        yield
        nursery.cancel_scope.cancel()


async def judge_kept_document(guard: Guarding | None, opened: OpenedTab, url: str) -> bool:
    """Judge with `guard` a document of a tab the call's action opened (its first, or where
    a redirect of its load went), which the browser kept from loading before it was
    sent (the extension's gate, `TabRelayHub.gate`), as the guard judges one it paused;
    True when the tab may load it after all. No guard around (the call is over): it
    may not, since nobody may be asked."""
    request = PausedRequest("GET", url, "Document", navigation=True, form=False, opened=True)
    if guard is None:
        ruling = Ruling(send=False, held=True, why="the action that opened it had ended")
    else:
        with guard.deciding():
            ruling = await guard.judge(request, guard.acting)
    opened.ruled(url, ruling.send, ruling.why)
    return ruling.send


@contextlib.asynccontextmanager
async def guard_opened(
    target: Target, activity: Activity, opened: OpenedTab | None = None
) -> AsyncIterator[OpenedTab]:
    """Guard a tab the call's action opened, which the browser holds before its first
    request, with the call's guard (``activity.guard``): Fetch on in it first, then let
    it run (see the module). Without a guard, it is let run unguarded. ``opened``: what is known of
    it so far (its first document may have been judged already: `judge_kept_document`)."""
    opened = opened or OpenedTab()
    async with guard_requests(target, activity, opened=opened):
        await target.execute(cdp.runtime_run_if_waiting_for_debugger())
        yield opened


@contextlib.asynccontextmanager
async def guard_requests(
    target: Target, activity: Activity, *, opened: OpenedTab | None = None
) -> AsyncIterator[None]:
    """Hold what the page sends during the block for the call's judge (see the module).

    The guard is the call's, which `watch` put on ``activity``; without one, the block
    runs unguarded. A trailing window of
    the tab's previous action is closed first (its questions answered: the time does
    not count against the call's limits). When the block ends, the guard stops pausing
    (Fetch with no pattern: what is paused stays paused, and is reported by the
    browser's next reply or the one after, `FLUSHES`), decides what it paused (asking
    the person as during the block), and only then turns Fetch off, which would send
    whatever is still paused; or, when the call asks for it (`Guarding.trailing`), it
    hands Fetch over to a trailing window instead. When the block is cancelled,
    whatever is still undecided is failed instead.
    """
    guard = activity.guard
    if guard is None:
        yield
        return
    watch = Watch(target, activity, guard, opened=opened)
    sessions: list[str | None] = [None, *target.child_sessions()]
    handed: Handed | None = None
    completed = False
    flushed = False  # the guard stopped pausing and took what the browser reported
    ended_on: Exception | None = None  # the block's error (a dialog the page opened)
    async with target.listen(
        cdp.events.FETCH_REQUEST_PAUSED, cdp.events.PAGE_FRAME_REQUESTED_NAVIGATION
    ) as events:
        previous = guard_owners.get(target) if opened is None else None
        if previous is not None:
            # The previous action's trailing window: it decides what it took (this
            # listener is open already, so nothing paused meanwhile is missed).
            with guard.deciding():
                await previous.close()
            watch.skip = previous.taken

        def paused() -> Iterator[tuple[Event, PausedRequest]]:
            """The paused requests of the events received so far."""
            while True:
                try:
                    event = events.receive_nowait()
                except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
                    return
                request = watch.note(event)
                if request is not None:
                    yield event, request

        try:
            async with trio.open_nursery() as deciders:
                await each_session(target, sessions, cdp.fetch_enable, patterns_for(guard.watched))
                pumping = trio.CancelScope()

                async def pump() -> None:
                    with pumping:
                        async for event in events:
                            request = watch.note(event)
                            if request is not None:
                                deciders.start_soon(watch.decide, event, request)

                deciders.start_soon(pump)
                cancelled = False
                acted = False
                try:
                    yield
                    acted = True
                except Exception as exc:
                    # Raised only once the nursery is left: an error leaving its body
                    # would cancel the deciders, and with them the person's questions.
                    ended_on = exc
                except BaseException:
                    # Cancelled: requests still waiting for a decision are failed
                    # (shielded, in `decide`) before the nursery is left.
                    cancelled = True
                    deciders.cancel_scope.cancel()
                    raise
                finally:
                    pumping.cancel()
                    if acted and guard.trailing is not None and opened is None:
                        # The window listens before this guard stops: nothing is missed.
                        handed = await guard.trailing.start(
                            target, sessions, activity.frame_id, guard, watch.taken
                        )
                    if handed is not None:
                        for event, request in paused():
                            deciders.start_soon(watch.decide, event, request)
                        handed.begin()
                    elif not cancelled:
                        # The action is over (or ended on an error, such as a dialog
                        # the page opened): what it paused is decided as during it,
                        # and the nursery waits for the person's answers.
                        for _ in range(FLUSHES):
                            await each_session(target, sessions, cdp.fetch_enable, ())
                            for event, request in paused():
                                deciders.start_soon(watch.decide, event, request)
                        flushed = True
            completed = True
        except BaseExceptionGroup as group:
            # The deciders never fail: a group holds the block's own exception.
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise
        finally:
            if handed is not None:
                # What this guard paused is decided: the window may turn Fetch off.
                handed.action_done()
                if not completed:
                    handed.cancel()  # the call was cancelled: so is what it set off
            else:
                with trio.CancelScope(shield=True), trio.move_on_after(LET_GO_TIMEOUT):
                    # Cancelled, or the above did not run: no more pausing, what was
                    # paused is sent if it needs no question and failed if it would,
                    # and only then is Fetch turned off. After the flushes above, what
                    # the browser reported while the deciders decided is taken alike,
                    # without more round trips: it had stopped pausing by then.
                    for _ in range(0 if flushed else FLUSHES):
                        await each_session(target, sessions, cdp.fetch_enable, ())
                        for event, request in paused():
                            await watch.decide_at_once(event, request)
                    for event, request in paused():
                        await watch.decide_at_once(event, request)
                    await each_session(target, sessions, disable_fetch, ())
        if ended_on is not None:
            raise ended_on


class Handed(Protocol):
    """A trailing window an action's guard handed the tab's Fetch to (``_trailing``)."""

    def begin(self) -> None:
        """The guard took what it had been sent: the window decides from here on."""

    def action_done(self) -> None:
        """Everything the action's guard paused is decided."""

    def cancel(self) -> None:
        """End the window at once (the call was cancelled, or Stop)."""


def disable_fetch(_: object) -> Any:
    return cdp.fetch_disable()


async def each_session(
    target: Target,
    sessions: list[str | None],
    command: Callable[[Any], Any],
    argument: object,
) -> None:
    """Run one Fetch command in each session at once; a session gone meanwhile is skipped."""

    async def run(session: str | None) -> None:
        with contextlib.suppress(CDPError, TargetClosedError, DialogOpenError):
            await target.execute(command(argument), session_id=session)

    async with trio.open_nursery() as nursery:
        for session in sessions:
            nursery.start_soon(run, session)
