"""One tool call through the host, stage by stage (`run_call`, what `HostState.call_tool`
runs). Each stage is a function whose inputs and outputs are in its signature:

1. `resolve`: the tool's spec, the call's task, its number, the tab it acts in.
2. A task tool (``tabs``, ``switch_tab``, ``new_tab``, ``close_tab``) runs its handler
   on the task (`TaskContext`) and ends here.
3. `refuse_first`: what this client may not do at all (an element id another tab of
   the task showed; ``evaluate`` turned off for the side panel's agent). Then the call
   waits for its tab's turn (`TabTurns`: one call at a time per tab, in arrival
   order, bounded) and holds it through the stages below (`in_turn`).
4. `open_page`: the held tab, its page revision synced before a cacheable read, and
   what the site rules need to know of its page.
5. `check_where`: the site rules, for each frame the call acts in (may ask).
6. `decide`: the envelope (`act_with_consent`): a run without consent; an action that
   would submit, commit, download or send a secret stops before acting and the person
   is asked; a yes runs it again. A routine's step the person marked "don't ask again"
   (`ToolCall.marked_submit`) is not asked about a submit the host predicts goes where
   the recorded one went, and its yes sends only such a submission. Each run is
   `run_guarded`: under the request guard (and the trailing window it leaves), the
   downloads hold and the gates of the tabs it opens, within the tool's time bound,
   the tracker answers from its cache or runs the tool in the client's view
   (`run_in_view`), which acts, lets the page settle and answers with a snapshot or a
   diff.
7. `tell`: what the answer adds: the refusal, requests held and not yet told, what
   trailing windows held, the downloads, the tabs the action opened.
8. `outcome`: the `ToolOutcome` both doors send.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING

import attrs
import trio

from pycdp_bridge import DialogOpenError, SentCommand, tally, traced_commands

from ..envelope import Answer, Ask, Decided, Question, SitePolicy, act_with_consent, decide_evaluate
from ..pipeline import xml
from ..routines import SubmitForm
from ..sites import Site
from ..tab import Download, Downloads, Guarding, Held, deadline_waits_for_judge
from ..tools import PredictedForm, ToolResult, ToolSpec
from ..tracker import CallTracker, ToolPolicy, TrackedResult
from ..wire import RequestError
from ._call import ToolCall, ToolOutcome
from ._errors import TOOL_TIMEOUT, cdp_errors
from ._open_tabs import OpenTab, OpenTabs, asking_while_open
from ._opened import OpenedByCall, gate_domains
from ._outcomes import (
    called,
    dialog_facts,
    downloads_of,
    element_ids,
    refused_outright,
    site_refusal,
    text_outcome,
)
from ._set_off import SetOff
from ._sites import PageFacts, check_sites, read_page
from ._task_calls import TaskContext, stray_id, tell_opened
from ._task_tabs import Tasks, TaskTab, TaskTabs
from ._toolbox import Toolbox
from ._turns import TabBusy

if TYPE_CHECKING:
    from ._state import HostState

__all__ = ["run_call"]

log = logging.getLogger("trimtab.calls")


async def run_call(host: HostState, call: ToolCall, ask: Ask, later: Ask) -> ToolOutcome:
    """Run ``call`` through the stages above; ``ask`` asks the person during the call,
    ``later`` about what the page sends after it answered (its trailing window).

    With the ``trimtab.calls`` log at DEBUG, each call's commands (CDP, and the relay's
    own requests such as a gate) are logged as one JSON line, `traced_line`: the
    speed bench's breakdown of what an action pays through the relay reads it."""
    if not log.isEnabledFor(logging.DEBUG):
        return await run_stages(host, call, ask, later)
    started = time.perf_counter()
    with traced_commands() as sent:
        outcome = await run_stages(host, call, ask, later)
    log.debug("%s", traced_line(outcome, call.name, time.perf_counter() - started, sent))
    return outcome


