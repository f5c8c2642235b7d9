"""Tools for what a person does with the mouse beyond a click, and with files:
double_click, drag, select_text, upload."""

from __future__ import annotations

import mimetypes
from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any

import trio

from pycdp_bridge import call_on
from pycdp_bridge import protocol as cdp

from ..driver import (
    PLACES,
    Aim,
    CallContext,
    ElementInfo,
    Goal,
    Located,
    Place,
    aim_at_grip,
    aim_by_offset,
    aim_in_frame,
    aim_onto_goal,
    click_reason,
    describe,
    drag_along,
    drag_onto,
    drag_select,
    element_info,
    enabled_element,
    extend_selection,
    locate,
    locate_quote,
    page_selection,
    resized_note,
    scroll_into_view,
)
from ..pipeline import xml
from ..tab import settle
from ._actions import clicks_on
from ._common import (
    ACT,
    ID_SCHEMA,
    SETTLE_TIMEOUT,
    BadArguments,
    Refusal,
    ToolResult,
    after_action,
    id_arg,
    schema,
    scope_of,
    script,
    text_arg,
    tool,
)

__all__ = ["UPLOAD_CONSENT", "double_click", "drag", "select_text", "upload"]

_MAX_OFFSET = 10_000

UPLOAD_CONSENT = "it gives the page a file from this computer"
"""Why `upload` needs the person's consent (its spec's ``needs_consent``)."""


@tool(
    "double_click",
    "Double-click an element with the mouse.",
    schema({"id": ID_SCHEMA}, ("id",)),
    ACT,
)
async def double_click(call: CallContext, args: Mapping[str, object]) -> ToolResult:
    return await clicks_on(call, args, 2)


def _offset(args: Mapping[str, object], name: str) -> float | None:
    value = args.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadArguments(f"argument {name!r} must be a number of pixels; got {value!r}")
    if abs(value) > _MAX_OFFSET:
        raise BadArguments(f"argument {name!r} must be within ±{_MAX_OFFSET} pixels; got {value}")
    return float(value)


@tool(
    "drag",
    "Drag an element with the mouse onto another (to: its id) or by dx, dy pixels "
    "(right and down); both ends must fit in the window. With place, a list item lands "
    "before or after it.",
    schema(
        {
            "id": ID_SCHEMA,
            "to": ID_SCHEMA,
            "place": {"type": "string", "enum": list(PLACES)},
            "dx": {"type": "number"},
            "dy": {"type": "number"},
        },
        ("id",),
    ),
    ACT,
)
async def drag(call: CallContext, args: Mapping[str, object]) -> ToolResult:
    tab = call.tab
    to = text_arg(args, "to", required=False)
    dx, dy = _offset(args, "dx"), _offset(args, "dy")
    if to is None and dx is None and dy is None:
        raise BadArguments("drag needs either to (an element id) or an offset dx and/or dy")
    if to is not None and (dx is not None or dy is not None):
        raise BadArguments("drag takes either to or an offset (dx, dy), not both")
    place = _place_arg(args, to)
    source, info = await enabled_element(tab, id_arg(args))
    goal: Goal | None = None
    offset = (dx or 0.0, dy or 0.0)
    # A resizable element dragged by an offset is pulled by its grip (its corner).
    grip = None if to is not None else await aim_at_grip(tab, source, info, *offset)
    if to is not None:
        start, goal = await aim_onto_goal(tab, source, info, to)
        scope = scope_of(source, goal.element)
    else:
        start = grip.aim if grip else await aim_by_offset(tab, source, info, *offset)
        scope = scope_of(source)
    # The press and release of a drag click its source when it barely moves.
    call.require(await click_reason(tab.target, source), describe(source, info))
    async with call.watch() as activity:
        if goal is not None:
            note = await drag_onto(tab, source, info, start, goal, place)
        else:
            note = await drag_along(tab, source, info, start, None, offset)
        if grip is not None:
            note = "; ".join(n for n in (await resized_note(tab, source, info, grip), note) if n)
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT, scope)
    return await after_action(call, activity, settled, note=note)


def _place_arg(args: Mapping[str, object], to: str | None) -> Place | None:
    """The ``place`` argument: where the dragged item lands against `to`'s item."""
    value = args.get("place")
    if value is None:
        return None
    place = next((p for p in PLACES if p == value), None)
    if place is None:
        raise BadArguments(f"argument 'place' must be 'before' or 'after'; got {value!r}")
    if to is None:
        raise BadArguments(f"place={place!r} needs to (the id of the item to place it {place})")
    return place


