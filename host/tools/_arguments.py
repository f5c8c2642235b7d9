"""A call's arguments checked against its tool's schema before anything runs.

Every outside door checks them the same way: ``trimtab call`` and ``trimtab mcp``
before they send a call, the link before the host runs it. The schemas are the ones
the model is given, so what is refused is exactly what they say: a missing argument,
one the tool does not take (``additionalProperties: false``: a misspelt ``txt=`` is
named, never dropped), a value of the wrong type, out of range or not in its list.
`jsonschema` decides; the message is Trimtab's own words naming the argument and the
value at fault, so a door shows it as its own, outside the untrusted block.

The tab a call acts on is the door's: ``trimtab mcp`` and ``trimtab call`` take it
beside the tool's arguments (``tab``, ``--tab``), the link in the request, and each
falls back to the only shared tab. So ``tab`` is never required here, even by
``close_tab``, whose own schema names it (`door_schema`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from ._common import ToolSpec

__all__ = [
    "TAB",
    "ArgumentError",
    "check_arguments",
    "check_schema",
    "door_schema",
    "property_types",
]

TAB: Final = "tab"
"""The argument naming the tab a call acts on, which every door supplies when absent."""


class ArgumentError(ValueError):
    """Arguments that do not fit the tool's schema; the message names the bad one."""


def door_schema(spec: ToolSpec) -> dict[str, object]:
    """``spec``'s schema as a door offers it: ``tab`` is never required (the door
    names the tab, or it is the only shared one)."""
    schema = dict(spec.input_schema)
    required = [name for name in _names(schema.get("required")) if name != TAB]
    schema.pop("required", None)
    if required:
        schema["required"] = required
    return schema


def _names(value: object) -> list[str]:
    return [str(name) for name in value] if isinstance(value, list | tuple) else []


def _properties(spec: ToolSpec) -> Mapping[str, object]:
    properties = spec.input_schema.get("properties", {})
    return properties if isinstance(properties, Mapping) else {}


def check_arguments(
    spec: ToolSpec, arguments: Mapping[str, object], door: tuple[str, ...] = ()
) -> None:
    """Refuse (ArgumentError) ``arguments`` unless they fit ``spec``'s schema as a door
    offers it (`door_schema`); the message names the first argument at fault, and what
    the tool takes, with ``door``: the arguments the door took out before (MCP's tab)."""
    check_schema(spec.name, door_schema(spec), arguments, door)


def check_schema(
    tool: str,
    schema: Mapping[str, object],
    arguments: Mapping[str, object],
    door: tuple[str, ...] = (),
) -> None:
    """`check_arguments` for a tool of a door's own (not in the catalogue), by its name
    and its ``schema``."""
    properties = schema.get("properties", {})
    known = list(properties) if isinstance(properties, Mapping) else []
    unknown = [name for name in arguments if name not in known]
    if unknown:
        takes = ", ".join(dict.fromkeys([*known, *door])) or "no arguments"
        raise ArgumentError(f"{tool} has no argument {unknown[0][:60]!r}; it takes: {takes}")
    missing = [name for name in _names(schema.get("required")) if name not in arguments]
    if missing:
        needs = ", ".join(_names(schema.get("required")))
        raise ArgumentError(f"{tool} needs the argument {missing[0]!r} (it needs: {needs})")
    error = best_match(Draft202012Validator(schema).iter_errors(dict(arguments)))
    if error is not None:
        raise ArgumentError(f"{tool}'s {_where(error.absolute_path)} {_why(error)}")


def _where(path: Iterable[object]) -> str:
    """``fields[0].value``: the argument, and the place inside it, at fault."""
    where = ""
    for step in path:
        where += f"[{step}]" if isinstance(step, int) else f".{step}" if where else str(step)
    return where or "arguments"


def _shown(value: object) -> str:
    return f"{value!r:.60}"


def _why(error: ValidationError) -> str:
    """What is wrong with the value, in the schema's terms."""
    expected: Any = error.validator_value
    value = error.instance
    if error.validator == "type":
        kinds = [expected] if isinstance(expected, str) else list(expected)
        return f"must be {' or '.join(map(_kind, kinds))}, not {_shown(value)}"
    if error.validator == "enum":
        return f"must be one of {', '.join(map(repr, expected))}, not {_shown(value)}"
    if error.validator in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        bound = {
            "minimum": "at least",
            "exclusiveMinimum": "more than",
            "maximum": "at most",
            "exclusiveMaximum": "less than",
        }[str(error.validator)]
        return f"must be {bound} {expected}, not {_shown(value)}"
    if error.validator == "minItems":
        return f"must hold at least {expected} item(s)"
    if error.validator == "maxItems":
        return f"must hold at most {expected} items, not {len(value)}"
    if error.validator == "required":
        wanted = [name for name in _names(expected) if name not in value]
        return f"must have {', '.join(map(repr, wanted))}"
    if error.validator == "additionalProperties":
        allowed = error.schema.get("properties", {}) if isinstance(error.schema, Mapping) else {}
        extra = [name for name in value if name not in allowed]
        return f"has no {', '.join(map(repr, extra))}; it takes: {', '.join(allowed)}"
    return f"= {_shown(value)} does not fit: {error.message[:200]}"


_KINDS: Final[Mapping[str, str]] = {
    "string": "text",
    "boolean": "true or false",
    "integer": "a whole number",
    "number": "a number",
    "array": "a list",
    "object": "an object",
}


def _kind(name: str) -> str:
    return _KINDS.get(name, name)


def property_types(spec: ToolSpec, name: str) -> frozenset[str]:
    """The JSON types ``spec``'s schema allows for argument ``name`` (empty: any)."""
    schema = _properties(spec).get(name)
    declared = schema.get("type") if isinstance(schema, Mapping) else None
    if isinstance(declared, str):
        return frozenset({declared})
    if isinstance(declared, list):
        return frozenset(str(kind) for kind in declared)
    return frozenset()
