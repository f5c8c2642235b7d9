"""What a session did, kept call by call, and the routine made of it.

The host notes every call of every session (`Recording.note`): the tool, its
arguments, its elements as the session's snapshot showed them *before* the call (an
action may leave the page), the page before and after, and how it ended. `routine_of`
keeps what a replay needs: the calls that acted, and the reads after the last action
(the task's answer); failed or refused calls, page reads the replay takes itself
(snapshots, screenshots), and detours (a field typed twice, a page left with ``back``
before anything was done there) are left out.

A typed value becomes a parameter where the task's words named it; a value typed
into a secret field is always a parameter and never kept.

A call also keeps what the person's grants for the routine are about: the sites of
the frames of other sites it acted in, and, when it asked the person before a
submit, where the host predicted the form would go (`SubmitForm`, never the model's
words about it).
"""

from __future__ import annotations

import collections
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

import attrs

from ..sites import site_of
from ._format import (
    REPLAYED_TOOLS,
    FieldStep,
    Parameter,
    Routine,
    RoutineError,
    Step,
    Target,
)
from ._near import row_key
from ._pages import SubmitForm, url_pattern
from ._resolve import PageSeen, describe

__all__ = [
    "Parameters",
    "Recorded",
    "Recording",
    "chosen_calls",
    "element_ids",
    "replayed_calls",
    "routine_of",
    "step_of",
]

# Calls kept per session: a task longer than this is saved from its last calls.
KEPT_CALLS: Final = 500
# Tools whose answer a routine returns when they come after the last action.
_READS: Final = frozenset({"find", "expand", "read"})
# Actions a routine does not run: a session that used one is not saved without them
# (its other steps would act without the file or code it needed).
_NOT_REPLAYED: Final = frozenset({"upload", "evaluate"})
# The task's tabs tools a routine runs: steps whatever their answer said of side
# effects (a switch or a close finds its tab by title and page, `Step`).
_TAB_STEPS: Final = frozenset({"switch_tab", "new_tab", "close_tab"})
# Arguments that hold what is typed or chosen: a parameter's place.
_TYPED: Final = {"type": "text", "select": "value"}


@attrs.frozen
class Recorded:
    """One call as the session made it."""

    tool: str
    args: Mapping[str, object]
    # The elements it names (``id``, ``to``, fill's fields' ids) as the session's
    # latest snapshot described them before the call; a secret field's kind beside.
    targets: Mapping[str, Target]
    secrets: Mapping[str, str]
    page: str  # the URL before the call
    after: str  # the URL after it
    ok: bool  # it ran and the person did not refuse it
    acted: bool  # the tool changes the page (side effects)
    # The sites of the frames of other sites its elements were in.
    frames: tuple[str, ...] = ()
    # The form it submitted after asking the person, as the host predicted it.
    submit: SubmitForm | None = None
    # A switch_tab's: the title of the tab it went to; a close_tab's: of the tab it
    # closed (whose URL is ``page``).
    title: str = ""


@attrs.define
class Recording:
    """The calls of each session, newest last (`KEPT_CALLS` each), and how many of
    each session's calls were noted in all (`count`: a mark to take the calls since)."""

    calls: dict[str, collections.deque[Recorded]] = attrs.field(factory=dict)
    noted: dict[str, int] = attrs.field(factory=dict)

    def note(
        self,
        session: str,
        call: tuple[str, Mapping[str, object]],
        seen: PageSeen,
        after: str,
        *,
        ok: bool,
        acted: bool,
        form: tuple[str, str] | None = None,
        title: str = "",
    ) -> None:
        """Keep one call of ``session``: its tool and arguments, the page it was made
        against (``seen``: the session's latest look) and the URL it left the tab on;
        ``form``: the action URL and method of the form the host predicted it would
        submit, when it asked the person before a submit; ``title``: a switch_tab's,
        the title of the tab it went to (``after`` is that tab's URL); a close_tab's,
        of the tab it closed (``seen`` is that tab's page)."""
        tool, args = call
        ids = element_ids(tool, args)
        targets = {eid: t for eid in ids if (t := describe(eid, seen)) is not None}
        controls = seen.controls
        secrets = {eid: controls[eid].secret_kind for eid in targets if controls[eid].secret_kind}
        page = site_of(seen.url)
        frames = {
            str(site)
            for eid in targets
            if controls[eid].frame != 0
            and controls[eid].frame_url
            and not (site := site_of(controls[eid].frame_url)).opaque
            and site != page
        }
        kept = self.calls.setdefault(session, collections.deque(maxlen=KEPT_CALLS))
        recorded = Recorded(
            tool,
            dict(args),
            targets,
            secrets,
            seen.url,
            after,
            ok=ok,
            acted=acted,
            frames=tuple(sorted(frames)),
            submit=SubmitForm.predicted(*form) if form is not None else None,
            title=title,
        )
        kept.append(recorded)
        self.noted[session] = self.noted.get(session, 0) + 1

    def of(self, session: str) -> Sequence[Recorded]:
        return tuple(self.calls.get(session, ()))

    def count(self, session: str) -> int:
        """How many calls of ``session`` were noted so far (kept or not)."""
        return self.noted.get(session, 0)

    def since(self, session: str, mark: int) -> Sequence[Recorded]:
        """The calls of ``session`` noted after its `count` was ``mark``;
        `RoutineError` when some of them are no longer kept."""
        made = self.count(session) - mark
        kept = self.of(session)
        if made > len(kept):
            raise RoutineError(
                f"{made} calls were made since then, more than the {KEPT_CALLS} kept"
            )
        return kept[len(kept) - made :] if made > 0 else ()

    def forget(self, session: str) -> None:
        self.calls.pop(session, None)
        self.noted.pop(session, None)


