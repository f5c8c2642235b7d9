"""Dragging an item of a sortable list or grid onto another: before or after it when
asked, and the answer says where it landed.

Libraries decide differently where a dragged item goes. jQuery UI's sortable puts it
before an item once the pointer moves up (or left) into that item's leading half, and
after it once the pointer moves down (or right) into its trailing half; SortableJS
moves it to the other side of an item as soon as the pointer enters it. One approach
serves both because it is checked as it goes, not assumed: the pointer comes first to
the goal's other half, then, while the place a release would give the item
(``sortable-order.js``: the item itself, or the library's placeholder) is not the one
asked, it moves into the asked half of the goal where the goal is now, travelling the
way that half faces. After the release the page's own order is read; a drop that did
not land as asked is dragged once more from where the item is, and then said plainly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

import attrs
import trio

from pycdp_bridge import CDPError, JavaScriptError, ObjectRef, call_on

from ..tab import Tab
from ._button import ButtonDown, button_down
from ._drag import FRAME, Goal, drag_along, glide, mouse
from ._element import Aim, Box, ElementInfo, Located, Point, Refusal, aim_at, visible_boxes
from ._naming import describe
from ._press import pointer_onto
from ._scripts import script

__all__ = ["PLACES", "Place", "drag_onto"]

Place = Literal["before", "after"]
PLACES: Final[tuple[Place, ...]] = ("before", "after")

# Where along the goal (a share of its length in the flow's direction) the pointer
# ends for each place, and where it comes from to travel there the way that place faces.
_SHARE: Final[Mapping[Place, float]] = {"before": 0.25, "after": 0.75}
_APPROACH: Final[Mapping[Place, float]] = {"before": 0.75, "after": 0.25}
# Moves of a leg within or beside the goal (the first leg, from the source, takes a
# whole drag's); legs after the first, at most; frames a moved goal may take to settle.
_LEG_STEPS = 6
_LEGS = 4
_STILL_FRAMES = 8


@attrs.frozen
class _Order:
    """Where the dragged item stands against the goal (``sortable-order.js``)."""

    order: Place | None  # the item's own side of the goal among the goal's siblings
    apart: int  # items between the two
    slot: str | None  # where a release now would put it: a place, "apart" or unknown
    index: int  # its index among the goal's siblings, -1 when not one of them
    axis: str  # "x" when items stand side by side, else "y"
    forward: int  # 1 when the next item lies right or below, -1 when reversed


async def _order(tab: Tab, source: Located, goal: Located) -> _Order | None:
    """The item's place against the goal, or None when it cannot be read (the two are
    in different frames, or one left the document)."""
    if source.session != goal.session:
        return None
    try:
        found: Mapping[str, Any] = await call_on(
            tab.target,
            goal.object_id,
            script("sortable-order.js"),
            ObjectRef(source.object_id),
            session_id=goal.session,
        )
    except (CDPError, JavaScriptError):
        return None
    slot = found.get("slot")
    return _Order(
        _place(found.get("order")),
        int(found.get("apart", 0)),
        str(slot) if slot is not None else None,
        int(found.get("index", -1)),
        "x" if found.get("axis") == "x" else "y",
        -1 if found.get("forward") == -1 else 1,
    )


def _place(value: object) -> Place | None:
    return "before" if value == "before" else "after" if value == "after" else None


async def _after_drop(tab: Tab, source: Located, goal: Located) -> _Order | None:
    """The order once the page handled the drop: read until two frames agree (a page
    that re-renders its list after the drop takes a frame or more)."""
    now = await _order(tab, source, goal)
    for _ in range(_STILL_FRAMES):
        await trio.sleep(FRAME)
        later = await _order(tab, source, goal)
        if later == now:
            break
        now = later
    return now


async def drag_onto(
    tab: Tab, source: Located, info: ElementInfo, start: Aim, goal: Goal, place: Place | None
) -> str | None:
    """Drag `source` from `start` onto `goal`, or with `place` so that it lands just
    before or after it; the note says where it landed when both are items of one
    container (and plainly when that is not where it was asked to land)."""
    if place is None:
        before = await _order(tab, source, goal.element)
        note = await drag_along(tab, source, info, start, goal)
        where = await _landed_note(tab, source, info, goal, before)
        return "; ".join(n for n in (where, note) if n) or None
    flow = await _order(tab, source, goal.element)
    named, goal_named = describe(source, info), describe(goal.element, goal.info)
    if flow is None:
        raise Refusal(
            f"{named} and {goal_named} are in different frames: an item is placed before "
            "or after another of its own list; drag it onto the other without place"
        )
    landed: _Order | None = None
    for attempt in range(2):
        if attempt:
            # Once more from where the first drop left it.
            start = await aim_at(tab.target, source, info, tab.latest)
        start = await pointer_onto(tab.target, source, info, tab.latest, start)
        await _drag_to_place(tab, source, start, goal, place, flow)
        landed = await _after_drop(tab, source, goal.element)
        if landed is not None and (landed.order, landed.apart) == (place, 0):
            again = " (on a second drag: the first did not land there)" if attempt else ""
            return f"{named} landed {place} {goal_named}{again}"
    if landed is None or landed.order is None:
        return (
            f"NOT placed as asked: after two drags {named} is not an item beside "
            f"{goal_named} in its list; see where it is now"
        )
    where = f"{landed.order} {goal_named}"
    if landed.apart:
        where = f"{landed.apart} item(s) {where}"
    return (
        f"NOT placed as asked: {named} landed {where}, not just {place} it, in two drags "
        "(the page decides where a dropped item may go)"
    )


async def _landed_note(
    tab: Tab, source: Located, info: ElementInfo, goal: Goal, before: _Order | None
) -> str | None:
    """Where a drag onto a sibling item left the source, read from the page."""
    after = await _after_drop(tab, source, goal.element)
    if after is None or after.order is None:
        return None
    named, goal_named = describe(source, info), describe(goal.element, goal.info)
    where = f"{after.order} {goal_named}"
    if after.apart:
        where = f"{after.apart} item(s) {where}"
    if before is not None and (before.order, before.index) == (after.order, after.index):
        return f"{named} stayed where it was, {where}"
    return f"{named} landed {where}"


async def _drag_to_place(
    tab: Tab, source: Located, start: Aim, goal: Goal, place: Place, flow: _Order
) -> None:
    """Press on the source, come to the goal's other half, then move into the asked
    half of the goal where it is now until the item's slot is the asked one (or the
    legs run out, or the slot cannot be read: then after one leg there); release."""
    target = tab.target
    async with button_down(target, start.point) as button:
        await mouse(target, "mousePressed", start.point, buttons=1, click_count=1)
        box = await _still_box(tab, goal.element)
        if box is not None:
            await _leg(tab, button, _spot(box, flow, _APPROACH[place]), steps=None)
        aimed = False
        for _ in range(_LEGS):
            box = await _still_box(tab, goal.element)
            now = await _order(tab, source, goal.element)
            if box is None or now is None or now.slot == place or (now.slot is None and aimed):
                break
            spot = _spot(box, flow, _SHARE[place])
            aimed = _travels(button.point, spot, flow, place)
            if not aimed:
                # On the wrong side to travel into the asked half: back to the other one.
                spot = _spot(box, flow, _APPROACH[place])
            await _leg(tab, button, spot, steps=_LEG_STEPS)
    await mouse(target, "mouseReleased", button.point, buttons=0, click_count=1)


async def _leg(tab: Tab, button: ButtonDown, spot: Point, steps: int | None) -> None:
    """Glide to `spot`, then, once a library that ignores moves right after it moved
    an item (SortableJS, for 30 ms) listens again, one pixel further the same way."""
    start = button.point
    if steps is None:
        await glide(tab.target, button, spot)
    else:
        await glide(tab.target, button, spot, steps)
    await trio.sleep(2 * FRAME)
    dx, dy = spot.x - start.x, spot.y - start.y
    length = max(abs(dx), abs(dy)) or 1.0
    await glide(tab.target, button, Point(spot.x + dx / length, spot.y + dy / length), 1)


async def _still_box(tab: Tab, goal: Located) -> Box | None:
    """The goal's largest visible box once it stopped moving (a list animating its
    items into place), a few frames at most; None when it has none."""
    try:
        boxes = await visible_boxes(tab.target, goal)
        for _ in range(_STILL_FRAMES):
            await trio.sleep(FRAME)
            later = await visible_boxes(tab.target, goal)
            if later == boxes:
                break
            boxes = later
    except CDPError:  # the goal left the document (re-rendered by the drag)
        return None
    return boxes[0] if boxes else None


def _spot(box: Box, flow: _Order, share: float) -> Point:
    """The point `share` of the way along `box` in the flow's direction, centred across it."""
    left, top, right, bottom = box
    if flow.forward < 0:
        share = 1 - share
    if flow.axis == "x":
        return Point(left + (right - left) * share, (top + bottom) / 2)
    return Point((left + right) / 2, top + (bottom - top) * share)


def _travels(point: Point, spot: Point, flow: _Order, place: Place) -> bool:
    """Moving from `point` to `spot` goes the way `place` faces: back along the flow
    for before, forward for after."""
    along = (spot.x - point.x) if flow.axis == "x" else (spot.y - point.y)
    along *= flow.forward
    return along < 0 if place == "before" else along > 0
