"""Tool groups as clients choose them: names checked, and the catalogue cut to them.

Every tool's spec is sent on every model call, so a client sends the model the core
tools and only the groups it enabled (`TOOL_GROUPS`: core, pixels, devtools).
``trimtab mcp`` offers one group of its own beside them (`MCP_GROUPS`: routines).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from ._catalogue import TOOLS
from ._common import TOOL_GROUPS, ToolGroup, ToolSpec

__all__ = ["MCP_GROUPS", "ROUTINES_GROUP", "parse_groups", "parse_mcp_groups", "tools_in"]

# `trimtab mcp`'s own group. Its tools (list, run and save routines) relay the link's
# routine requests, as its `tabs` relays the link's listing: they are no page tool, no
# handler here runs them and the side panel's agent is not offered them, so they are
# not in the catalogue. Only the name is kept here, so that `--tools` checks every name
# it takes in one place, and the command line does so without importing the MCP SDK.
ROUTINES_GROUP: Final = "routines"
MCP_GROUPS: Final[tuple[str, ...]] = (*TOOL_GROUPS, ROUTINES_GROUP)


def parse_groups(names: Iterable[str]) -> tuple[ToolGroup, ...]:
    """The groups named (``core`` always among them), in `TOOL_GROUPS` order;
    ValueError naming every name that is not a group."""
    wanted = _wanted(names, TOOL_GROUPS)
    return tuple(group for group in TOOL_GROUPS if group in wanted or group == "core")


def parse_mcp_groups(names: Iterable[str]) -> tuple[str, ...]:
    """`parse_groups` for ``trimtab mcp --tools``: its own group may be named too, and
    comes after the catalogue's (`MCP_GROUPS` order)."""
    wanted = _wanted(names, MCP_GROUPS)
    return tuple(group for group in MCP_GROUPS if group in wanted or group == "core")


def _wanted(names: Iterable[str], groups: Sequence[str]) -> set[str]:
    wanted = {name.strip() for name in names if name.strip()}
    unknown = sorted(wanted.difference(groups))
    if unknown:
        raise ValueError(
            f"unknown tool group{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(repr(name[:40]) for name in unknown)}; "
            f"the groups are {', '.join(groups)}"
        )
    return wanted


def tools_in(groups: Iterable[str], specs: Iterable[ToolSpec] = TOOLS) -> tuple[ToolSpec, ...]:
    """The tools of these groups, in the catalogue's order (a door's own group holds
    none of them)."""
    chosen = frozenset(groups)
    return tuple(spec for spec in specs if spec.group in chosen)
