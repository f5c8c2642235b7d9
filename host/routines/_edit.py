"""A routine's names and parameters as the person edits them from the Routines list.

The routine may be renamed (its file follows: `RoutineStore.rewrite`), a parameter
renamed (every step that uses it follows), a text parameter's default and any
parameter's description changed. A secret parameter never gets a default: it is asked
at each run and never kept. What is wrong is refused before anything changes, naming
the value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

import attrs

from ._amend import Amendment
from ._format import FieldStep, Parameter, Routine, RoutineError, Step, parse_routine
from ._store import file_stem

__all__ = ["MAX_ROUTINE_NAME", "edit_routine", "edited_amendment"]

#: The longest routine name (the side panel's and the link's limit).
MAX_ROUTINE_NAME: Final = 100
# A parameter's name: what ``trimtab run NAME key=value`` and a model's ``params`` use.
_PARAMETER_NAME: Final = re.compile(r"[\w-]{1,60}")
_MAX_ABOUT: Final = 300
_FIELDS: Final = ("name", "default", "about")


def edit_routine(
    routine: Routine,
    *,
    name: str | None = None,
    parameters: Mapping[str, Mapping[str, object]] | None = None,
) -> Routine:
    """``routine`` renamed ``name`` (None: as it is) with its ``parameters`` changed
    (each parameter's name → its changed fields: ``name``, ``default`` (None: none,
    the run must give it), ``about``); `RoutineError` naming the bad value."""
    if name is not None:
        name = _routine_name(name)
    changes = dict(parameters or {})
    known = {p.name for p in routine.parameters}
    unknown = sorted(set(changes) - known)
    if unknown:
        listed = ", ".join(p.name for p in routine.parameters) or "none"
        raise RoutineError(
            f"routine {routine.name!r} has no parameter {unknown[0]!r} (its parameters: {listed})"
        )
    edited = tuple(_parameter(p, changes.get(p.name, {})) for p in routine.parameters)
    names = [p.name for p in edited]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        raise RoutineError(f"two parameters would be called {twice!r}: give each its own name")
    renamed = {old.name: new.name for old, new in zip(routine.parameters, edited, strict=True)}
    steps = tuple(_step(step, renamed) for step in routine.steps)
    changed = attrs.evolve(
        routine, name=routine.name if name is None else name, parameters=edited, steps=steps
    )
    return parse_routine(changed.to_json(), where=f"routine {changed.name!r}")


def edited_amendment(amendment: Amendment, before: Routine, after: Routine) -> Amendment:
    """``amendment`` of routine ``before`` as it reads once the person edited the
    routine into ``after`` (`edit_routine`): the routine's new name, and each
    parameter the routine declared by its new name in the steps it replaces and writes,
    so that `amend` finds those steps in the edited routine."""
    renamed = {
        old.name: new.name for old, new in zip(before.parameters, after.parameters, strict=True)
    }
    return attrs.evolve(
        amendment,
        routine=after.name,
        old=tuple(_step(step, renamed) for step in amendment.old),
        new=tuple(_step(step, renamed) for step in amendment.new),
    )


def _routine_name(name: object) -> str:
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_ROUTINE_NAME:
        raise RoutineError(
            f"routine name {name!r:.60} is not a name of 1 to {MAX_ROUTINE_NAME} characters"
        )
    file_stem(name)  # it names a file: a letter or a digit
    return " ".join(name.split())


def _parameter(parameter: Parameter, change: Mapping[str, object]) -> Parameter:
    where = f"parameter {parameter.name!r}"
    if not isinstance(change, Mapping):
        raise RoutineError(f"{where}: the change {change!r:.60} is not an object")
    extra = sorted(set(change) - set(_FIELDS))
    if extra:
        raise RoutineError(
            f"{where}: {extra[0]!r:.40} is not one of its fields ({', '.join(_FIELDS)})"
        )
    name = change.get("name", parameter.name)
    if name != parameter.name and (
        not isinstance(name, str) or not _PARAMETER_NAME.fullmatch(name)
    ):
        raise RoutineError(
            f"{where}: new name {name!r:.60} is not a name (1 to 60 letters, digits, _ or -)"
        )
    assert isinstance(name, str)
    default = change.get("default", parameter.default)
    if default is not None:
        if parameter.kind == "secret":
            raise RoutineError(
                f"{where} is a secret: it never has a default (it is asked at each run, never kept)"
            )
        if not isinstance(default, str) or len(default) > 10_000:
            raise RoutineError(f"{where}: default {default!r:.60} is not a text")
    about = change.get("about", parameter.about)
    if not isinstance(about, str) or len(about) > _MAX_ABOUT:
        raise RoutineError(
            f"{where}: description {about!r:.60} is not a text of at most {_MAX_ABOUT} characters"
        )
    return attrs.evolve(parameter, name=name, default=default, about=" ".join(about.split()))


def _step(step: Step, renamed: Mapping[str, str]) -> Step:
    """``step`` using each parameter by its new name."""
    args = {key: _value(value, renamed) for key, value in step.args.items()}
    fields = tuple(FieldStep(f.target, _value(f.value, renamed)) for f in step.fields)
    return attrs.evolve(step, args=args, fields=fields)


def _value(value: object, renamed: Mapping[str, str]) -> object:
    if isinstance(value, Mapping) and "param" in value:
        return {"param": renamed.get(str(value["param"]), str(value["param"]))}
    return value
