"""The browser as the host holds it: its tabs, each client's view of them, one tracker.

`HostState` is the state of one running host (one extension connection): the
`RelayHub` every tab's CDP goes through, one held tab per browser tab a door has
asked about (created on demand, forgotten on `release`), and one `CallTracker`
with every tool's policy registered. Both doors (``trimtab.native`` for the side
panel, ``trimtab.link`` for outside agents) call its typed methods: `call_tool` (a
`ToolCall` in, a `ToolOutcome` out, through the envelope), `inspect`, `highlight`,
`release`.

The side panel's inspector (`inspect`) shows what the agent would see if it looked
now: a baseline rendered against the agent's previous baseline (regions the agent
saw unchanged are collapsed), on a copy of the agent's `SnapshotMemory`. The agent's
own memory is never moved by the inspector: the tools diff against the last snapshot
*the model* saw, and an inspector snapshot becoming that base would make the model
miss what changed before it. The copy is kept for `highlight`.

Before every cacheable page read the tab's `PageRevisions.sync` runs, so the tracker
decides on a page revision that includes every change the page made up to that
moment (see ``trimtab.tab``). Error-flagged tool results are never cached.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, Final

import attrs
import trio

from pycdp_bridge import (
    CDPError,
    DialogOpenError,
    JavaScriptError,
    PageModel,
    RelayHub,
    RelayTarget,
    TabEvent,
    Target,
    TargetClosedError,
    evaluate,
)
from pycdp_bridge import protocol as cdp

from ..envelope import (
    Answer,
    Ask,
    Consent,
    Decided,
    Question,
    SitePolicy,
    act_with_consent,
    decide_evaluate,
)
from ..pipeline import Control, xml
from ..tab import (
    DEFAULT_BUDGET,
    DOWNLOAD_WAIT,
    MIN_BUDGET,
    Activity,
    Download,
    Downloads,
    Held,
    RevisionStatistics,
    Seen,
    Snapshot,
    SnapshotMemory,
    Tab,
    guard_opened,
    guarding,
    page_token_counts,
    refusing_all,
    stretched,
)
from ..tools import TASK_TOOLS, ToolResult, granted, parse_groups, tools_in
from ..tracker import CallTracker, TrackedResult, TrackerLimits, TrackerStatistics
from ..wire import JSONObject, RequestError
from ._call import ToolCall, ToolOutcome
from ._errors import PAGE_TIMEOUT, TOOL_TIMEOUT, cdp_errors, page_unresponsive
from ._listing import tabs_listing
from ._opened import OPENED_WAIT, OpenedByCall, opened_note
from ._requests import request_judge
from ._sites import check_sites, read_page
from ._task_tabs import TaskTab, TaskTabs
from ._toolbox import Toolbox

__all__ = ["HIGHLIGHT_CONFIG", "HostState", "HostStateStatistics", "open_host_state"]

log = logging.getLogger("trimtab.browser")

# What the overlay paints: content box, padding and margin, like DevTools' inspector.
HIGHLIGHT_CONFIG: Final[Mapping[str, object]] = {
    "showInfo": True,
    "contentColor": {"r": 111, "g": 168, "b": 220, "a": 0.66},
    "paddingColor": {"r": 147, "g": 196, "b": 125, "a": 0.55},
    "borderColor": {"r": 255, "g": 229, "b": 153, "a": 0.66},
    "marginColor": {"r": 246, "g": 178, "b": 107, "a": 0.66},
}


@attrs.define(eq=False)
class _HeldTab:
    """A browser tab the host holds: the agent's `Tab`, and the inspector's view of it."""

    id: int
    tab: Tab
    # The inspector's latest view of the page: a copy of the agent's memory taken for
    # `inspect`, kept for `highlight`.
    inspector: SnapshotMemory
    inspector_lock: trio.Lock = attrs.field(factory=trio.Lock)
    # eid -> CDP session of the inspector's latest snapshot (out-of-process iframes).
    inspector_sessions: dict[str, str | None] = attrs.field(factory=dict)
    # Cancels the tab's page observer follower when the tab is released.
    follower: trio.CancelScope = attrs.field(factory=trio.CancelScope)
    # Cancels the follower of the tab's console and network log.
    devtools_follower: trio.CancelScope = attrs.field(factory=trio.CancelScope)
    # Cancels the follower of the tab's download events (the direct transport's).
    download_follower: trio.CancelScope = attrs.field(factory=trio.CancelScope)
    # Clients of the link (trimtab.link) each see the tab through their own view:
    # their own snapshot memory, the same target, page observer and lock.
    views: dict[str, Tab] = attrs.field(factory=dict)

    def view(self, name: str | None) -> Tab:
        """The tab as the client ``name`` has seen it (None: the side panel's agent)."""
        if name is None:
            return self.tab
        view = self.views.get(name)
        if view is None:
            # Its own place in the tab's console and network log too.
            view = attrs.evolve(self.tab, memory=SnapshotMemory(self.tab.target), seen=Seen())
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
    _tabs: dict[int, _HeldTab] = attrs.field(factory=dict, init=False)
    # Each task's tabs (``_task_tabs``), by tracker session.
    _tasks: dict[str, TaskTabs] = attrs.field(factory=dict, init=False)
    # The calls acting in a tab now, which hear of the tabs their action opens.
    _acting: dict[int, list[OpenedByCall]] = attrs.field(factory=dict, init=False)

    def __attrs_post_init__(self) -> None:
        for spec in self.toolbox.specs:
            self.tracker.register(spec.name, spec.policy)

    def statistics(self) -> HostStateStatistics:
        return HostStateStatistics(
            tabs=len(self._tabs),
            tracker=self.tracker.statistics(),
            revisions={tab: held.tab.revisions.statistics() for tab, held in self._tabs.items()},
        )

    def note_download(self, message: JSONObject) -> None:
        """Take in the extension's ``download`` message (chrome.downloads)."""
        try:
            self.downloads.note_message(message)
        except ValueError as exc:
            log.warning("dropped a download message: %s", exc)

    def forget_view(self, name: str) -> None:
        """Drop what a client of the link has seen of every tab (it disconnected)."""
        for held in self._tabs.values():
            held.views.pop(name, None)

    def task_tabs(self, session: str) -> TaskTabs | None:
        """The tabs of a task (a tracker session), if it made a call yet."""
        return self._tasks.get(session)

    def tab(self, tab: int) -> Tab | None:
        """The agent's `Tab` for a browser tab, if the host holds one (tests, diagnostics)."""
        held = self._tabs.get(tab)
        return held.tab if held is not None else None

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

    def element_facts(self, tab: int, view: str | None, eid: object) -> JSONObject | None:
        """The role and name of element ``eid`` as ``view``'s latest snapshot of the tab
        showed it (the page's words: for the person's log of what an agent did), or
        None when that view has no such element."""
        held = self._tabs.get(tab)
        if held is None or not isinstance(eid, str) or view not in (None, *held.views):
            return None
        seen = held.view(view).latest
        control = seen.controls.get(eid) if seen is not None else None
        if control is None:
            return None
        return {"role": control.role[:40], "name": control.name[:120]}

    async def tab_facts(self, tab: int) -> tuple[str, str]:
        """The tab's title and URL as the browser's history has them ('' when unknown)."""
        held = self._tabs.get(tab)
        if held is None or held.tab.target.closed:
            return "", ""
        with contextlib.suppress(CDPError, TargetClosedError, KeyError, IndexError, TypeError):
            with trio.move_on_after(PAGE_TIMEOUT):
                history = await held.tab.target.execute(cdp.page_get_navigation_history())
                entry = history["entries"][history["currentIndex"]]
                return str(entry.get("title", "")), str(entry.get("url", ""))
        return "", ""

    # -- calls -------------------------------------------------------------------

    async def call_tool(self, call: ToolCall, ask: Ask) -> ToolOutcome:
        """Run one tool call through the envelope: when it would act on or go to a site
        the task has not been allowed, or submit or commit, the person is asked with
        ``ask`` during this call, and only their yes runs it."""
        spec = self.toolbox.spec(call.name)
        if spec is None:
            known = ", ".join(s.name for s in self.toolbox.specs)
            raise RequestError(
                "bad_request", f"unknown tool {call.name[:100]!r}; the tools are: {known}"
            )
        task = self._task_of(call)
        named = call.tab
        call = attrs.evolve(call, tab=task.resolve(call.tab))
        if call.name in TASK_TOOLS:
            # A door that takes the tab out of the arguments (MCP's `tab`) names it as
            # the call's tab: that is the tab switch_tab or close_tab is about.
            if call.name in ("switch_tab", "close_tab") and "tab" not in call.args:
                call = attrs.evolve(call, args={**call.args, "tab": named})
            return await self._task_tool(call, task, ask)
        acted = task.tabs.get(call.tab)
        stray = self._stray_id(call, task)
        if stray is not None:
            return _text_outcome(stray, is_error=True)
        policy = self.tracker.policy(call.name)
        if call.name == "evaluate" and not call.may_evaluate:
            # The person's setting, decided here whatever the model was offered.
            return _refused_outright(
                "Not done: evaluate is off for the side panel's agent; the person can turn it "
                "on in the side panel's settings (Let the agent run JavaScript). Do not retry it."
            )
        async with cdp_errors(call.tab, timeout=TOOL_TIMEOUT):
            state = await self._open_tab(call.tab)
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
        frame_urls = [url for eid in _element_ids(call) if (url := memory.frame_url_of(eid))]
        stopped = None
        wheres: list[str | None] = [*dict.fromkeys(frame_urls)] or [None]
        for frame_url in wheres:
            stopped = await check_sites(
                self.sites,
                call,
                page,
                policy.side_effects,
                self._asking_while_open(state, ask),
                frame_url=frame_url,
            )
            if stopped is not None:
                break
        if stopped is not None:
            return ToolOutcome(
                content=stopped.content,
                is_error=True,
                kind="text",
                # A refusal by rule alone (a javascript: URL) asked nobody: no consent.
                consent=(
                    Consent()
                    if stopped.answer is None
                    else Consent(required=True, granted=False, answer=stopped.answer)
                ),
                submitted=False,
                dialog=_dialog_facts(state.tab.target.open_dialog),
                call_id=None,
                cached=False,
                cached_from=None,
                cached_at=None,
                note=None,
                side_effects=policy.side_effects,
                submits=False,
                url=latest.url if (latest := state.view(call.view).latest) is not None else None,
                reason=stopped.reason,
            )

        asking = self._asking_while_open(state, ask)
        consent_ask = asking
        # evaluate's code runs on the page's site: the person's list of sites where it
        # runs unasked decides first (the browser's facts of the page, not the page's).
        evaluated_site = page.site if page is not None else None
        if call.name == "evaluate":

            async def consent_ask(question: Question) -> Answer:
                return await decide_evaluate(self.sites, evaluated_site, asking, question)

        # Downloads the browser reports from here on may be this call's.
        mark = self.downloads.mark()
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
            judge = request_judge(
                self.sites,
                call,
                asking,
                granted=consented and call.name != "evaluate",
                granted_download=consented and asked == ["download"],
            )
            sink = OpenedByCall(call.tab)
            opened[:] = [sink]
            acting = self._acting.setdefault(call.tab, [])
            acting.append(sink)
            with guarding(judge) as guard:
                try:
                    async with trio.open_nursery() as nursery:
                        # Tabs the action opens are guarded by this call's guard too.
                        nursery.start_soon(sink.guard_each, self.hub)
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
                                )
                        await sink.decisions()
                        nursery.cancel_scope.cancel()
                    return tracked
                except BaseExceptionGroup as group:
                    # The guards of opened tabs never fail: the group holds the call's.
                    if len(group.exceptions) == 1:
                        raise group.exceptions[0] from None
                    raise
                finally:
                    acting.remove(sink)
                    if not acting:
                        self._acting.pop(call.tab, None)
                    held[:] = guard.held
                    untold[:] = guard.held[guard.told :]

        def needs(tracked: TrackedResult[ToolResult]) -> Question | None:
            result = tracked.result
            if result.consent is None:
                return None
            asked[:] = [result.consent_what]
            site = None
            if result.consent_what == "evaluate" and evaluated_site is not None:
                site = str(evaluated_site)
            return call.question(
                result.consent_what,
                reason=result.consent,
                element=result.element,
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
        downloads = await self._downloads_of(call.tab, mark, held)
        for download in downloads:
            content += "\n" + xml.element("note", content=download.note())
        if opened:
            told, is_error = await self._tell_opened(
                call, task, acted, opened[0], content, is_error
            )
            content = told
        return ToolOutcome(
            content=content,
            is_error=is_error,
            kind=result.kind,
            consent=consent,
            # A submission the guard failed never left the browser.
            submitted=result.submitted and not any(h.form and not h.sent for h in held),
            dialog=_dialog_facts(state.tab.target.open_dialog),
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
            held=tuple(held),
            tab=call.tab,
            downloads=tuple(downloads),
            image=None if is_error else result.image,
        )

    async def _downloads_of(self, tab: int, mark: int, held: list[Held]) -> list[Download]:
        """The downloads a call started in ``tab`` (the browser reported them after
        ``mark``; those the guard let go are waited for), once they finished or
        `DOWNLOAD_WAIT` passed: the answer says where each file went."""
        urls = [h.url for h in held if h.download is not None and h.sent]
        with trio.move_on_after(DOWNLOAD_WAIT):
            for url in urls:
                await self.downloads.wait_for(url, mark, tab)
            await self.downloads.settled(self.downloads.since(mark, tab, urls))
        # CDP's events give no type: the response the guard held did.
        types = {h.url: h.download.mime for h in held if h.download is not None}
        return [
            attrs.evolve(d, mime=d.mime or types.get(d.url, ""))
            for d in self.downloads.latest(self.downloads.since(mark, tab, urls))
        ]

    async def inspect(self, tab: int, budget: int | None) -> JSONObject:
        """What the agent would see from a fresh look now, for the side panel's inspector."""
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
                async with cdp_errors(tab), trio.open_nursery() as nursery:
                    nursery.start_soon(measure)
                    await take()
            except BaseException:
                state.inspector.forget()
                state.inspector_sessions.clear()
                raise
            assert model is not None
            # A baseline against the agent's own previous baseline, rendered on a copy
            # so that the agent's memory (the base of its next diff) stays as the
            # model knows it.
            view = state.tab.memory.fork()
            view.options = attrs.evolve(view.options, budget=budget)
            snapshot: Snapshot = view.render(
                model, capture_ms=(time.perf_counter() - started) * 1000, baseline=True
            )
            state.inspector = view
            state.inspector_sessions = _control_sessions(model, snapshot.compaction.controls)
        stats = snapshot.stats_dict()
        stats.update(counts)
        return {"xml": snapshot.xml, "kind": snapshot.kind, "stats": stats}

    async def highlight(self, tab: int, eid: str | None) -> bool:
        """Draw the overlay over element ``eid`` (None clears it); False when cleared."""
        state = await self._open_tab(tab)
        target = state.tab.target
        async with cdp_errors(tab):
            # The overlay needs the DOM domain; a capture has enabled it already anyway.
            await target.execute(cdp.dom_enable())
            await target.execute(cdp.overlay_enable())
            if eid is None:
                await target.execute(cdp.overlay_hide_highlight())
                return False
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
        return True

    async def release(self, tab: int) -> None:
        """Forget everything of the tab and detach the debugger from it."""
        state = self._tabs.pop(tab, None)
        target: Target | None = None
        if state is not None:
            state.follower.cancel()
            state.devtools_follower.cancel()
            state.download_follower.cancel()
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

    # -- a task's tabs -------------------------------------------------------------

    def _task_of(self, call: ToolCall) -> TaskTabs:
        """The call's task: started in the tab of its first call; a tab it names that
        it did not open (another shared tab of an outside client) joins it."""
        task = self._tasks.get(call.session)
        if task is None:
            task = self._tasks[call.session] = TaskTabs.starting(call.tab, call.task or call.client)
        elif call.tab not in task and call.tab != task.start:
            task.add(call.tab, None, popup=False)
        return task

    def in_task(self, session: str, tab: int) -> bool:
        """Whether ``tab`` was opened from a tab of the task ``session`` (an outside
        client may use such a tab as it uses the tab it was shared)."""
        task = self._tasks.get(session)
        return task is not None and tab in task and task.tabs[tab].opener is not None

    def _stray_id(self, call: ToolCall, task: TaskTabs) -> str | None:
        """A refusal when the call names an element id that the tab it acts in never
        showed but another tab of the task did: ids are only resolved where issued."""
        eid = call.args.get("id")
        if not isinstance(eid, str):
            return None
        here = self._tabs.get(call.tab)
        seen = here.view(call.view).latest if here is not None else None
        if seen is not None and eid in seen.controls:
            return None
        for other in task:
            held = self._tabs.get(other.tab)
            if other.tab == call.tab or held is None:
                continue
            theirs = held.views.get(call.view) if call.view is not None else held.tab
            latest = theirs.latest if theirs is not None else None
            if latest is not None and eid in latest.controls:
                return (
                    f"{call.name} was not run: id {eid[:60]!r} is from tab {other.tab}, and "
                    f"this call acts in tab {call.tab}; switch_tab({other.tab}) to act there"
                )
        return None

    async def _task_tool(self, call: ToolCall, task: TaskTabs, ask: Ask) -> ToolOutcome:
        """``tabs``, ``switch_tab``, ``new_tab`` and ``close_tab``: the task's tabs."""
        async with cdp_errors(call.tab, timeout=TOOL_TIMEOUT):
            if call.name == "tabs":
                listed = []
                for entry in task:
                    title, url = await self.tab_facts(entry.tab)
                    listed.append(
                        {
                            "id": entry.tab,
                            "title": title,
                            "url": url,
                            "opener": entry.opener,
                            "current": entry.tab == task.current,
                        }
                    )
                content = tabs_listing(listed)
                if task.blocked:
                    content += "\n" + xml.element(
                        "note",
                        content=f"{task.blocked} more tabs were blocked: a task keeps "
                        f"at most {task.limit}",
                    )
                return _text_outcome(content)
            if call.name == "new_tab":
                return await self._new_tab(call, task, ask)
            tab = call.args.get("tab")
            if isinstance(tab, str) and tab.strip().isdigit():
                tab = int(tab)
            if isinstance(tab, bool) or not isinstance(tab, int) or tab not in task:
                ids = ", ".join(str(t.tab) for t in task)
                return _text_outcome(
                    f"{call.name}: no tab {str(tab)[:40]!r} in this task; its tabs are {ids}",
                    is_error=True,
                )
            if call.name == "switch_tab":
                task.current = tab
                return await self._look(call, tab, f"you act in tab {tab} now")
            if len(task.tabs) == 1:
                return _text_outcome("close_tab: this is the task's only tab", is_error=True)
            with contextlib.suppress(CDPError, TargetClosedError):
                await self.hub.close_tab(tab)
            task.remove(tab)
            self._forget_tab(tab)
            return _text_outcome(f"closed tab {tab}; you act in tab {task.current}")

    async def _new_tab(self, call: ToolCall, task: TaskTabs, ask: Ask) -> ToolOutcome:
        """Open a URL in a new tab of the task, after the site rules allowed it."""
        url = call.args.get("url")
        if not isinstance(url, str) or not url.strip().startswith(("http://", "https://")):
            return _text_outcome(
                f"bad arguments for new_tab: url must be absolute (http:// or https://); "
                f"got {str(url)[:200]!r}",
                is_error=True,
            )
        if len(task.tabs) >= task.limit:
            return _text_outcome(
                f"new_tab: the task has {task.limit} tabs, the most it may keep; "
                "close_tab one first",
                is_error=True,
            )
        # Where a new tab goes is decided like a navigation of the tab.
        going = attrs.evolve(call, args={"url": url.strip()})
        # The task starts on the site of the tab it is in, if this is its first call.
        here = await self._open_tab(task.current)
        facts = await read_page(self.sites, going, here.tab.target, True)
        stopped = await check_sites(self.sites, going, facts, True, ask)
        if stopped is not None:
            outcome = _text_outcome(stopped.content, is_error=True)
            if stopped.answer is None:
                return outcome
            consent = Consent(required=True, granted=False, answer=stopped.answer)
            return attrs.evolve(outcome, consent=consent, reason=stopped.reason)
        tab = await self.hub.new_tab(url.strip(), opener=task.current, active=True)
        task.add(tab, task.current, popup=False)
        self.nursery.start_soon(self._group, [t.tab for t in task], task.title)
        task.current = tab
        return await self._look(call, tab, f"opened tab {tab}; you act in it now")

    async def _look(self, call: ToolCall, tab: int, note: str) -> ToolOutcome:
        """The task's look at ``tab`` (a diff against what the caller saw of it, or its
        first baseline), once its page has loaded, after Trimtab's ``note``."""
        state = await self._open_tab(tab)
        view = state.view(call.view)
        await _loaded(state.tab.target)
        async with view.lock:
            view.memory.options = attrs.evolve(view.memory.options, budget=call.budget)
            snapshot = await view.snapshot()
        # Whatever was cached of the tab may be stale now that the agent acts in it.
        self.tracker.note_page_change(tab, "the agent switched tabs")
        head, newline, rest = snapshot.xml.partition("\n")
        content = f"{head}{newline}{xml.element('note', content=note)}\n{rest}"
        return attrs.evolve(_text_outcome(content), kind=snapshot.kind, tab=tab)

    async def _tell_opened(
        self,
        call: ToolCall,
        task: TaskTabs,
        acted: TaskTab | None,
        sink: OpenedByCall,
        content: str,
        is_error: bool,
    ) -> tuple[str, bool]:
        """The call's answer with what became of the tabs its action opened, and, when
        the tab it acted in was a pop-up that closed itself, the opener's diff."""
        held = self._tabs.get(call.tab)
        # The tab the call acted in closed under it (a pop-up that was done): the task
        # goes on in the tab that opened it, whether or not the extension said so yet.
        gone = acted is not None and acted.opener is not None
        gone = gone and (held is None or held.tab.target.closed)
        if gone:
            task.remove(call.tab)
            self._forget_tab(call.tab)
        notes: list[str] = []
        front: int | None = None
        blocked = [record for record in sink.records if record.blocked]
        if blocked:
            notes.append(
                f"it opened {len(blocked)} more tabs, blocked: the task keeps at most "
                f"{task.limit} tabs"
            )
        for record in sink.records:
            if record.blocked:
                continue
            tab = record.event.tab
            title, url = ("", "") if record.closed or record.blocked else await self.tab_facts(tab)
            if record.opened is not None and record.opened.sent is False and tab in task:
                # Refused: the new tab never loaded; it goes, as if never opened.
                with contextlib.suppress(CDPError, TargetClosedError):
                    await self.hub.close_tab(tab)
                task.remove(tab)
                self._forget_tab(tab)
            elif record.event.popup and tab in task and not record.closed:
                front = tab
            notes.append(opened_note(record, title, url))
        lines = [content] if not gone else []
        if gone:
            opener = acted.opener if acted is not None else None
            back = task.current
            lines.append(
                xml.element(
                    "note",
                    content=f"tab {call.tab} closed itself (a pop-up that was done); "
                    f"you are in tab {back}" + (", which opened it" if opener == back else ""),
                )
            )
            with contextlib.suppress(RequestError):
                lines.append((await self._look(call, back, "its page now")).content)
            is_error = False
        lines += [xml.element("note", content=note) for note in notes]
        if front is not None:
            task.current = front
            with contextlib.suppress(RequestError):
                lines.append((await self._look(call, front, f"tab {front}, the pop-up")).content)
        return "\n".join(lines), is_error

    async def _follow_tabs(self) -> None:
        """Take in what the extension says of tabs coming and going; never fails."""
        async with self.hub.tab_events() as events:
            async for event in events:
                try:
                    self._tab_event(event)
                except Exception:
                    log.exception("tab event %r", event)

    def _tab_event(self, event: TabEvent) -> None:
        if event.kind == "opened":
            owners = [task for task in self._tasks.values() if event.opener in task]
            full = not all(
                [task.add(event.tab, event.opener, popup=event.popup) for task in owners]
            )
            sink = self._sink_for(event.opener)
            if sink is not None:
                sink.opened(event, blocked=full)
            for task in owners:
                if event.tab in task:
                    # The person sees the task's tabs as one group, named for it.
                    self.nursery.start_soon(self._group, [t.tab for t in task], task.title)
            if full:
                self.nursery.start_soon(self._close_blocked, event)
            elif sink is None and event.waiting and owners:
                # A task's tab opened it outside any action (a pop-up's own pop-up, a
                # timer): nobody can be asked, so it may only go where the task may.
                session = next(k for k, task in self._tasks.items() if task in owners)
                self.nursery.start_soon(self._guard_unasked, event, session)
            elif sink is None and event.waiting:
                # No task's tab opened it: it runs unguarded, like the page.
                self.nursery.start_soon(self._let_run, event.tab)
            return
        for task in self._tasks.values():
            task.remove(event.tab)
        if event.kind == "closed":
            for calls in self._acting.values():
                for call in calls:
                    call.closed(event.tab)
            self._forget_tab(event.tab)

    def _sink_for(self, opener: int | None) -> OpenedByCall | None:
        """The call whose action opened a tab from ``opener``: one acting in that tab,
        or one whose action opened that tab (a pop-up that opens its own pop-up)."""
        if opener is None:
            return None
        acting = self._acting.get(opener)
        if acting:
            return acting[-1]
        for calls in self._acting.values():
            for call in calls:
                if any(r.event.tab == opener for r in call.records):
                    return call
        return None

    async def _guard_unasked(self, event: TabEvent, session: str) -> None:
        """Guard a tab a task's tab opened outside any action until its first document
        request is decided by the site rules without asking anyone (a site the task may
        not use is refused, and the tab closed)."""
        task = self._tasks.get(session)
        call = ToolCall(
            session=session, tab=event.tab, name="open", client=task.title if task else ""
        )

        async def nobody(question: Question) -> Answer:
            del question
            return Answer.unaskable("a page opened the tab outside the agent's actions")

        judge = request_judge(self.sites, call, nobody, granted=False)
        refused = False
        with (
            trio.move_on_after(PAGE_TIMEOUT),
            contextlib.suppress(CDPError, TargetClosedError, DialogOpenError),
            guarding(judge),
        ):
            async with guard_opened(self.hub.target(event.tab), Activity("")) as opened:
                with trio.move_on_after(OPENED_WAIT):
                    await opened.decided.wait()
                refused = opened.sent is False
        if refused:
            log.info("tab %d, opened outside an action, was refused: %s", event.tab, opened.why)
            with contextlib.suppress(CDPError, TargetClosedError):
                await self.hub.close_tab(event.tab)

    async def _group(self, tabs: list[int], title: str) -> None:
        # An extension that does not answer must not leave the request waiting forever.
        with (
            trio.move_on_after(PAGE_TIMEOUT),
            contextlib.suppress(CDPError, TargetClosedError, ValueError),
        ):
            await self.hub.tab_group(tabs, title or "Trimtab")

    async def _close_blocked(self, event: TabEvent) -> None:
        """Close a tab opened past the task's limit; one the browser holds is let run
        only with its requests failed (closing it as it waits could wait forever)."""
        with (
            trio.move_on_after(PAGE_TIMEOUT),
            contextlib.suppress(CDPError, TargetClosedError, DialogOpenError),
        ):
            if event.waiting:
                async with refusing_all(self.hub.target(event.tab)):
                    await self.hub.close_tab(event.tab)
            else:
                await self.hub.close_tab(event.tab)

    async def _let_run(self, tab: int) -> None:
        with (
            trio.move_on_after(PAGE_TIMEOUT),
            contextlib.suppress(CDPError, TargetClosedError, DialogOpenError),
        ):
            await self.hub.target(tab).execute(cdp.runtime_run_if_waiting_for_debugger())

    def _forget_tab(self, tab: int) -> None:
        """Free everything held of a tab that closed: its memory, views, cached reads."""
        state = self._tabs.pop(tab, None)
        if state is not None:
            state.follower.cancel()
            state.tab.forget()
            state.inspector.forget()
            state.inspector_sessions.clear()
            state.views.clear()
        self.tracker.forget_tab(tab)

    # -- internals -------------------------------------------------------------

    def _asking_while_open(self, state: _HeldTab, ask: Ask) -> Ask:
        """``ask``, ended (and its question withdrawn) when the tab closes meanwhile."""

        async def ask_while_open(question: Question) -> Answer:
            target = state.tab.target
            async with trio.open_nursery() as nursery:

                async def watch_closed() -> None:
                    # Targets say they closed only through a flag; a few checks a
                    # second cost nothing beside a person's answer.
                    while not target.closed:
                        await trio.sleep(0.2)
                    nursery.cancel_scope.cancel()

                nursery.start_soon(watch_closed)
                answer = await ask(question)
                nursery.cancel_scope.cancel()
                return answer
            raise RequestError(
                "target_closed", f"tab {state.id} closed while the person was being asked"
            )

        return ask_while_open

    async def _open_tab(self, tab: int) -> _HeldTab:
        state = self._tabs.get(tab)
        if state is None or state.tab.target.closed:
            if state is not None:
                # The debugger detached (tab closed, user cancelled): start over.
                state.follower.cancel()
                state.devtools_follower.cancel()
                state.download_follower.cancel()
                self.tracker.forget_tab(tab)
            target = self.hub.target(tab)
            state = _HeldTab(
                id=tab,
                tab=Tab.open(target, on_change=self._page_changed(tab)),
                inspector=SnapshotMemory(target),
            )
            self._tabs[tab] = state
            self.nursery.start_soon(self._follow, state, name=f"page revisions of tab {tab}")
            # The console and network log, collected from now on for the devtools tools.
            self.nursery.start_soon(
                self._follow_devtools, state, name=f"console and network of tab {tab}"
            )
            self.nursery.start_soon(self._follow_downloads, state, name=f"downloads of tab {tab}")
        # A page already stuck in a script never lets the observer install: the wait
        # is bounded like every request that touches the page.
        with trio.move_on_after(PAGE_TIMEOUT) as waited:
            await state.tab.revisions.ready.wait()
            # A first call may be `console`: the log follows the tab before it runs.
            await state.tab.devtools.ready.wait()
        if waited.cancelled_caught:
            raise page_unresponsive(tab, PAGE_TIMEOUT)
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

    async def _follow_devtools(self, state: _HeldTab) -> None:
        """Run the tab's console and network log; a failure only ends the log."""
        with state.devtools_follower:
            try:
                await state.tab.devtools.run()
            except TargetClosedError:
                pass
            except Exception:
                log.exception("the console and network log of tab %d failed", state.id)

    async def _follow_downloads(self, state: _HeldTab) -> None:
        """Take in the tab's ``Browser.download*`` events: the direct transport reports
        downloads to the tab's session (the extension sends ``download`` messages)."""
        with state.download_follower:
            events_of = (
                cdp.events.BROWSER_DOWNLOAD_WILL_BEGIN,
                cdp.events.BROWSER_DOWNLOAD_PROGRESS,
            )
            with contextlib.suppress(TargetClosedError):
                async with state.tab.target.listen(*events_of) as events:
                    async for event in events:
                        self.downloads.note_event(state.id, event)

    def _resolve_eid(self, state: _HeldTab, eid: str) -> tuple[Control, str | None]:
        inspected = state.inspector.latest
        if inspected is not None and eid in inspected.controls:
            return inspected.controls[eid], state.inspector_sessions.get(eid)
        agent = state.tab.latest
        # The agent's snapshot keeps no frame sessions: only main-frame ids resolve.
        if agent is not None and eid in agent.controls and agent.controls[eid].frame == 0:
            return agent.controls[eid], None
        # An outside client's question names an element of its own view of the tab.
        for view in state.views.values():
            seen = view.latest
            if seen is not None and eid in seen.controls and seen.controls[eid].frame == 0:
                return seen.controls[eid], None
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
    sites: SitePolicy | None = None,
) -> AsyncIterator[HostState]:
    """The host's state for one extension connection, driving tabs through ``hub``.

    The caller owns the hub: it feeds it every relay message and closes it. On exit
    the tabs' revision followers stop. ``sites`` holds the person's site lists (the
    native host loads them from its state folder; None: empty, in memory).
    """
    tracker = CallTracker(limits=limits) if limits is not None else CallTracker()
    async with trio.open_nursery() as nursery:
        state = HostState(
            hub=hub,
            nursery=nursery,
            toolbox=toolbox or Toolbox.load(),
            tracker=tracker,
            sites=sites if sites is not None else SitePolicy(),
        )
        nursery.start_soon(state._follow_tabs, name="tabs opened and closed")
        try:
            yield state
        finally:
            nursery.cancel_scope.cancel()


