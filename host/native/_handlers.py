"""The host's request handlers: snapshots, tools through the call tracker, highlights.

`HostState` is the state of one running host (one extension connection): the
`RelayHub` every tab's CDP goes through, one `TabState` per tab the side panel has
asked about (created on demand, forgotten on ``release``), and one `CallTracker`
with every tool's policy registered. `HostState.handlers` gives the request types of
``host/PROTOCOL.md``: ``snapshot``, ``tools``, ``tool``, ``highlight``, ``release``.

The side panel's inspector (``snapshot``) shows what the agent would see if it looked
now: a baseline rendered against the agent's previous baseline (regions the agent
saw unchanged are collapsed), on a copy of the agent's `SnapshotMemory`. The agent's own
memory is never moved by the inspector: the tools diff against the last snapshot
*the model* saw, and an inspector snapshot becoming that base would make the model
miss what changed before it. The copy is kept for ``highlight``.

Before every cacheable page read the tab's `PageRevisions.sync` runs, so the tracker
decides on a page revision that includes every change the page made up to that
moment (see ``_revisions``). Error-flagged tool results are never cached (the
tracker's `is_flagged_error`).
"""

from __future__ import annotations

import contextlib
import importlib.resources
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, Final

import attrs
import trio

from pycdp_bridge import (
    CDPError,
    DialogOpenError,
    JavaScriptError,
    PageCrashedError,
    PageModel,
    RelayHub,
    RelayTarget,
    Target,
    TargetClosedError,
    sole_kind,
)
from pycdp_bridge import protocol as cdp

from ..pipeline import Control
from ..tab import (
    DEFAULT_BUDGET,
    PageChangedError,
    RevisionStatistics,
    Snapshot,
    SnapshotMemory,
    Tab,
    check_budget,
    page_token_counts,
)
from ..tools import TOOLS, ToolResult, ToolSpec, granted, run_tool
from ..tracker import CallTracker, TrackerLimits, TrackerStatistics
from ..wire import ErrorCode, Handler, JSONObject, Request, RequestError
from ._consent_book import ConsentBook, ToolCall, args_key

__all__ = [
    "HIGHLIGHT_CONFIG",
    "HostState",
    "HostStateStatistics",
    "Toolbox",
    "open_host_state",
    "read_format_page",
]

log = logging.getLogger("trimtab.handlers")

# What the overlay paints: content box, padding and margin, like DevTools' inspector.
HIGHLIGHT_CONFIG: Final[Mapping[str, object]] = {
    "showInfo": True,
    "contentColor": {"r": 111, "g": 168, "b": 220, "a": 0.66},
    "paddingColor": {"r": 147, "g": 196, "b": 125, "a": 0.55},
    "borderColor": {"r": 255, "g": 229, "b": 153, "a": 0.66},
    "marginColor": {"r": 246, "g": 178, "b": 107, "a": 0.66},
}
# A request that touches the page answers page_unresponsive after this long: a
# script stuck in a loop blocks every command. Tools stop themselves after 60 s
# (trimtab.tools.ACTION_TIMEOUT), so a tool request waits longer than that.
PAGE_TIMEOUT: Final = 30.0
TOOL_TIMEOUT: Final = 90.0
# Tab ids are chrome.tabs ids: positive integers that JSON carries exactly.
_MAX_TAB: Final = 2**53


RunTool = Callable[[Tab, str, Mapping[str, object]], Awaitable[ToolResult]]


@attrs.frozen
class Toolbox:
    """The agent's tools as the handlers see them: specs, the runner, the format page."""

    specs: tuple[ToolSpec, ...]
    run: RunTool
    format_page: str

    def __attrs_post_init__(self) -> None:
        names = [spec.name for spec in self.specs]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"tool names must be unique; repeated: {duplicates}")

    @classmethod
    def load(cls) -> Toolbox:
        """The production tools (`trimtab.tools`) and ``FORMAT.md`` from the package."""
        return cls(specs=TOOLS, run=run_tool, format_page=read_format_page())

    def spec(self, name: str) -> ToolSpec | None:
        for spec in self.specs:
            if spec.name == name:
                return spec
        return None


