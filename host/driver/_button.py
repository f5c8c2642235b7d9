"""A held mouse button that is never left down: released even when the call fails or
is cancelled (an outside agent's client went away in the middle of a click)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import attrs
import trio

from pycdp_bridge import CDPError, DialogOpenError, Target, TargetClosedError
from pycdp_bridge import protocol as cdp

from ._element import Point

__all__ = ["ButtonDown", "button_down"]

# How long a release sent on the way out of a failed or cancelled call may wait for
# the page to take it (a page busy in its mousedown handler answers late).
_RELEASE_TIMEOUT = 5.0


@attrs.define
class ButtonDown:
    """Where the held left button is to be let go if the block fails: move it along."""

    point: Point


@contextlib.asynccontextmanager
async def button_down(target: Target, point: Point) -> AsyncIterator[ButtonDown]:
    """The block presses the left button (and may move it); if it fails or is cancelled
    (an outside agent's client went away mid-click), the button is released where it
    is, shielded and bounded: a button left down would make every later move a drag
    and the page wait for a mouseup."""
    held = ButtonDown(point)
    try:
        yield held
    except BaseException:
        with (
            trio.CancelScope(shield=True),
            trio.move_on_after(_RELEASE_TIMEOUT),
            contextlib.suppress(CDPError, TargetClosedError, DialogOpenError),
        ):
            await target.execute(
                cdp.input_dispatch_mouse_event(
                    "mouseReleased",
                    held.point.x,
                    held.point.y,
                    button="left",
                    buttons=0,
                    click_count=1,
                )
            )
        raise
