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
an action runs (a gate, `RelayHub.gate`): that document is judged the same way
(`judge_kept_document`), and loaded again only on a yes.

Not covered (documented in ``host/PROTOCOL.md``): out-of-process iframes attached while
the action runs, a tab opened that the browser did not hold (it is guarded from when
the host hears of it), service and shared workers, WebSockets, and requests the page
sends outside an agent's action.

Images, scripts, style sheets, fonts and media are never paused: they can only GET.

Document responses are paused too (Fetch's response stage), before the browser decides
what to do with them: one it will save as a file (`download_file`: an attachment, or a
type it does not show) goes to the judge as a download, and a no fails it, so nothing
is saved; every other response goes on at once.

The time the person takes to answer does not count against the action's time limits:
a limit registered with `stretched` stands still while the judge decides.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

import attrs
import trio

from pycdp_bridge import CDPError, DialogOpenError, Event, Target, TargetClosedError
from pycdp_bridge import protocol as cdp

from ..pipeline import credentials
from ._downloads import DownloadFile, download_file

if TYPE_CHECKING:
    from ._settle import Activity

__all__ = [
    "GUARDED_TYPES",
    "Guarding",
    "Held",
    "Judge",
    "OpenedTab",
    "PausedRequest",
    "Ruling",
    "acting_on",
    "current_guarding",
    "guard_opened",
    "guard_requests",
    "guarding",
    "held_requests",
    "judge_kept_document",
    "refusing_all",
    "stretched",
]

# The resource types the guard pauses: every kind that can send a body or go to a site
# as a document. Images, scripts, styles, fonts and media only ever GET.
GUARDED_TYPES: Final = ("Document", "XHR", "Fetch", "Ping", "Other")
_PATTERNS: Final = (
    *(
        {"urlPattern": "*", "resourceType": kind, "requestStage": "Request"}
        for kind in GUARDED_TYPES
    ),
    # A download starts as a document response: it is held before the browser saves it.
    {"urlPattern": "*", "resourceType": "Document", "requestStage": "Response"},
)
_FORM_REASONS: Final = frozenset({"formSubmissionGet", "formSubmissionPost"})
# Response codes that send a load on to another URL (with Location): it has not landed.
_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
# Round trips to the browser after it stopped pausing, each followed by taking the
# paused requests reported so far: the browser reports a request paused just before
# it stopped from another thread, and the report may come a moment after its reply.
_FLUSHES: Final = 2
# Seconds letting one paused request go (or turning the guard off) may take.
_LET_GO_TIMEOUT: Final = 2.0


@attrs.frozen
class PausedRequest:
    """One request the page sends during an action, as the browser reports it (facts the
    page cannot fake: the browser's own method, URL and resource type)."""

    method: str
    url: str
    kind: str  # Fetch's resourceType: Document, XHR, Fetch, Ping, Other
    navigation: bool  # the tab's main frame loads a document (a navigation of the tab)
    form: bool  # the browser reported a form submission for this document request
    redirect_of_sent: bool = False  # a redirect of a request the person let go
    response: bool = False  # paused at the response stage
    # At the response stage: the file the browser will save the response as, or None
    # (a response that is no download never reaches the judge).
    download: DownloadFile | None = None
    opened: bool = False  # the first document of a tab or pop-up the action opened
    # The response that ends the load of a tab the action opened (no redirect).
    lands: bool = False


@attrs.define(eq=False)
class OpenedTab:
    """A tab the action opened, as its guard saw it: its first document request and
    what became of it (`decided` is set once it was sent or failed), and whether its
    load landed (`landed`: its redirects were all judged, or it was refused)."""

    url: str = ""
    sent: bool | None = None  # None: no document request was decided (yet)
    why: str = ""
    decided: trio.Event = attrs.field(factory=trio.Event)
    landed: trio.Event = attrs.field(factory=trio.Event)

    def ruled(self, url: str, send: bool, why: str) -> None:
        """A document request of the tab's load was decided: the first decides what the
        answer says, and a later refusal (a redirect elsewhere) overrides it."""
        if not self.decided.is_set() or not send:
            self.url, self.sent, self.why = url, send, why
            self.decided.set()
        if not send:
            self.landed.set()  # the load ends here: nothing more of it is sent


@attrs.frozen
class Ruling:
    """The judge's decision on one paused request."""

    send: bool
    held: bool = False  # it was held for a decision: asked about, or refused by policy
    why: str = ""  # for a held request: what became of it, in Trimtab's words


# Decides on a paused request; the second argument names the element acted on.
Judge = Callable[[PausedRequest, str | None], Awaitable[Ruling]]


@attrs.frozen
class Held:
    """A request the guard held during the call, and what became of it."""

    method: str
    url: str
    sent: bool
    form: bool
    why: str
    download: DownloadFile | None = None  # the file the response would be saved as

    def to_json(self) -> dict[str, object]:
        found: dict[str, object] = {
            "method": self.method,
            "url": self.url,
            "sent": self.sent,
            "form": self.form,
        }
        if self.download is not None:
            file = self.download
            found["download"] = {"name": file.name, "size": file.size, "type": file.mime}
        return found

    def note(self) -> str:
        """What the tool's answer says about it (the URL is the page's, shortened, its
        credentials hidden)."""
        url = credentials.hide_url(self.url)[:200]
        if self.download is not None:
            file = self.download
            facts = ", ".join(filter(None, (f"{file.size} bytes" if file.size else "", file.mime)))
            name = file.name[:200] + (f" ({facts})" if facts else "")
            return f"The download of {name} from {url} was held: {self.why}"
        return f"{self.method} {url} was held: {self.why}"


@attrs.define(eq=False)
class Guarding:
    """One tool call's guard: the judge, what the call acts on, what was held, and the
    time limits that stand still while the judge decides."""

    judge: Judge
    # The element the action acts on (escaped, as the model sees it), set by the tools.
    acting: str | None = None
    held: list[Held] = attrs.field(factory=list)
    # How many of `held` a tool's answer told the model of already (`held_requests`).
    told: int = 0
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


_current: contextvars.ContextVar[Guarding | None] = contextvars.ContextVar(
    "trimtab_request_guard", default=None
)


@contextlib.contextmanager
def guarding(judge: Judge) -> Iterator[Guarding]:
    """Guard the actions of the block's tool calls with `judge` (the browser does this
    for every call; without it, as in tests of bare tools, nothing is held)."""
    guard = Guarding(judge)
    token = _current.set(guard)
    try:
        yield guard
    finally:
        _current.reset(token)


def current_guarding() -> Guarding | None:
    """The current call's guard, if any (the download guard judges with it too)."""
    return _current.get()


def acting_on(element: str | None) -> None:
    """Name the element the coming action acts on, for the guard's questions."""
    guard = _current.get()
    if guard is not None:
        guard.acting = element


def held_requests() -> tuple[Held, ...]:
    """What the current call's guard held since this was last asked (none without a
    guard): the answer that says so takes them, and the browser says the rest."""
    guard = _current.get()
    if guard is None:
        return ()
    told = guard.told
    guard.told = len(guard.held)
    return tuple(guard.held[told:])


@contextlib.contextmanager
def stretched(scope: trio.CancelScope) -> Iterator[None]:
    """Let `scope`'s deadline stand still while the call's guard decides (no guard: as is)."""
    guard = _current.get()
    if guard is None:
        yield
        return
    with guard.stretch(scope):
        yield


@attrs.define(eq=False)
class _Watch:
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

    def note(self, event: Event) -> PausedRequest | None:
        """Take in one event; the paused request it reports, if it does."""
        params: Mapping[str, Any] = event.params
        if event.method == cdp.events.PAGE_FRAME_REQUESTED_NAVIGATION:
            if params.get("reason") in _FORM_REASONS:
                self.forms.add((str(params.get("frameId")), str(params.get("url"))))
            return None
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
        lands = self.opened is not None and navigation and status not in _REDIRECTS
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
            trio.move_on_after(_LET_GO_TIMEOUT),
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
        await target.execute(cdp.fetch_enable(_PATTERNS))

        async def fail_each() -> None:
            async for event in events:
                with contextlib.suppress(CDPError, TargetClosedError, DialogOpenError):
                    request_id = str(event.params.get("requestId"))
                    await target.execute(cdp.fetch_fail_request(request_id, "Aborted"))

        nursery.start_soon(fail_each)
        await target.execute(cdp.runtime_run_if_waiting_for_debugger())
        yield
        nursery.cancel_scope.cancel()


async def judge_kept_document(opened: OpenedTab, url: str) -> bool:
    """Judge a document of a tab the current call's action opened (its first, or where
    a redirect of its load went), which the browser kept from loading before it was
    sent (the extension's gate, `RelayHub.gate`), as the guard judges one it paused;
    True when the tab may load it after all. No guard around (the call is over): it
    may not, since nobody may be asked."""
    guard = _current.get()
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
    """Guard a tab the current call's action opened, which the browser holds before its
    first request: Fetch on in it first, then let it run (see the module). Without a
    `guarding` call around it, it is let run unguarded. ``opened``: what is known of
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

    Without a `guarding` call around it, the block runs unguarded. When the block ends,
    the guard stops pausing (Fetch with no pattern: what is paused stays paused, and is
    reported by the browser's next reply or the one after, `_FLUSHES`), decides what
    it paused (asking the person as during the block), and only then turns Fetch off, which
    would send whatever is still paused. When the block is cancelled, whatever is
    still undecided is failed instead.
    """
    guard = _current.get()
    if guard is None:
        yield
        return
    watch = _Watch(target, activity, guard, opened=opened)
    sessions: list[str | None] = [None, *target.child_sessions()]
    async with target.listen(
        cdp.events.FETCH_REQUEST_PAUSED, cdp.events.PAGE_FRAME_REQUESTED_NAVIGATION
    ) as events:

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
                await _each_session(target, sessions, cdp.fetch_enable, _PATTERNS)
                pumping = trio.CancelScope()

                async def pump() -> None:
                    with pumping:
                        async for event in events:
                            request = watch.note(event)
                            if request is not None:
                                deciders.start_soon(watch.decide, event, request)

                deciders.start_soon(pump)
                cancelled = False
                try:
                    yield
                except BaseException as exc:
                    if not isinstance(exc, Exception):
                        # Cancelled: requests still waiting for a decision are failed
                        # (shielded, in `decide`) before the nursery is left.
                        cancelled = True
                        deciders.cancel_scope.cancel()
                    raise
                finally:
                    pumping.cancel()
                    if not cancelled:
                        # The action is over (or ended on an error, such as a dialog
                        # the page opened): what it paused is decided as during it,
                        # and the nursery waits for the person's answers.
                        for _ in range(_FLUSHES):
                            await _each_session(target, sessions, cdp.fetch_enable, ())
                            for event, request in paused():
                                deciders.start_soon(watch.decide, event, request)
        except BaseExceptionGroup as group:
            # The deciders never fail: a group holds the block's own exception.
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise
        finally:
            with trio.CancelScope(shield=True), trio.move_on_after(_LET_GO_TIMEOUT):
                # Cancelled, or the above did not run: no more pausing, what was paused
                # is sent if it needs no question and failed if it would, and only then
                # is Fetch turned off.
                for _ in range(_FLUSHES):
                    await _each_session(target, sessions, cdp.fetch_enable, ())
                    for event, request in paused():
                        await watch.decide_at_once(event, request)
                await _each_session(target, sessions, _fetch_disable, ())


def _fetch_disable(_: object) -> Any:
    return cdp.fetch_disable()


async def _each_session(
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
