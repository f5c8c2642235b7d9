"""Tools for what a person does with the mouse beyond a click, and with files:
double_click, drag, select_text, upload."""

from __future__ import annotations

import mimetypes
from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any, Literal

import attrs
import trio

from pycdp_bridge import CDPError, Target, call_on
from pycdp_bridge import protocol as cdp

from ..tab import Tab, settle, watch
from ._actions import clicks_on, enabled_element
from ._button import ButtonDown, button_down
from ._common import (
    ACT,
    ID_SCHEMA,
    SETTLE_TIMEOUT,
    BadArguments,
    Refusal,
    ToolResult,
    after_action,
    schema,
    scope_of,
    script,
    text_arg,
    tool,
)
from ._consent import click_reason, require
from ._input import (
    Aim,
    ElementInfo,
    Located,
    Point,
    aim_at,
    aim_in_frame,
    describe,
    element_info,
    locate,
    reaches,
    scroll_into_view,
    visible_boxes,
)
from ._press import pointer_onto

__all__ = ["UPLOAD_CONSENT", "double_click", "drag", "select_text", "upload"]

# Moves between press and release: pages that follow the pointer (sliders, sortable
# lists, HTML drag and drop) need several to see a drag, as from a real mouse.
_DRAG_STEPS = 12
# Moves after a drag onto a goal that the drag moved away from the pointer.
_GOAL_TRIES = 3
# Moves while selecting text: enough for editors that extend the selection on mousemove.
_SELECT_STEPS = 4
_MAX_OFFSET = 10_000

UPLOAD_CONSENT = "it gives the page a file from this computer"
"""Why `upload` needs the person's consent (its spec's ``needs_consent``)."""


async def _mouse(
    target: Target,
    kind: Literal["mousePressed", "mouseReleased", "mouseMoved"],
    point: Point,
    *,
    buttons: int,
    click_count: int = 0,
) -> None:
    """One mouse event; `buttons` says which buttons are held (1: left), as a real mouse
    reports it on every move, so that pages see a drag as a drag."""
    await target.execute(
        cdp.input_dispatch_mouse_event(
            kind,
            point.x,
            point.y,
            button="left" if kind != "mouseMoved" or buttons else "none",
            buttons=buttons,
            click_count=click_count,
        )
    )


@tool(
    "double_click",
    "Double-click an element with the mouse.",
    schema({"id": ID_SCHEMA}, ("id",)),
    ACT,
)
async def double_click(tab: Tab, args: Mapping[str, object]) -> ToolResult:
    return await clicks_on(tab, args, 2)


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
    "(right and down); both ends must fit in the window.",
    schema(
        {
            "id": ID_SCHEMA,
            "to": ID_SCHEMA,
            "dx": {"type": "number"},
            "dy": {"type": "number"},
        },
        ("id",),
    ),
    ACT,
)
async def drag(tab: Tab, args: Mapping[str, object]) -> ToolResult:
    to = text_arg(args, "to", required=False)
    dx, dy = _offset(args, "dx"), _offset(args, "dy")
    if to is None and dx is None and dy is None:
        raise BadArguments("drag needs either to (an element id) or an offset dx and/or dy")
    if to is not None and (dx is not None or dy is not None):
        raise BadArguments("drag takes either to or an offset (dx, dy), not both")
    source, info = await enabled_element(tab, args)
    target = tab.target
    goal: _Goal | None = None
    if to is not None:
        located = await locate(tab, to)
        goal_info = await element_info(target, located)
        if located.backend_id == source.backend_id and located.session == source.session:
            raise Refusal(f"{describe(source, info)} cannot be dragged onto itself")
        # Each point may scroll the page; both must stand still in one window.
        await aim_at(target, located, goal_info, tab.latest)
        start = await aim_at(target, source, info, tab.latest)
        goal = _Goal(located, goal_info, await aim_at(target, located, goal_info, tab.latest))
        if (await aim_at(target, source, info, tab.latest)).point != start.point:
            raise Refusal(
                f"{describe(source, info)} and {describe(located, goal_info)} are not in the "
                "window together, so one cannot be dragged onto the other; drag in steps "
                "(by an offset), or scroll and drag within the window"
            )
        scope = scope_of(source, located)
        offset = None
    else:
        start = await aim_at(target, source, info, tab.latest)
        offset = (dx or 0.0, dy or 0.0)
        end = Point(start.point.x + offset[0], start.point.y + offset[1])
        metrics = await target.execute(cdp.page_get_layout_metrics())
        viewport: Mapping[str, Any] = metrics["cssLayoutViewport"]
        width, height = float(viewport["clientWidth"]), float(viewport["clientHeight"])
        if not (0 <= end.x < width and 0 <= end.y < height):
            raise Refusal(
                f"dragging {describe(source, info)} by ({dx or 0:g}, {dy or 0:g}) would end at "
                f"({end.x:.0f}, {end.y:.0f}), outside the {width:.0f}x{height:.0f} window; "
                "drag by less"
            )
        scope = scope_of(source)
    # The press and release of a drag click its source when it barely moves.
    require(await click_reason(target, source), describe(source, info))
    async with watch(tab.revisions) as activity:
        # The press lands on the source: refused when it moves away from the pointer.
        start = await pointer_onto(target, source, info, tab.latest, start)
        if goal is None:
            assert offset is not None
            end = Point(start.point.x + offset[0], start.point.y + offset[1])
        else:
            end = goal.aim.point
        note = await _drag_path(tab, start, end, goal)
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT, scope)
    return await after_action(tab, activity, settled, note=note)


