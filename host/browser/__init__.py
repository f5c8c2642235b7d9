"""The browser as the host holds it, and the typed entry point both doors call.

`HostState` holds the tabs a door has asked about (each a `trimtab.tab.Tab`, with one
view per outside client), each task's tabs (the tab it started in and those opened
from its tabs, `_task_tabs`; what an action opened is guarded and told, `_opened`),
one call tracker, and the tools (`Toolbox`). A tool call
comes in as a `ToolCall` and goes out as a `ToolOutcome`; in between it passes the
envelope (``trimtab.envelope``), which asks the person through the door's `Ask`.
`forget_seen` is how a client that dropped the pages it was shown from its context
(the side panel's agent, compacting) tells the host. `TabRelayHub` is the CDP relay
(``pycdp_bridge.RelayHub``) with the extension's own messages about tabs and gates
(`TabEvent`, `_tab_messages`).

May import ``trimtab.wire``, ``trimtab.envelope``, ``trimtab.tab``, ``trimtab.tools``,
``trimtab.tracker``, ``trimtab.pipeline``, ``trimtab.sites`` and ``pycdp_bridge``.
"""

from ._call import MAX_TAB, ToolCall, ToolOutcome, budget_of, check_tab_id, groups_of
from ._errors import PAGE_TIMEOUT, TOOL_TIMEOUT, cdp_errors
from ._listing import shown_tab, tabs_listing
from ._state import HIGHLIGHT_CONFIG, HostState, HostStateStatistics, open_host_state
from ._tab_messages import TAB_MESSAGE_TYPES, TabEvent, TabRelayHub
from ._task_calls import forget_seen
from ._toolbox import RunTool, Toolbox, read_format_page

__all__ = [
    "HIGHLIGHT_CONFIG",
    "MAX_TAB",
    "PAGE_TIMEOUT",
    "TAB_MESSAGE_TYPES",
    "TOOL_TIMEOUT",
    "HostState",
    "HostStateStatistics",
    "RunTool",
    "TabEvent",
    "TabRelayHub",
    "ToolCall",
    "ToolOutcome",
    "Toolbox",
    "budget_of",
    "cdp_errors",
    "check_tab_id",
    "forget_seen",
    "groups_of",
    "open_host_state",
    "read_format_page",
    "shown_tab",
    "tabs_listing",
]
