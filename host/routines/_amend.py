"""A routine mended where a run needed help: the calls that did a step, kept in its place.

A run that cannot do step k as recorded stops there (``needs_help``); whoever runs the
routine (the side panel's model, an outside agent, the person with the tools) does that
step with tool calls and the run goes on from a later step. `heal_of` makes those calls
the steps that replace the ones skipped, as `routine_of` makes a session's: each
element as a person finds it again, the calls that failed and the detours left out
(the looks and finds that led to the element too: only actions are kept, and the reads
after the last one where a replaced step's answer was the routine's result). A value
the run was given is typed as that parameter's use again; a value typed into a secret
field is a secret parameter (a new one, never kept, when the run was given none); no
step keeps a secret's value. No step at all is a heal too: the cookie banner whose
button a step pressed is gone.

An `Amendment` names the steps it replaces by what they are, not only by their place:
`amend` finds them in the routine as it is now (another heal or an edit may have moved
them) and refuses, naming the step, when they are gone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import attrs

from ._format import (
    Parameter,
    Routine,
    RoutineError,
    Step,
    parameter_json,
    parse_parameter,
    parse_routine,
    parse_steps,
    steps_json,
)
from ._record import Parameters, Recorded, chosen_calls, replayed_calls, step_of

__all__ = ["Amendment", "amend", "amendment_of", "heal_of"]


@attrs.frozen
class Amendment:
    """Steps ``old`` of routine ``routine`` (from step ``at``, 0-based, in the routine
    as it ran) replaced by ``new``, which take the new ``parameters`` too."""

    routine: str
    at: int
    old: tuple[Step, ...]
    new: tuple[Step, ...]
    parameters: tuple[Parameter, ...] = ()

    def to_json(self) -> dict[str, object]:
        """The amendment in words, as a person confirms it: the steps it replaces and
        the steps it writes (``at`` counted from 1)."""
        return {
            "routine": self.routine,
            "at": self.at + 1,
            "old": [step.words() for step in self.old],
            "new": [step.words() for step in self.new],
            "parameters": [
                {"name": p.name, "kind": p.kind, "default": p.default, "about": p.about}
                for p in self.parameters
            ],
        }

    def to_data(self) -> dict[str, object]:
        """The amendment as a file keeps it (`amendment_of` reads it back): its steps as
        a routine's file writes them."""
        return {
            "routine": self.routine,
            "at": self.at,
            "old": steps_json(self.old),
            "new": steps_json(self.new),
            "parameters": [parameter_json(p) for p in self.parameters],
            # The parameters its steps use, declared in the routine or here.
            "uses": sorted({name for step in (*self.old, *self.new) for name in _uses(step)}),
        }


def amendment_of(data: object, *, where: str = "amendment") -> Amendment:
    """The amendment `Amendment.to_data` wrote; `RoutineError` naming the field or step
    that does not read."""
    if not isinstance(data, Mapping):
        raise RoutineError(f"{where}: {data!r:.60} is not an object")
    routine, at, uses = data.get("routine"), data.get("at"), data.get("uses", [])
    if not isinstance(routine, str) or not routine:
        raise RoutineError(f"{where}: field 'routine' = {routine!r:.60} is not a routine's name")
    if not isinstance(at, int) or isinstance(at, bool) or at < 0:
        raise RoutineError(f"{where}: field 'at' = {at!r:.40} is not a step's place")
    if not isinstance(uses, list) or not all(isinstance(name, str) for name in uses):
        raise RoutineError(f"{where}: field 'uses' = {uses!r:.60} is not a list of names")
    parameters = data.get("parameters", [])
    if not isinstance(parameters, list):
        raise RoutineError(f"{where}: field 'parameters' = {parameters!r:.60} is not a list")
    old = parse_steps(data.get("old"), f"{where}: field 'old'", uses)
    if not old:
        raise RoutineError(f"{where}: it replaces no step")
    return Amendment(
        routine,
        at,
        old,
        parse_steps(data.get("new"), f"{where}: field 'new'", uses),
        tuple(parse_parameter(p, f"{where}: parameter {i + 1}") for i, p in enumerate(parameters)),
    )