@tool(
    "select_text",
    "Select text as with the mouse (then e.g. press('b', ['Control'])), within an element "
    "(id), a region or the page; spacing is ignored, and case if nothing matches exactly; "
    "the note says what is selected.",
    schema(
        {
            "id": ID_SCHEMA,
            "region": {"type": "string"},
            "text": {"type": "string"},
            "occurrence": {"type": "integer", "minimum": 1},
        },
        ("text",),
    ),
    ACT,
)
async def select_text(call: CallContext, args: Mapping[str, object]) -> ToolResult:
    tab = call.tab
    wanted = text_arg(args, "text")
    assert wanted is not None
    if not wanted.strip():
        raise BadArguments("argument 'text' must hold the text to select; got only spaces")
    occurrence = args.get("occurrence")  # None: asked for when the text repeats
    if occurrence is not None and (
        isinstance(occurrence, bool) or not isinstance(occurrence, int) or occurrence < 1
    ):
        raise BadArguments(f"argument 'occurrence' must be 1 or more; got {occurrence!r}")
    eid = text_arg(args, "id", required=False)
    region = text_arg(args, "region", required=False)
    if eid is not None and region is not None:
        raise BadArguments("select_text takes an element id or a region, not both")
    if eid is None:
        # Text with no id of its own (a plain paragraph's): found by what it says.
        quote = await locate_quote(tab, wanted, occurrence, region)
        return await _drag_over(
            call,
            quote.element,
            quote.info,
            (quote.start, quote.end),
            quote.selected,
            f"{quote.where}{_which(occurrence, quote.count)}",
        )
    element = await locate(tab, eid)
    target = tab.target
    info = await element_info(target, element)
    if info.secret is not None:
        # Whether a text is found in it, and what is near, would tell what it holds.
        raise Refusal(
            f"{describe(element, info)} is {info.secret.field}: its text is not selected "
            "by what it says; click it and press keys instead"
        )
    await scroll_into_view(target, element, info)
    span: Mapping[str, Any] = await call_on(
        target,
        element.object_id,
        script("text-span-points.js"),
        wanted,
        occurrence or 1,
        session_id=element.session,
    )
    if span.get("field"):
        # A field's text has no boxes to press on: its selection API, as before.
        return await _select_in_field(call, element, info, wanted, occurrence or 1)
    _refuse_unfound(element, info, wanted, occurrence or 1, span)
    count = int(span["count"])
    if occurrence is None and count > 1:
        raise Refusal(
            f"{describe(element, info)} holds the text {xml.text(repr(wanted))} {count} "
            f"times: say which with occurrence (1 to {count}), or quote more of it"
        )
    start = await aim_in_frame(target, element, span["start"]["x"], span["start"]["y"])
    end = await aim_in_frame(target, element, span["end"]["x"], span["end"]["y"])
    where = f"{describe(element, info)}{_which(occurrence, count)}"
    return await _drag_over(call, element, info, (start, end), str(span["selected"]), where)


def _which(occurrence: int | None, count: int) -> str:
    return f" (match {occurrence or 1} of {count})" if count > 1 else ""


async def _drag_over(
    call: CallContext,
    element: Located,
    info: ElementInfo,
    ends: tuple[Aim, Aim],
    expected: str,
    where: str,
) -> ToolResult:
    """Select `expected` with a drag between `ends`, then check what the page holds
    selected: mended with the keyboard when the drag got it short or long, and said
    plainly in the note when it is still something else."""
    tab = call.tab
    target = tab.target
    # Pressed and released on the element: a click on it, whatever that may commit.
    call.require(await click_reason(target, element), describe(element, info))
    async with call.watch() as activity:
        notes = [await drag_select(tab, element, info, *ends)]
        selected = await page_selection(target, element)
        mended = _squashed(selected) != _squashed(expected)
        if mended:
            selected = await extend_selection(target, element, expected)
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT, scope_of(element))
    if _squashed(selected) == _squashed(expected):
        how = " (the drag left it a character or two short or long; Shift+arrow keys mended it)"
        notes.insert(0, f"selected {selected!r} in {where}{how if mended else ''}")
    else:
        notes.insert(
            0,
            f"NOT selected as asked: the page holds {selected[:200]!r} selected in {where}, "
            f"not {expected!r} (it changed what the mouse selected); see what it shows now",
        )
    note = "; ".join(n for n in notes if n)
    return await after_action(call, activity, settled, note=note)


def _squashed(text: str) -> str:
    return " ".join(text.split())


