"""A routine as values, and its file: JSON a person can read and edit (host/ROUTINES.md).

Every value a step types is either written in the file or a parameter, named where the
step uses it as ``{"param": "quantity"}``: a value given when the routine runs. A
secret field's value (a password, a card, a one-time code) is always a parameter with
no default, so it is never in the file. Reading a file checks every field and names
the step and the field a problem is in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final, Literal

import attrs

from ..sites import SiteError, parse_site
from ._pages import SubmitForm

__all__ = [
    "REPLAYED_TOOLS",
    "ROUTINE_VERSION",
    "FieldStep",
    "Parameter",
    "Routine",
    "RoutineError",
    "Step",
    "Target",
    "parameter_json",
    "parse_parameter",
    "parse_routine",
    "parse_steps",
    "steps_json",
]

# The file format's version; a file of a newer one is refused, naming it.
ROUTINE_VERSION: Final = 1

# The tools a step may call: those that act on the page as a person would, and the
# reads whose answer is a routine's result, and the task's tabs tools but ``tabs`` (a
# tab is named by its title and page, not its number). Not: evaluate (code is asked
# about each time anyway), upload (files of one day), screenshots.
REPLAYED_TOOLS: Final = frozenset(
    {
        "navigate", "back", "forward", "reload", "answer_dialog", "click", "double_click",
        "type", "press", "select", "check", "hover", "drag", "select_text", "scroll",
        "fill", "find", "expand", "read", "wait_for", "switch_tab", "new_tab", "close_tab",
    }
)  # fmt: skip

# A step's argument value: JSON as the tool takes it, or a parameter's name.
ArgValue = object
_MAX_TEXT: Final = 10_000


class RoutineError(ValueError):
    """A routine that cannot be read or run as written; the message names the step."""


@attrs.frozen
class Target:
    """An element as a person finds it again: what it is, its name, where it stands,
    and which of its equals it was (``ordinal`` of ``among`` alike there)."""

    role: str
    name: str
    tag: str = ""
    type: str = ""
    region: str = ""
    heading: str = ""
    ordinal: int = 0
    among: int = 1
    near: str = ""  # the text beside it on its line (`near_texts`): its row, say

    def words(self) -> str:
        """The element as a person names it: ``the button "Pay" (region main)``."""
        what = self.role or self.tag or "element"
        where = [f"region {self.region}"] if self.region else []
        if self.heading:
            where.append(f"under {self.heading!r}")
        if self.near:
            where.append(f"beside {self.near[:60]!r}")
        if self.among > 1:
            where.append(f"{_ordinal(self.ordinal)} of {self.among} alike")
        said = f"the {what} {self.name!r}" if self.name else f"the unnamed {what}"
        return f"{said} ({', '.join(where)})" if where else said


@attrs.frozen
class FieldStep:
    """One field of a ``fill`` step: the field and what goes into it."""

    target: Target
    value: ArgValue


@attrs.frozen
class Parameter:
    """A value given when the routine runs: ``default`` unless the run names another
    (None: the run must give it); a secret never has one."""

    name: str
    kind: Literal["text", "secret"] = "text"
    default: str | None = None
    about: str = ""  # the field it goes into, in words


@attrs.frozen
class Step:
    """One tool call of the routine: the tool, its elements as a person finds them,
    its other arguments, the page it acts on and the page it leaves the tab on
    (patterns, `url_pattern`), and whether its answer is the routine's result.

    ``frames``: the sites of the frames of other sites its elements were in;
    ``submits``: the form it submitted when it was recorded, as the host predicted it
    before asking the person (`SubmitForm`), for the person's "don't ask again".
    A ``switch_tab`` step names its tab as a person picks it from the tab strip: the
    tab's ``title`` and its page (``after``), never its number, which differs each run;
    a ``close_tab`` step names the tab it closes so too (its page is ``page``)."""

    tool: str
    page: str = ""
    after: str = ""
    target: Target | None = None
    to: Target | None = None
    fields: tuple[FieldStep, ...] = ()
    args: Mapping[str, ArgValue] = attrs.field(factory=dict)
    result: bool = False
    frames: tuple[str, ...] = ()
    submits: SubmitForm | None = None
    title: str = ""  # a switch_tab's or close_tab's: the title of its tab

    def words(self) -> str:
        """What the step does, in words, for the plan a person or a model reads."""
        if self.tool == "switch_tab":
            return f"switch to the tab {self.title!r} at {self.after}"
        if self.tool == "close_tab":
            return f"close the tab {self.title!r} at {self.page}"
        said = self.tool.replace("_", " ")
        if self.target is not None:
            said += " " + self.target.words()
        if self.to is not None:
            said += " onto " + self.to.words()
        for field in self.fields:
            said += f"; {field.target.words()} = {_value_words(field.value)}"
        for key, value in self.args.items():
            said += f"; {key} = {_value_words(value)}"
        return said


@attrs.frozen
class Routine:
    """A saved task: where it starts, the values it takes, its steps."""

    name: str
    steps: tuple[Step, ...]
    start: str = ""  # the URL the first step runs on ("": the first step navigates)
    task: str = ""  # the task's words when it was recorded
    parameters: tuple[Parameter, ...] = ()
    version: int = ROUTINE_VERSION

    def parameter(self, name: str) -> Parameter | None:
        return next((p for p in self.parameters if p.name == name), None)

    def to_json(self) -> dict[str, object]:
        """The routine as its file holds it (defaults left out, to read easily)."""
        return {
            "version": self.version,
            "name": self.name,
            "task": self.task,
            "start": self.start,
            "parameters": [parameter_json(p) for p in self.parameters],
            "steps": steps_json(self.steps),
        }


def parameter_json(parameter: Parameter) -> dict[str, object]:
    """A parameter as a routine's file declares it."""
    return _compact(attrs.asdict(parameter))


