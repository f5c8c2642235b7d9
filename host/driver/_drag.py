"""Dragging with the mouse as a hand does: an element onto another or by an offset
(a resizable one by its grip, `aim_at_grip`), and text selected by pressing at its
first character and releasing at its last.

The button goes down on the source once the pointer is checked to be on it
(`pointer_onto`), moves in steps a page that follows the pointer sees as a drag, and is
released on the goal, followed if the drag moved it; it is never left down
(`button_down`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import attrs
import trio

from pycdp_bridge import CDPError, Target, call_on
from pycdp_bridge import protocol as cdp

from ..tab import Tab
from ._button import ButtonDown, button_down
from ._element import (
    Aim,
    ElementInfo,
    Located,
    Point,
    Refusal,
    aim_at,
    aim_in_frame,
    describe,
    element_info,
    locate,
    reaches,
    viewport_size,
    visible_boxes,
)
from ._press import pointer_onto, pointer_stays
from ._scripts import script

__all__ = [
    "FRAME",
    "Goal",
    "Grip",
    "aim_at_grip",
    "aim_by_offset",
    "aim_onto_goal",
    "drag_along",
    "drag_select",
    "glide",
    "mouse",
    "resized_note",
]

# Moves between press and release: pages that follow the pointer (sliders, sortable
# lists, HTML drag and drop) need several to see a drag, as from a real mouse.
_DRAG_STEPS = 12
# A frame of the page, in seconds: what a hand's move between two events takes.
FRAME = 0.016
# Moves after a drag onto a goal that the drag moved away from the pointer.
_GOAL_TRIES = 3
# Moves while selecting text: enough for editors that extend the selection on mousemove.
_SELECT_STEPS = 4


async def mouse(
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


async def glide(target: Target, button: ButtonDown, end: Point, steps: int = _DRAG_STEPS) -> None:
    """Move the held button from where it is to `end` in `steps` even moves."""
    start = button.point
    for step in range(1, steps + 1):
        share = step / steps
        point = Point(start.x + (end.x - start.x) * share, start.y + (end.y - start.y) * share)
        await mouse(target, "mouseMoved", point, buttons=1)
        button.point = point
        # A frame between moves, as a hand takes: pages that throttle to animation
        # frames (drag libraries) see each step.
        await trio.sleep(FRAME)


@attrs.frozen
class Goal:
    """The element a drag ends on, and where it was aimed at before the drag."""

    element: Located
    info: ElementInfo
    aim: Aim


async def _drag_path(tab: Tab, start: Aim, end: Point, goal: Goal | None) -> str | None:
    """Press on the source at `start`, move in steps to `end` and release; with a
    `goal`, the release lands on it (followed if the drag moved it), else the answer's
    note says what it landed on."""
    target = tab.target
    note = None
    async with button_down(target, start.point) as button:
        await mouse(target, "mousePressed", start.point, buttons=1, click_count=1)
        await glide(target, button, end)
        if goal is not None:
            note = await _onto_goal(tab, goal, button)
    await mouse(target, "mouseReleased", button.point, buttons=0, click_count=1)
    return note


async def _onto_goal(tab: Tab, goal: Goal, button: ButtonDown) -> str | None:
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
        await mouse(target, "mouseMoved", point, buttons=1)
        button.point = point
        await trio.sleep(FRAME)  # a frame: the page follows the move
    landed = await reaches(target, goal.element, Aim(button.point, goal.aim.origins), tab.latest)
    where = f"on {landed}" if landed else "beside it"
    return (
        f"the drop landed {where}, not on {describe(goal.element, goal.info)}, which moved "
        "away from under the pointer during the drag"
    )


async def drag_select(
    tab: Tab, element: Located, info: ElementInfo, start: Aim, end: Aim
) -> str | None:
    """Select as a person does: press just inside the first character, move to just
    inside the last one with the button held, release; the page's mousedown, moves,
    mouseup and selectionchange all happen. Refused before the press when the start
    is not on the element, steadily (`pointer_stays`); a note when the release could
    not be."""
    target, latest = tab.target, tab.latest
    cover = await pointer_stays(target, element, info, latest, start)
    if cover is not None:
        raise Refusal(
            f"the text to select in {describe(element, info)} is under {cover} once the "
            "pointer is there; nothing was pressed"
        )
    note = None
    async with button_down(target, start.point) as button:
        await mouse(target, "mousePressed", start.point, buttons=1, click_count=1)
        for step in range(1, _SELECT_STEPS + 1):
            share = step / _SELECT_STEPS
            point = Point(
                start.point.x + (end.point.x - start.point.x) * share,
                start.point.y + (end.point.y - start.point.y) * share,
            )
            await mouse(target, "mouseMoved", point, buttons=1)
            button.point = point
        cover = await reaches(target, element, end, latest)
        if cover is not None:
            note = f"the selection ended over {cover}, outside {describe(element, info)}"
    await mouse(target, "mouseReleased", end.point, buttons=0, click_count=1)
    return note


async def aim_onto_goal(
    tab: Tab, source: Located, info: ElementInfo, goal_id: str
) -> tuple[Aim, Goal]:
    """Where a drag of `source` onto the element `goal_id` starts, and its goal; both
    must be in the window together (`Refusal` otherwise, or for a drag onto itself)."""
    target = tab.target
    located = await locate(tab, goal_id)
    goal_info = await element_info(target, located)
    if located.backend_id == source.backend_id and located.session == source.session:
        raise Refusal(f"{describe(source, info)} cannot be dragged onto itself")
    # Each point may scroll the page; both must stand still in one window.
    await aim_at(target, located, goal_info, tab.latest)
    start = await aim_at(target, source, info, tab.latest)
    goal = Goal(located, goal_info, await aim_at(target, located, goal_info, tab.latest))
    if (await aim_at(target, source, info, tab.latest)).point != start.point:
        raise Refusal(
            f"{describe(source, info)} and {describe(located, goal_info)} are not in the "
            "window together, so one cannot be dragged onto the other; drag in steps "
            "(by an offset), or scroll and drag within the window"
        )
    return start, goal


@attrs.frozen
class Grip:
    """Where a resizable element is taken to resize it, and its size before."""

    aim: Aim
    width: int
    height: int


async def aim_at_grip(
    tab: Tab, source: Located, info: ElementInfo, dx: float, dy: float
) -> Grip | None:
    """Where a drag by (`dx`, `dy`) that resizes `source` starts: the corner CSS
    `resize` draws, or a grip drawn at its edge (``resize-grip.js``); None when it is
    not resizable. `Refusal` when the grip is covered or the drag would leave the window."""
    target = tab.target

    async def grip_now() -> Mapping[str, Any] | None:
        found: Mapping[str, Any] | None = await call_on(
            target, source.object_id, script("resize-grip.js"), session_id=source.session
        )
        return found

    if not await grip_now():
        return None  # most elements dragged (a slider, a map): no scroll, no aim
    await aim_at(target, source, info, tab.latest)  # in view, and not all covered
    found = await grip_now()
    if not found:
        return None
    aim = await aim_in_frame(target, source, float(found["x"]), float(found["y"]))
    cover = await reaches(target, source, aim, tab.latest)
    if cover is not None:
        raise Refusal(f"the resize grip of {describe(source, info)} is under {cover}")
    await _within_window(target, source, info, aim.point, dx, dy)
    return Grip(aim, int(found["width"]), int(found["height"]))


async def resized_note(tab: Tab, source: Located, info: ElementInfo, grip: Grip) -> str:
    """What a drag by the grip did to the element's size, read from the page."""
    now = await call_on(
        tab.target, source.object_id, script("element-size.js"), session_id=source.session
    )
    before = f"{grip.width}x{grip.height}"
    after = f"{now['width']}x{now['height']}"
    if before == after:
        return f"{describe(source, info)} kept its size {before} (the page did not resize it)"
    return f"resized {describe(source, info)} from {before} to {after} (CSS px)"


