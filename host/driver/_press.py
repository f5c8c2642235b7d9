"""Pressing an element with the mouse so that the press lands on it and nowhere else.

A page may move its layout when the pointer arrives (a ``:hover`` border that makes a
list overflow and its items wrap, a ``mouseover`` handler that inserts a hint above)
or when the button goes down (an ``:active`` image not loaded yet). So the point the
hit test gave to the element before the pointer moved is tested again once the page
reacted: after the move (`pointer_onto`) and again after the press, before the
release (`press_element`). When the point no longer reaches the element the pointer
re-aims at the element's new box, a bounded number of times, and waits a bounded
while for an element that left (collapsed, hidden) to come back; if it does not,
nothing is pressed (`Refusal`), or, when the button is already down, the release
lands where the pointer is and the answer says so. A witness in Trimtab's own world
of the element's frame tells which element each press and release reached.

One hit test sees one moment. A hover that moves the element away also hovers what
came under the pointer, whose hover may move the element back: the layout then flips
at every frame under a still pointer, and a press one round trip after the hit test
lands in either phase. So before each press the witness also watches the pointer for
a rendered frame and until the hit test (`Witness.watch_pointer`), and a pointer that
went over anything else meanwhile counts as one that moved away.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
import trio

from pycdp_bridge import CDPError, JavaScriptError, Target, call_on
from pycdp_bridge import protocol as cdp

from ..pipeline import Compaction
from ._button import ButtonDown, button_down
from ._element import (
    Aim,
    Covered,
    ElementInfo,
    Located,
    Point,
    Refusal,
    aim_at,
    cover_description,
    describe,
    own_object,
    reaches,
)
from ._scripts import script

__all__ = [
    "PageLeft",
    "Witness",
    "click_element",
    "pointer_onto",
    "pointer_stays",
    "press_element",
    "watch_presses",
    "witness_note",
]

# Moves onto the element's new box before the pointer gives up on an element that
# keeps moving away from it.
_REAIM_TRIES = 4
# The pause before a re-aim: the page lays out what the pointer changed.
_REAIM_PAUSE = 0.02
# How long the pointer waits for an element that left it (collapsed to no size while
# its hover image loads, hidden by its own mouseover) to come back.
_COME_BACK = 1.0
# How long the pointer's watch (`Witness.watch_pointer`) waits for a frame in a shown
# document (a hidden one renders none and updates no hover, and is not waited for). A
# frame takes 16 ms on an idle machine, but far longer on a loaded one: with 100 ms, a
# busy run's check ended before any frame began, watched nothing, and the press landed
# in the layout's other phase.
_FRAME_WAIT_MS = 1000
# What a failed witness read means: the page went away (a navigation), or the world
# could not be made; the answer then says nothing about where the presses went.
_UNKNOWN = (CDPError, JavaScriptError, KeyError, TypeError, ValueError)


class PageLeft(Refusal):
    """The element's document went away as the pointer reached it (the hover navigated
    or replaced the page): nothing can be checked there, so nothing is pressed."""


async def _still_reaches(
    target: Target, element: Located, info: ElementInfo, latest: Compaction | None, aim: Aim
) -> str | None:
    """`reaches`, or `PageLeft` when the element's document can no longer be asked."""
    try:
        return await reaches(target, element, aim, latest)
    except (CDPError, JavaScriptError) as exc:
        raise PageLeft(
            f"the page changed as the pointer reached {describe(element, info)} ({exc}); "
            "nothing was pressed; take a snapshot"
        ) from exc


async def _move(target: Target, point: Point, button: ButtonDown | None) -> None:
    if button is None:
        await target.execute(cdp.input_dispatch_mouse_event("mouseMoved", point.x, point.y))
        return
    await target.execute(
        cdp.input_dispatch_mouse_event("mouseMoved", point.x, point.y, button="left", buttons=1)
    )
    button.point = point