def read_format_page() -> str:
    """The model's format page, ``FORMAT.md``, read as package data."""
    return (importlib.resources.files("trimtab") / "FORMAT.md").read_text(encoding="utf-8")


@attrs.define(eq=False)
class _HeldTab:
    """A browser tab the host holds: the agent's `Tab`, and the inspector's view of it."""

    id: int
    tab: Tab
    # The inspector's latest view of the page: a copy of the agent's memory taken for
    # `snapshot`, kept for `highlight`.
    inspector: SnapshotMemory
    inspector_lock: trio.Lock = attrs.field(factory=trio.Lock)
    # eid -> CDP session of the inspector's latest snapshot (out-of-process iframes).
    inspector_sessions: dict[str, str | None] = attrs.field(factory=dict)
    # Cancels the tab's page observer follower when the tab is released.
    follower: trio.CancelScope = attrs.field(factory=trio.CancelScope)
    # Clients of the link (trimtab.link) each see the tab through their own view:
    # their own snapshot memory, the same target, page observer and lock.
    views: dict[str, Tab] = attrs.field(factory=dict)

    def view(self, name: str | None) -> Tab:
        """The tab as the client ``name`` has seen it (None: the side panel's agent)."""
        if name is None:
            return self.tab
        view = self.views.get(name)
        if view is None:
            view = attrs.evolve(self.tab, memory=SnapshotMemory(self.tab.target))
            self.views[name] = view
        return view


@attrs.frozen
class HostStateStatistics:
    """A snapshot of the host's state."""

    tabs: int
    tracker: TrackerStatistics
    revisions: Mapping[int, RevisionStatistics]


