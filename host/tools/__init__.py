"""The agent's tools: look at the page, and act on it the way a person would.

The catalogue (`TOOLS`, `run_tool`) is assembled from small modules: navigation,
actions, queries, dialogs and pixels (`screenshot`), each defining its tools' specs
beside their code;
`_input` locates elements and sends trusted mouse and keyboard input (`_button`: a
pressed button is released even when the call is cancelled), `_frames` which frame
and site an element is in (for the envelope's site rules); the page-side
scripts are the ``.js`` files of ``js/`` (`_scripts`), each with the shared helpers it
asks for (`trimtab.tab.page_script`). Each tool is in a group (`TOOL_GROUPS`): clients
send the model the groups they enable (`parse_groups`, `tools_in`); `_devtools` holds
the devtools group's console and network reads; `_arguments` checks a call's
arguments against its tool's schema, for the doors outside the browser.

May import `trimtab.tab`, `trimtab.tracker`, `trimtab.pipeline`, `pycdp_bridge`,
Pillow (`_pixels`: the screenshot's marks) and jsonschema (`_arguments`).
"""

from ._arguments import TAB, ArgumentError, check_arguments, door_schema, property_types
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
from ._consent import ConsentNeeded, granted
from ._groups import parse_groups, tools_in
from ._tabs import TASK_TOOLS

__all__ = [
    "ACTION_TIMEOUT",
    "NAVIGATION_TIMEOUT",
    "SETTLE_TIMEOUT",
    "TAB",
    "TASK_TOOLS",
    "TOOLS",
    "TOOL_GROUPS",
    "ArgumentError",
    "ConsentNeeded",
    "ToolGroup",
    "ToolImage",
    "ToolResult",
    "ToolSpec",
    "check_arguments",
    "door_schema",
    "granted",
    "may_commit",
    "parse_groups",
    "property_types",
    "run_tool",
    "tool_spec",
    "tools_in",
]