async def pointer_onto(
    target: Target,
    element: Located,
    info: ElementInfo,
    latest: Compaction | None,
    aim: Aim,
    *,
    button: ButtonDown | None = None,
    there: bool = False,
    witness: Witness | None = None,
) -> Aim:
    """Move the pointer to `aim` (unless it is `there` already) and make sure the element
    is still under it once the page reacted: re-aim at the element's new box (bounded
    tries, a bounded wait for an element that left), or `Refusal` naming what is under
    the pointer now (`PageLeft` when the page went away meanwhile). Before a press
    the pointer must also stay on the element from a rendered frame until the hit test
    (`Witness.watch_pointer`): `witness` watches it, else one watches for this call
    alone. With the ``button`` down the page is not scrolled, the moves carry the
    button, and only the hit test checks, so the page sees one press dragged back onto
    the element."""
    if witness is None and button is None:
        own = await _watch_after_moving(target, element, aim, there)
        try:
            return await pointer_onto(target, element, info, latest, aim, there=True, witness=own)
        finally:
            await own.stop()
    deadline = trio.current_time() + _COME_BACK
    moves = 0
    if not there:
        await _move(target, aim.point, button)
        moves = 1
    cover, flipped = await _under_pointer(target, element, info, latest, aim, witness)
    while cover is not None:
        if moves > _REAIM_TRIES or trio.current_time() >= deadline:
            raise Refusal(_left_pointer(element, info, aim, cover, flipped, moves))
        await trio.sleep(_REAIM_PAUSE)
        try:
            aim = await aim_at(target, element, info, latest, scroll=button is None)
        except Covered:
            if button is not None:
                # The button is down and the element is still there, but something the
                # press brought up (an overlay shown on focus) lies over all of it: no
                # re-aim can reach it, so the release goes where it is, at once.
                raise
            continue
        except (Refusal, CDPError):
            # Gone from under the pointer for now (no size, covered, or out of the
            # document while the page re-renders it): wait for it.
            continue
        await _move(target, aim.point, button)
        moves += 1
        cover, flipped = await _under_pointer(target, element, info, latest, aim, witness)
    return aim


async def pointer_stays(
    target: Target, element: Located, info: ElementInfo, latest: Compaction | None, aim: Aim
) -> str | None:
    """Move the pointer to `aim` and say what is under it instead of the element once
    the page reacted, watched from a rendered frame through the hit test as before a
    press (None: the element stays under it), with no re-aim: for a press whose point
    the caller chose (a selection's first character), which another point would not
    serve."""
    witness = await _watch_after_moving(target, element, aim, False)
    try:
        cover, _ = await _under_pointer(target, element, info, latest, aim, witness)
    finally:
        await witness.stop()
    return cover


async def _watch_after_moving(target: Target, element: Located, aim: Aim, there: bool) -> Witness:
    """A witness of the element, made once the pointer moved to `aim` (unless it is
    `there` already) and already watching the pointer there: it returns once the page
    rendered a frame (`watch_presses`)."""
    if not there:
        await _move(target, aim.point, None)
    return await watch_presses(target, element)


async def _under_pointer(
    target: Target,
    element: Located,
    info: ElementInfo,
    latest: Compaction | None,
    aim: Aim,
    witness: Witness | None,
) -> tuple[str | None, bool]:
    """What is under the pointer instead of the element (None: the element), and whether
    that came and went under the still pointer (the layout flips). The witness watches
    from a rendered frame before the hit test until after it, so no frame between the
    two goes unwatched."""
    if witness is None:
        return await _still_reaches(target, element, info, latest, aim), False
    await witness.watch_pointer()
    cover = await _still_reaches(target, element, info, latest, aim)
    went = await witness.pointer_went()
    if cover is None and went is not None:
        return went, True
    return cover, False