def traced_line(outcome: ToolOutcome, name: str, seconds: float, sent: list[SentCommand]) -> str:
    """One call's trace as JSON: its number, tool, tab and milliseconds, and per command
    method (or relay request type, or wait) how many the call waited for and their
    milliseconds, then how many it sent in the background and theirs."""
    methods = tally(sent)
    return json.dumps(
        {
            "call": outcome.call_id,
            "tool": name,
            "tab": outcome.tab,
            "ms": round(seconds * 1000, 2),
            "commands": {
                m: [int(n), round(ms, 2), int(bn), round(bms, 2)]
                for m, (n, ms, bn, bms) in methods.items()
            },
        }
    )


async def run_stages(host: HostState, call: ToolCall, ask: Ask, later: Ask) -> ToolOutcome:
    """`run_call`'s stages, in order."""
    call, named, spec, task = resolve(host.toolbox, host.tracker, host.tasks, call)
    context = task_context(host, call, named, task, ask)
    if (handler := host.toolbox.task_handler(spec)) is not None:
        return called(await handler(context), call)
    if (refusal := refuse_first(host.tabs, call, task)) is not None:
        return called(refusal, call)
    try:
        async with host.turns.turn(call, host.elements_of(call)) as turn:
            return await in_turn(
                host, call, spec, context, task, (turn.asks(ask), turn.asks(later))
            )
    except TabBusy as busy:
        return called(text_outcome(str(busy), is_error=True), call)


async def in_turn(
    host: HostState,
    call: ToolCall,
    spec: ToolSpec,
    context: TaskContext,
    task: TaskTabs,
    asking: tuple[Ask, Ask],
) -> ToolOutcome:
    """Stages 4 to 8, while the call holds its tab's turn (`TabTurns`); ``asking``: the
    person during the call and after it."""
    ask, later = asking
    acted = task.tabs.get(call.tab)  # as the task had it before the call (see `tell`)
    policy = host.tracker.policy(call.name)
    state, facts = await open_page(host.tabs, host.tracker, host.sites, call, policy)
    asks = (asking_while_open(state, ask), asking_while_open(state, later))
    stopped = await check_where(host.sites, call, state, facts, policy, asks[0])
    if stopped is not None:
        return called(stopped, call)
    # Downloads the browser reports from here on may be this call's.
    mark = host.downloads.mark()
    host.set_off.note(call)  # what it types is looked for from its own action on
    decided = await decide(host, call, spec, policy, state, facts, asks)
    told = await tell(context, host.set_off, host.downloads, acted, decided, mark)
    return called(outcome(call, policy, state, decided, told), call)


def resolve(
    toolbox: Toolbox, tracker: CallTracker, tasks: Tasks, call: ToolCall
) -> tuple[ToolCall, int, ToolSpec, TaskTabs]:
    """The call numbered (`ToolCall.id`, else a new one) and resolved to the tab it acts
    in (its task's current tab when it names the tab the task started in); the tab the
    door named; the tool's spec; the call's task. ``bad_request`` for an unknown tool."""
    spec = toolbox.spec(call.name)
    if spec is None:
        known = ", ".join(s.name for s in toolbox.specs)
        raise RequestError(
            "bad_request", f"unknown tool {call.name[:100]!r}; the tools are: {known}"
        )
    task = tasks.of(call)
    number = tracker.new_call_id() if call.id is None else call.id
    return attrs.evolve(call, tab=task.resolve(call.tab), id=number), call.tab, spec, task


def task_context(
    host: HostState, call: ToolCall, named: int, task: TaskTabs, ask: Ask
) -> TaskContext:
    """What a task tool's handler, and what the call tells of the tabs its action
    opened, work with: the call, its task, and the parts of the host they change."""
    return TaskContext(
        call=call,
        named=named,
        task=task,
        ask=ask,
        tabs=host.tabs,
        hub=host.hub,
        nursery=host.nursery,
        sites=host.sites,
        tracker=host.tracker,
        toolbox=host.toolbox,
    )


