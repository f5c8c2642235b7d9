"""Routines on the host: what each session did (the recording), a routine's run, and
the steps its caller did where a run needed help, kept into the routine once confirmed.

Every tool call is noted in the host's `Recording` (``HostState.call_tool``) with the
caller's snapshot from before it, so any session can be saved as a routine. A run is
a task like any other: each step is a `ToolCall` of the caller's session and view,
through `HostState.call_tool`, so the envelope asks about sites, submits, downloads
and secrets as it did the first time. One routine at a time runs in a tab.

A run the person started (the side panel's, a scheduled one) may use their grants for
the routine: the sites are its task's for the run (`run_in_tab`), and a step they
marked "don't ask again" is called with its recorded submit (`ToolCall.marked_submit`);
the run says which steps submitted unasked (`Run.unasked`).

A run that stops before a step (``needs_help``) is noted for its caller (`Stopped`:
where, and how many of the caller's calls were noted then). When the caller runs that
routine again from a later step, the calls it made in between did the steps it skips:
they become a `Healed` amendment (`heal_of`), kept for the person's yes (`keep_heal`;
`WaitingHeals` keeps it in a file beside the routines' folder, so it outlives the
host), or written at once when the caller asked to keep it (``keep_healed``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final

import attrs

from ..envelope import Ask
from ..pipeline import compact
from ..routines import (
    Acted,
    Healed,
    PageSeen,
    Recording,
    Routine,
    RoutineError,
    Run,
    SubmitForm,
    TabSeen,
    WaitingHeals,
    amend,
    bind_values,
    element_ids,
    heal_of,
    replay,
)
from ..wire import JSONObject, RequestError
from ._call import ToolCall, ToolOutcome
from ._errors import cdp_errors
from ._task_calls import loaded

if TYPE_CHECKING:
    from ._state import HostState

__all__ = [
    "RoutineRun",
    "RoutineRuns",
    "StepWatch",
    "Stopped",
    "TabBrowser",
    "keep_heal",
    "look_before",
    "run_in_tab",
    "seen_before",
]

# How long a look to describe a call's element may take before the call goes on.
LOOK_SECONDS: Final = 5.0

# Told of one call of a routine's run: the call (in the tab it acted in), the elements
# it names as the caller saw them before, and its error (None: it ran).
StepWatch = Callable[[ToolCall, Mapping[str, JSONObject], str | None], Awaitable[None]]


def seen_before(host: HostState, call: ToolCall) -> PageSeen:
    """The page as ``call``'s caller last saw the tab it acts in (its latest snapshot;
    empty when it has not looked)."""
    task = host.tasks.get(call.session)
    held = host.tabs.get(task.resolve(call.tab) if task is not None else call.tab)
    if held is None or call.view not in (None, *held.views):
        return NOTHING_SEEN
    latest = held.view(call.view).latest
    if latest is None:
        return NOTHING_SEEN
    return PageSeen(latest.url, latest.controls, latest.xml)


NOTHING_SEEN = PageSeen("", {}, "")


async def look_before(host: HostState, call: ToolCall) -> PageSeen:
    """The page ``call`` acts on, to note its elements: as the caller last saw the tab
    (`seen_before`), or, when that look does not hold an element the call names (the
    caller found it with ``find``, which keeps no snapshot), a look now that changes
    nothing the caller saw (as ``find`` looks)."""
    seen = seen_before(host, call)
    if all(eid in seen.controls for eid in element_ids(call.name, call.args)):
        return seen
    task = host.tasks.get(call.session)
    held = host.tabs.get(task.resolve(call.tab) if task is not None else call.tab)
    if held is None or call.view not in (None, *held.views):
        return seen
    try:
        async with cdp_errors(call.tab, LOOK_SECONDS):
            model = await held.view(call.view).memory.capture()
    except RequestError:
        return seen  # (the call itself meets what stopped the look, and says so)
    looked = compact(model, count=False)
    return PageSeen(looked.url, looked.controls, looked.xml)


@attrs.define
class TabBrowser:
    """The tab a routine runs in, through the host's tool calls (`routines.Browser`)."""

    host: HostState
    base: ToolCall  # the caller's session, view, tab, client and budget
    ask: Ask
    later: Ask
    # Told of every call the run makes, as the caller's own calls are told (the
    # person's log of what an outside agent did).
    watch: StepWatch | None = None
    # The steps (0-based) the person marked "don't ask again", with the submit each
    # was recorded with; and those that submitted unasked in this run.
    marks: Mapping[int, SubmitForm] = attrs.field(factory=dict)
    unasked: list[int] = attrs.field(factory=list)

    async def act(self, tool: str, args: Mapping[str, object], at: int | None = None) -> Acted:
        try:
            self.host.toolbox.check_arguments(tool, args)
            mark = self.marks.get(at) if at is not None else None
            outcome = await self.call(tool, args, mark)
        except RequestError as exc:
            return Acted(exc.message, is_error=True, refused=False, url=None)
        if outcome.marked and outcome.submitted and at is not None:
            self.unasked.append(at)  # (a submission the page sent elsewhere was held)
        return Acted(outcome.content, outcome.is_error, outcome.refused, outcome.url)

    async def call(
        self, tool: str, args: Mapping[str, object], mark: SubmitForm | None = None
    ) -> ToolOutcome:
        call = attrs.evolve(self.base, name=tool, args=dict(args), id=None, marked_submit=mark)
        # As the caller saw them, before an action leaves the page (a submit).
        elements = self.host.elements_of(call)
        try:
            outcome = await self.host.call_tool(call, self.ask, self.later)
        except RequestError as exc:
            if self.watch is not None:
                await self.watch(call, elements, exc.message)
            raise
        if self.watch is not None:
            acted = attrs.evolve(call, tab=outcome.tab if outcome.tab is not None else call.tab)
            await self.watch(acted, elements, outcome.content if outcome.is_error else None)
        return outcome

    async def address(self) -> str:
        task = self.host.tasks.get(self.base.session)
        tab = task.resolve(self.base.tab) if task is not None else self.base.tab
        return (await self.host.tab_facts(tab))[1]

    async def whole_page(self) -> str:
        assert self.base.view is not None  # a run's own view (`HostState.run_routine`)
        self.host.forget_view(self.base.view)
        return (await self.call("capture_snapshot", {})).content

    async def tabs(self) -> list[TabSeen]:
        task = self.host.tasks.get(self.base.session)
        numbers = [t.tab for t in task] if task is not None else [self.base.tab]
        seen = []
        for tab in numbers:
            # Its page's title as a person reads it in the tab strip: once it is known.
            with contextlib.suppress(RequestError):
                async with cdp_errors(tab):
                    await loaded((await self.host.tabs.open(tab)).tab.target, parsed=True)
            seen.append(TabSeen(tab, *await self.host.tab_facts(tab)))
        return seen

    async def look(self, *, fresh: bool) -> PageSeen:
        seen = seen_before(self.host, self.base)
        if fresh or not seen.url:
            await self.call("capture_snapshot", {})
            seen = seen_before(self.host, self.base)
        return seen


