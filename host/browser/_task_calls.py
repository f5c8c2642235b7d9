"""The task tools (``tabs``, ``switch_tab``, ``new_tab``, ``close_tab``) and what the
host tells a call of the tabs its action opened.

``new_tab`` opens a blank tab and loads its URL there as ``navigate`` would, under the
request guard with the call's judge: the URL it was given passes the site rules first,
and every request of the load after it (a redirect to another site: an open redirect,
a link shortener, a sign-in bounce) is judged before it leaves the browser. A load
refused on its way leaves no tab behind.

A task's tabs (``_task_tabs``) are the tab it started in and those opened from its
tabs. The tools are declared in the catalogue like every tool (``trimtab.tools``,
`ToolSpec.on_task`); their handlers here (`TASK_HANDLERS`) take the call's
`TaskContext`: the call, its task, and the parts of the host they read and change.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Final

import attrs
import trio

from pycdp_bridge import CDPError, JavaScriptError, Target, TargetClosedError, evaluate

from ..envelope import Ask, Consent, SitePolicy
from ..pipeline import xml
from ..tab import Guarding, deadline_waits_for_judge, page_script
from ..tools import TASK_TOOLS
from ..tracker import CallTracker
from ..wire import RequestError
from ._call import ToolCall, ToolOutcome
from ._errors import TOOL_TIMEOUT, cdp_errors
from ._listing import tabs_listing
from ._open_tabs import OpenTabs, asking_while_open
from ._opened import OpenedByCall, blocked_note, opened_note
from ._outcomes import text_outcome
from ._requests import request_judge
from ._sites import check_sites, read_page
from ._tab_events import name_task_group
from ._tab_messages import TabRelayHub
from ._task_tabs import TaskTab, TaskTabs

if TYPE_CHECKING:
    from ._state import HostState
    from ._toolbox import Toolbox

__all__ = [
    "TASK_HANDLERS",
    "TaskContext",
    "TaskHandler",
    "forget_seen",
    "stray_id",
    "tell_opened",
]

# Seconds the opener of a pop-up that closed itself may take to show what the pop-up
# told it (its DOM quiet for the settle's quiet time, or this long at most).
OPENER_SETTLE: Final = 3.0


@attrs.frozen
class TaskContext:
    """What a task tool's handler works with: the call (numbered, its tab resolved), the
    tab the door named, the call's task, how to ask the person during the call, and the
    parts of the host it reads and changes."""

    call: ToolCall
    named: int
    task: TaskTabs
    ask: Ask
    tabs: OpenTabs
    hub: TabRelayHub
    nursery: trio.Nursery
    sites: SitePolicy
    tracker: CallTracker
    toolbox: Toolbox

    def tab_named(self) -> object:
        """The tab a ``switch_tab`` or ``close_tab`` call is about: its ``tab``
        argument, else (a door that takes the tab out of the arguments, MCP's) the tab
        the door named."""
        tab = self.call.args.get("tab", self.named)
        if isinstance(tab, str) and tab.strip().isdigit():
            return int(tab)
        return tab


TaskHandler = Callable[[TaskContext], Awaitable[ToolOutcome]]


def stray_id(tabs: OpenTabs, call: ToolCall, task: TaskTabs) -> str | None:
    """A refusal when the call names an element id that the tab it acts in never
    showed but another tab of the task did: ids are only resolved where issued."""
    eid = call.args.get("id")
    if not isinstance(eid, str):
        return None
    here = tabs.get(call.tab)
    seen = here.view(call.view).latest if here is not None else None
    if seen is not None and eid in seen.controls:
        return None
    for other in task:
        held = tabs.get(other.tab)
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


async def list_tabs(context: TaskContext) -> ToolOutcome:
    """``tabs``: the task's tabs, which one the agent is on, and how many were blocked."""
    task = context.task
    async with cdp_errors(context.call.tab, timeout=TOOL_TIMEOUT):
        listed = []
        for entry in task:
            title, url = await context.tabs.facts(entry.tab)
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
            content=f"{task.blocked} more tabs were blocked: a task keeps at most {task.limit}",
        )
    return text_outcome(content)