def heal_of(
    routine: Routine,
    at: int,
    end: int,
    calls: Sequence[Recorded],
    values: Mapping[str, str],
) -> Amendment:
    """The amendment that replaces steps ``at`` to ``end`` (0-based, ``end`` not
    included) of ``routine`` with what ``calls`` did, the run having been given
    ``values`` (by parameter); `RoutineError` naming what cannot be kept."""
    if not 0 <= at < end <= len(routine.steps):
        raise RoutineError(
            f"steps {at + 1} to {end} are not steps of routine {routine.name!r} "
            f"(1 to {len(routine.steps)})"
        )
    old = routine.steps[at:end]
    kept = replayed_calls(calls, f"the heal of step {at + 1}")
    # A replaced step whose answer was the result: the heal's reads after its last
    # action answer instead.
    chosen = chosen_calls(kept, reads=any(step.result for step in old))
    params = Parameters(
        routine.task, {}, found={p.name: p for p in routine.parameters}, given=values
    )
    new = tuple(step_of(call, params, result=result) for call, result in chosen)
    secrets = [values.get(p.name, "") for p in routine.parameters if p.kind == "secret"]
    for number, step in enumerate(new, start=1):
        if any(secret in _typed_text(step) for secret in secrets if secret):
            raise RoutineError(
                f"the heal's step {number} ({step.tool}) holds a secret's value; it is not kept"
            )
    known = {p.name for p in routine.parameters}
    added = tuple(p for p in params.declared() if p.name not in known)
    return Amendment(routine.name, at, old, new, added)


def _typed_text(step: Step) -> str:
    """What a step writes or sends, as text (its arguments and fields' values)."""
    values = [*step.args.values(), *(f.value for f in step.fields)]
    return json.dumps(
        [v for v in values if not (isinstance(v, Mapping) and "param" in v)], ensure_ascii=False
    )


def amend(routine: Routine, amendment: Amendment) -> Routine:
    """``routine`` with ``amendment``'s steps in place of the ones it replaces (found
    where it ran them, else wherever they now are, once), its new parameters declared,
    and the parameters no step uses any more left out; `RoutineError` naming the step
    when the routine no longer has those steps, or what would not read."""
    old, steps = amendment.old, routine.steps
    places = [i for i in range(len(steps) - len(old) + 1) if steps[i : i + len(old)] == old]
    if amendment.at in places:
        place = amendment.at
    elif len(places) == 1:
        place = places[0]
    else:
        how = "is no longer in it" if not places else f"is in it {len(places)} times"
        raise RoutineError(
            f"routine {routine.name!r} changed since that run: its step {amendment.at + 1} "
            f"as it ran ({old[0].words()[:80]}) {how}"
        )
    mended = steps[:place] + amendment.new + steps[place + len(old) :]
    if not mended:
        raise RoutineError(f"routine {routine.name!r} would have no step left")
    if not routine.start and mended[0].tool != "navigate":
        raise RoutineError(
            f"routine {routine.name!r} would start with {mended[0].tool}, on no page: "
            "its first step opens one"
        )
    declared = {p.name: p for p in routine.parameters}
    for parameter in amendment.parameters:
        if declared.setdefault(parameter.name, parameter) != parameter:
            raise RoutineError(
                f"routine {routine.name!r} has another parameter {parameter.name!r} now"
            )
    used = {name for step in mended for name in _uses(step)}
    dropped = {name for step in old for name in _uses(step)} - used
    parameters = tuple(p for p in declared.values() if p.name not in dropped)
    changed = attrs.evolve(routine, steps=mended, parameters=parameters)
    # As its file would read again: a parameter it uses that an edit renamed since.
    return parse_routine(changed.to_json(), where=f"routine {routine.name!r}")


def _uses(step: Step) -> list[str]:
    values = [*step.args.values(), *(f.value for f in step.fields)]
    return [str(v["param"]) for v in values if isinstance(v, Mapping) and "param" in v]
