"""Slider handles without ARIA: where a handle sits along its track.

A slider library that writes no ARIA (jQuery UI's, many hand-made ones) draws each
handle as a small focusable or clickable box positioned along a wider bar, and keeps
the value in script. What a person sees is the handle's place on the bar, so that is
what the XML says: ``<slider value="15%"/>``, the share of the track to the handle's
centre (from the left, or from the bottom of an upright track). A range slider's two
handles are two sliders. The value the page shows in words (``Price: 75-300``) stays
in the text beside it; `drag` (by dx, dy) or the arrow keys on a clicked handle move it.

A handle is told by its markup and its box: a class or id word that names a handle
(handle, thumb, knob), or a parent whose class names a slider (slider, range, track);
a box no larger than `MAX_HANDLE` px on each side; and a parent at least
`TRACK_RATIO` times longer than the handle along one axis, the track.
"""

from __future__ import annotations

import re
from typing import Final

from pycdp_bridge import Node, PageModel

__all__ = ["track_position"]

#: The largest handle, in CSS px on each side.
MAX_HANDLE: Final = 48
#: A track is at least this many times as long as its handle.
TRACK_RATIO: Final = 3
_HANDLE_WORD = re.compile(r"(?:^|[-_])(?:handle|thumb|knob)(?:$|[-_])", re.IGNORECASE)
_TRACK_WORD = re.compile(r"(?:^|[-_])(?:slider|range|track|rail)(?:$|[-_])", re.IGNORECASE)


def track_position(model: PageModel, node: Node) -> int | None:
    """The handle's place on its track in whole percent, or None when ``node`` is no
    slider handle (see the module)."""
    box = node.bounds
    track = model.parent_of(node)
    if box is None or track is None or track.bounds is None:
        return None
    if box.width > MAX_HANDLE or box.height > MAX_HANDLE or box.width <= 0:
        return None
    own = " ".join((node.attributes.get("class", ""), node.attributes.get("id", ""))).split()
    around = track.attributes.get("class", "").split()
    if not any(_HANDLE_WORD.search(w) for w in own) and not any(
        _TRACK_WORD.search(w) for w in around
    ):
        return None
    bar = track.bounds
    if bar.width >= TRACK_RATIO * box.width and bar.width > bar.height:
        share = (box.x + box.width / 2 - bar.x) / bar.width
    elif bar.height >= TRACK_RATIO * box.height and bar.height > bar.width:
        share = 1 - (box.y + box.height / 2 - bar.y) / bar.height
    else:
        return None
    return round(min(1.0, max(0.0, share)) * 100)
