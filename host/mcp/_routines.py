"""The server's routine tools: list the person's routines, run one, save this session as one.

They are the server's own, as ``tabs`` is: each relays one of the link's routine
requests (``routines``, ``routine_run``, ``routine_save``), so they are not in the
catalogue the side panel's agent reads; ``--tools`` offers them as the group
``routines`` (``trimtab.tools.ROUTINES_GROUP``). Their arguments are checked against
their schemas here, with the catalogue's words, before anything leaves; a parameter's
value sent as a number is taken as its text, as the link does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs
import mcp_types as types

from ..tools import TAB, check_schema
from ._arguments import TAB_PROPERTY

__all__ = ["ROUTINE_TOOLS", "RoutineCall", "is_routine_tool", "routine_call", "routine_meta"]

_RUN: Final = "run_routine"

# Each word here is paid on every model call: each fact once, and only what a model
# needs before it calls (the answers say the rest: the list names each routine's
# parameters and which are needed, a run that needs help says what to do next).
ROUTINE_TOOLS: Final = (
    types.Tool(
        name="routines",
        description="List the routines the person saved (tasks done once, run again "
        "without a model) with their parameters.",
        input_schema={"type": "object", "properties": {}, "additionalProperties": False},
        annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
    ),
    types.Tool(
        name=_RUN,
        description="Run a saved routine in a tab.",
        input_schema={
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "params": {"type": "object", "additionalProperties": {"type": "string"}},
                "start_at": {"type": "integer", "minimum": 1},
                "keep_healed": {"type": "boolean"},
                TAB: dict(TAB_PROPERTY),
            },
            "required": ["name"],
            "additionalProperties": False,
        },
        # No hints: each one's default holds (it may submit, on any site).
    ),
    types.Tool(
        name="save_routine",
        description="Save your calls in this session so far as a routine.",
        input_schema={
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "task": {
                    "type": "string",
                    "description": "The person's words; values they name become parameters.",
                },
                "rename": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                    "description": "Parameter names: old to new.",
                },
                "replace": {"type": "boolean"},
            },
            "required": ["name"],
            "additionalProperties": False,
        },
        annotations=types.ToolAnnotations(destructive_hint=False, open_world_hint=False),
    ),
)
_SCHEMAS: Final[Mapping[str, Mapping[str, object]]] = {
    tool.name: tool.input_schema for tool in ROUTINE_TOOLS
}


@attrs.frozen
class RoutineCall:
    """One routine tool's call as a link request: its type and fields (``tab`` is the
    server's to add: `names_a_tab`)."""

    kind: str
    fields: Mapping[str, Any]
    names_a_tab: bool


def routine_call(name: str, arguments: Mapping[str, object], door: tuple[str, ...]) -> RoutineCall:
    """The link request for routine tool ``name`` called with ``arguments`` (the tab
    taken out: ``door``); `ArgumentError` naming an argument that does not fit."""
    given = dict(arguments)
    params = given.get("params")
    if isinstance(params, Mapping):
        # A model that writes a quantity as 3 means the text "3".
        given["params"] = {key: _as_text(value) for key, value in params.items()}
    check_schema(name, _SCHEMAS[name], given, door if name == _RUN else ())
    if name == "routines":
        return RoutineCall("routines", {}, names_a_tab=False)
    if name == _RUN:
        return RoutineCall("routine_run", given, names_a_tab=True)
    return RoutineCall("routine_save", given, names_a_tab=False)


def _as_text(value: object) -> object:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return value


def routine_meta(kind: str, reply: Mapping[str, Any]) -> dict[str, Any]:
    """What a routine tool's answer tells the client program (``_meta.trimtab``)."""
    if kind == "routines":
        return {"routines": reply.get("routines", [])}
    if kind == "routine_save":
        return {"file": reply.get("file")}
    meta = {key: reply.get(key) for key in ("status", "steps", "done", "at")}
    return meta | ({"kept": reply["kept"]} if reply.get("kept") else {})


def is_routine_tool(name: str) -> bool:
    """Whether ``name`` is one of the routine tools."""
    return name in _SCHEMAS