def refuse_first(tabs: OpenTabs, call: ToolCall, task: TaskTabs) -> ToolOutcome | None:
    """A refusal of what this client may not do at all, before the tab is touched."""
    stray = stray_id(tabs, call, task)
    if stray is not None:
        return text_outcome(stray, is_error=True)
    if call.name == "evaluate" and not call.may_evaluate:
        # The person's setting, decided here whatever the model was offered.
        return refused_outright(
            "Not done: evaluate is off for the side panel's agent; the person can turn it "
            "on in the side panel's settings (Let the agent run JavaScript). Do not retry it."
        )
    return None


async def open_page(
    tabs: OpenTabs, tracker: CallTracker, sites: SitePolicy, call: ToolCall, policy: ToolPolicy
) -> tuple[OpenTab, PageFacts | None]:
    """The held tab the call acts in, its revision synced before a cacheable read, and
    what the site rules need of its page (None: nothing to check)."""
    async with cdp_errors(call.tab, timeout=TOOL_TIMEOUT):
        state = await tabs.open(call.tab)
        if state.tab.target.crashed or state.tab.target.open_dialog is not None:
            # Nothing can be read from a dead or blocked page; the tool says why.
            tracker.note_page_change(call.tab, "the page crashed or shows a dialog")
        elif policy.reads_page and not policy.volatile and not policy.side_effects:
            # The revision must include every change the page made until now.
            try:
                await state.tab.revisions.sync()
            except DialogOpenError:
                # The dialog opened after the check above: the tool says so, with
                # the dialog's facts, as if it had been open before.
                tracker.note_page_change(call.tab, "the page shows a dialog")
        facts = await read_page(sites, call, state.tab.target, policy.side_effects)
    return state, facts


async def check_where(
    sites: SitePolicy,
    call: ToolCall,
    state: OpenTab,
    facts: PageFacts | None,
    policy: ToolPolicy,
    ask: Ask,
) -> ToolOutcome | None:
    """The site rules' refusal, if a call that would act on or go to a site the task
    has not been allowed was not allowed when asked (outside the tool's time bound, like
    every question), for the frame of each element it acts on (fill: every field's)."""
    memory = state.view(call.view).memory
    frame_urls = [url for eid in element_ids(call) if (url := memory.frame_url_of(eid))]
    wheres: list[str | None] = [*dict.fromkeys(frame_urls)] or [None]
    for frame_url in wheres:
        stopped = await check_sites(
            sites, call, facts, policy.side_effects, ask, frame_url=frame_url
        )
        if stopped is not None:
            latest = state.view(call.view).latest
            url = latest.url if latest is not None else None
            dialog = state.tab.target.open_dialog
            return site_refusal(stopped, call, policy.side_effects, dialog, url)
    return None


@attrs.frozen
class Ran:
    """One run of the call's action: the tracker's answer, what the request guard held
    during it and, of that, what the tool's answer does not say (an answer that is not
    a snapshot), and the tabs it opened."""

    tracked: TrackedResult[ToolResult]
    held: tuple[Held, ...]
    untold: tuple[Held, ...]
    opened: OpenedByCall
    # Where the form goes that the submit question before this run was about, as the
    # run before it predicted (None: no such question).
    asked_form: PredictedForm | None = None