def not_in_task(context: TaskContext, tab: object) -> ToolOutcome | None:
    """The refusal of a ``tab`` argument that names no tab of the task."""
    if isinstance(tab, int) and not isinstance(tab, bool) and tab in context.task:
        return None
    ids = ", ".join(str(t.tab) for t in context.task)
    return text_outcome(
        f"{context.call.name}: no tab {str(tab)[:40]!r} in this task; its tabs are {ids}",
        is_error=True,
        quotes_page=False,
    )


async def switch_tab(context: TaskContext) -> ToolOutcome:
    """``switch_tab``: the agent acts in the tab now, and sees it."""
    tab = context.tab_named()
    if (refused := not_in_task(context, tab)) is not None:
        return refused
    assert isinstance(tab, int)
    context.task.current = tab
    async with cdp_errors(context.call.tab, timeout=TOOL_TIMEOUT):
        outcome = await answer_from(context, tab, f"you act in tab {tab} now")
        if outcome.is_error:
            return outcome
        title, _ = await context.tabs.facts(tab)
    return attrs.evolve(outcome, tab_title=title)


async def close_tab(context: TaskContext) -> ToolOutcome:
    """``close_tab``: close one of the task's tabs (never its only one)."""
    tab = context.tab_named()
    if (refused := not_in_task(context, tab)) is not None:
        return refused
    assert isinstance(tab, int)
    task = context.task
    if len(task.tabs) == 1:
        return text_outcome(
            "close_tab: this is the task's only tab", is_error=True, quotes_page=False
        )
    async with cdp_errors(context.call.tab, timeout=TOOL_TIMEOUT):
        title, url = await context.tabs.facts(tab)
        with contextlib.suppress(CDPError, TargetClosedError):
            await context.hub.close_tab(tab)
    task.remove(tab)
    context.tabs.forget(tab)
    closed = text_outcome(f"closed tab {tab}; you act in tab {task.current}")
    return attrs.evolve(closed, tab_title=title, acted_on=url)


async def new_tab(context: TaskContext) -> ToolOutcome:
    """``new_tab``, within the call's time limit, which stands still while the person
    is asked."""
    async with cdp_errors(context.call.tab, timeout=TOOL_TIMEOUT) as limit:
        return await open_new_tab(context, limit)


