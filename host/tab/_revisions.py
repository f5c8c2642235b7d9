"""Page revisions: the tab's one page observer, for the call tracker and for settling.

It follows a tab's CDP events into the call tracker's page revision, and its
in-page observer (``js/page-observer.js``) is also what `settle` asks whether the
DOM has been quiet long enough (`PageRevisions.quiet`).

A cached read is only as good as the host's knowledge that the page has not changed
since. Changes come from three places, and each is followed differently:

* **Navigations** (``Page.frameNavigated``, ``Page.navigatedWithinDocument``,
  ``Page.loadEventFired``, frames attached or detached, dialogs): the ``Page``
  domain's own events.
* **DOM changes made by the page itself.** The ``DOM.*`` mutation events only fire
  for nodes the client has already requested, cost a message per mutation (a whole
  serialized subtree per insertion) over native messaging, and the capture's
  ``DOM.getDocument`` would make them flood in for every node. Instead a
  ``MutationObserver`` runs in an isolated world (``Page.addScriptToEvaluateOnNewDocument
  {worldName, runImmediately}``: every document and same-process frame, invisible to
  the page's scripts, exempt from its CSP) and reports through ``Runtime.addBinding
  {executionContextName}`` as ``Runtime.bindingCalled`` events. It also counts the
  events that change what a capture reads without touching the DOM (input, change,
  scroll, resize, load of an image, focus, transitions).
* **State no observer sees**: a script setting ``input.value`` or ``checked``, and
  open shadow roots attached after their host was inserted (the observer cannot
  know of them until it walks the tree again). `PageRevisions.sync` reads a token
  from the isolated world (mutation count, newly found shadow roots, a hash of the
  form controls' state, scroll, viewport, URL) and notes a change when it differs.

Reports are throttled in the page without ever being late: the first change of a
burst is reported at once (``open``), later ones in the same ``WINDOW_MS`` are folded
into one report at the end of the window, and a window with no further change is
closed with a ``close`` report. While any frame's window is open the host cannot know
whether an unreported change is pending, so `sync` treats the page as changed. A page
that keeps mutating is therefore never read from cache, which is right: it is
changing. The cost is at most two small events per ``WINDOW_MS`` per frame.

`sync` is the barrier the host runs before every cacheable page read: one round trip
to the page's main thread, after which every report the page emitted earlier has
arrived (one CDP connection delivers messages in order) and is processed, so a
cached answer is served only when nothing changed up to that moment.

**Out-of-process iframes** (another site's frame, in another renderer, reached through
a CDP session of its own once a capture attached it) get the same observer, installed
in their session the first time the token is read after they attach. The token then
names every attached frame and its own token, so a frame that changed, came or went
changes the page's token; their reports count like the main frame's. A frame whose
observer cannot be installed or read makes the token unknown (None), as below.

Limits: if the observer cannot be installed (a page the debugger may not script),
`sync` reports a change every time, so that tab is never served from cache. `sync`
raises what the target raises (``TargetClosedError``, ``CDPError``).

A JavaScript dialog the page opens while the observer is being installed (a page that
asks as it loads, just as the host reaches its tab) stops the installation: the page
answers nothing until the dialog is closed. That failure is not final: the
installation is tried again once no dialog is open, at the next
``Page.javascriptDialogClosed`` the follower takes in (the agent's `answer_dialog`,
the person's click, a navigation that dismissed it), or else at the next `sync`,
`token` or `quiet`, whichever comes first. Until then the tab is never served from
cache, and an installation that comes late counts as a page change, since the page
was not watched before it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import attrs
import trio

from pycdp_bridge import (
    CDPError,
    DialogOpenError,
    Event,
    JavaScriptError,
    ObjectRef,
    Target,
    TargetClosedError,
    call_on,
    evaluate,
)
from pycdp_bridge import protocol as cdp

from ._devtools import network_enable
from ._scripts import applied, page_script

__all__ = [
    "BINDING_NAME",
    "WINDOW_MS",
    "WORLD_NAME",
    "PageRevisions",
    "Quiet",
    "RevisionStatistics",
    "main_frame_id",
]

log = logging.getLogger("trimtab.revisions")

WORLD_NAME: Final = "trimtab-revisions"
BINDING_NAME: Final = "__trimtabPageChanged"
WINDOW_MS: Final = 100
# Events the revision follows; everything else the target sends is not listened to.
NAVIGATION_EVENTS: Final = frozenset(
    {
        cdp.events.PAGE_FRAME_NAVIGATED,
        cdp.events.PAGE_NAVIGATED_WITHIN_DOCUMENT,
        cdp.events.PAGE_LOAD_EVENT_FIRED,
        cdp.events.PAGE_DOM_CONTENT_EVENT_FIRED,
        cdp.events.PAGE_FRAME_ATTACHED,
        cdp.events.PAGE_FRAME_DETACHED,
        cdp.events.PAGE_JAVASCRIPT_DIALOG_OPENING,
        cdp.events.PAGE_JAVASCRIPT_DIALOG_CLOSED,
    }
)
_CONTEXT_EVENTS: Final = frozenset(
    {cdp.events.RUNTIME_EXECUTION_CONTEXT_DESTROYED, cdp.events.RUNTIME_EXECUTION_CONTEXTS_CLEARED}
)
_BINDING_EVENT: Final = cdp.events.RUNTIME_BINDING_CALLED
# An out-of-process iframe's session ending (its frame gone, or gone to another site).
_DETACHED_EVENT: Final = cdp.events.TARGET_DETACHED_FROM_TARGET
# Large, because a dropped `close` report would keep the page "changing" for good.
_EVENT_BUFFER: Final = 8192


@attrs.frozen
class Quiet:
    """How a wait for quiet ended: quiet (`settled`) or at its cap, and what kept
    changing meanwhile without being waited for (``<span class="price"> 9x``);
    `leaving` when it ended because the document began a navigation to another one,
    which the browser may not have reported yet."""

    settled: bool
    churn: tuple[str, ...] = ()
    leaving: bool = False

    @classmethod
    def read(cls, value: Mapping[str, Any]) -> Quiet:
        """The page observer's answer to a wait (``wait-quiet.js``)."""
        return cls(
            settled=value.get("settled") is True,
            churn=tuple(str(item) for item in value.get("churn") or ()),
            leaving=value.get("leaving") is True,
        )