async def decide(
    host: HostState,
    call: ToolCall,
    spec: ToolSpec,
    policy: ToolPolicy,
    state: OpenTab,
    facts: PageFacts | None,
    asks: tuple[Ask, Ask],
) -> Decided[Ran]:
    """The envelope's decision: the call's last run and the consent behind it (``asks``:
    during the call, and after it)."""
    asking = asks[0]
    # evaluate: the person's "always" for this exact code (the call's own args, which
    # the question shows) on the page's site (the browser's facts) decides first.
    evaluated_site = facts.site if facts is not None else None
    consent_ask = asking
    if call.name == "evaluate":

        async def consent_ask(question: Question) -> Answer:
            return await decide_evaluate(host.sites, evaluated_site, asking, question)

    runs: list[Ran] = []
    marked: list[SubmitForm] = []  # the step's mark stood for the person's yes

    marked_submit = call.marked_submit
    if marked_submit is not None and call.name != "evaluate":
        asking_person = consent_ask

        async def consent_ask(question: Question) -> Answer:
            # The person's mark stands for their yes only to the submit it was given
            # for: the host's own prediction of where this one goes must match it.
            predicted = runs[-1].tracked.result.consent_form if runs else None
            if (
                question.what == "submit"
                and predicted is not None
                and marked_submit.matches(predicted.method, predicted.action)
            ):
                marked.append(marked_submit)
                return Answer.by_mark()
            return await asking_person(question)

    async def run(consented: bool) -> Ran:
        # A yes for a predicted download lets the download go without a second question.
        asked = asked_about(runs[-1]) if runs else None
        granted_download = consented and asked == "download"
        # A mark's yes covers only the submission that goes where the recorded one went.
        only = marked[0].matches if consented and marked else None
        ran = await run_guarded(
            host, call, spec, policy, state, asks, (consented, granted_download, only)
        )
        if runs and asked == "submit":
            ran = attrs.evolve(ran, asked_form=runs[-1].tracked.result.consent_form)
        runs.append(ran)
        return ran

    def needs(ran: Ran) -> Question | None:
        return question_of(call, ran.tracked.result, evaluated_site)

    return await act_with_consent(run, needs, consent_ask, ask_before_submit=call.ask_before_submit)


def asked_about(ran: Ran) -> str | None:
    """What a run stopped to ask the person about (None: it did not stop)."""
    result = ran.tracked.result
    return result.consent_what if result.consent is not None else None


def question_of(call: ToolCall, result: ToolResult, evaluated_site: Site | None) -> Question | None:
    """The question a run's result needs the person to answer before it acts, if any."""
    if result.consent is None:
        return None
    evaluated = result.consent_what == "evaluate" and evaluated_site is not None
    return call.question(
        result.consent_what,
        reason=result.consent,
        element=result.element,
        element_id=result.element_id,
        site=str(evaluated_site) if evaluated else None,
    )


async def run_guarded(
    host: HostState,
    call: ToolCall,
    spec: ToolSpec,
    policy: ToolPolicy,
    state: OpenTab,
    asks: tuple[Ask, Ask],
    grants: tuple[bool, bool, Callable[[str, str], bool] | None],
) -> Ran:
    """One run of the call's action, under its request guard (which holds the downloads
    it starts) and the gates of the tabs it opens, through the tracker, within the
    tool's time bound. ``grants``: whether it runs with the person's yes, whether that
    yes was for a download, and what submission alone it covers (a routine step's mark)."""
    asking, later = asks
    consented, granted_download, granted_only = grants
    view = state.view(call.view)
    # A yes to run code is no yes to the form it may submit: asked on its own.
    judge = host.set_off.judge(
        host.sites,
        call,
        asking,
        view,
        granted=consented and call.name != "evaluate",
        granted_download=granted_download,
        granted_only=granted_only,
    )
    guard = host.set_off.guarding(
        judge, host.sites, call, later, host.nursery, view, host.downloads
    )
    # Tabs the action opens are guarded by this call's guard too.
    sink = OpenedByCall(call.tab, gate_domains(host.sites, call.session, policy), guard)
    tool = functools.partial(run_in_view, host.toolbox, call, state, consented, guard)
    with host.tasks.acting_in(call.tab, sink):
        try:
            async with trio.open_nursery() as nursery:
                # Tabs the action opens are guarded by this call's guard too.
                await nursery.start(sink.guard_each, host.hub, host.nursery)
                # The wait for the person is outside this bound: only the tool's own
                # runs are (a held request's question stops the clock).
                async with cdp_errors(call.tab, timeout=TOOL_TIMEOUT) as limit:
                    with deadline_waits_for_judge(guard, limit):
                        tracked = await host.tracker.call(
                            call.session,
                            call.name,
                            call.args,
                            tool,
                            tab=call.tab,
                            options=tracker_options(call, spec, state),
                            call_id=call.id,
                        )
                await sink.decisions(host.hub)
                nursery.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            # The guards of opened tabs never fail: the group holds the call's.
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise
        return Ran(tracked, tuple(guard.held), tuple(guard.held[guard.told :]), sink)


