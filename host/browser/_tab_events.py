"""Tabs coming and going, as the extension reports them, for each task's tabs.

A tab opened from a task's tab joins the task (past the task's limit it is closed);
the call whose action opened it hears of it (``_opened``); one a task's tab opened
outside any action is guarded by the site rules alone, since nobody can be asked; a
tab a gate kept from its first document is judged by the call that opened it, or by
the site rules alone (`decide_kept`). A closed tab leaves every task and is
forgotten. The functions take the `HostState` whose tasks and held tabs they change.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING

import trio

from pycdp_bridge import CDPError, DialogOpenError, TargetClosedError
from pycdp_bridge import protocol as cdp

from ..envelope import Answer, Question
from ..sites import site_of
from ..tab import Activity, Guarding, guard_opened, refusing_all
from ._call import ToolCall
from ._errors import page_timeout
from ._opened import OPENED_WAIT
from ._requests import request_judge
from ._tab_messages import TabEvent, TabRelayHub

if TYPE_CHECKING:
    from ._state import HostState

log = logging.getLogger("trimtab.browser")


async def follow_tabs(host: HostState) -> None:
    """Take in what the extension says of tabs coming and going; never fails."""
    async with host.hub.tab_events() as events:
        async for event in events:
            try:
                tab_event(host, event)
            except Exception:
                log.exception("tab event %r", event)


def tab_event(host: HostState, event: TabEvent) -> None:
    if event.kind == "gated":
        # A gate kept a tab from its first document: the call that opened it judges it;
        # else nobody acting opened it (see `decide_kept`).
        sink = host.tasks.sink_for(event.opener)
        if sink is None or not sink.kept(event):
            host.nursery.start_soon(decide_kept, host, event)
        return
    if event.kind == "opened":
        sink = host.tasks.sink_for(event.opener)
        # A tab opened from the tab a task started in, while no call acts, is the
        # person's (a link they opened from the tab they shared): it joins no task.
        # Tabs the task's own tabs open join it, whenever they open.
        owners = [
            (session, task)
            for session, task in host.tasks.opened_from(event.opener)
            if sink is not None or event.opener != task.start
        ]
        added = [task.add(event.tab, event.opener, popup=event.popup) for _, task in owners]
        full = not all(added)
        if sink is not None:
            sink.opened(event, blocked=full)
        for _, task in owners:
            if event.tab in task:
                # The person sees the task's tabs as one group, named for it.
                host.nursery.start_soon(
                    name_task_group, host.hub, [t.tab for t in task], task.title
                )
        if full:
            host.nursery.start_soon(close_blocked, host, event)
        elif sink is None and event.waiting and owners:
            # A task's tab opened it outside any action (a pop-up's own pop-up, a
            # timer): nobody can be asked, so it may only go where the task may.
            host.nursery.start_soon(guard_unasked, host, event, owners[0][0])
        elif sink is None and event.waiting:
            # No task's tab opened it: it runs unguarded, like the page.
            host.nursery.start_soon(let_run, host, event.tab)
        return
    host.tasks.remove_tab(event.tab)
    if event.kind == "closed":
        for call in host.tasks.acting():
            call.closed(event.tab)
        # Calls waiting for its turn fail now, whoever's they are.
        host.turns.close(event.tab)
        host.tabs.forget(event.tab)


async def guard_unasked(host: HostState, event: TabEvent, session: str) -> None:
    """Guard a tab a task's tab opened outside any action until its first document
    request is decided by the site rules without asking anyone (a site the task may
    not use is refused, and the tab closed)."""
    task = host.tasks.get(session)
    call = ToolCall(session=session, tab=event.tab, name="open", client=task.title if task else "")

    async def nobody(question: Question) -> Answer:
        del question
        return Answer.unaskable("a page opened the tab outside the agent's actions")

    judge = request_judge(host.sites, call, nobody, granted=False)
    refused = False
    guard = Guarding(judge)
    with (
        trio.move_on_after(page_timeout()),
        contextlib.suppress(CDPError, TargetClosedError, DialogOpenError),
    ):
        activity = Activity("", guard=guard)
        async with guard_opened(host.hub.target(event.tab), activity) as opened:
            with trio.move_on_after(OPENED_WAIT):
                await opened.decided.wait()
            refused = opened.sent is False
    if refused:
        log.info("tab %d, opened outside an action, was refused: %s", event.tab, opened.why)
        with contextlib.suppress(CDPError, TargetClosedError):
            await host.hub.close_tab(event.tab)


async def decide_kept(host: HostState, event: TabEvent) -> None:
    """A gate kept a tab no acting call claims from its first document: one a task's tab
    opened (its call had ended) may load it only where the task may go, decided without
    asking anyone, else it is closed; any other tab is the person's and loads it."""
    owner = next((key for key, _ in host.tasks.opened_from(event.opener)), None)
    allowed = True
    if owner is not None:
        allowed = host.sites.verdict(owner, site_of(event.url)) == "allow"
    with (
        trio.move_on_after(page_timeout()),
        contextlib.suppress(CDPError, TargetClosedError, ValueError),
    ):
        if allowed:
            await host.hub.pass_tab(event.tab, event.url)
        else:
            log.info("tab %d, kept from %s outside an action, was closed", event.tab, event.url)
            await host.hub.close_tab(event.tab)


async def name_task_group(hub: TabRelayHub, tabs: list[int], title: str) -> None:
    # An extension that does not answer must not leave the request waiting forever.
    with (
        trio.move_on_after(page_timeout()),
        contextlib.suppress(CDPError, TargetClosedError, ValueError),
    ):
        await hub.tab_group(tabs, title or "Trimtab")


async def close_blocked(host: HostState, event: TabEvent) -> None:
    """Close a tab opened past the task's limit; one the browser holds is let run
    only with its requests failed (closing it as it waits could wait forever)."""
    with (
        trio.move_on_after(page_timeout()),
        contextlib.suppress(CDPError, TargetClosedError, DialogOpenError),
    ):
        if event.waiting:
            async with refusing_all(host.hub.target(event.tab)):
                await host.hub.close_tab(event.tab)
        else:
            await host.hub.close_tab(event.tab)


async def let_run(host: HostState, tab: int) -> None:
    with (
        trio.move_on_after(page_timeout()),
        contextlib.suppress(CDPError, TargetClosedError, DialogOpenError),
    ):
        await host.hub.target(tab).execute(cdp.runtime_run_if_waiting_for_debugger())