async def main_frame_id(target: Target) -> str:
    """The id of the tab's main frame, read from the browser."""
    tree: Mapping[str, Any] = await target.execute(cdp.page_get_frame_tree())
    return str(tree["frameTree"]["frame"]["id"])


def _script(name: str) -> str:
    return page_script("trimtab.tab", name)


def _probe_source(within_ms: int) -> str:
    return applied(_script("frame-probe.js"), within_ms)


def _observer_source() -> str:
    return applied(_script("page-observer.js"), BINDING_NAME, WINDOW_MS)


@attrs.frozen
class RevisionStatistics:
    """A snapshot of one tab's revision follower."""

    installed: bool
    events: int
    reports: int
    syncs: int
    changes: int
    open_windows: int
    last_reason: str | None


@attrs.define(eq=False)
class _Frame:
    """The page observer in one out-of-process iframe, reached through its own session."""

    frame_id: str
    installed: bool = False
    # The observer's world in the frame's document (None: not made yet, or it died).
    context: int | None = None


@attrs.define(eq=False)
class PageRevisions:
    """Follows one tab's page changes and calls ``on_change(reason)`` for each.

    Start `run` in a nursery with ``nursery.start``: it returns once the observer is
    installed (or its installation failed) and then follows events until the target
    closes, installing the observer once a dialog that stopped its installation
    closes. Call `sync` right before deciding whether a cached read is still valid.
    """

    target: Target
    on_change: Callable[[str], None] = attrs.field(default=lambda reason: None)
    ready: trio.Event = attrs.field(factory=trio.Event, init=False)
    """Set once the observer is installed, or its installation failed or stopped."""
    _events: trio.MemoryReceiveChannel[Event] | None = attrs.field(default=None, init=False)
    _installed: bool = attrs.field(default=False, init=False)
    _install_tried: bool = attrs.field(default=False, init=False)
    # The last installation was stopped by a JavaScript dialog: tried again once it closes.
    _dialog_stopped: bool = attrs.field(default=False, init=False)
    _activity_events: bool = attrs.field(default=False, init=False)
    _install_lock: trio.Lock = attrs.field(factory=trio.Lock, init=False)
    _main_frame: str | None = attrs.field(default=None, init=False)
    _context: int | None = attrs.field(default=None, init=False)
    _token: str | None = attrs.field(default=None, init=False)
    # Execution contexts whose report window is open (a change may be unreported), by
    # session (None: the tab's own).
    _open: set[tuple[str | None, int]] = attrs.field(factory=set, init=False)
    # The observers of the out-of-process iframes, by session.
    _frames: dict[str, _Frame] = attrs.field(factory=dict, init=False)
    _event_count: int = attrs.field(default=0, init=False)
    _reports: int = attrs.field(default=0, init=False)
    _syncs: int = attrs.field(default=0, init=False)
    _changes: int = attrs.field(default=0, init=False)
    _last_reason: str | None = attrs.field(default=None, init=False)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Install the observer, then follow the target's events until it closes."""
        methods = (*NAVIGATION_EVENTS, *_CONTEXT_EVENTS, _BINDING_EVENT, _DETACHED_EVENT)
        try:
            # Listening before installing: nothing the page does meanwhile is missed.
            async with self.target.listen(*methods, buffer_size=_EVENT_BUFFER) as events:
                self._events = events
                try:
                    await self.install()
                finally:
                    self.ready.set()
                    task_status.started()
                async for event in events:
                    self._handle(event)
                    if self._install_due():
                        # A dialog stopped the installation and has just closed (the
                        # event says so): the page answers again, the observer goes in.
                        await self.install()
        finally:
            # Waiters must never hang on a follower that was cancelled before it began.
            self.ready.set()

    async def sync(self) -> None:
        """Make the revision current: note any change the page made up to now.

        One round trip to the page; every event it sent before the answer has then
        arrived and is handled here, so nothing earlier is missed.
        """
        self._syncs += 1
        token = await self._read_token()
        self._drain()
        if token is None:
            self._change("the page's state cannot be read")
        elif token != self._token:
            if self._token is not None:
                self._change("the page changed (form state, scroll, viewport or DOM)")
            self._token = token
        if self._open:
            self._change("the page is changing")

    async def token(self) -> str | None:
        """The page's revision token as of now (a key of the document's own, mutation
        count, form controls, scroll, viewport, URL), or None when the observer cannot
        tell. Equal tokens at two moments mean the same document, in which the observer
        saw no change in between; `sync`'s own record of the revision is left as it
        was."""
        return await self._read_token()

    @property
    def main_frame(self) -> str | None:
        """The main frame's id as the page's events follow it; None until the observer
        is installed (or when it could not be)."""
        return self._main_frame if self._installed else None

    async def main_frame_id(self) -> str:
        """The main frame's id: `main_frame`, or read from the browser without it."""
        known = self.main_frame
        return known if known is not None else await main_frame_id(self.target)

    def statistics(self) -> RevisionStatistics:
        return RevisionStatistics(
            installed=self._installed,
            events=self._event_count,
            reports=self._reports,
            syncs=self._syncs,
            changes=self._changes,
            open_windows=len(self._open),
            last_reason=self._last_reason,
        )

    # -- internals -----------------------------------------------------------

    async def install(self) -> bool:
        """Install the page observer once; whether it is installed.

        `run` calls it; `settle` calls it too, so that actions on a tab nobody follows
        (the command line, the tests) wait on the same observer.
        """
        async with self._install_lock:
            if not self._install_tried or self._install_due():
                self._install_tried = True
                await self._install()
        return self._installed

    def _install_due(self) -> bool:
        """Whether a JavaScript dialog stopped the last installation and none is open
        now: the page answers again, so the installation is tried once more."""
        return self._dialog_stopped and self.target.open_dialog is None

    async def enable_activity_events(self) -> None:
        """Turn on the events `settle` follows (Page lifecycle, Network), and focus
        emulation, once per tab."""
        if self._activity_events:
            return
        await self.target.execute(cdp.page_enable())
        await self.target.execute(cdp.page_set_lifecycle_events_enabled(enabled=True))
        # With the devtools log's buffer sizes: an enable without them would reset them.
        await self.target.execute(network_enable())
        # A tab the person is not looking at is hidden: Chromium holds input for a
        # hidden page's widget (each mouse event about five seconds) and the page sees
        # itself hidden (some pages defer their work then). Outside agents act in such
        # tabs; focus emulation makes the page visible and focused to itself without
        # bringing it to the front.
        await self.target.execute(cdp.emulation_set_focus_emulation_enabled(True))
        self._activity_events = True

    async def quiet(
        self,
        frame_id: str,
        quiet_ms: int,
        cap_ms: int,
        scopes: Sequence[int] = (),
        since_ms: float = 0.0,
        frames: Sequence[str] = (),
    ) -> Quiet | None:
        """Wait in the page until its DOM has been quiet for `quiet_ms`.

        `scopes` are backend ids of the nodes an action touched: then only changes in
        them, their forms and landmarks, and dialogs opened meanwhile count (see
        ``page-observer.js``); `since_ms` is how long ago the action began, so that
        elements that were already changing before it (a ticker) are churn, not waited
        for. `frames`: sessions of out-of-process iframes the action acted in, each
        waited for too, whole (a widget of another site). A `Quiet` once quiet, when
        `cap_ms` passed first (``settled`` False) or when the document began a
        navigation to another one (``leaving``), None when the document went away
        meanwhile (a navigation is starting).
        """
        # When the action began, on the wall clock the page reads too: the round trips
        # below, and the call's delivery on a loaded machine, do not shorten `since_ms`.
        began_at_ms = time.time() * 1000 - since_ms
        if not frames:
            return await self._quiet_in_page(frame_id, quiet_ms, cap_ms, scopes, began_at_ms)
        waits: dict[str | None, Quiet | None] = {}

        async def page() -> None:
            waits[None] = await self._quiet_in_page(frame_id, quiet_ms, cap_ms, scopes, began_at_ms)

        async def frame(session: str) -> None:
            waits[session] = await self._quiet_in_frame(session, quiet_ms, cap_ms, began_at_ms)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(page)
            for session in dict.fromkeys(frames):
                nursery.start_soon(frame, session)
        main = waits.pop(None)
        if main is None or main.leaving:
            return main
        others = [wait for wait in waits.values() if wait is not None]
        return Quiet(
            settled=main.settled and all(wait.settled for wait in others),
            churn=tuple(item for wait in (main, *others) for item in wait.churn),
        )

    async def _quiet_in_frame(
        self, session: str, quiet_ms: int, cap_ms: int, began_at_ms: float
    ) -> Quiet | None:
        """`quiet` in one out-of-process iframe, whole; None when it cannot be asked
        (gone with the action, or not scriptable): the page's own wait stands alone."""
        info = self.target.child_sessions().get(session)
        if info is None:
            return None
        frame = self._frames.setdefault(session, _Frame(str(info.get("targetId", ""))))
        try:
            context = await self._frame_context(session, frame)
            value = await self._wait_quiet(
                context, quiet_ms, cap_ms, began_at_ms, (), session=session
            )
        except (CDPError, JavaScriptError, DialogOpenError, TargetClosedError, KeyError):
            frame.context = None
            return None
        if not isinstance(value, dict):
            return None
        quiet = Quiet.read(value)
        # The frame going to another page is its own affair.
        return None if quiet.leaving else quiet

    async def _wait_quiet(
        self,
        context: int,
        quiet_ms: int,
        cap_ms: int,
        began_at_ms: float,
        scopes: Sequence[ObjectRef],
        *,
        session: str | None = None,
    ) -> Any:
        """The observer's wait for quiet in one world (``wait-quiet.js``): its answer, or
        null when no observer runs there yet."""
        return await call_on(
            self.target,
            None,
            _script("wait-quiet.js"),
            quiet_ms,
            cap_ms,
            round(began_at_ms),
            *scopes,
            context_id=context,
            session_id=session,
        )

    async def _quiet_in_page(
        self,
        frame_id: str,
        quiet_ms: int,
        cap_ms: int,
        scopes: Sequence[int],
        began_at_ms: float,
    ) -> Quiet | None:
        """`quiet` in the tab's own session."""
        if not await self.install():
            # Nothing can watch this page: a person's glance at it.
            await trio.sleep(quiet_ms / 1000)
            return Quiet(settled=True)
        context: int | None = None
        try:
            context = await self._context_in(frame_id)
            nodes = [await self._resolve(backend_id, context) for backend_id in scopes]
            in_scope = [ObjectRef(node) for node in nodes if node is not None]
            for _ in range(2):
                value = await self._wait_quiet(context, quiet_ms, cap_ms, began_at_ms, in_scope)
                if isinstance(value, dict):
                    return Quiet.read(value)
                # A document that started before the observer was installed, in a
                # world created just now: the observer goes in here too.
                await evaluate(self.target, _observer_source(), context_id=context)
        except (CDPError, JavaScriptError):
            # The context went with its document while the promise was pending (the
            # page's side of that is a JavaScriptError, the protocol's a CDPError), or
            # before the wait began, when its end was not in yet: the next wait makes
            # a new one.
            if context is not None and context == self._context:
                self._context = None
            return None
        return None

    async def _context_in(self, frame_id: str) -> int:
        """The observer's world in `frame_id`: in the main frame the one kept from the
        last time (a round trip less on every action's settle), else a new one."""
        if frame_id == self._main_frame:
            return await self._world_context()
        world = await self.target.execute(
            cdp.page_create_isolated_world(frame_id, world_name=WORLD_NAME)
        )
        return int(world["executionContextId"])

    async def renders(self, within_ms: int) -> bool:
        """Whether the main frame's page renders a frame within `within_ms` (an animation
        frame fires, in the observer's world); True when it cannot tell (no observer,
        the document is going away, or a dialog holds the page)."""
        if not self._installed or self._main_frame is None:
            return True
        try:
            rendered = await evaluate(
                self.target,
                _probe_source(within_ms),
                context_id=await self._world_context(),
                await_promise=True,
            )
        except (CDPError, JavaScriptError, DialogOpenError):
            self._context = None  # found again by the next look, if it died
            return True
        return rendered is not False

    async def _resolve(self, backend_id: int, context: int) -> str | None:
        """A node as a remote object of the observer's world, None when it is gone."""
        try:
            resolved = await self.target.execute(
                cdp.dom_resolve_node(backend_node_id=backend_id, execution_context_id=context)
            )
        except CDPError:
            return None
        object_id = resolved.get("object", {}).get("objectId")
        return str(object_id) if object_id else None

    async def _install(self) -> None:
        try:
            await self._install_observer(None)
            self._main_frame = await main_frame_id(self.target)
        except DialogOpenError as exc:
            # Not the page's last word: tried again once the dialog is closed (each
            # step is harmless to repeat, and the observer's script runs once per world).
            log.info("page revisions: a dialog stopped the observer's installation: %s", exc)
            self._dialog_stopped = True
            return
        except (CDPError, KeyError) as exc:
            log.warning("page revisions: the observer could not be installed: %s", exc)
            self._dialog_stopped = False
            return
        late = self._dialog_stopped
        self._dialog_stopped = False
        self._installed = True
        if late:
            # Whatever the tab's reads were decided on before was not watched: none of
            # it may be taken as current.
            self._change("the page observer was installed after a dialog")

    async def _install_observer(self, session: str | None) -> None:
        """Have the observer run in every document of `session` (None: the tab's own),
        the current one included, reporting through the binding."""
        await self.target.execute(cdp.page_enable(), session_id=session)
        # Bindings only report while the Runtime domain is enabled.
        await self.target.execute(cdp.runtime_enable(), session_id=session)
        await self.target.execute(
            cdp.runtime_add_binding(BINDING_NAME, execution_context_name=WORLD_NAME),
            session_id=session,
        )
        await self.target.execute(
            cdp.page_add_script_to_evaluate_on_new_document(
                _observer_source(), world_name=WORLD_NAME, run_immediately=True
            ),
            session_id=session,
        )

    async def _read_token(self) -> str | None:
        if self._install_due():
            # The dialog closed and the follower has not installed the observer yet.
            await self.install()
        if not self._installed or self._main_frame is None:
            # Still a round trip, so that earlier navigation events are in.
            await evaluate(self.target, _script("round-trip.js"))
            return None
        main: str | None = None
        for _ in range(2):
            context = await self._world_context()
            try:
                value = await evaluate(
                    self.target, _script("revision-token.js"), context_id=context
                )
            except (CDPError, JavaScriptError):
                # The context died with its document: find the new one once.
                self._context = None
                continue
            main = value if isinstance(value, str) else None
            break
        if main is None:
            return None
        frames = await self._frame_tokens()
        if frames is None:
            return None
        return "".join([main, *(f" {session}={token}" for session, token in frames)])

    async def _frame_tokens(self) -> list[tuple[str, str]] | None:
        """Each attached out-of-process iframe's session and token, in session order
        (its observer installed first, if it is new); None if one cannot be read."""
        sessions = {
            session: str(info.get("targetId", ""))
            for session, info in self.target.child_sessions().items()
            if info.get("type") == "iframe"
        }
        for gone in self._frames.keys() - sessions.keys():
            self._forget_frame(gone)
        tokens: dict[str, str | None] = {}

        async def read(session: str, frame_id: str) -> None:
            frame = self._frames.setdefault(session, _Frame(frame_id))
            tokens[session] = await self._frame_token(session, frame)

        async with trio.open_nursery() as nursery:
            for session, frame_id in sessions.items():
                nursery.start_soon(read, session, frame_id)
        if any(token is None for token in tokens.values()):
            return None
        return sorted((session, token) for session, token in tokens.items() if token is not None)

    async def _frame_token(self, session: str, frame: _Frame) -> str | None:
        """One out-of-process iframe's token (installing its observer the first time),
        after every report it sent before; None when it cannot be read."""
        try:
            for _ in range(2):
                context = await self._frame_context(session, frame)
                try:
                    value = await evaluate(
                        self.target,
                        _script("revision-token.js"),
                        context_id=context,
                        session_id=session,
                    )
                except (CDPError, JavaScriptError):
                    frame.context = None  # died with its document: found again once
                    continue
                return value if isinstance(value, str) else None
        except (CDPError, DialogOpenError, TargetClosedError, KeyError) as exc:
            # Gone meanwhile, or a frame the debugger may not script: not known.
            log.debug("page revisions: frame %s cannot be read: %s", frame.frame_id, exc)
        return None

    async def _frame_context(self, session: str, frame: _Frame) -> int:
        """The observer's world in an out-of-process iframe's document: installed the
        first time, the context kept from the last time, or a new one."""
        if not frame.installed:
            await self._install_observer(session)
            frame.installed = True
        if frame.context is None:
            world = await self.target.execute(
                cdp.page_create_isolated_world(frame.frame_id, world_name=WORLD_NAME),
                session_id=session,
            )
            frame.context = int(world["executionContextId"])
            # A document that began before the observer was installed: it goes in here
            # too (it runs once per world).
            await evaluate(
                self.target, _observer_source(), context_id=frame.context, session_id=session
            )
        return frame.context

    async def _world_context(self) -> int:
        """The observer's world in the main frame: the context kept from the last time,
        or a new one (`_context` is cleared when it dies with its document)."""
        assert self._main_frame is not None
        if self._context is None:
            world = await self.target.execute(
                cdp.page_create_isolated_world(self._main_frame, world_name=WORLD_NAME)
            )
            self._context = int(world["executionContextId"])
        return self._context

    def _drain(self) -> None:
        if self._events is None:
            return
        while True:
            try:
                event = self._events.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
                return
            self._handle(event)

    def _forget_frame(self, session: str) -> None:
        """An out-of-process iframe's session ended: its observer and any report window
        it left open (no close report comes from a document gone with its session)."""
        if self._frames.pop(session, None) is not None:
            self._open = {key for key in self._open if key[0] != session}
            self._change("another site's frame went away")

    def _handle(self, event: Event) -> None:
        self._event_count += 1
        session = event.session_id
        params: Mapping[str, Any] = event.params
        method = event.method
        if method == _DETACHED_EVENT:
            self._forget_frame(str(params.get("sessionId")))
            return
        if method == _BINDING_EVENT:
            if params.get("name") != BINDING_NAME:
                return
            if session is not None and session not in self._frames:
                return  # a frame gone since: its going changed the token
            self._reports += 1
            context = params.get("executionContextId")
            if not isinstance(context, int):
                self._change("an unattributed DOM change")
                return
            if params.get("payload") == "close":
                self._open.discard((session, context))
            else:
                self._open.add((session, context))
                self._change("the page changed its DOM or state")
            return
        frame = self._frames.get(session) if session is not None else None
        if method == cdp.events.RUNTIME_EXECUTION_CONTEXTS_CLEARED:
            self._open = {key for key in self._open if key[0] != session}
            if session is None:
                self._context = None
            elif frame is not None:
                frame.context = None
            return
        if method == cdp.events.RUNTIME_EXECUTION_CONTEXT_DESTROYED:
            context = params.get("executionContextId")
            if isinstance(context, int):
                self._open.discard((session, context))
            if session is None and context == self._context:
                self._context = None
            elif frame is not None and context == frame.context:
                frame.context = None
            return
        if session is not None:
            # An out-of-process iframe's navigation or dialog: a change once its
            # observer is in (before that, its token's first reading is the change).
            if frame is not None:
                self._change(method)
            return
        if method == cdp.events.PAGE_FRAME_NAVIGATED:
            navigated: Mapping[str, Any] = params.get("frame") or {}
            if navigated.get("parentId") is None and navigated.get("id"):
                self._main_frame = str(navigated["id"])
                self._context = None
        self._change(method)

    def _change(self, reason: str) -> None:
        log.debug("page change: %s", reason)
        self._changes += 1
        self._last_reason = reason
        self.on_change(reason)