@attrs.frozen
class _Goal:
    """The element a drag ends on, and where it was aimed at before the drag."""

    element: Located
    info: ElementInfo
    aim: Aim


async def _drag_path(tab: Tab, start: Aim, end: Point, goal: _Goal | None) -> str | None:
    """Press on the source at `start`, move in steps to `end` and release; with a
    `goal`, the release lands on it (followed if the drag moved it), else the answer's
    note says what it landed on."""
    target = tab.target
    note = None
    async with button_down(target, start.point) as button:
        await _mouse(target, "mousePressed", start.point, buttons=1, click_count=1)
        for step in range(1, _DRAG_STEPS + 1):
            share = step / _DRAG_STEPS
            point = Point(
                start.point.x + (end.x - start.point.x) * share,
                start.point.y + (end.y - start.point.y) * share,
            )
            await _mouse(target, "mouseMoved", point, buttons=1)
            button.point = point
            # A frame between moves, as a hand takes: pages that throttle to animation
            # frames (drag libraries) see each step.
            await trio.sleep(0.016)
        if goal is not None:
            note = await _onto_goal(tab, goal, button)
    await _mouse(target, "mouseReleased", button.point, buttons=0, click_count=1)
    return note


async def _onto_goal(tab: Tab, goal: _Goal, button: ButtonDown) -> str | None:
    """Before a drag's release: the pointer must be within the goal's box, whatever is
    drawn over it (the dragged item itself, with drag libraries). A goal the drag moved
    (a list closing the gap the dragged item left) is followed with the button held, a
    few times; None when the release will land on it, else the note that says where."""
    target = tab.target
    for _ in range(_GOAL_TRIES):
        try:
            boxes = await visible_boxes(target, goal.element)
        except CDPError:  # the goal left the document (re-rendered by the drag)
            break
        point = button.point
        if any(
            left <= point.x <= right and top <= point.y <= bottom
            for left, top, right, bottom in boxes
        ):
            return None
        if not boxes:
            break
        left, top, right, bottom = boxes[0]
        point = Point((left + right) / 2, (top + bottom) / 2)
        await _mouse(target, "mouseMoved", point, buttons=1)
        button.point = point
        await trio.sleep(0.016)  # a frame: the page follows the move
    landed = await reaches(target, goal.element, Aim(button.point, goal.aim.origins), tab.latest)
    where = f"on {landed}" if landed else "beside it"
    return (
        f"the drop landed {where}, not on {describe(goal.element, goal.info)}, which moved "
        "away from under the pointer during the drag"
    )


