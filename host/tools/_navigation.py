"""Tools that load a page: navigate, back, forward, reload, and a fresh look."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import trio

from pycdp_bridge import protocol as cdp

from ..driver import CallContext
from ..tab import Activity, Tab, settle
from ._common import (
    ACT,
    NAVIGATION_TIMEOUT,
    READS,
    BadArguments,
    ToolResult,
    churned,
    error,
    result,
    schema,
    text_arg,
    tool,
    unsettled,
)

__all__ = ["REVIVING", "back", "capture_snapshot", "forward", "navigate", "reload"]

# Tools that bring a crashed page back (the others refuse while it is crashed).
REVIVING = frozenset({"navigate", "reload"})

# Starts a load once the tab's activity is followed; returns an error text if the
# browser refused it, after waiting until the new document committed.
_Start = Callable[[Activity], Awaitable[str | None]]


async def _load(call: CallContext, start: _Start) -> ToolResult:
    """Start a load, wait for it to commit and settle, and answer with a baseline."""
    tab = call.tab
    async with call.watch() as activity:
        # The person's answer about a request of the load (a redirect to another site)
        # does not count against the load's time.
        with trio.move_on_after(NAVIGATION_TIMEOUT) as scope, call.waits_for_judge(scope):
            failure = await start(activity)
            if failure is not None:
                return error(failure)
            settled = await settle(tab.revisions, activity, scope.deadline - trio.current_time())
        if scope.cancelled_caught:
            settled = False
    return await _baseline(tab, settled, activity)


async def _baseline(tab: Tab, settled: bool, activity: Activity | None = None) -> ToolResult:
    notes = [None if settled else unsettled(NAVIGATION_TIMEOUT)]
    notes.append(churned(activity) if activity is not None else None)
    note = "; ".join(n for n in notes if n) or None
    return result(await tab.snapshot(baseline=True), note=note)


async def _revive(call: CallContext, command: cdp.Command[Any]) -> ToolResult:
    """Navigate or reload a crashed page: the browser starts a new renderer, which
    announces itself (``Inspector.targetReloadedAfterCrash``) before the page loads.
    Until then the tab answers nothing else, so the usual watch starts after it."""
    tab = call.tab
    target = tab.target
    with trio.move_on_after(NAVIGATION_TIMEOUT) as scope:
        wanted = {
            cdp.events.INSPECTOR_TARGET_RELOADED_AFTER_CRASH,
            cdp.events.PAGE_LOAD_EVENT_FIRED,
        }
        async with target.listen(*wanted) as events:
            reply: Mapping[str, Any] = await target.execute(command)
            if reply.get("errorText"):
                return error(f"could not load the page: {reply['errorText']}")
            async for event in events:
                wanted.discard(event.method)
                if not wanted:
                    break
        async with call.watch() as activity:
            settled = await settle(tab.revisions, activity, scope.deadline - trio.current_time())
    if scope.cancelled_caught:
        settled = False
    return await _baseline(tab, settled, activity)


@tool(
    "navigate",
    "Open an absolute URL in the tab; answers with the page once loaded.",
    schema({"url": {"type": "string"}}, ("url",)),
    ACT,
)
async def navigate(call: CallContext, args: Mapping[str, object]) -> ToolResult:
    tab = call.tab
    url = text_arg(args, "url")
    assert url is not None
    url = url.strip()
    if not url.startswith(("http://", "https://", "file:", "about:")):
        raise BadArguments(f"url must be absolute (http:// or https://); got {url!r}")
    if tab.target.crashed:
        return await _revive(call, cdp.page_navigate(url))

    async def start(activity: Activity) -> str | None:
        reply: Mapping[str, Any] = await tab.target.execute(cdp.page_navigate(url))
        if reply.get("errorText"):
            return f"could not load {url}: {reply['errorText']}"
        loader = reply.get("loaderId")
        if loader is not None:
            await activity.load_of(str(loader))
        return None

    return await _load(call, start)


async def _history(call: CallContext, step: int) -> ToolResult:
    target = call.tab.target
    history: Mapping[str, Any] = await target.execute(cdp.page_get_navigation_history())
    index = int(history["currentIndex"]) + step
    entries = history["entries"]
    if not 0 <= index < len(entries):
        where = "previous" if step < 0 else "next"
        return error(f"there is no {where} page in this tab's history")

    async def start(activity: Activity) -> str | None:
        commits = activity.commits
        await target.execute(cdp.page_navigate_to_history_entry(int(entries[index]["id"])))
        await activity.committed(commits)
        return None

    return await _load(call, start)


@tool("back", "Go back one page in the tab's history.", schema({}), ACT)
async def back(call: CallContext, args: Mapping[str, object]) -> ToolResult:
    return await _history(call, -1)


@tool("forward", "Go forward one page in the tab's history.", schema({}), ACT)
async def forward(call: CallContext, args: Mapping[str, object]) -> ToolResult:
    return await _history(call, +1)


@tool("reload", "Reload the page.", schema({}), ACT)
async def reload(call: CallContext, args: Mapping[str, object]) -> ToolResult:
    tab = call.tab
    if tab.target.crashed:
        return await _revive(call, cdp.page_reload())

    async def start(activity: Activity) -> str | None:
        commits = activity.commits
        await tab.target.execute(cdp.page_reload())
        await activity.committed(commits)
        return None

    return await _load(call, start)


@tool(
    "capture_snapshot",
    "The whole page as it is now (a baseline).",
    schema({}),
    READS,
)
async def capture_snapshot(call: CallContext, args: Mapping[str, object]) -> ToolResult:
    tab = call.tab
    return result(await tab.snapshot(baseline=True))