@attrs.frozen
class Stopped:
    """A caller's last run: routine ``routine`` stopped before step ``at`` (0-based)
    when ``mark`` of the caller's calls had been noted (`Recording.count`)."""

    routine: str
    at: int
    mark: int


@attrs.frozen
class RoutineRun:
    """A run, and what its caller did for the steps before it (``healed``, or why
    that cannot be kept: ``heal_problem``); ``kept``: the file it was written into."""

    run: Run
    healed: Healed | None = None
    heal_problem: str = ""
    kept: Path | None = None


@attrs.frozen
class _Closed:
    """A caller's stop that a run from a later step closes, and its heal."""

    stopped: Stopped
    healed: Healed | None
    problem: str


@attrs.define
class RoutineRuns:
    """The routines running now, by the tab they run in; where each caller's last run
    stopped; the heals waiting for the person's yes (kept in a file beside the
    routines' folder by the native host: they outlive it)."""

    running: dict[int, str] = attrs.field(factory=dict)
    stopped: dict[str, Stopped] = attrs.field(factory=dict)
    heals: WaitingHeals = attrs.field(factory=WaitingHeals)

    async def run(
        self,
        browser: TabBrowser,
        routine: Routine,
        values: Mapping[str, str],
        start_at: int = 0,
    ) -> Run:
        """Run ``routine`` in ``browser``'s tab with parameter ``values``
        (`bind_values`); `RoutineError` when a routine runs in that tab."""
        tab = browser.base.tab
        if (other := self.running.get(tab)) is not None:
            raise RoutineError(
                f"routine {other!r} is running in tab {tab}; run {routine.name!r} after it "
                "ends or in another tab"
            )
        self.running[tab] = routine.name
        try:
            run = await replay(routine, browser, values, start_at=start_at)
        finally:
            del self.running[tab]
        return attrs.evolve(run, unasked=tuple(browser.unasked))

    def close(
        self,
        session: str,
        routine: Routine,
        start_at: int,
        values: Mapping[str, str],
        recording: Recording,
    ) -> _Closed | None:
        """The stop of ``session``'s last run of ``routine`` that a run from step
        ``start_at`` goes on from (None: it starts over, or it is another routine),
        with the calls the session made since as a heal of the steps it skips."""
        stopped = self.stopped.pop(session, None)
        if stopped is None or stopped.routine != routine.name or start_at <= stopped.at:
            return None
        try:
            calls = recording.since(session, stopped.mark)
            if not calls:
                return _Closed(stopped, None, _nothing_done(stopped))
            amendment = heal_of(routine, stopped.at, start_at, calls, values)
        except RoutineError as exc:
            return _Closed(stopped, None, f"what was done for step {stopped.at + 1}: {exc}")
        return _Closed(stopped, self.heals.add(session, amendment), "")

    def ended(self, session: str, run: Run, mark: int) -> None:
        """Note how ``session``'s run ended (``mark``: the session's calls noted)."""
        if run.status == "needs_help" and run.at is not None:
            self.stopped[session] = Stopped(run.routine, run.at, mark)


