"""The browser as the host holds it: its tabs, each client's view of them, one tracker.

`HostState` is the state of one running host (one extension connection): the
`RelayHub` every tab's CDP goes through, the held tabs (`OpenTabs`: one per browser
tab a door has asked about, created on demand, forgotten on `release`), the tasks
(`Tasks`), and one `CallTracker` with every tool's policy registered. Both doors
(``trimtab.native`` for the side panel, ``trimtab.link`` for outside agents) call its
typed methods: `call_tool` (a `ToolCall` in, a `ToolOutcome` out, through the
envelope, stage by stage in ``_tool_call``), `inspect`, `highlight`, `release`.

The side panel's inspector (`inspect`) shows what the agent would see if it looked
now: a baseline rendered against what the agent last saw (regions the agent
saw unchanged are collapsed), on a copy of the agent's `SnapshotMemory`. The agent's
own memory is never moved by the inspector: the tools diff against the last snapshot
*the model* saw, and an inspector snapshot becoming that base would make the model
miss what changed before it. The copy is kept for `highlight`.

Before every cacheable page read the tab's `PageRevisions.sync` runs, so the tracker
decides on a page revision that includes every change the page made up to that
moment (see ``trimtab.tab``). Error-flagged tool results are never cached.

Parts of the state's work live beside it, in modules that take what they use:
``_tool_call`` (a tool call's stages), ``_open_tabs`` (the held tabs, their followers),
``_inspector``, ``_outcomes`` (outcomes the host builds itself), ``_task_calls`` (the
task tools' handlers) and ``_tab_events`` (tabs coming and going).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Mapping, Sequence

import attrs
import trio

from ..envelope import Ask, SitePolicy
from ..pipeline import load_in_background
from ..routines import (
    GRANTS_FILE,
    HEALS_FILE,
    PageSeen,
    Recording,
    Routine,
    RoutineError,
    RoutineGrants,
    RoutineStore,
    WaitingHeals,
    edit_routine,
    routine_of,
)
from ..tab import (
    DEFAULT_BUDGET,
    MIN_BUDGET,
    Downloads,
    RevisionStatistics,
    Tab,
    refuse_unclaimed,
)
from ..tools import parse_groups, tools_in
from ..tracker import CallTracker, TrackerLimits, TrackerStatistics
from ..wire import JSONObject, RequestError
from ._call import ToolCall, ToolOutcome
from ._inspector import HIGHLIGHT_CONFIG, highlight_element, inspect_tab
from ._open_tabs import OpenTabs
from ._outcomes import named_elements
from ._routine_runs import (
    RoutineRun,
    RoutineRuns,
    StepWatch,
    keep_heal,
    look_before,
    run_in_tab,
    seen_before,
)
from ._set_off import SetOff
from ._tab_events import follow_tabs
from ._tab_messages import TabRelayHub as RelayHub  # the relay with the tab messages
from ._task_tabs import Tasks, TaskTabs
from ._tool_call import run_call
from ._toolbox import Toolbox
from ._turns import TabTurns

__all__ = ["HIGHLIGHT_CONFIG", "HostState", "HostStateStatistics", "open_host_state"]

log = logging.getLogger("trimtab.browser")


@attrs.frozen
class HostStateStatistics:
    """A snapshot of the host's state."""

    tabs: int
    tracker: TrackerStatistics
    revisions: Mapping[int, RevisionStatistics]


