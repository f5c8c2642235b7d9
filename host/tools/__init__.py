"""The agent's tools: look at the page, and act on it the way a person would.

The catalogue (`TOOLS`, `run_tool`) is assembled from small modules: navigation,
actions, queries and dialogs, each defining its tools' specs beside their code;
`_input` locates elements and sends trusted mouse and keyboard input (`_held`: a
pressed button is released even when the call is cancelled), `_frames` which frame
and site an element is in (for the envelope's site rules); the page-side
scripts are the ``.js`` files of ``js/`` (`_scripts`), each with the shared helpers it
asks for (`trimtab.tab.page_script`). Each tool is in a group (`TOOL_GROUPS`): clients
send the model the groups they enable (`parse_groups`, `tools_in`); `_devtools` holds
the devtools group's console and network reads.

May import `trimtab.tab`, `trimtab.tracker`, `trimtab.pipeline` and `pycdp_bridge`.
"""

from ._catalogue import TOOLS, may_commit, run_tool, tool_spec
from ._common import (
    ACTION_TIMEOUT,
    NAVIGATION_TIMEOUT,
    SETTLE_TIMEOUT,
    TOOL_GROUPS,
    ToolGroup,
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
    "TASK_TOOLS",
    "TOOLS",
    "TOOL_GROUPS",
    "ConsentNeeded",
    "ToolGroup",
    "ToolResult",
    "ToolSpec",
    "granted",
    "may_commit",
    "parse_groups",
    "run_tool",
    "tool_spec",
    "tools_in",
]