@attrs.define(eq=False)
class HostState:
    """The state of the running host and the handlers that use it.

    ``nursery`` runs each tab's revision follower; `open_host_state` provides it.
    """

    hub: RelayHub
    nursery: trio.Nursery
    toolbox: Toolbox
    tracker: CallTracker = attrs.field(factory=CallTracker)
    consents: ConsentBook = attrs.field(factory=lambda: ConsentBook())
    _tabs: dict[int, _HeldTab] = attrs.field(factory=dict, init=False)

    def __attrs_post_init__(self) -> None:
        for spec in self.toolbox.specs:
            self.tracker.register(spec.name, spec.policy)

    def handlers(self) -> dict[str, Handler]:
        return {
            "snapshot": self.handle_snapshot,
            "tools": self.handle_tools,
            "tool": self.handle_tool,
            "highlight": self.handle_highlight,
            "release": self.handle_release,
        }

    def statistics(self) -> HostStateStatistics:
        return HostStateStatistics(
            tabs=len(self._tabs),
            tracker=self.tracker.statistics(),
            revisions={tab: held.tab.revisions.statistics() for tab, held in self._tabs.items()},
        )

    def forget_view(self, name: str) -> None:
        """Drop what a client of the link has seen of every tab (it disconnected)."""
        for held in self._tabs.values():
            held.views.pop(name, None)

    def tab(self, tab: int) -> Tab | None:
        """The agent's `Tab` for a browser tab, if the host holds one (tests, diagnostics)."""
        held = self._tabs.get(tab)
        return held.tab if held is not None else None

    # -- handlers ------------------------------------------------------------

    async def handle_snapshot(self, request: Request) -> JSONObject:
        tab = _tab_of(request)
        state = await self._open_tab(tab)
        model: PageModel | None = None
        counts: dict[str, int] = {}

        async def take() -> None:
            nonlocal model
            # The agent's capture options: the person sees what the agent is sent.
            model = await state.inspector.capture()

        async def measure() -> None:
            counts.update(await page_token_counts(state.tab.target))

        async with state.inspector_lock:
            started = time.perf_counter()
            try:
                async with _cdp_errors(tab), trio.open_nursery() as nursery:
                    nursery.start_soon(measure)
                    await take()
            except BaseException:
                state.inspector.forget()
                state.inspector_sessions.clear()
                raise
            assert model is not None
            # What the agent would get from a fresh look now: a baseline against the
            # agent's own previous baseline, rendered on a copy so that the agent's
            # memory (the base of its next diff) stays as the model knows it.
            view = state.tab.memory.fork()
            view.options = attrs.evolve(view.options, budget=_budget_of(request))
            snapshot: Snapshot = view.render(
                model, capture_ms=(time.perf_counter() - started) * 1000, baseline=True
            )
            state.inspector = view
            state.inspector_sessions = _control_sessions(model, snapshot.compaction.controls)
        stats = snapshot.stats_dict()
        stats.update(counts)
        return {"xml": snapshot.xml, "kind": snapshot.kind, "stats": stats}

    async def handle_tools(self, request: Request) -> JSONObject:
        del request
        return {
            "tools": [
                {
                    "name": spec.name,
                    "description": spec.description,
                    "input_schema": dict(spec.input_schema),
                }
                for spec in self.toolbox.specs
            ],
            "format": self.toolbox.format_page,
        }

    async def handle_tool(self, request: Request) -> JSONObject:
        session = request.get("session", str)
        if not session:
            raise RequestError("bad_request", "tool field 'session' is empty")
        tab = _tab_of(request)
        name = request.get("name", str)
        args: Mapping[str, object] = request.get("args", dict, default={})
        token = request.get("consent", (str, type(None)), default=None)
        spec = self.toolbox.spec(name)
        if spec is None:
            known = ", ".join(s.name for s in self.toolbox.specs)
            raise RequestError(
                "bad_request", f"unknown tool {name[:100]!r}; the tools are: {known}"
            )
        view: str | None = request.get("view", (str, type(None)), default=None)
        budget = _budget_of(request)
        call = ToolCall(session, tab, name, args_key(args))
        consented = token is not None and self.consents.redeem(token, call)
        policy = self.tracker.policy(name)

        async def run() -> ToolResult:
            # A client of the link acts through its own view of the tab.
            agent_tab = state.view(view)
            async with agent_tab.lock:
                memory = agent_tab.memory
                memory.options = attrs.evolve(memory.options, budget=budget)
                with granted(consented):
                    return await self.toolbox.run(agent_tab, name, args)

        async with _cdp_errors(tab, timeout=TOOL_TIMEOUT):
            state = await self._open_tab(tab)
            if state.tab.target.crashed or state.tab.target.open_dialog is not None:
                # Nothing can be read from a dead or blocked page; the tool says why.
                self.tracker.note_page_change(tab, "the page crashed or shows a dialog")
            elif policy.reads_page and not policy.volatile and not policy.side_effects:
                # The revision must include every change the page made until now.
                try:
                    await state.tab.revisions.sync()
                except DialogOpenError:
                    # The dialog opened after the check above: the tool says so, with
                    # the dialog's facts, as if it had been open before.
                    self.tracker.note_page_change(tab, "the page shows a dialog")
            tracked = await self.tracker.call(session, name, args, run, tab=tab, options=budget)
        result = tracked.result
        consent: JSONObject = {"required": consented, "granted": consented}
        if result.consent is not None:
            consent = {
                "required": True,
                "granted": False,
                "reason": result.consent,
                "element": result.element,
                "token": self.consents.issue(call),
            }
        return {
            "consent": consent,
            "submitted": result.submitted,
            "unasked_submit": result.submitted and not consented,
            "dialog": _dialog_facts(state.tab.target.open_dialog),
            "content": result.content,
            "is_error": result.is_error,
            "kind": result.kind,
            "call_id": tracked.call_id,
            "cached": tracked.cached,
            "cached_from": tracked.cached_from,
            "cached_at": tracked.cached_at_wall,
            "note": tracked.note,
            "side_effects": policy.side_effects,
            "submits": result.submits,
        }

    async def handle_highlight(self, request: Request) -> JSONObject:
        tab = _tab_of(request)
        eid = request.get("eid", (str, type(None)))
        state = await self._open_tab(tab)
        target = state.tab.target
        async with _cdp_errors(tab):
            # The overlay needs the DOM domain; a capture has enabled it already anyway.
            await target.execute(cdp.dom_enable())
            await target.execute(cdp.overlay_enable())
            if eid is None:
                await target.execute(cdp.overlay_hide_highlight())
                return {"found": False}
            control, session_id = self._resolve_eid(state, eid)
            try:
                await target.execute(
                    cdp.overlay_highlight_node(
                        HIGHLIGHT_CONFIG, backend_node_id=control.backend_node_id
                    ),
                    session_id=session_id,
                )
            except CDPError as exc:
                raise RequestError(
                    "stale_id", f"element {eid!r} is no longer on the page ({exc.message})"
                ) from exc
        return {"found": True}

    async def handle_release(self, request: Request) -> JSONObject:
        tab = _tab_of(request)
        state = self._tabs.pop(tab, None)
        target: Target | None = None
        if state is not None:
            state.follower.cancel()
            state.tab.forget()
            state.inspector.forget()
            state.inspector_sessions.clear()
            target = state.tab.target
        self.tracker.forget_tab(tab)
        if target is None or target.closed:
            target = self.hub.target(tab)
        if isinstance(target, RelayTarget):
            # Already gone (the tab closed, the user detached): nothing to detach.
            with contextlib.suppress(TargetClosedError, CDPError):
                await target.detach()
        return {}

    # -- internals -------------------------------------------------------------

    async def _open_tab(self, tab: int) -> _HeldTab:
        state = self._tabs.get(tab)
        if state is None or state.tab.target.closed:
            if state is not None:
                # The debugger detached (tab closed, user cancelled): start over.
                state.follower.cancel()
                self.tracker.forget_tab(tab)
            target = self.hub.target(tab)
            state = _HeldTab(
                id=tab,
                tab=Tab.open(target, on_change=self._page_changed(tab)),
                inspector=SnapshotMemory(target),
            )
            self._tabs[tab] = state
            self.nursery.start_soon(self._follow, state, name=f"page revisions of tab {tab}")
        # A page already stuck in a script never lets the observer install: the wait
        # is bounded like every request that touches the page.
        with trio.move_on_after(PAGE_TIMEOUT) as waited:
            await state.tab.revisions.ready.wait()
        if waited.cancelled_caught:
            raise RequestError(
                "page_unresponsive",
                f"tab {tab}: the page did not answer within {PAGE_TIMEOUT:g} s (a script on "
                "it may be stuck); reload it or try again later",
            )
        if state.tab.target.closed:
            raise RequestError("target_closed", f"tab {tab} is closed or its debugger detached")
        return state

    def _page_changed(self, tab: int) -> Callable[[str], None]:
        def changed(reason: str) -> None:
            self.tracker.note_page_change(tab, reason)

        return changed

    async def _follow(self, state: _HeldTab) -> None:
        """Run the tab's revision follower; it must never take the host down."""
        with state.follower:
            try:
                await state.tab.revisions.run()
            except TargetClosedError as exc:
                log.info("tab %d closed while following its page: %s", state.id, exc)
            except Exception:
                log.exception("the page revision follower of tab %d failed", state.id)
            finally:
                # A tab whose changes are no longer followed must not serve cached reads.
                if self._tabs.get(state.id) is state:
                    self.tracker.note_page_change(state.id, "page revisions stopped")

    def _resolve_eid(self, state: _HeldTab, eid: str) -> tuple[Control, str | None]:
        inspected = state.inspector.latest
        if inspected is not None and eid in inspected.controls:
            return inspected.controls[eid], state.inspector_sessions.get(eid)
        agent = state.tab.latest
        # The agent's snapshot keeps no frame sessions: only main-frame ids resolve.
        if agent is not None and eid in agent.controls and agent.controls[eid].frame == 0:
            return agent.controls[eid], None
        if inspected is None and agent is None:
            raise RequestError(
                "stale_id", f"no snapshot of tab {state.id} yet, so no element {eid!r}"
            )
        raise RequestError(
            "stale_id",
            f"no element {eid[:60]!r} in the latest snapshot of tab {state.id}; "
            "take a new snapshot",
        )