@attrs.define(eq=False)
class HostState:
    """The state of the running host and the typed calls both doors make on it.

    ``nursery`` runs each tab's revision follower; `open_host_state` provides it.
    """

    hub: RelayHub
    nursery: trio.Nursery
    toolbox: Toolbox
    tracker: CallTracker = attrs.field(factory=CallTracker)
    # The person's always/never lists and each task's sites (``_sites``).
    sites: SitePolicy = attrs.field(factory=SitePolicy)
    # What the browser reported of every download (CDP events, the extension's messages).
    downloads: Downloads = attrs.field(factory=Downloads)
    # What each task typed, and what its trailing windows held (``_set_off``).
    set_off: SetOff = attrs.field(factory=SetOff)
    # The tabs the host holds (``_open_tabs``).
    tabs: OpenTabs = attrs.field(init=False)
    # Each task's tabs and the calls acting now (``_task_tabs``).
    tasks: Tasks = attrs.field(factory=Tasks, init=False)
    # Whose turn it is in each tab: one call at a time, bounded (``_turns``).
    turns: TabTurns = attrs.field(factory=TabTurns)
    # What each session did, to save as a routine; the routines' folder (None: the
    # host keeps none) and the routines running now (``_routine_runs``).
    recording: Recording = attrs.field(factory=Recording)
    routines: RoutineStore | None = None
    routine_runs: RoutineRuns = attrs.field(factory=RoutineRuns)
    # The person's grants for their routines (the side panel makes them; None: none).
    grants: RoutineGrants | None = None

    def __attrs_post_init__(self) -> None:
        self.tabs = OpenTabs(self.hub, self.nursery, self.tracker, self.downloads)
        for spec in self.toolbox.specs:
            self.tracker.register(spec.name, spec.policy)

    def statistics(self) -> HostStateStatistics:
        return HostStateStatistics(
            tabs=len(self.tabs),
            tracker=self.tracker.statistics(),
            revisions={held.id: held.tab.revisions.statistics() for held in self.tabs},
        )

    def note_download(self, message: JSONObject) -> None:
        """Take in the extension's ``download`` (chrome.downloads) or ``download_held``
        message: a held download goes to the action in its tab, else it is refused."""
        try:
            if message.get("type") != "download_held":
                self.downloads.note_message(message)
            elif held := self.downloads.note_held(message, self.hub.decide_download):
                self.nursery.start_soon(refuse_unclaimed, held)
        except ValueError as exc:
            log.warning("dropped a download message: %s", exc)

    def forget_view(self, name: str) -> None:
        """Drop what a client of the link has seen of every tab (it disconnected)."""
        for held in self.tabs:
            held.views.pop(name, None)

    def task_tabs(self, session: str) -> TaskTabs | None:
        """The tabs of a task (a tracker session), if it made a call yet."""
        return self.tasks.get(session)

    def tab(self, tab: int) -> Tab | None:
        """The agent's `Tab` for a browser tab, if the host holds one (tests, diagnostics)."""
        return held.tab if (held := self.tabs.get(tab)) is not None else None

    def catalogue(self, groups: Sequence[str] | None = None) -> JSONObject:
        """The tools (of ``groups`` and the core ones; None: every group), the format
        page, and the snapshot budget's bounds; ``bad_request`` naming an unknown group."""
        specs = self.toolbox.specs
        if groups is not None:
            try:
                specs = tools_in(parse_groups(groups), specs)
            except ValueError as exc:
                raise RequestError("bad_request", str(exc)) from None
        return {
            "tools": [
                {
                    "name": spec.name,
                    "description": spec.description,
                    "input_schema": dict(spec.input_schema),
                }
                for spec in specs
            ],
            "format": self.toolbox.format_page,
            "budget": {"default": DEFAULT_BUDGET, "min": MIN_BUDGET},
        }

    def elements_of(self, call: ToolCall) -> dict[str, JSONObject]:
        """The elements ``call`` names, as the caller's latest snapshot of the tab it
        would act in showed them (`named_elements`): asked before it runs, since an
        action may leave the page (a submit) and its elements with it."""
        return named_elements(call, seen_before(self, call).controls)

    async def tab_facts(self, tab: int) -> tuple[str, str]:
        """The tab's title and URL as the browser's history has them ('' when unknown)."""
        return await self.tabs.facts(tab)

    # -- calls -------------------------------------------------------------------

    async def call_tool(self, call: ToolCall, ask: Ask, later: Ask | None = None) -> ToolOutcome:
        """Run one tool call through the envelope (``_tool_call``, stage by stage): when
        it would act on or go to a site the task has not been allowed, or submit or
        commit, the person is asked with ``ask`` during this call, and only their yes
        runs it; ``later`` asks about what the page sends after the call answered (its
        trailing window; default ``ask``). Every outcome names the tab the call acted in
        and the call's number (`ToolCall.id`, else a new one)."""
        seen = await look_before(self, call)
        outcome = await run_call(self, call, ask, later or ask)
        if outcome.acted_on is not None:  # a tab that is gone: close_tab's
            seen = PageSeen(outcome.acted_on, {}, "")
        form = outcome.submit_form
        self.recording.note(
            call.session,
            (call.name, call.args),
            seen,
            outcome.url or seen.url,
            ok=not outcome.is_error,
            acted=outcome.side_effects,
            form=(form.action, form.method) if form is not None else None,
            title=outcome.tab_title,
        )
        return outcome

    # -- routines ----------------------------------------------------------------

    def routine_store(self) -> RoutineStore:
        """Where routines are kept; ``bad_request`` when this host keeps none."""
        if self.routines is None:
            raise RequestError("bad_request", "this host keeps no routines (no state folder)")
        return self.routines

    def save_routine(
        self,
        session: str,
        name: str,
        task: str = "",
        rename: Mapping[str, str] | None = None,
        *,
        replace: bool = False,
    ) -> JSONObject:
        """Save what ``session`` did as the routine ``name`` (`routine_of`): its file
        and the routine; ``bad_request`` saying why it cannot be."""
        store = self.routine_store()
        try:
            routine = routine_of(self.recording.of(session), name, task, rename)
            path = store.save(routine, replace=replace)
        except RoutineError as exc:
            raise RequestError("bad_request", str(exc)) from None
        return {"file": str(path), "routine": routine.to_json()}

    async def run_routine(
        self,
        base: ToolCall,
        name: str,
        given: Mapping[str, object],
        ask: Ask,
        later: Ask | None = None,
        *,
        start_at: int = 0,
        watch: StepWatch | None = None,
        granted: bool = False,
        keep_healed: bool = False,
    ) -> RoutineRun:
        """Run the routine ``name`` in ``base``'s tab as ``base``'s session, with the
        parameters ``given``, from step ``start_at`` (``len(steps)``: none left after
        the last was done for a stopped run), telling ``watch`` of each call;
        ``granted``: with the person's grants for the routine as its file is now (a run
        the person started: the side panel's door alone says so). After a run of this
        session that stopped, what it did since is the heal of the steps skipped
        (``_routine_runs``), written at once with ``keep_healed``. ``bad_request`` when
        the routine, a parameter or the step is wrong, a routine runs in that tab, or
        ``keep_healed`` has nothing to keep."""
        try:
            return await run_in_tab(
                self, base, name, given, ask, later or ask, start_at=start_at,
                watch=watch, granted=granted, keep_healed=keep_healed,
            )  # fmt: skip
        except RoutineError as exc:
            raise RequestError("bad_request", str(exc)) from None

    def edit_routine(
        self, name: str, new_name: str | None, parameters: Mapping[str, Mapping[str, object]]
    ) -> tuple[Routine, Routine, str]:
        """Rename routine ``name`` and edit its ``parameters`` (`edit_routine`): the
        routine before and after, and its file. Its grants and waiting heals go with
        it (the grants lapse, as its file changed; the heals follow its parameters'
        names); ``bad_request`` saying why an edit cannot be."""
        store = self.routine_store()
        try:
            routine = store.load(name)
            edited = edit_routine(routine, name=new_name, parameters=parameters)
            path = store.rewrite(name, edited)
        except RoutineError as exc:
            raise RequestError("bad_request", str(exc)) from None
        if self.grants is not None:
            self.grants.rename(routine.name, edited.name)
        self.routine_runs.heals.follow(routine, edited)
        return routine, edited, path.name

    def keep_heal(self, session: str, number: int) -> tuple[Routine, str]:
        """Write heal ``number`` (a run's `RoutineRun.healed`) of ``session`` into its
        routine, as the person confirmed: the routine and its file; ``bad_request``
        when it is not waiting or its routine no longer has the steps it replaces."""
        try:
            routine, path = keep_heal(self, session, number)
        except RoutineError as exc:
            raise RequestError("bad_request", str(exc)) from None
        return routine, str(path)

    async def inspect(self, tab: int, budget: int | None) -> JSONObject:
        """What the agent would see from a fresh look now, for the side panel's inspector."""
        return await inspect_tab(await self.tabs.open(tab), tab, budget)

    async def highlight(self, tab: int, eid: str | None) -> bool:
        """Draw the overlay over element ``eid`` (None clears it); False when cleared."""
        return await highlight_element(await self.tabs.open(tab), tab, eid)

    async def release(self, tab: int) -> None:
        """Forget everything of the tab and detach the debugger from it."""
        await self.tabs.release(tab)

    def in_task(self, session: str, tab: int) -> bool:
        """Whether ``tab`` was opened from a tab of the task ``session`` (an outside
        client may use such a tab as it uses the tab it was shared)."""
        return self.tasks.in_task(session, tab)