def _nothing_done(stopped: Stopped) -> str:
    return (
        f"no call was made in this session since the run stopped before step "
        f"{stopped.at + 1}: nothing was done through Trimtab to keep"
    )


async def run_in_tab(
    host: HostState,
    base: ToolCall,
    name: str,
    given: Mapping[str, object],
    ask: Ask,
    later: Ask,
    *,
    start_at: int = 0,
    watch: StepWatch | None = None,
    granted: bool = False,
    keep_healed: bool = False,
) -> RoutineRun:
    """`HostState.run_routine`; `RoutineError` when the routine, a parameter or the
    step is wrong, a routine runs in that tab, or there is no heal to keep."""
    caller = base.session
    runs = host.routine_runs
    routine = host.routine_store().load(name)
    values = bind_values(routine, given)
    if (other := runs.running.get(base.tab)) is not None:
        raise RoutineError(
            f"routine {other!r} is running in tab {base.tab}; run {name!r} after it ends "
            "or in another tab"
        )
    closed = runs.close(caller, routine, start_at, values, host.recording)
    healed = closed.healed if closed is not None else None
    kept = None
    if keep_healed:
        if healed is None:
            if closed is not None:
                # Refused before anything ran: the stop stands, to do the step and ask again.
                runs.stopped[caller] = closed.stopped
            raise RoutineError(
                f"keep_healed: {closed.problem}"
                if closed is not None
                else f"keep_healed: no run of routine {name!r} in this session stopped before "
                f"step {start_at + 1}; it keeps what was done for the steps a run stopped at"
            )
        kept = keep_heal(host, caller, healed.number)[1]
    # The run is a task of its own, in a view of its own, started afresh: its calls'
    # answers are never shown to the caller, so they must not move what the caller
    # saw (its next diff is from what it was shown), nor leave cached answers the
    # caller's reads could be given, nor collapse this run's result against what an
    # earlier run saw.
    own = f"{caller}~routine"
    host.tracker.clear_session(own)
    host.forget_view(own)
    host.tasks.end(own)
    run_as = attrs.evolve(base, session=own, view=own, asks_as=caller)
    # The person's grants for the routine as its file is now (a heal kept just now
    # changed it: they lapsed), for a run the person started.
    grant = host.grants.valid(routine) if granted and host.grants is not None else None
    marks = grant.unasked if grant is not None and kept is None else {}
    browser = TabBrowser(host, run_as, ask, later, watch, marks)
    # The sites the person granted this routine: this run's task's, for the run.
    allowed = grant.allowed_sites() if grant is not None and kept is None else frozenset()
    host.sites.grant(own, allowed)
    try:
        if closed is not None and start_at == len(routine.steps):
            # The step done for it was the last: nothing is left to run. A routine that
            # answers with its end page (no read is its result) still does.
            answers_last = not any(step.result for step in routine.steps)
            results = (await browser.whole_page(),) if answers_last else ()
            run = Run(routine.name, "done", len(routine.steps), 0, results)
        else:
            run = await runs.run(browser, routine, values, start_at)
    finally:
        host.sites.ungrant(own)
    runs.ended(caller, run, host.recording.count(caller))
    problem = closed.problem if closed is not None else ""
    return RoutineRun(run, healed, problem, kept)


def keep_heal(host: HostState, session: str, number: int) -> tuple[Routine, Path]:
    """Write heal ``number`` of ``session`` into its routine's file as the routine is
    now (`amend`): the routine and its file; `RoutineError` when no such heal waits or
    the routine no longer has the steps it replaces."""
    healed = host.routine_runs.heals.get(number, session)
    if healed is None:
        raise RoutineError(
            f"heal {number} of this session is not waiting to be kept (kept already, or too old)"
        )
    store = host.routine_store()
    routine = amend(store.load(healed.amendment.routine), healed.amendment)
    path = store.save(routine, replace=True)
    host.routine_runs.heals.remove(number)
    return routine, path