async def open_new_tab(context: TaskContext, limit: trio.CancelScope) -> ToolOutcome:
    """Open a URL in a new tab of the task, after the site rules allowed it, each request
    of its load judged (see the module); ``limit``: the call's time limit, which stands
    still while the person is asked."""
    call, task, ask, tabs, hub = context.call, context.task, context.ask, context.tabs, context.hub
    url = call.args.get("url")
    if not isinstance(url, str) or not url.strip().startswith(("http://", "https://")):
        return text_outcome(
            f"bad arguments for new_tab: url must be absolute (http:// or https://); "
            f"got {str(url)[:200]!r}",
            is_error=True,
            quotes_page=False,
        )
    if len(task.tabs) >= task.limit:
        return text_outcome(
            f"new_tab: the task has {task.limit} tabs, the most it may keep; close_tab one first",
            is_error=True,
            quotes_page=False,
        )
    # Where a new tab goes is decided like a navigation of the tab.
    going = attrs.evolve(call, args={"url": url.strip()})
    # The task starts on the site of the tab it is in, if this is its first call.
    here = await tabs.open(task.current)
    facts = await read_page(context.sites, going, here.tab.target, True)
    stopped = await check_sites(context.sites, going, facts, True, ask)
    if stopped is not None:
        outcome = text_outcome(stopped.content, is_error=True)
        if stopped.answer is None:
            return outcome
        consent = Consent(required=True, granted=False, answer=stopped.answer)
        return attrs.evolve(outcome, consent=consent, reason=stopped.reason)
    # Blank first: the tab sends nothing before its guard is on, and nothing of it is
    # the browser's to load (the extension's gates leave the host's own tabs alone).
    tab = await hub.new_tab("about:blank", opener=task.current, active=True)
    opener = task.current
    task.add(tab, opener, popup=False)
    context.nursery.start_soon(name_task_group, hub, [t.tab for t in task], task.title)
    task.current = tab
    state = await tabs.open(tab)
    view = state.view(call.view)
    judge = request_judge(context.sites, going, asking_while_open(state, ask), granted=False)
    guard = Guarding(judge)
    with deadline_waits_for_judge(guard, limit):
        async with view.lock:
            view.memory.options = attrs.evolve(view.memory.options, budget=call.budget)
            result = await context.toolbox.run(view, "navigate", going.args, guard=guard)
    held = tuple(guard.held)
    notes = [xml.element("note", content=h.note()) for h in held]
    if result.is_error and any(not h.sent for h in held):
        # The load itself was refused on its way (a redirect to a site the task may not
        # use): the tab shows nothing, and goes, as if never opened.
        with contextlib.suppress(CDPError, TargetClosedError):
            await hub.close_tab(tab)
        task.remove(tab)
        tabs.forget(tab)
        task.current = opener if opener in task else task.current
        content = "\n".join(
            [
                f"Not done: new_tab did not open {url.strip()[:200]}; you act in tab "
                f"{task.current}. Do not retry it; ask the person or stop.",
                *notes,
            ]
        )
        return attrs.evolve(text_outcome(content, is_error=True), held=held)
    # Whatever was cached of the tab may be stale now that the agent acts in it.
    context.tracker.note_page_change(tab, "the agent opened the tab")
    head, newline, rest = result.content.partition("\n")
    opened = xml.element("note", content=f"opened tab {tab}; you act in it now")
    content = "\n".join([f"{head}{newline}{opened}\n{rest}" if newline else result.content, *notes])
    url = view.latest.url if view.latest is not None else None
    return attrs.evolve(
        text_outcome(content, is_error=result.is_error),
        kind=result.kind,
        tab=tab,
        url=url,
        held=held,
    )


async def answer_from(
    context: TaskContext, tab: int, note: str, *, settle: bool = False
) -> ToolOutcome:
    """The task's look at ``tab`` (a diff against what the caller saw of it, or its
    first baseline), once its page has loaded (with ``settle``, and its DOM is quiet),
    after Trimtab's ``note``."""
    call = context.call
    state = await context.tabs.open(tab)
    view = state.view(call.view)
    await loaded(state.tab.target)
    if settle:
        await state.tab.quiet(OPENER_SETTLE)
    async with view.lock:
        view.memory.options = attrs.evolve(view.memory.options, budget=call.budget)
        snapshot = await view.snapshot()
    # Whatever was cached of the tab may be stale now that the agent acts in it.
    context.tracker.note_page_change(tab, "the agent switched tabs")
    head, newline, rest = snapshot.xml.partition("\n")
    content = f"{head}{newline}{xml.element('note', content=note)}\n{rest}"
    url = snapshot.compaction.url
    return attrs.evolve(text_outcome(content), kind=snapshot.kind, tab=tab, url=url)