@contextlib.asynccontextmanager
async def open_host_state(
    hub: RelayHub,
    *,
    toolbox: Toolbox | None = None,
    limits: TrackerLimits | None = None,
    sites: SitePolicy | None = None,
    downloads: Downloads | None = None,
    routines: RoutineStore | None = None,
    grants: RoutineGrants | None = None,
) -> AsyncIterator[HostState]:
    """The host's state for one extension connection, driving tabs through ``hub``.

    The caller owns the hub: it feeds it every relay message and closes it. On exit
    the tabs' revision followers stop. ``sites`` holds the person's site lists (the
    native host loads them from its state folder; None: empty, in memory).
    ``downloads``: a browser Trimtab launched names its folder (`Downloads.folder`).
    ``routines``: where routines are kept (the native host: its state folder);
    ``grants``: the person's grants for them (default: a file beside that folder).
    """
    # The first snapshot counts tokens: their tables load while the host waits for it.
    load_in_background()
    if grants is None and routines is not None:
        grants = RoutineGrants.load(routines.folder.parent / GRANTS_FILE)
    # The heals waiting for the person's yes, beside the routines' folder too.
    heals = WaitingHeals.load(routines.folder.parent / HEALS_FILE if routines else None)
    tracker = CallTracker(limits=limits) if limits is not None else CallTracker()
    async with trio.open_nursery() as nursery:
        state = HostState(
            hub=hub,
            nursery=nursery,
            toolbox=toolbox or Toolbox.load(),
            tracker=tracker,
            sites=sites if sites is not None else SitePolicy(),
            downloads=downloads if downloads is not None else Downloads(),
            routines=routines,
            routine_runs=RoutineRuns(heals=heals),
            grants=grants,
        )
        nursery.start_soon(follow_tabs, state, name="tabs opened and closed")
        try:
            yield state
        finally:
            nursery.cancel_scope.cancel()