@contextlib.asynccontextmanager
async def open_host_state(
    hub: RelayHub,
    *,
    toolbox: Toolbox | None = None,
    limits: TrackerLimits | None = None,
) -> AsyncIterator[HostState]:
    """The host's state for one extension connection, driving tabs through ``hub``.

    The caller owns the hub: it feeds it every relay message and closes it. On exit
    the tabs' revision followers stop.
    """
    tracker = CallTracker(limits=limits) if limits is not None else CallTracker()
    async with trio.open_nursery() as nursery:
        state = HostState(
            hub=hub, nursery=nursery, toolbox=toolbox or Toolbox.load(), tracker=tracker
        )
        try:
            yield state
        finally:
            nursery.cancel_scope.cancel()


def _budget_of(request: Request) -> int | None:
    """The request's token budget for snapshots: ``budget`` (0: none), else the default."""
    budget = request.get("budget", int, default=DEFAULT_BUDGET)
    try:
        return check_budget(budget or None)
    except ValueError as exc:
        raise RequestError("bad_request", f"{request.type} field 'budget': {exc}") from None


def _tab_of(request: Request) -> int:
    tab: int = request.get("tab", int)
    if not 0 <= tab < _MAX_TAB:
        raise RequestError("bad_request", f"{request.type} field 'tab' = {tab} is not a tab id")
    return tab


