"""The agent's tools: the catalogue of what the model may call, each a spec beside a
short handler that calls the driver (`trimtab.driver`).

The catalogue (`TOOLS`, `run_tool`) is assembled from one module per group of tools:
navigation, actions (click, type, press, select, check, hover, scroll), pointer
(double_click, drag, select_text, upload), queries, dialogs, pixels (`screenshot`),
devtools (console and network reads), evaluate, fill and the task's tabs; `_common`
holds what they share (specs, results, arguments, the answer after an action). The
page-side scripts of the tools themselves are the ``.js`` files of ``js/``
(`_scripts`). Each tool is in a group (`TOOL_GROUPS`): clients send the model the
groups they enable (`parse_groups`, `tools_in`; ``trimtab mcp`` has a group of its
own, `parse_mcp_groups`); `_arguments` checks a call's arguments against its tool's
schema, for the doors outside the browser (`check_schema`: a door's own tool).

Which state lives where. A handler gets the live call (`CallContext`, made for each
call by `run_tool` and gone with it): the tab it acts in, whether the person said yes
to this one call (``consented``; a yes never reaches another call), the call's request
guard (`trimtab.tab.Guarding`, the browser's, which `watch` puts on the action's
`trimtab.tab.Activity` for the settle and the tabs the action opens; it names the
element acted on for the person's questions) and whether the remote objects the call
made were released. What outlives a call is the tab's (`trimtab.tab.Tab`: its
snapshot memory, revisions, devtools log) or the host's (`trimtab.browser`: tasks,
trailing windows, downloads); the tools keep no state of their own.

May import `trimtab.driver`, `trimtab.tab`, `trimtab.tracker`, `trimtab.pipeline`,
`pycdp_bridge`, Pillow (`_pixels`: the screenshot's marks) and jsonschema
(`_arguments`).
"""

from ..driver import CallContext, ConsentNeeded, PredictedForm
from ._arguments import (
    TAB,
    ArgumentError,
    check_arguments,
    check_schema,
    door_schema,
    property_types,
)
from ._catalogue import TOOLS, may_commit, run_tool, tool_spec
from ._common import (
    ACTION_TIMEOUT,
    NAVIGATION_TIMEOUT,
    SETTLE_TIMEOUT,
    TOOL_GROUPS,
    ToolGroup,
    ToolImage,
    ToolResult,
    ToolSpec,
)
from ._groups import MCP_GROUPS, ROUTINES_GROUP, parse_groups, parse_mcp_groups, tools_in
from ._tabs import TASK_TOOLS

__all__ = [
    "ACTION_TIMEOUT",
    "MCP_GROUPS",
    "NAVIGATION_TIMEOUT",
    "ROUTINES_GROUP",
    "SETTLE_TIMEOUT",
    "TAB",
    "TASK_TOOLS",
    "TOOLS",
    "TOOL_GROUPS",
    "ArgumentError",
    "CallContext",
    "ConsentNeeded",
    "PredictedForm",
    "ToolGroup",
    "ToolImage",
    "ToolResult",
    "ToolSpec",
    "check_arguments",
    "check_schema",
    "door_schema",
    "may_commit",
    "parse_groups",
    "parse_mcp_groups",
    "property_types",
    "run_tool",
    "tool_spec",
    "tools_in",
]