def _left_pointer(
    element: Located, info: ElementInfo, aim: Aim, cover: str, flipped: bool, moves: int
) -> str:
    """The refusal for an element the pointer could not stay on."""
    named = describe(element, info)
    at = f"({aim.point.x:.0f}, {aim.point.y:.0f})"
    if flipped:
        return (
            f"{named} does not stay under the pointer: as the page reacts to the hover, "
            f"{cover} comes under the still pointer at {at} and goes again (the layout "
            f"changes back and forth), after {moves} tries to find a steady point; nothing "
            "was pressed there. Take a snapshot and try again."
        )
    return (
        f"{named} moved away from under the pointer as the page reacted to it (its "
        f"layout changes on hover or on press): the point {at} is now over {cover}, after "
        f"{moves} tries to follow it; nothing was pressed there. Take a snapshot and try "
        "again."
    )


async def press_element(
    target: Target,
    element: Located,
    info: ElementInfo,
    latest: Compaction | None,
    aim: Aim,
    *,
    click_count: int = 1,
) -> tuple[Aim, str | None]:
    """Press and release the left button on the element, the pointer being on `aim`
    (see `pointer_onto`). The point is hit-tested again once the button is down: an
    element the press moved is followed with the button held, so that the release
    lands on it too. Returns where the pointer is and, when the release could not be
    brought back onto the element, what it landed on instead."""
    missed: str | None = None
    async with button_down(target, aim.point) as button:
        await target.execute(
            cdp.input_dispatch_mouse_event(
                "mousePressed", aim.point.x, aim.point.y, button="left", click_count=click_count
            )
        )
        try:
            aim = await pointer_onto(target, element, info, latest, aim, button=button, there=True)
        except PageLeft:
            aim = Aim(button.point, aim.origins)  # the press took the page elsewhere
        except Refusal:
            aim = Aim(button.point, aim.origins)
            try:
                missed = await reaches(target, element, aim, latest)
            except (CDPError, JavaScriptError):
                missed = None  # the page went away meanwhile: nothing to name
    await target.execute(
        cdp.input_dispatch_mouse_event(
            "mouseReleased", aim.point.x, aim.point.y, button="left", click_count=click_count
        )
    )
    return aim, missed


async def click_element(
    target: Target,
    element: Located,
    info: ElementInfo,
    latest: Compaction | None,
    aim: Aim,
    *,
    clicks: int = 1,
) -> str | None:
    """A person's click (`clicks` 2: double-click) on the element, aimed at `aim`: the
    pointer moves there and must still be on the element, steadily, once the page
    reacted (`pointer_onto`, else `Refusal` and nothing is pressed), each press and release
    is checked (`press_element`), and a witness watches where they went. Returns the
    answer's note when they did not all reach the element, else None."""

    witness = await _watch_after_moving(target, element, aim, False)
    try:
        aim = await pointer_onto(target, element, info, latest, aim, there=True, witness=witness)
    except Refusal:
        await witness.note(info, clicks)  # stops watching
        raise
    missed: str | None = None
    for count in range(1, clicks + 1):
        if count > 1:
            # The first click may have moved or hidden it, or left the page: the next
            # press follows it or is not made.
            try:
                aim = await pointer_onto(
                    target, element, info, latest, aim, there=True, witness=witness
                )
            except Refusal:
                unpressed = (
                    f"{describe(element, info)} left the pointer after click {count - 1} of "
                    f"{clicks}, so the rest were not pressed"
                )
                note = await witness.note(info, count - 1)
                return unpressed if note is None else f"{note}; {unpressed}"
        aim, missed_now = await press_element(target, element, info, latest, aim, click_count=count)
        missed = missed or missed_now
    note = await witness.note(info, clicks)
    if note is None and missed is not None and not witness.known:
        note = (
            f"the press landed on {describe(element, info)} but it moved away from under the "
            f"pointer before the release, which landed on {missed}"
        )
    return note