# What a request that touches the page answers for each error; subclasses first.
_ERROR_CODES: Final[tuple[tuple[type[BaseException], ErrorCode], ...]] = (
    (PageCrashedError, "page_crashed"),
    (DialogOpenError, "dialog_open"),
    (TargetClosedError, "target_closed"),
    (CDPError, "cdp_error"),
    (JavaScriptError, "cdp_error"),
    (PageChangedError, "page_changed"),
)


@contextlib.asynccontextmanager
async def _cdp_errors(tab: int, timeout: float | None = None) -> AsyncIterator[None]:
    """Turn the browser's refusals into the protocol's error replies, and a page that
    stops answering (a script stuck in a loop) into one after `timeout` seconds
    (`PAGE_TIMEOUT` by default)."""
    timeout = PAGE_TIMEOUT if timeout is None else timeout
    try:
        with trio.fail_after(timeout):
            yield
    except trio.TooSlowError as exc:
        raise RequestError(
            "page_unresponsive",
            f"tab {tab}: the page did not answer within {timeout:g} s (a script on it may"
            " be stuck); reload it or try again later",
        ) from exc
    except BaseException as exc:
        coded = _error_code(exc)
        if coded is None:
            raise
        code, error = coded
        raise RequestError(code, f"tab {tab}: {error}") from exc


def _error_code(exc: BaseException) -> tuple[ErrorCode, BaseException] | None:
    """The protocol's code for an error, or for a group of errors of one kind (the
    concurrent calls of a capture fail alike), with the error to show."""
    for kind, code in _ERROR_CODES:
        error = sole_kind(exc, kind)
        if error is not None:
            return code, error
    return None


def _dialog_facts(dialog: Mapping[str, Any] | None) -> JSONObject | None:
    """The open JavaScript dialog as the side panel reads it, or None."""
    if dialog is None:
        return None
    kind = str(dialog.get("type", ""))
    return {
        "type": kind,
        "message": str(dialog.get("message", "")),
        "default": str(dialog.get("defaultPrompt", "")) if kind == "prompt" else None,
    }


def _control_sessions(model: PageModel, controls: Mapping[str, Control]) -> dict[str, str | None]:
    frames = model.frames
    return {
        eid: frames[control.frame].session_id if 0 <= control.frame < len(frames) else None
        for eid, control in controls.items()
    }