def steps_json(steps: Sequence[Step]) -> list[dict[str, object]]:
    """Steps as a routine's file holds them."""
    return [_step_json(step) for step in steps]


def _ordinal(index: int) -> str:
    number = index + 1
    teens = 10 <= number % 100 <= 20
    suffix = "th" if teens else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


def _value_words(value: ArgValue) -> str:
    if isinstance(value, Mapping) and "param" in value:
        return f"the parameter {value['param']}"
    return repr(value)


_TARGET_DEFAULTS: Final = attrs.asdict(Target("", ""))


def _compact(data: Mapping[str, object]) -> dict[str, object]:
    return {k: v for k, v in data.items() if v not in (None, "") or k == "name"}


def _target_json(target: Target) -> dict[str, object]:
    data = attrs.asdict(target)
    return {k: v for k, v in data.items() if k in ("role", "name") or v != _TARGET_DEFAULTS[k]}


def _step_json(step: Step) -> dict[str, object]:
    data: dict[str, object] = {"tool": step.tool}
    if step.page:
        data["page"] = step.page
    if step.after and step.after != step.page:
        data["after"] = step.after
    if step.target is not None:
        data["target"] = _target_json(step.target)
    if step.to is not None:
        data["to"] = _target_json(step.to)
    if step.fields:
        data["fields"] = [{"target": _target_json(f.target), "value": f.value} for f in step.fields]
    if step.args:
        data["args"] = dict(step.args)
    if step.result:
        data["result"] = True
    if step.frames:
        data["frames"] = list(step.frames)
    if step.submits is not None:
        data["submits"] = {"action": step.submits.action, "method": step.submits.method}
    if step.title:
        data["title"] = step.title
    return data


# -- reading a file -----------------------------------------------------------------


