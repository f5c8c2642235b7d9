"""Routines on the host: what each session did (the recording), and a routine's run.

Every tool call is noted in the host's `Recording` (``HostState.call_tool``) with the
caller's snapshot from before it, so any session can be saved as a routine. A run is
a task like any other: each step is a `ToolCall` of the caller's session and view,
through `HostState.call_tool`, so the envelope asks about sites, submits, downloads
and secrets as it did the first time. One routine at a time runs in a tab.

A run the person started (the side panel's, a scheduled one) may use their grants for
the routine: the sites are its task's for the run (``HostState.run_routine``), and a
step they marked "don't ask again" is called with its recorded submit
(`ToolCall.marked_submit`); the run says which steps submitted unasked (`Run.unasked`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING

import attrs

from ..envelope import Ask
from ..routines import (
    Acted,
    PageSeen,
    Routine,
    RoutineError,
    Run,
    SubmitForm,
    bind_values,
    replay,
)
from ..wire import JSONObject, RequestError
from ._call import ToolCall, ToolOutcome

if TYPE_CHECKING:
    from ._state import HostState

__all__ = ["RoutineRuns", "StepWatch", "TabBrowser", "seen_before"]

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

    async def look(self, *, fresh: bool) -> PageSeen:
        seen = seen_before(self.host, self.base)
        if fresh or not seen.url:
            await self.call("capture_snapshot", {})
            seen = seen_before(self.host, self.base)
        return seen


@attrs.define
class RoutineRuns:
    """The routines running now, by the tab they run in."""

    running: dict[int, str] = attrs.field(factory=dict)

    async def run(
        self,
        browser: TabBrowser,
        routine: Routine,
        given: Mapping[str, object],
        start_at: int = 0,
    ) -> Run:
        """Run ``routine`` in ``browser``'s tab with the parameters ``given``;
        `RoutineError` when a parameter is wrong or a routine runs in that tab."""
        values = bind_values(routine, given)
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