@tool(
    "select_text",
    "Select text within an element as with the mouse (then e.g. press('b', ['Control'])); "
    "spacing is ignored, and case if nothing matches exactly; the note says what is "
    "selected.",
    schema(
        {
            "id": ID_SCHEMA,
            "text": {"type": "string"},
            "occurrence": {"type": "integer", "minimum": 1, "default": 1},
        },
        ("id", "text"),
    ),
    ACT,
)
async def select_text(tab: Tab, args: Mapping[str, object]) -> ToolResult:
    wanted = text_arg(args, "text")
    assert wanted is not None
    if not wanted.strip():
        raise BadArguments("argument 'text' must hold the text to select; got only spaces")
    occurrence = args.get("occurrence", 1)
    if isinstance(occurrence, bool) or not isinstance(occurrence, int) or occurrence < 1:
        raise BadArguments(f"argument 'occurrence' must be 1 or more; got {occurrence!r}")
    element = await locate(tab, text_arg(args, "id"))
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
        occurrence,
        session_id=element.session,
    )
    if span.get("field"):
        # A field's text has no boxes to press on: its selection API, as before.
        return await _select_in_field(tab, element, info, wanted, occurrence)
    _refuse_unfound(element, info, wanted, occurrence, span)
    # Pressed and released on the element: a click on it, whatever that may commit.
    require(await click_reason(target, element), describe(element, info))
    start = await aim_in_frame(target, element, span["start"]["x"], span["start"]["y"])
    end = await aim_in_frame(target, element, span["end"]["x"], span["end"]["y"])
    async with watch(tab.revisions) as activity:
        notes = [await _drag_select(tab, element, info, start, end)]
        selected_now: str = await call_on(
            target, element.object_id, script("page-selection.js"), session_id=element.session
        )
        if _squashed(selected_now) != _squashed(str(span["selected"])):
            notes.append(
                f"the page holds {selected_now[:200]!r} selected, not {str(span['selected'])!r}"
                " (it changed what the mouse selected); see what the page shows now"
            )
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT, scope_of(element))
    count = int(span["count"])
    which = f" (match {occurrence} of {count})" if count > 1 else ""
    notes.insert(0, f"selected {selected_now!r} in {describe(element, info)}{which}")
    note = "; ".join(n for n in notes if n)
    return await after_action(tab, activity, settled, note=note)


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
        f"{describe(element, info)} does not hold the text {wanted!r}; it reads: "
        f"{str(outcome['near'])!r}"
    )


async def _drag_select(
    tab: Tab, element: Located, info: ElementInfo, start: Aim, end: Aim
) -> str | None:
    """Select as a person does: press just inside the first character, move to just
    inside the last one with the button held, release; the page's mousedown, moves,
    mouseup and selectionchange all happen. Refused before the press when the start
    is not on the element; a note when the release could not be."""
    target, latest = tab.target, tab.latest
    await _mouse(target, "mouseMoved", start.point, buttons=0)
    cover = await reaches(target, element, start, latest)
    if cover is not None:
        raise Refusal(
            f"the text to select in {describe(element, info)} is under {cover} once the "
            "pointer is there; nothing was pressed"
        )
    note = None
    async with button_down(target, start.point) as button:
        await _mouse(target, "mousePressed", start.point, buttons=1, click_count=1)
        for step in range(1, _SELECT_STEPS + 1):
            share = step / _SELECT_STEPS
            point = Point(
                start.point.x + (end.point.x - start.point.x) * share,
                start.point.y + (end.point.y - start.point.y) * share,
            )
            await _mouse(target, "mouseMoved", point, buttons=1)
            button.point = point
        cover = await reaches(target, element, end, latest)
        if cover is not None:
            note = f"the selection ended over {cover}, outside {describe(element, info)}"
    await _mouse(target, "mouseReleased", end.point, buttons=0, click_count=1)
    return note


async def _select_in_field(
    tab: Tab, element: Located, info: ElementInfo, wanted: str, occurrence: int
) -> ToolResult:
    """`select_text` in a text field: through the field's selection API."""
    target = tab.target
    async with watch(tab.revisions) as activity:
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
    return await after_action(tab, activity, settled, note=note)


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
async def upload(tab: Tab, args: Mapping[str, object]) -> ToolResult:
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
    async with watch(tab.revisions) as activity:
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
    return await after_action(tab, activity, settled, note=note)


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
