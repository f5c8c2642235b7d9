"""Tool groups as clients choose them: names checked, and the catalogue cut to them.

Every tool's spec is sent on every model call, so a client sends the model the core
tools and only the groups it enabled (`TOOL_GROUPS`: core, pixels, devtools).
"""

from __future__ import annotations

from collections.abc import Iterable

from ._catalogue import TOOLS
from ._common import TOOL_GROUPS, ToolGroup, ToolSpec

__all__ = ["parse_groups", "tools_in"]


def parse_groups(names: Iterable[str]) -> tuple[ToolGroup, ...]:
    """The groups named (``core`` always among them), in `TOOL_GROUPS` order;
    ValueError naming every name that is not a group."""
    wanted = {name.strip() for name in names if name.strip()}
    unknown = sorted(wanted.difference(TOOL_GROUPS))
    if unknown:
        raise ValueError(
            f"unknown tool group{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(repr(name[:40]) for name in unknown)}; "
            f"the groups are {', '.join(TOOL_GROUPS)}"
        )
    return tuple(group for group in TOOL_GROUPS if group in wanted or group == "core")


def tools_in(
    groups: Iterable[ToolGroup], specs: Iterable[ToolSpec] = TOOLS
) -> tuple[ToolSpec, ...]:
    """The tools of these groups, in the catalogue's order."""
    chosen = frozenset(groups)
    return tuple(spec for spec in specs if spec.group in chosen)