def parse_routine(data: object, *, where: str = "routine") -> Routine:
    """The routine a file's JSON holds, every field checked; `RoutineError` naming the
    step and field (``where`` names the file) otherwise."""
    top = _object(data, where)
    version = top.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise RoutineError(f"{where}: field 'version' = {version!r:.40} is not a version number")
    if version > ROUTINE_VERSION:
        raise RoutineError(
            f"{where}: version {version} is newer than this Trimtab reads ({ROUTINE_VERSION}); "
            "update Trimtab to run it"
        )
    name = _text(top.get("name"), f"{where}: field 'name'", empty=False)
    parameters = tuple(
        parse_parameter(raw, f"{where}: parameter {i + 1}")
        for i, raw in enumerate(_list(top.get("parameters", []), f"{where}: field 'parameters'"))
    )
    names = [p.name for p in parameters]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise RoutineError(f"{where}: parameter {twice[0]!r} is declared twice")
    raw_steps = _list(top.get("steps"), f"{where}: field 'steps'")
    if not raw_steps:
        raise RoutineError(f"{where}: it has no steps")
    steps = tuple(
        _step(raw, f"{where}: step {i + 1}", set(names)) for i, raw in enumerate(raw_steps)
    )
    return Routine(
        name=name,
        steps=steps,
        start=_text(top.get("start", ""), f"{where}: field 'start'"),
        task=_text(top.get("task", ""), f"{where}: field 'task'"),
        parameters=parameters,
        version=version,
    )


def _object(raw: object, where: str) -> Mapping[str, object]:
    if not isinstance(raw, Mapping):
        raise RoutineError(f"{where}: {raw!r:.60} is not an object")
    return raw


def _list(raw: object, where: str) -> Sequence[object]:
    if not isinstance(raw, list):
        raise RoutineError(f"{where} = {raw!r:.60} is not a list")
    return raw


def _text(raw: object, where: str, *, empty: bool = True) -> str:
    if not isinstance(raw, str) or len(raw) > _MAX_TEXT or (not empty and not raw.strip()):
        raise RoutineError(f"{where} = {raw!r:.60} is not a text")
    return raw


def _count(raw: object, where: str, *, least: int) -> int:
    if not isinstance(raw, int) or isinstance(raw, bool) or raw < least:
        raise RoutineError(f"{where} = {raw!r:.40} is not a whole number from {least}")
    return raw


def parse_steps(raw: object, where: str, params: Iterable[str]) -> tuple[Step, ...]:
    """Steps as a file holds them (`steps_json`), that use only the parameters named in
    ``params``, every field checked; none is a list too. `RoutineError` naming the step
    (``where`` names the list) otherwise."""
    declared = set(params)
    return tuple(
        _step(step, f"{where}: step {i + 1}", declared) for i, step in enumerate(_list(raw, where))
    )


def parse_parameter(raw: object, where: str) -> Parameter:
    """A parameter as a file declares it (`parameter_json`); `RoutineError` naming the
    field otherwise."""
    data = _object(raw, where)
    name = _text(data.get("name"), f"{where}: field 'name'", empty=False)
    kind = data.get("kind", "text")
    if kind not in ("text", "secret"):
        raise RoutineError(f"{where} ({name}): field 'kind' = {kind!r:.40} is not text or secret")
    default = data.get("default")
    if default is not None:
        default = _text(default, f"{where} ({name}): field 'default'")
        if kind == "secret":
            raise RoutineError(f"{where} ({name}): a secret parameter has no default")
    about = _text(data.get("about", ""), f"{where} ({name}): field 'about'")
    return Parameter(name=name, kind=kind, default=default, about=about)


def _target(raw: object, where: str) -> Target:
    data = _object(raw, where)
    texts = {
        key: _text(data.get(key, ""), f"{where}: field {key!r}")
        for key in ("role", "name", "tag", "type", "region", "heading", "near")
    }
    if not texts["role"] and not texts["tag"]:
        raise RoutineError(f"{where}: it says neither the element's role nor its tag")
    among = _count(data.get("among", 1), f"{where}: field 'among'", least=1)
    ordinal = _count(data.get("ordinal", 0), f"{where}: field 'ordinal'", least=0)
    if ordinal >= among:
        raise RoutineError(f"{where}: field 'ordinal' = {ordinal} is not below 'among' = {among}")
    return Target(**texts, ordinal=ordinal, among=among)


def _value(raw: object, where: str, params: set[str]) -> ArgValue:
    if isinstance(raw, Mapping) and "param" in raw:
        name = raw.get("param")
        if set(raw) != {"param"} or not isinstance(name, str):
            raise RoutineError(f"{where} = {raw!r:.60} is not a parameter's use")
        if name not in params:
            raise RoutineError(f"{where}: parameter {name!r} is not declared")
        return {"param": name}
    return raw


