"""The task's tabs as tools: list them, switch, open and close one.

These tools act on the task (which tabs it owns, which one the agent is on), which
only the host holds (``trimtab.browser``): their specs are here, in the catalogue, like
every tool's, marked `ToolSpec.on_task`, and the host runs them with a handler that
takes the task (with the site rules for a new tab's URL and every request of its load,
redirects included). Run on a bare tab (the command line, tests of tools) they say
they need the host. A door whose every call names its tab (MCP) lists tabs itself and
has no use for `switch_tab` (`ToolSpec.where_calls_name_a_tab`).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..driver import CallContext
from ..tracker import ToolPolicy
from ._common import ACT, ToolResult, error, schema, tool

__all__ = ["TASK_TOOLS", "close_tab", "new_tab", "switch_tab", "tabs"]

_TAB_SCHEMA: Mapping[str, object] = {"type": "integer"}
# Listing the tabs reads the browser, not a page: never answered from the cache.
_LISTS = ToolPolicy(reads_page=True, volatile=True)


async def _needs_the_host(call: CallContext, args: Mapping[str, object]) -> ToolResult:
    del call, args
    return error("this tool works on a task's tabs, which only the Trimtab host holds")


tabs = tool(
    "tabs",
    "The task's tabs.",
    schema({}),
    _LISTS,
    on_task=True,
    where_calls_name_a_tab=False,
)(_needs_the_host)
switch_tab = tool(
    "switch_tab",
    "Act in this tab.",
    schema({"tab": _TAB_SCHEMA}, ("tab",)),
    ACT,
    on_task=True,
    where_calls_name_a_tab=False,
)(_needs_the_host)
new_tab = tool(
    "new_tab",
    "Act in a new tab at this URL.",
    schema({"url": {"type": "string"}}, ("url",)),
    ACT,
    on_task=True,
)(_needs_the_host)
close_tab = tool(
    "close_tab",
    "Close a tab.",
    schema({"tab": _TAB_SCHEMA}, ("tab",)),
    ACT,
    on_task=True,
)(_needs_the_host)

TASK_TOOLS = frozenset(t.spec.name for t in (tabs, switch_tab, new_tab, close_tab))
