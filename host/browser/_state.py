"""The browser as the host holds it: its tabs, each client's view of them, one tracker.

`HostState` is the state of one running host (one extension connection): the
`RelayHub` every tab's CDP goes through, one held tab per browser tab a door has
asked about (created on demand, forgotten on `release`), and one `CallTracker`
with every tool's policy registered. Both doors (``trimtab.native`` for the side
panel, ``trimtab.link`` for outside agents) call its typed methods: `call_tool` (a
`ToolCall` in, a `ToolOutcome` out, through the envelope), `inspect`, `highlight`,
`release`.

The side panel's inspector (`inspect`) shows what the agent would see if it looked
now: a baseline rendered against what the agent last saw (regions the agent
saw unchanged are collapsed), on a copy of the agent's `SnapshotMemory`. The agent's
own memory is never moved by the inspector: the tools diff against the last snapshot
*the model* saw, and an inspector snapshot becoming that base would make the model
miss what changed before it. The copy is kept for `highlight`.

Before every cacheable page read the tab's `PageRevisions.sync` runs, so the tracker
decides on a page revision that includes every change the page made up to that
moment (see ``trimtab.tab``). Error-flagged tool results are never cached.

Parts of the state's work live beside it, in modules that take the state or a held
tab: ``_held`` (a held tab, its followers), ``_inspector``, ``_outcomes`` (outcomes
the host builds itself), ``_task_calls`` (the task tools) and ``_tab_events``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Mapping, Sequence

import attrs
import trio

from pycdp_bridge import CDPError, DialogOpenError, RelayHub, TargetClosedError
from pycdp_bridge import protocol as cdp

from ..envelope import (
    Answer,
    Ask,
    Decided,
    Question,
    SitePolicy,
    act_with_consent,
    decide_evaluate,
)
from ..pipeline import xml
from ..tab import (
    DEFAULT_BUDGET,
    MIN_BUDGET,
    Downloads,
    Held,
    RevisionStatistics,
    Tab,
    holding_downloads,
    refuse_unclaimed,
    stretched,
)
from ..tools import TASK_TOOLS, ToolResult, ToolSpec, granted, parse_groups, tools_in
from ..tracker import CallTracker, TrackedResult, TrackerLimits, TrackerStatistics
from ..wire import JSONObject, RequestError
from ._call import ToolCall, ToolOutcome
from ._errors import PAGE_TIMEOUT, TOOL_TIMEOUT, cdp_errors
from ._held import HeldTabs, asking_while_open
from ._inspector import HIGHLIGHT_CONFIG, highlight_element, inspect_tab
from ._opened import OpenedByCall, gate_domains
from ._outcomes import (
    called,
    dialog_facts,
    downloads_of,
    element_ids,
    named_elements,
    refused_outright,
    site_refusal,
    text_outcome,
)
from ._set_off import SetOff
from ._sites import check_sites, read_page
from ._tab_events import follow_tabs
from ._task_calls import stray_id, task_tool, tell_opened
from ._task_tabs import Tasks, TaskTabs
from ._toolbox import Toolbox

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
    # The tabs the host holds (``_held``).
    tabs: HeldTabs = attrs.field(init=False)
    # Each task's tabs and the calls acting now (``_task_tabs``).
    tasks: Tasks = attrs.field(factory=Tasks, init=False)

    def __attrs_post_init__(self) -> None:
        self.tabs = HeldTabs(self.hub, self.nursery, self.tracker, self.downloads)
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
        task = self.tasks.get(call.session)
        held = self.tabs.get(task.resolve(call.tab) if task is not None else call.tab)
        if held is None or call.view not in (None, *held.views):
            return {}
        seen = held.view(call.view).latest
        return named_elements(call, seen.controls) if seen is not None else {}

    async def tab_facts(self, tab: int) -> tuple[str, str]:
        """The tab's title and URL as the browser's history has them ('' when unknown); a
        tab the host holds no memory of yet (one an action opened) is asked all the same."""
        held = self.tabs.get(tab)
        target = held.tab.target if held is not None else self.hub.target(tab)
        if target.closed:
            return "", ""
        with contextlib.suppress(CDPError, TargetClosedError, KeyError, IndexError, TypeError):
            with trio.move_on_after(PAGE_TIMEOUT):
                history = await target.execute(cdp.page_get_navigation_history())
                entry = history["entries"][history["currentIndex"]]
                return str(entry.get("title", "")), str(entry.get("url", ""))
        return "", ""

    # -- calls -------------------------------------------------------------------

    async def call_tool(self, call: ToolCall, ask: Ask, later: Ask | None = None) -> ToolOutcome:
        """Run one tool call through the envelope: when it would act on or go to a site
        the task has not been allowed, or submit or commit, the person is asked with
        ``ask`` during this call, and only their yes runs it; ``later`` asks about what
        the page sends after the call answered (its trailing window; default ``ask``).
        Every outcome names the tab the call acted in and the call's number
        (`ToolCall.id`, else a new one)."""
        spec = self.toolbox.spec(call.name)
        if spec is None:
            known = ", ".join(s.name for s in self.toolbox.specs)
            raise RequestError(
                "bad_request", f"unknown tool {call.name[:100]!r}; the tools are: {known}"
            )
        task = self.tasks.of(call)
        named = call.tab
        number = self.tracker.new_call_id() if call.id is None else call.id
        call = attrs.evolve(call, tab=task.resolve(call.tab), id=number)
        return called(await self._run_call(call, named, spec, task, (ask, later or ask)), call)

    async def _run_call(
        self, call: ToolCall, named: int, spec: ToolSpec, task: TaskTabs, asks: tuple[Ask, Ask]
    ) -> ToolOutcome:
        """`call_tool`'s work, once the call is numbered and its tab resolved (``named``:
        the tab the door named; ``asks``: during the call, and after it)."""
        ask, later = asks
        if call.name in TASK_TOOLS:
            # A door that takes the tab out of the arguments (MCP's `tab`) names it as
            # the call's tab: that is the tab switch_tab or close_tab is about.
            if call.name in ("switch_tab", "close_tab") and "tab" not in call.args:
                call = attrs.evolve(call, args={**call.args, "tab": named})
            return await task_tool(self, call, task, ask)
        acted = task.tabs.get(call.tab)
        stray = stray_id(self, call, task)
        if stray is not None:
            return text_outcome(stray, is_error=True)
        policy = self.tracker.policy(call.name)
        if call.name == "evaluate" and not call.may_evaluate:
            # The person's setting, decided here whatever the model was offered.
            return refused_outright(
                "Not done: evaluate is off for the side panel's agent; the person can turn it "
                "on in the side panel's settings (Let the agent run JavaScript). Do not retry it."
            )
        async with cdp_errors(call.tab, timeout=TOOL_TIMEOUT):
            state = await self.tabs.open(call.tab)
            if state.tab.target.crashed or state.tab.target.open_dialog is not None:
                # Nothing can be read from a dead or blocked page; the tool says why.
                self.tracker.note_page_change(call.tab, "the page crashed or shows a dialog")
            elif policy.reads_page and not policy.volatile and not policy.side_effects:
                # The revision must include every change the page made until now.
                try:
                    await state.tab.revisions.sync()
                except DialogOpenError:
                    # The dialog opened after the check above: the tool says so, with
                    # the dialog's facts, as if it had been open before.
                    self.tracker.note_page_change(call.tab, "the page shows a dialog")
            page = await read_page(self.sites, call, state.tab.target, policy.side_effects)
        # Sites per task: a call that would act on or go to a site the task has not been
        # allowed asks first (outside the tool's time bound, like every question), for
        # the frame of each element it acts on (fill: every field's).
        memory = state.view(call.view).memory
        frame_urls = [url for eid in element_ids(call) if (url := memory.frame_url_of(eid))]
        stopped = None
        wheres: list[str | None] = [*dict.fromkeys(frame_urls)] or [None]
        for frame_url in wheres:
            stopped = await check_sites(
                self.sites,
                call,
                page,
                policy.side_effects,
                asking_while_open(state, ask),
                frame_url=frame_url,
            )
            if stopped is not None:
                break
        if stopped is not None:
            latest = state.view(call.view).latest
            url = latest.url if latest is not None else None
            return site_refusal(
                stopped, call, policy.side_effects, state.tab.target.open_dialog, url
            )

        asking = asking_while_open(state, ask)
        consent_ask = asking
        # evaluate: the person's "always" for this exact code (the call's own args, which
        # the question shows) on the page's site (the browser's facts) decides first.
        evaluated_site = page.site if page is not None else None
        if call.name == "evaluate":

            async def consent_ask(question: Question) -> Answer:
                return await decide_evaluate(self.sites, evaluated_site, asking, question)

        # Downloads the browser reports from here on may be this call's.
        mark = self.downloads.mark()
        self.set_off.note(call)  # what it types is looked for from its own action on
        # What the call's question was about: a yes for a predicted download lets the
        # download go without a second question.
        asked: list[str] = []
        # What the last run's action made the page send that the guard held, and what
        # of it the tool's answer does not say (an answer that is not a snapshot).
        held: list[Held] = []
        untold: list[Held] = []
        # The tabs the last run's action opened.
        opened: list[OpenedByCall] = []

        async def run(consented: bool) -> TrackedResult[ToolResult]:
            async def tool() -> ToolResult:
                # A client of the link acts through its own view of the tab.
                agent_tab = state.view(call.view)
                async with agent_tab.lock:
                    memory = agent_tab.memory
                    memory.options = attrs.evolve(memory.options, budget=call.budget)
                    with granted(consented):
                        return await self.toolbox.run(agent_tab, call.name, call.args)

            # A yes to run code is no yes to the form it may submit: asked on its own.
            agent_view = state.view(call.view)
            judge = self.set_off.judge(
                self.sites,
                call,
                asking,
                agent_view,
                granted=consented and call.name != "evaluate",
                granted_download=consented and asked == ["download"],
            )
            sink = OpenedByCall(call.tab, gate_domains(self.sites, call.session, policy))
            opened[:] = [sink]
            after = asking_while_open(state, later)
            guard_of = self.set_off.guarding(
                judge, self.sites, call, after, self.nursery, agent_view
            )
            with (
                guard_of as guard,
                holding_downloads(self.downloads),
                self.tasks.acting_in(call.tab, sink),
            ):
                try:
                    async with trio.open_nursery() as nursery:
                        # Tabs the action opens are guarded by this call's guard too.
                        await nursery.start(sink.guard_each, self.hub)
                        # The wait for the person is outside this bound: only the tool's
                        # own runs are (a held request's question stops the clock).
                        async with cdp_errors(call.tab, timeout=TOOL_TIMEOUT) as limit:
                            with stretched(limit):
                                tracked = await self.tracker.call(
                                    call.session,
                                    call.name,
                                    call.args,
                                    tool,
                                    tab=call.tab,
                                    # The devtools log changes without the page
                                    # changing: a cached read of it holds only while
                                    # it stays.
                                    options=(
                                        (call.budget, state.tab.devtools.changes)
                                        if spec.group == "devtools"
                                        else call.budget
                                    ),
                                    call_id=call.id,
                                )
                        await sink.decisions(self.hub)
                        nursery.cancel_scope.cancel()
                    return tracked
                except BaseExceptionGroup as group:
                    # The guards of opened tabs never fail: the group holds the call's.
                    if len(group.exceptions) == 1:
                        raise group.exceptions[0] from None
                    raise
                finally:
                    held[:] = guard.held
                    untold[:] = guard.held[guard.told :]

        def needs(tracked: TrackedResult[ToolResult]) -> Question | None:
            result = tracked.result
            if result.consent is None:
                return None
            asked[:] = [result.consent_what]
            evaluated = result.consent_what == "evaluate" and evaluated_site is not None
            site = str(evaluated_site) if evaluated else None
            return call.question(
                result.consent_what,
                reason=result.consent,
                element=result.element,
                element_id=result.element_id,
                site=site,
            )

        decided: Decided[TrackedResult[ToolResult]] = await act_with_consent(
            run, needs, consent_ask, ask_before_submit=call.ask_before_submit
        )
        tracked, consent = decided.result, decided.consent
        result = tracked.result
        content, is_error = result.content, result.is_error
        if consent.required and not consent.granted:
            assert consent.answer is not None
            content = (
                f"Not done: {consent.answer.refusal()} ({result.consent}). Do not retry it; "
                "ask the person or stop."
            )
            is_error = True
        for request in untold:
            if request.download is None or not request.sent:
                content += "\n" + xml.element("note", content=request.note())
        later_notes, later_held = self.set_off.told(call.session)
        content += later_notes
        downloads = await downloads_of(self.downloads, call.tab, mark, held)
        for download in downloads:
            content += "\n" + xml.element("note", content=download.note())
        if opened:
            told, is_error = await tell_opened(
                self, call, task, acted, opened[0], content, is_error
            )
            content = told
        return ToolOutcome(
            content=content,
            is_error=is_error,
            kind=result.kind,
            consent=consent,
            # A submission the guard failed never left the browser.
            submitted=result.submitted and not any(h.form and not h.sent for h in held),
            dialog=dialog_facts(state.tab.target.open_dialog),
            call_id=tracked.call_id,
            cached=tracked.cached,
            cached_from=tracked.cached_from,
            cached_at=tracked.cached_at_wall,
            note=tracked.note,
            side_effects=policy.side_effects,
            submits=result.submits,
            url=latest.url if (latest := state.view(call.view).latest) is not None else None,
            # What the question was about: Trimtab's reason and the element the page
            # wrote (a dialog's message, a button's text), for the refusal's block.
            reason=" ".join(filter(None, (result.consent, result.element)))
            if consent.required
            else None,
            held=(*later_held, *held),
            tab=call.tab,
            downloads=tuple(downloads),
            image=None if is_error else result.image,
            # Trimtab's words alone stay so only while no note (which names the page's) was added.
            quotes_page=result.quotes_page or content != result.content,
        )

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
) -> AsyncIterator[HostState]:
    """The host's state for one extension connection, driving tabs through ``hub``.

    The caller owns the hub: it feeds it every relay message and closes it. On exit
    the tabs' revision followers stop. ``sites`` holds the person's site lists (the
    native host loads them from its state folder; None: empty, in memory).
    ``downloads``: a browser Trimtab launched names its folder (`Downloads.folder`).
    """
    tracker = CallTracker(limits=limits) if limits is not None else CallTracker()
    async with trio.open_nursery() as nursery:
        state = HostState(
            hub=hub,
            nursery=nursery,
            toolbox=toolbox or Toolbox.load(),
            tracker=tracker,
            sites=sites if sites is not None else SitePolicy(),
            downloads=downloads if downloads is not None else Downloads(),
        )
        nursery.start_soon(follow_tabs, state, name="tabs opened and closed")
        try:
            yield state
        finally:
            nursery.cancel_scope.cancel()
