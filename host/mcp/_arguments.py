"""A tool call's arguments checked against the catalogue's schema, before the link.

The schemas say ``additionalProperties: false``: an argument the tool does not take
is refused by name rather than dropped, so a misspelt ``txt=`` never turns into a
call without its text. Shared by ``trimtab mcp`` and ``trimtab call``.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..tools import ToolSpec

__all__ = ["ArgumentError", "check_arguments", "property_types", "tab_id"]


class ArgumentError(ValueError):
    """Arguments that do not fit the tool's schema; the message names the bad one."""


def _properties(spec: ToolSpec) -> Mapping[str, object]:
    properties = spec.input_schema.get("properties", {})
    return properties if isinstance(properties, Mapping) else {}


def check_arguments(
    spec: ToolSpec, arguments: Mapping[str, object], also: tuple[str, ...] = ()
) -> None:
    """Refuse (ArgumentError) an argument that neither ``spec``'s schema nor ``also``
    (the door's own, such as MCP's ``tab``) names."""
    known = [*_properties(spec), *also]
    unknown = [name for name in arguments if name not in known]
    if unknown:
        takes = ", ".join(known) or "no arguments"
        raise ArgumentError(f"{spec.name} has no argument {unknown[0][:60]!r}; it takes: {takes}")


def property_types(spec: ToolSpec, name: str) -> frozenset[str]:
    """The JSON types ``spec``'s schema allows for argument ``name`` (empty: any)."""
    schema = _properties(spec).get(name)
    declared = schema.get("type") if isinstance(schema, Mapping) else None
    if isinstance(declared, str):
        return frozenset({declared})
    if isinstance(declared, list):
        return frozenset(str(kind) for kind in declared)
    return frozenset()


def tab_id(value: object) -> int:
    """A tab id: an integer, or the digits of one sent as a string (``"2085403875"``)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        return int(value.strip())
    raise ArgumentError(f"'tab' must be a tab id from `tabs`, not {value!r:.60}")