def element_ids(tool: str, args: Mapping[str, object]) -> list[str]:
    """The element ids a call of ``tool`` names (``id``, ``to``, fill's fields')."""
    ids = [args.get("id"), args.get("to")]
    fields = args.get("fields") if tool == "fill" else None
    if isinstance(fields, list):
        ids += [f.get("id") for f in fields if isinstance(f, Mapping)]
    return [eid for eid in ids if isinstance(eid, str)]


# -- a routine from what a session did ---------------------------------------------------


def routine_of(
    calls: Sequence[Recorded],
    name: str,
    task: str = "",
    rename: Mapping[str, str] | None = None,
) -> Routine:
    """The routine ``calls`` make (see the module), named ``name``; ``task`` is the
    task's words (a typed value it names becomes a parameter), ``rename`` renames
    parameters (old name → new). `RoutineError` when nothing is left to replay."""
    chosen = chosen_calls(replayed_calls(calls, f"routine {name!r}: the session"), reads=True)
    if not chosen:
        raise RoutineError(
            f"routine {name!r}: the session did nothing a routine can repeat "
            "(no action or read succeeded)"
        )
    task = _without_secrets(task, calls)
    params = Parameters(task, rename or {})
    steps = tuple(step_of(call, params, result=result) for call, result in chosen)
    kept = [call for call, _ in chosen]
    first = kept[0]
    return Routine(
        name=name,
        steps=steps,
        start="" if first.tool == "navigate" else first.page,
        task=task,
        parameters=params.declared(),
    )


def replayed_calls(calls: Sequence[Recorded], who: str) -> list[Recorded]:
    """The calls of ``calls`` a routine repeats: those that succeeded, of the tools a
    routine runs, less detours; `RoutineError` when one used a tool a routine does not
    run (``who`` made the calls, for the message)."""
    unreplayed = next((c.tool for c in calls if c.ok and c.tool in _NOT_REPLAYED), None)
    if unreplayed is not None:
        raise RoutineError(
            f"{who} used {unreplayed}, which a routine does not run "
            "(it acts on what a replay cannot repeat as recorded)"
        )
    return _without_detours([c for c in calls if c.ok and c.tool in REPLAYED_TOOLS])


def chosen_calls(kept: Sequence[Recorded], *, reads: bool) -> list[tuple[Recorded, bool]]:
    """The calls of ``kept`` that become steps, each with whether its answer is the
    result: every action, every step of the task's tabs (where the next steps act;
    after the last action a switch's or a new tab's answer, the tab's page, is read)
    and, with ``reads``, the reads after the last action (the task's answer)."""
    last_action = max((i for i, c in enumerate(kept) if c.acted), default=-1)
    return [
        (call, reads and i > last_action and call.tool != "close_tab")
        for i, call in enumerate(kept)
        if call.acted
        or call.tool in _TAB_STEPS
        or (reads and i > last_action and call.tool in _READS)
    ]


def _without_secrets(task: str, calls: Sequence[Recorded]) -> str:
    """The task's words without a secret the session typed (a person may have written
    the password into the task: the file keeps no secret)."""
    for call in calls:
        for eid in call.secrets:
            typed = [call.args.get("text"), call.args.get("value")]
            typed += [f.get("value") for f in _fields(call) if f.get("id") == eid]
            for value in typed:
                if isinstance(value, str) and value.strip():
                    task = task.replace(value, "(secret)")
    return task


def _without_detours(calls: list[Recorded]) -> list[Recorded]:
    """``calls`` less what was undone: a page left with ``back`` with nothing done on
    it, and a field typed again (the last value is the one that counted)."""
    kept: list[Recorded] = []
    for call in calls:
        went = kept[-1] if kept and kept[-1].tool in ("navigate", "click") else None
        # (a click that stayed on its page did something there: it is kept)
        if call.tool == "back" and went is not None and went.page == call.after != went.after:
            kept.pop()  # went there and came straight back
            continue
        if call.tool == "type" and call.args.get("clear", True) is not False and kept:
            previous = kept[-1]
            if previous.tool == "type" and previous.targets.keys() == call.targets.keys():
                kept.pop()
        kept.append(call)
    return kept