def _step(raw: object, where: str, params: set[str]) -> Step:
    data = _object(raw, where)
    tool = data.get("tool")
    if tool not in REPLAYED_TOOLS:
        raise RoutineError(
            f"{where}: field 'tool' = {tool!r:.40} is not a tool a routine runs "
            f"({', '.join(sorted(REPLAYED_TOOLS))})"
        )
    assert isinstance(tool, str)
    where = f"{where} ({tool})"
    target = _target(data["target"], f"{where}: target") if "target" in data else None
    to = _target(data["to"], f"{where}: to") if "to" in data else None
    fields = tuple(
        FieldStep(
            _target(_object(f, f"{where}: field {i + 1}").get("target"), f"{where}: field {i + 1}"),
            _value(_object(f, where).get("value"), f"{where}: field {i + 1} value", params),
        )
        for i, f in enumerate(_list(data.get("fields", []), f"{where}: field 'fields'"))
    )
    args = _object(data.get("args", {}), f"{where}: field 'args'")
    taken = {"id", "to", "fields"}.intersection(args)
    if taken:
        raise RoutineError(
            f"{where}: argument {sorted(taken)[0]!r} is an element: write it as a target"
        )
    if tool == "fill" and not fields:
        raise RoutineError(f"{where}: a fill step needs its fields")
    result = data.get("result", False)
    if not isinstance(result, bool):
        raise RoutineError(f"{where}: field 'result' = {result!r:.40} is not true or false")
    frames = tuple(
        _site(raw, f"{where}: frame {i + 1}")
        for i, raw in enumerate(_list(data.get("frames", []), f"{where}: field 'frames'"))
    )
    submits = _submits(data["submits"], f"{where}: submits") if "submits" in data else None
    after = _text(data.get("after", data.get("page", "")), f"{where}: field 'after'")
    title = _text(data.get("title", ""), f"{where}: field 'title'")
    if tool == "switch_tab" and not after:
        raise RoutineError(f"{where}: a switch_tab step needs the page of its tab ('after')")
    if tool == "close_tab" and not data.get("page"):
        raise RoutineError(f"{where}: a close_tab step needs the page of its tab ('page')")
    if args and tool in ("switch_tab", "close_tab"):
        where_page = "'after'" if tool == "switch_tab" else "'page'"
        raise RoutineError(f"{where}: a {tool} step names its tab by 'title' and {where_page}")
    if tool == "new_tab" and set(args) != {"url"}:
        raise RoutineError(f"{where}: a new_tab step's one argument is its 'url'")
    return Step(
        tool=tool,
        page=_text(data.get("page", ""), f"{where}: field 'page'"),
        after=after,
        title=title,
        target=target,
        to=to,
        fields=fields,
        args={k: _value(v, f"{where}: argument {k!r}", params) for k, v in args.items()},
        result=result,
        frames=frames,
        submits=submits,
    )


def _site(raw: object, where: str) -> str:
    try:
        return str(parse_site(_text(raw, where, empty=False)))
    except SiteError as exc:
        raise RoutineError(f"{where}: {exc}") from None


_METHODS: Final = frozenset({"GET", "POST", "DIALOG"})


def _submits(raw: object, where: str) -> SubmitForm:
    data = _object(raw, where)
    action = _text(data.get("action"), f"{where}: field 'action'", empty=False)
    if _site_or_none(action) is None:
        raise RoutineError(f"{where}: field 'action' = {action!r:.60} is no page of a site")
    method = data.get("method")
    if method not in _METHODS:
        raise RoutineError(
            f"{where}: field 'method' = {method!r:.20} is not one of {', '.join(sorted(_METHODS))}"
        )
    assert isinstance(method, str)
    return SubmitForm(action, method)


def _site_or_none(url: str) -> str | None:
    """The site of ``url`` when it names one (an http(s) page), else None."""
    try:
        return str(parse_site(url))
    except SiteError:
        return None
