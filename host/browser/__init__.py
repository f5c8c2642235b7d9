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

A tool call's stages, in order (``_tool_call``, `run_call`): `resolve` (the spec, the
task, the call's number, the tab it acts in); a task tool's handler on the task
(`TaskContext`), which ends the call; `refuse_first` (what this client may not do at
all); the tab's turn (`TabTurns`, ``_turns``: one call at a time per tab, in arrival
order; a call that would wait past ``TRIMTAB_TAB_WAIT``, 10 s, is told who holds the
tab); `open_page` (the held tab, its revision synced, the page's facts);
`check_where` (the site rules); `decide` (the envelope: runs without consent, asks,
runs again), each run `run_guarded` (the request guard, the downloads hold, the gates
of opened tabs, the tool's time bound, the tracker, the tool in the client's view,
which settles and answers with a snapshot or diff); `tell` (the notes the answer
adds); `outcome`.

Which state lives where:

- For the host's life (one extension connection), on `HostState`: the hub, the
  tracker (cached answers, call numbers), the person's site lists and each task's
  sites (`SitePolicy`), the browser's downloads, what each task typed and its trailing
  windows (``_set_off``), the held tabs (`OpenTabs`, ``_open_tabs``: per tab the agent's
  memory, each link client's view, the inspector's copy, the followers) and the tasks
  (`Tasks`, ``_task_tabs``: per session its tabs and current tab, and the calls acting
  in each tab now).
- For one call, passed from stage to stage in ``_tool_call``'s signatures: the
  resolved `ToolCall`, the held tab, the page's facts, each run's `Ran` (the tracked
  answer, what the guard held, the tabs it opened), the envelope's `Decided`, the
  answer's `Told`; a task tool's handler gets it all as its `TaskContext`.
- For one run of a tool in a tab, passed as arguments, never in context variables:
  `run_guarded` makes the run's request guard (`trimtab.tab.Guarding`, which also
  holds where the run's downloads are held, `Guarding.downloads`) and hands it to the
  tabs the run opens (`OpenedByCall`) and, with the person's yes to this one run, to
  `run_in_view`, whose ``Toolbox.run`` (``trimtab.tools.run_tool``) makes the run's
  `trimtab.tools.CallContext` (those two, the tab, and the remote objects to release)
  and hands it to the tool's handler and down to the driver.

Every call is noted for routines (``_routine_runs``): any session can be saved as one
(`HostState.save_routine`) and a routine runs as its caller's task
(`HostState.run_routine`); what the caller did for a step its run stopped at is kept
in the routine once the person says so (`HostState.keep_heal`).

Settings, read from the environment when used (``trimtab.wire.seconds_setting``):
``TRIMTAB_PAGE_TIMEOUT``, how long a page that does not answer is waited on (30 s,
``_errors``); ``TRIMTAB_TAB_WAIT``, a call's wait for its tab's turn (10 s);
``TRIMTAB_MAX_TABS``, the tabs a task keeps (10, ``_task_tabs``).

May import ``trimtab.wire``, ``trimtab.envelope``, ``trimtab.tab``, ``trimtab.tools``,
``trimtab.tracker``, ``trimtab.routines``, ``trimtab.pipeline``, ``trimtab.sites`` and
``pycdp_bridge``.
"""

from ._call import MAX_TAB, ToolCall, ToolOutcome, budget_of, check_tab_id, groups_of
from ._errors import PAGE_TIMEOUT, TOOL_TIMEOUT, cdp_errors
from ._listing import shown_tab, tabs_listing
from ._state import HIGHLIGHT_CONFIG, HostState, HostStateStatistics, open_host_state
from ._tab_messages import TAB_MESSAGE_TYPES, GateTurn, TabEvent, TabRelayHub
from ._task_calls import forget_seen
from ._toolbox import RunTool, Toolbox, read_format_page
from ._turns import TabTurns

__all__ = [
    "HIGHLIGHT_CONFIG",
    "MAX_TAB",
    "PAGE_TIMEOUT",
    "TAB_MESSAGE_TYPES",
    "TOOL_TIMEOUT",
    "GateTurn",
    "HostState",
    "HostStateStatistics",
    "RunTool",
    "TabEvent",
    "TabRelayHub",
    "TabTurns",
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