def _refuse_unfound(
    element: Located, info: ElementInfo, wanted: str, occurrence: int, outcome: Mapping[str, Any]
) -> None:
    """`Refusal` when the element does not hold the `occurrence`-th match of `wanted`."""
    if outcome["found"]:
        return
    count = int(outcome["count"])
    if count:
        raise Refusal(
            f"{describe(element, info)} holds {wanted!r} {count} time(s), so there "
            f"is no occurrence {occurrence}"
        )
    raise Refusal(
        f"{describe(element, info)} does not hold the text {xml.text(repr(wanted))}; it "
        f"reads: {xml.text(repr(str(outcome['near'])))}"
    )


async def _select_in_field(
    call: CallContext, element: Located, info: ElementInfo, wanted: str, occurrence: int
) -> ToolResult:
    """`select_text` in a text field: through the field's selection API."""
    tab = call.tab
    target = tab.target
    async with call.watch() as activity:
        outcome: Mapping[str, Any] = await call_on(
            target,
            element.object_id,
            script("select-text.js"),
            wanted,
            occurrence,
            session_id=element.session,
        )
        _refuse_unfound(element, info, wanted, occurrence, outcome)
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT, scope_of(element))
    count = int(outcome["count"])
    which = f" (match {occurrence} of {count})" if count > 1 else ""
    note = f"selected {str(outcome['selected'])!r} in {describe(element, info)}{which}"
    return await after_action(call, activity, settled, note=note)


@tool(
    "upload",
    "Put files of this computer (absolute paths) into a file field, or the label or "
    "button that stands for one, as the file picker does. The person is asked first.",
    schema(
        {
            "id": ID_SCHEMA,
            "paths": {
                "type": "array",
                "items": {"type": "string"},
                "minItems": 1,
            },
        },
        ("id", "paths"),
    ),
    ACT,
    needs_consent=UPLOAD_CONSENT,
)
async def upload(call: CallContext, args: Mapping[str, object]) -> ToolResult:
    tab = call.tab
    paths = _paths(args.get("paths"))
    for path in paths:
        if not await trio.Path(path).is_file():
            raise Refusal(f"there is no file at {path}; give the absolute path of a file")
    element = await locate(tab, text_arg(args, "id"))
    target = tab.target
    info = await element_info(target, element)
    found: Mapping[str, Any] = await call_on(
        target,
        element.object_id,
        script("file-input.js"),
        return_by_value=False,
        session_id=element.session,
    )
    field_id = found.get("objectId")
    if not field_id:
        raise Refusal(
            f"{describe(element, info)} is not a file field (<input type=file>), nor a "
            "label or button that holds one"
        )
    facts: Mapping[str, Any] = await call_on(
        target, field_id, script("file-input-facts.js"), session_id=element.session
    )
    if facts["disabled"]:
        raise Refusal(f"the file field of {describe(element, info)} is disabled")
    if len(paths) > 1 and not facts["multiple"]:
        raise Refusal(
            f"the file field of {describe(element, info)} takes one file; got {len(paths)}"
        )
    refused = _not_accepted(paths, str(facts["accept"]))
    if refused is not None:
        raise Refusal(
            f"the file field of {describe(element, info)} accepts {facts['accept']!r}; "
            f"{refused} is not one of those"
        )
    async with call.watch() as activity:
        # What the file picker does: the files are set, then `input` and `change` fire.
        await target.execute(
            cdp.dom_set_file_input_files(paths, object_id=field_id), session_id=element.session
        )
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT, scope_of(element))
    given: Mapping[str, Any] = await call_on(
        target, field_id, script("file-input-facts.js"), session_id=element.session
    )
    names = ", ".join(str(name) for name in given["files"]) or "no file"
    note = f"the file field of {describe(element, info)} now holds {names}"
    return await after_action(call, activity, settled, note=note)


def _paths(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple) or not value:
        raise BadArguments(f"paths must be a list of absolute file paths; got {value!r}")
    paths: list[str] = []
    for item in value:
        if not isinstance(item, str) or not PurePath(item).is_absolute():
            raise BadArguments(f"every path must be an absolute file path; got {item!r}")
        paths.append(item)
    return tuple(paths)


def _not_accepted(paths: Sequence[str], accept: str) -> str | None:
    """The first file an ``accept`` list (``.pdf,image/*``) rules out, None if all fit."""
    kinds = [kind.strip().lower() for kind in accept.split(",") if kind.strip()]
    if not kinds:
        return None
    for path in paths:
        name = PurePath(path).name.lower()
        mime = (mimetypes.guess_type(name)[0] or "").lower()
        fits = any(
            (kind.startswith(".") and name.endswith(kind))
            or (kind.endswith("/*") and mime.startswith(kind[:-1]))
            or kind == mime
            for kind in kinds
        )
        if not fits:
            return PurePath(path).name
    return None
