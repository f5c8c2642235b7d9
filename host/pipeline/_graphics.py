"""Graphics the text cannot describe: a chart or map drawn on a `<canvas>`, an inline
`<svg>` picture, a `<video>`.

What they show lives in pixels only, so the model must at least know they are there
(and where, by an id) to decide when a `screenshot` is worth it, or to click one (a
map, a chart's bar). Each comes out as an element of its own tag with an id, its
accessible name as ``label`` when the page gave one, and its size in CSS pixels.

Not every such element is a picture. Left out: one inside a control (a button's icon
is the button; its name already says it), one hidden from assistive technology
(``aria-hidden="true"``: decoration by the page's own word), and anything smaller
than `MIN_SIDE` on a side (icons beside text, tracking pixels, spacers), which are
everywhere and would cost tokens on every page. An `<svg>` the page marks as an image
(``role="img"``) with a name is kept down to `MIN_NAMED_SIDE`: the page said it means
something. A `<video>` with ``controls`` is a control already (its player).
"""

from __future__ import annotations

from typing import Final

from pycdp_bridge import Node

__all__ = ["GRAPHIC_TAGS", "MIN_SIDE", "graphic_size", "is_graphic"]

GRAPHIC_TAGS: Final = frozenset({"canvas", "svg", "video"})
#: CSS pixels a graphic needs on each side to be told of.
MIN_SIDE: Final = 32
#: The same for an `<svg role="img">` the page named.
MIN_NAMED_SIDE: Final = 16


def is_graphic(node: Node, *, inside_control: bool) -> bool:
    """Whether ``node`` is a graphic the XML tells of (see the module)."""
    if node.name not in GRAPHIC_TAGS or inside_control:
        return False
    if node.attributes.get("aria-hidden", "").strip().lower() == "true":
        return False
    box = node.bounds
    if box is None:
        return False
    named = node.name == "svg" and node.attributes.get("role", "").strip().lower() == "img"
    named = named and bool(node.attributes.get("aria-label", "").strip())
    side = MIN_NAMED_SIDE if named else MIN_SIDE
    return box.width >= side and box.height >= side


def graphic_size(node: Node) -> str:
    """Its size in whole CSS pixels, ``"600x300"`` ('' when it has no box)."""
    box = node.bounds
    if box is None:
        return ""
    return f"{round(box.width)}x{round(box.height)}"