@attrs.define(eq=False)
class Witness:
    """Which mouse presses of the element's document reached the element, and what
    got the others, watched from Trimtab's own world (`watch_presses`)."""

    target: Target
    element: Located
    record: str | None  # the watching record's object id; None: not watching
    # Whether the pointer's watch is open: begun (as the witness was made, where the
    # pointer had just arrived, or by `watch_pointer`) and not yet ended by `pointer_went`.
    pointer_watched: bool = True

    @property
    def known(self) -> bool:
        """Whether the witness watches (it could not in a page that went away)."""
        return self.record is not None

    async def watch_pointer(self) -> None:
        """Begin watching whether the still pointer stays on the element, and return once
        the page rendered a frame (``press-witness-watch-pointer.js``), unless a watch is
        open already; `pointer_went` ends the watch."""
        if self.record is None or self.pointer_watched:
            return
        self.pointer_watched = True
        try:
            await call_on(
                self.target,
                self.record,
                script("press-witness-watch-pointer.js"),
                _FRAME_WAIT_MS,
                session_id=self.element.session,
            )
        except _UNKNOWN:
            return  # the page left: the hit test that follows says so

    async def pointer_went(self) -> str | None:
        """End the watch `watch_pointer` began: what the still pointer went over outside
        the element meanwhile (``press-witness-pointer-went.js``); None when it stayed on
        the element, or when the witness cannot tell."""
        if self.record is None:
            return None
        self.pointer_watched = False
        try:
            went: Mapping[str, Any] | None = await call_on(
                self.target,
                self.record,
                script("press-witness-pointer-went.js"),
                session_id=self.element.session,
            )
        except _UNKNOWN:
            return None
        return None if went is None else cover_description(went, None)

    async def stop(self) -> None:
        """Stop watching, reading nothing."""
        await self._read()

    async def note(self, info: ElementInfo, clicks: int) -> str | None:
        """What to tell the model when the presses did not all reach the element (None
        when they did, or when the page went away and cannot tell)."""
        seen = await self._read()
        return None if seen is None else witness_note(describe(self.element, info), seen, clicks)

    async def _read(self) -> Mapping[str, Any] | None:
        """Stop watching and say what the witness saw (``press-witness-read.js``); None
        when it was not watching or the page went away."""
        if self.record is None:
            return None
        try:
            seen: Mapping[str, Any] = await call_on(
                self.target,
                self.record,
                script("press-witness-read.js"),
                session_id=self.element.session,
            )
        except _UNKNOWN:
            return None
        return seen


def witness_note(named: str, seen: Mapping[str, Any], clicks: int) -> str | None:
    """The note for what the witness `seen` (``press-witness-read.js``) of `clicks`
    clicks on the element `named`; None when every press, release and click reached it."""
    inside: Mapping[str, int] = seen.get("inside") or {}
    elsewhere: list[Mapping[str, Any]] = list(seen.get("elsewhere") or [])

    def other(kind: str) -> str | None:
        for facts in elsewhere:
            if facts.get("type") == kind:
                return cover_description(facts, None)
        return None

    counts = {kind: int(inside.get(kind, 0)) for kind in ("mousedown", "mouseup", "click")}
    if not any(counts.values()):
        went = other("mousedown") or other("click")
        where = f": the press went to {went}" if went else ""
        return f"{named} received no mouse event{where}; the page may not have heard the action"
    if all(count >= clicks for count in counts.values()):
        return None
    if counts["mouseup"] < clicks and (released := other("mouseup")) is not None:
        clicked = other("click")
        went = f"the page's click went to {clicked}" if clicked else "the page heard no click"
        return (
            f"the press landed on {named} but the release on {released} (it moved away "
            f"from under the pointer), so {went}; see whether it did what you meant"
        )
    return (
        f"{named} got {counts['mousedown']} press(es), {counts['mouseup']} release(s) and "
        f"{counts['click']} click(s) of {clicks}: the page stopped or redirected the others"
    )


async def watch_presses(target: Target, element: Located) -> Witness:
    """Start watching which element each press of the element's document reaches, and
    the pointer too (as `Witness.watch_pointer` does), returning once the page rendered
    a frame."""
    try:
        record = await call_on(
            target,
            await own_object(target, element),
            script("press-witness.js"),
            _FRAME_WAIT_MS,
            return_by_value=False,
            session_id=element.session,
        )
    except _UNKNOWN:
        return Witness(target, element, None)
    object_id = record.get("objectId")
    return Witness(target, element, None if object_id is None else str(object_id))