async def _within_window(
    target: Target, source: Located, info: ElementInfo, start: Point, dx: float, dy: float
) -> None:
    """`Refusal` when a drag from `start` by (`dx`, `dy`) would end outside the window."""
    end = Point(start.x + dx, start.y + dy)
    width, height = await viewport_size(target)
    if not (0 <= end.x < width and 0 <= end.y < height):
        raise Refusal(
            f"dragging {describe(source, info)} by ({dx:g}, {dy:g}) would end at "
            f"({end.x:.0f}, {end.y:.0f}), outside the {width:.0f}x{height:.0f} window; "
            "drag by less"
        )


async def aim_by_offset(tab: Tab, source: Located, info: ElementInfo, dx: float, dy: float) -> Aim:
    """Where a drag of `source` by (`dx`, `dy`) starts; `Refusal` when it would end
    outside the window."""
    start = await aim_at(tab.target, source, info, tab.latest)
    await _within_window(tab.target, source, info, start.point, dx, dy)
    return start


async def drag_along(
    tab: Tab,
    source: Located,
    info: ElementInfo,
    start: Aim,
    goal: Goal | None,
    offset: tuple[float, float] = (0.0, 0.0),
) -> str | None:
    """Drag `source` from `start` onto `goal`, or without one by `offset`: the press
    lands on the source (refused when it moves away from the pointer), the release on
    the goal; a note when it could not."""
    start = await pointer_onto(tab.target, source, info, tab.latest, start)
    if goal is None:
        end = Point(start.point.x + offset[0], start.point.y + offset[1])
    else:
        end = goal.aim.point
    return await _drag_path(tab, start, end, goal)