def _element_ids(call: ToolCall) -> list[str]:
    """The ids of the elements ``call`` acts on: its ``id``, or each of fill's fields'."""
    found = [call.args.get("id")]
    fields = call.args.get("fields") if call.name == "fill" else None
    if isinstance(fields, list):
        found += [field.get("id") for field in fields[:100] if isinstance(field, Mapping)]
    return [eid for eid in found if isinstance(eid, str)]


def _refused_outright(content: str) -> ToolOutcome:
    """A call the host refuses by the person's setting, before anything: nobody asked."""
    return _text_outcome(content, is_error=True, side_effects=True)


def _text_outcome(
    content: str, *, is_error: bool = False, side_effects: bool = False
) -> ToolOutcome:
    """The outcome of a call the host answered itself (a task's tabs, a refusal)."""
    return ToolOutcome(
        content=content,
        is_error=is_error,
        kind="text",
        consent=Consent(),
        submitted=False,
        dialog=None,
        call_id=None,
        cached=False,
        cached_from=None,
        cached_at=None,
        note=None,
        side_effects=side_effects,
        submits=False,
    )


async def _loaded(target: Target, timeout: float = 10.0) -> None:
    """Wait (bounded) until the tab's document finished loading: a tab just opened."""
    with trio.move_on_after(timeout), contextlib.suppress(CDPError, JavaScriptError):
        while True:
            if await evaluate(target, "document.readyState") == "complete":
                return
            await trio.sleep(0.05)


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