def tracker_options(call: ToolCall, spec: ToolSpec, state: OpenTab) -> Hashable:
    """What, beside the arguments and the page, a cached answer holds for: the budget,
    and for the devtools tools the log, which changes without the page changing."""
    return (call.budget, state.tab.devtools.changes) if spec.group == "devtools" else call.budget


async def run_in_view(
    toolbox: Toolbox, call: ToolCall, state: OpenTab, consented: bool, guard: Guarding
) -> ToolResult:
    """The tool, run in the client's own view of the tab (a link client's, or the
    side panel agent's), with its budget, knowing whether the person said yes to this
    one run, under the run's request guard."""
    view = state.view(call.view)
    async with view.lock:
        view.memory.options = attrs.evolve(view.memory.options, budget=call.budget)
        return await toolbox.run(view, call.name, call.args, consented=consented, guard=guard)


@attrs.frozen
class Told:
    """The call's answer as the model reads it, and what the answer reports beside it."""

    content: str
    is_error: bool
    later_held: tuple[Held, ...]  # what trailing windows held since the last answer
    downloads: tuple[Download, ...]


async def tell(
    context: TaskContext,
    set_off: SetOff,
    downloads: Downloads,
    acted: TaskTab | None,
    decided: Decided[Ran],
    mark: int,
) -> Told:
    """The tool's answer with what the call adds to it: the refusal when the person
    said no, the requests held and not told, the trailing windows' notes, the
    downloads the action started (``mark``: where the call's began), the tabs it
    opened (``acted``: the tab it acted in, as the task had it before)."""
    call = context.call
    ran, consent = decided.result, decided.consent
    result = ran.tracked.result
    content, is_error = result.content, result.is_error
    if consent.required and not consent.granted:
        assert consent.answer is not None
        content = (
            f"Not done: {consent.answer.refusal()} ({result.consent}). Do not retry it; "
            "ask the person or stop."
        )
        is_error = True
    for request in ran.untold:
        if request.download is None or not request.sent:
            content += "\n" + xml.element("note", content=request.note())
    later_notes, later_held = set_off.told(call.session)
    content += later_notes
    started = await downloads_of(downloads, call.tab, mark, ran.held)
    for download in started:
        content += "\n" + xml.element("note", content=download.note())
    content, is_error = await tell_opened(context, acted, ran.opened, content, is_error)
    return Told(content, is_error, later_held, tuple(started))


def outcome(
    call: ToolCall, policy: ToolPolicy, state: OpenTab, decided: Decided[Ran], told: Told
) -> ToolOutcome:
    """What the call did, as both doors report it."""
    ran, consent = decided.result, decided.consent
    tracked, result = ran.tracked, ran.tracked.result
    latest = state.view(call.view).latest
    return ToolOutcome(
        content=told.content,
        is_error=told.is_error,
        kind=result.kind,
        consent=consent,
        # A submission the guard failed never left the browser.
        submitted=result.submitted and not any(h.form and not h.sent for h in ran.held),
        dialog=dialog_facts(state.tab.target.open_dialog),
        call_id=tracked.call_id,
        cached=tracked.cached,
        cached_from=tracked.cached_from,
        cached_at=tracked.cached_at_wall,
        note=tracked.note,
        side_effects=policy.side_effects,
        submits=result.submits,
        url=latest.url if latest is not None else None,
        # What the question was about: Trimtab's reason and the element the page
        # wrote (a dialog's message, a button's text), for the refusal's block.
        reason=" ".join(filter(None, (result.consent, result.element)))
        if consent.required
        else None,
        held=(*told.later_held, *ran.held),
        tab=call.tab,
        downloads=told.downloads,
        image=None if told.is_error else result.image,
        # Trimtab's words alone stay so only while no note (which names the page's) was
        # added.
        quotes_page=result.quotes_page or told.content != result.content,
        # (A form is named only for a submit's question.)
        submit_form=(ran.asked_form or result.consent_form) if consent.required else None,
    )