async def tell_opened(
    context: TaskContext,
    acted: TaskTab | None,
    sink: OpenedByCall,
    content: str,
    is_error: bool,
) -> tuple[str, bool]:
    """The call's answer with what became of the tabs its action opened, and, when
    the tab it acted in was a pop-up that closed itself, the opener's diff."""
    call, task, tabs = context.call, context.task, context.tabs
    held = tabs.get(call.tab)
    # The tab the call acted in closed under it (a pop-up that was done): the task
    # goes on in the tab that opened it, whether or not the extension said so yet.
    gone = acted is not None and acted.opener is not None
    gone = gone and (held is None or held.tab.target.closed)
    if gone:
        task.remove(call.tab)
        tabs.forget(call.tab)
    notes: list[str] = []
    front: int | None = None
    blocked = [record for record in sink.records if record.blocked]
    if blocked:
        notes.append(
            f"it opened {len(blocked)} more tabs, blocked: the task keeps at most {task.limit} tabs"
        )
    notes += [blocked_note(url) for url in sink.blocked_by_browser()]
    for record in sink.records:
        if record.blocked:
            continue
        tab = record.event.tab
        title, url = ("", "") if record.closed or record.blocked else await tabs.facts(tab)
        if record.opened is not None and record.opened.sent is False and tab in task:
            # Refused: the new tab never loaded; it goes, as if never opened.
            with contextlib.suppress(CDPError, TargetClosedError):
                await context.hub.close_tab(tab)
            task.remove(tab)
            tabs.forget(tab)
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
        # A pop-up that was done told its opener so as it closed (a sign-in's
        # message): the opener's change is the action's effect, waited for as one.
        lines.append(await _look_at(context, back, "its page now", settle=True))
        is_error = False
    lines += [xml.element("note", content=note) for note in notes]
    if front is not None:
        task.current = front
        lines.append(await _look_at(context, front, f"tab {front}, the pop-up"))
    return "\n".join(lines), is_error


async def _look_at(context: TaskContext, tab: int, note: str, *, settle: bool = False) -> str:
    """`answer_from`'s look at ``tab`` for a call's answer, or, when the tab closed or
    stopped answering meanwhile (a pop-up that closes itself as it is read), a note
    that says so: the call acted, and its answer must not fail for it."""
    try:
        async with cdp_errors(tab):
            return (await answer_from(context, tab, note, settle=settle)).content
    except RequestError as exc:
        said = f"tab {tab} closed or stopped answering before it could be read ({exc.message})"
        return xml.element("note", content=said)


async def loaded(target: Target, timeout: float = 10.0, *, parsed: bool = False) -> None:
    """Wait (bounded) until the tab's document finished loading: a tab just opened;
    with ``parsed``, only until it is parsed (its title is known; images and the like
    may still come)."""
    enough = ("interactive", "complete") if parsed else ("complete",)
    with trio.move_on_after(timeout), contextlib.suppress(CDPError, JavaScriptError):
        while True:
            if await evaluate(target, page_script("trimtab.tab", "ready-state.js")) in enough:
                return
            await trio.sleep(0.05)


async def forget_seen(host: HostState, session: str, tab: int) -> list[int]:
    """The side panel's agent of task ``session`` (its first tab ``tab``) dropped the
    page states it was shown from its context: its memory of each of the task's tabs
    forgets what it saw (`SnapshotMemory.forget_views`), so no later answer collapses a
    region "as you last saw it" that the model no longer holds; and the session's cached
    results go, so none is answered again from a page state the model dropped. Which
    tabs' memories it cleared, in order."""
    task = host.tasks.get(session)
    forgotten = []
    for each in dict.fromkeys([tab, *(entry.tab for entry in task or ())]):
        held = host.tabs.get(each)
        if held is None:
            continue
        # After the tool that may be rendering into the memory now, not under it.
        async with held.tab.lock:
            held.tab.memory.forget_views()
        forgotten.append(each)
    host.tracker.clear_session(session)
    return forgotten


# Each task tool's handler, by the name the catalogue declares it under.
TASK_HANDLERS: Mapping[str, TaskHandler] = {
    "tabs": list_tabs,
    "switch_tab": switch_tab,
    "new_tab": new_tab,
    "close_tab": close_tab,
}
if TASK_HANDLERS.keys() != TASK_TOOLS:
    raise ImportError(f"the task tools {sorted(TASK_TOOLS)} need a handler each")