@attrs.define
class Parameters:
    """The parameters a routine's steps declare, as they are met (``found``: those
    declared so far, a routine's own when its steps are mended)."""

    task: str
    rename: Mapping[str, str]
    found: dict[str, Parameter] = attrs.field(factory=dict)
    # The values a run was given, by parameter: typed again, each is that parameter's
    # use (a step a run needed help with, done with the run's values).
    given: Mapping[str, str] = attrs.field(factory=dict)

    def value(self, value: object, target: Target, secret: str) -> object:
        """What a step writes for ``value`` typed into ``target``: the value itself, or
        a parameter's use when it is a value the run was given, a secret, or the task's
        words name it."""
        if isinstance(value, str) and value and (name := self._given(value, target, secret)):
            return {"param": name}
        if secret:
            return self._declare(target, Parameter("", "secret", None, target.words()), secret)
        if isinstance(value, str) and value.strip() and _names(self.task, value):
            return self._declare(target, Parameter("", "text", value, target.words()))
        return value

    def _declare(self, target: Target, parameter: Parameter, kind: str = "") -> dict[str, str]:
        for name, known in self.found.items():
            if attrs.evolve(known, name="") == parameter:
                return {"param": name}  # the same value into the same field again
        # Named as a person names the field: its name, else the words before it on
        # its line (an unlabelled field after "User ID :"), else its kind of secret.
        base = _slug(target.name) or _slug(row_key(target.near)) or _slug(kind) or "value"
        base = self.rename.get(base, base)
        name, n = base, 1
        while name in self.found:
            n += 1
            name = f"{base}_{n}"
        self.found[name] = attrs.evolve(parameter, name=name)
        return {"param": name}

    def _given(self, value: str, target: Target, secret: str) -> str | None:
        """The parameter the run was given ``value`` for (one about ``target`` first);
        into a secret field, only a secret one (a text's value is kept in the file)."""
        names = [
            name
            for name, known in self.given.items()
            if known == value
            and (p := self.found.get(name)) is not None
            and (p.kind == "secret" or not secret)
        ]
        about = [n for n in names if self.found[n].about == target.words()]
        return next(iter(about or names), None)

    def declared(self) -> tuple[Parameter, ...]:
        return tuple(self.found.values())


def _names(task: str, value: str) -> bool:
    """Whether the task's words hold ``value`` as words of their own."""
    pattern = r"(?<!\w)" + re.escape(value.strip()) + r"(?!\w)"
    return re.search(pattern, task, re.IGNORECASE) is not None


def _slug(text: str) -> str:
    return "_".join(re.findall(r"[a-z0-9]+", text.casefold()))[:40]


def step_of(call: Recorded, params: Parameters, *, result: bool) -> Step:
    """The step ``call`` makes: its elements as targets, its typed values as
    ``params`` says (`Parameters.value`); `RoutineError` when an element it names
    was not in the snapshot it was called on."""

    def target(eid: object) -> Target | None:
        return call.targets.get(eid) if isinstance(eid, str) else None

    args = {k: v for k, v in call.args.items() if k not in ("id", "to", "fields", "tab")}
    own = target(call.args.get("id"))
    typed = _TYPED.get(call.tool)
    if own is not None and typed in args:
        secret = call.secrets.get(str(call.args.get("id")), "")
        args[typed] = params.value(args[typed], own, secret)
    fields: list[FieldStep] = []
    for raw in _fields(call):
        field = target(raw.get("id"))
        if field is None:
            raise RoutineError(
                f"fill's field {raw.get('id')!r:.20} was not in the snapshot it was called on"
            )
        secret = call.secrets.get(str(raw.get("id")), "")
        fields.append(FieldStep(field, params.value(raw.get("value"), field, secret)))
    for key in ("id", "to"):
        if key in call.args and target(call.args[key]) is None:
            raise RoutineError(
                f"{call.tool}'s {key} {call.args[key]!r:.20} was not in the snapshot it was "
                "called on"
            )
    return Step(
        tool=call.tool,
        page=url_pattern(call.page) if call.page else "",
        after=url_pattern(call.after) if call.after else "",
        target=own,
        to=target(call.args.get("to")),
        fields=tuple(fields),
        args=args,
        result=result,
        frames=call.frames,
        submits=call.submit,
        title=call.title,
    )


def _fields(call: Recorded) -> Iterable[Mapping[str, object]]:
    fields = call.args.get("fields") if call.tool == "fill" else None
    return [f for f in fields if isinstance(f, Mapping)] if isinstance(fields, list) else []
