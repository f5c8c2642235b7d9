"""Stage 1, signal filtering: decide which nodes a person can see.

One pass in document order (parents before children) marks every node visible or
not and counts why; a second step drops leaves (text and interactive elements)
that opaque elements painted above them cover completely.

What we keep on purpose, because a person sees it or innerText has it: text of a
single character (it may be a digit or "&"), text clipped by `overflow: hidden`
(carousels), text below the fold, and screen-reader-only text (it names icon
buttons). Whitespace-only text is kept as a word separator, never as content.
"""

from __future__ import annotations

import re
from collections import Counter

import attrs

from pycdp_bridge import Node, NodeType, PageModel, Rect

from ._roles import INTERACTIVE_ROLES, NATIVE_CLICKABLE_TAGS, NOISE_TAGS, aria_role
from ._scripted import draggable

__all__ = ["Visibility", "filter_page"]

# Reasons a node (and its subtree) is dropped; the stats count elements per reason.
NOISE = "noise"
NOT_RENDERED = "not_rendered"
TRANSPARENT = "transparent"
ARIA_HIDDEN = "aria_hidden"
INVISIBLE = "visibility_hidden"
ZERO_SIZE = "zero_size"
OCCLUDED = "occluded"
EMPTY_CONTAINER = "empty_container"

# A cover must hide at least this much alpha to hide what is under it.
_OPAQUE_ALPHA = 0.8
_MIN_COVER_SIDE = 4.0
_WORD = re.compile(r"\w")
_RGBA = re.compile(r"rgba?\(\s*([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)(?:\s*[,/]\s*([\d.]+%?))?\s*\)")


@attrs.define(slots=True)
class Visibility:
    """The result of stage 1: per node index, whether it is shown, and why not."""

    # Node shows its own content: text nodes their text, elements their box.
    shown: list[bool]
    # The whole subtree is gone (noise tag, display:none, opacity 0, aria-hidden).
    removed: list[bool]
    dropped: Counter[str]
    # Node index → index of the element that covers it (for "occluded" leaves).
    covered_by: dict[int, int]
    degraded: bool


def filter_page(model: PageModel) -> Visibility:
    """Mark what a person can see on the page."""
    nodes = model.nodes
    count = len(nodes)
    shown = [False] * count
    removed = [False] * count
    dropped: Counter[str] = Counter()
    # Without a DOMSnapshot we know nothing about layout: keep everything not
    # hidden by markup, and say so in the stats.
    degraded = "dom_snapshot" in model.missing
    effective_opacity = [1.0] * count
    # Bound once: an enum member looked up on its class costs 0.1 µs (Python 3.11).
    text, element = NodeType.TEXT, NodeType.ELEMENT

    for node in nodes:
        i = node.index
        parent = node.parent
        if parent >= 0 and removed[parent]:
            removed[i] = True
            continue
        if parent >= 0:
            effective_opacity[i] = effective_opacity[parent]
        kind = node.node_type
        if kind is text:
            # Inside a transparent control that stays clickable, text is still unseen.
            # Without a snapshot all text shows; with one, text with a box, visible.
            if degraded:
                shown[i] = effective_opacity[i] > 0.0
            else:
                bounds, style = node.bounds, node.style
                shown[i] = (
                    effective_opacity[i] > 0.0
                    and bounds is not None
                    and not bounds.is_empty()
                    and (style is None or style.visibility == "visible")
                )
            continue
        if kind is not element:
            shown[i] = True
            continue
        reason = _removal_reason(model, node, degraded)
        if (
            reason is None
            and node.attributes.get("aria-hidden") == "true"
            and not _has_rendered_words(model, node)
            and not _has_operable(model, node)
        ):
            reason = ARIA_HIDDEN
        style = node.style
        if reason is None and style is not None:
            effective_opacity[i] *= style.opacity
            if effective_opacity[i] <= 0.0 and not _transparent_control(node):
                reason = TRANSPARENT
        if reason is not None:
            removed[i] = True
            dropped[reason] += 1
            continue
        if degraded:
            shown[i] = True
        elif node.bounds is None or style is None:
            # No box of its own (display:contents, or an inline that only wraps
            # blocks): its children are judged one by one.
            shown[i] = False
        elif style.visibility != "visible":
            shown[i] = False
            dropped[INVISIBLE] += 1
        elif node.bounds.is_empty():
            shown[i] = False
            if not node.children:
                dropped[ZERO_SIZE] += 1
        else:
            shown[i] = True

    covered_by: dict[int, int] = {}
    if not degraded:
        covered_by = _occluded(model, shown, removed)
        for i in covered_by:
            shown[i] = False
        dropped[OCCLUDED] += sum(1 for i in covered_by if nodes[i].is_element)
    return Visibility(shown, removed, dropped, covered_by, degraded)


def _renders_below(model: PageModel, node: Node) -> bool:
    return any(inner.style is not None for inner in model.nodes[node.index + 1 : node.end])


def _removal_reason(model: PageModel, node: Node, degraded: bool) -> str | None:
    if node.name in NOISE_TAGS:
        return NOISE
    if degraded:
        return None if "hidden" not in node.attributes else NOT_RENDERED
    style = node.style
    if style is not None:
        return NOT_RENDERED if style.display == "none" else None
    if node.name in ("option", "optgroup"):
        return None  # a closed <select> draws its options itself; the select lists them
    # No layout object: display:none (nothing below is rendered either) or
    # display:contents (its children are); tell them apart by the subtree.
    return None if _renders_below(model, node) else NOT_RENDERED


def _has_rendered_words(model: PageModel, node: Node) -> bool:
    # aria-hidden hides a subtree from screen readers, not from eyes: icons and
    # decorative glyphs go, but rendered words stay, since a person reads them.
    for inner in model.nodes[node.index + 1 : node.end]:
        if inner.is_text and inner.bounds is not None and _WORD.search(inner.text):
            return True
    return False


def _has_operable(model: PageModel, node: Node) -> bool:
    # aria-hidden="true" spinner arrows, a sortable row's grip: hidden from screen
    # readers, but a person sees, clicks and drags them. An element with a role a
    # person acts on (a button, or any role given by ARIA), a click handler, a
    # place in the tab order or a drag cursor, and a box, keeps its subtree. A
    # link taken out of the tab order (tabindex="-1") is a duplicate the page hid
    # (the image link of a card beside its title link), and a bare field there is
    # a trap for bots (a honeypot); a widget's arrows out of the tab order
    # (jQuery UI's spinner) are the only way to click.
    for inner in model.nodes[node.index : node.end]:
        if not inner.is_element or inner.bounds is None or inner.bounds.is_empty():
            continue
        attributes = inner.attributes
        tabindex = attributes.get("tabindex", "").strip()
        if tabindex.startswith("-") and "href" in attributes:
            continue
        role = attributes.get("role", "").split()
        if (
            (role[0].lower() in INTERACTIVE_ROLES if role else inner.name == "button")
            or tabindex.isdigit()
            or (inner.clickable and inner.name not in NATIVE_CLICKABLE_TAGS)
            or draggable(model, inner)
        ):
            return True
    return False


def _transparent_control(node: Node) -> bool:
    # Custom checkboxes and file pickers put the real control, at opacity 0, over
    # the styled one, and card layouts lay a transparent link over the whole card:
    # it is what a click reaches, so it stays (its own text stays hidden).
    bounds = node.bounds
    if bounds is None or bounds.is_empty():
        return False
    return node.name in ("input", "select", "textarea") or aria_role(node) in INTERACTIVE_ROLES


def _alpha(color: str) -> float:
    if color in ("transparent", ""):
        return 0.0
    match = _RGBA.match(color)
    if match is None:
        return 1.0  # named colours and other syntaxes are opaque
    raw = match.group(4)
    if raw is None:
        return 1.0
    return float(raw[:-1]) / 100.0 if raw.endswith("%") else float(raw)


def _is_cover(node: Node, shown: list[bool]) -> bool:
    style = node.style
    if style is None:
        return False
    if style.position not in ("fixed", "absolute", "sticky") and style.z_index == "auto":
        return False
    bounds = node.bounds
    if bounds is None or not shown[node.index]:
        return False
    if style.pointer_events == "none":
        # A click-through overlay: everything under it can still be clicked.
        return False
    if style.opacity < _OPAQUE_ALPHA or _alpha(style.background_color) < _OPAQUE_ALPHA:
        return False
    return bounds.width >= _MIN_COVER_SIDE and bounds.height >= _MIN_COVER_SIDE


def _paint_order(model: PageModel, node: Node) -> int | None:
    current: Node | None = node
    while current is not None:
        if current.paint_order is not None:
            return current.paint_order
        current = model.parent_of(current)
    return None


def _occluded(model: PageModel, shown: list[bool], removed: list[bool]) -> dict[int, int]:
    """Leaves fully covered by opaque positioned elements painted above them.

    Only the part of a leaf its clipping boxes let be drawn can be covered (see
    `_drawn_part`): content moving through a clipping box (a marquee) is judged
    the same wherever it stands, so its ids do not come and go between captures.
    """
    nodes = model.nodes
    element = NodeType.ELEMENT
    covers = [
        n for n in nodes if n.node_type is element and not removed[n.index] and _is_cover(n, shown)
    ]
    if not covers:
        return {}
    covers.sort(key=lambda n: n.paint_order or 0, reverse=True)
    clips = _clips(model)
    covered: dict[int, int] = {}
    for node in nodes:
        i = node.index
        if removed[i] or not shown[i] or node.bounds is None:
            continue
        if not (node.is_text or _is_interactive_leaf(node)):
            continue
        order = _paint_order(model, node)
        if order is None:
            continue
        pieces = [_drawn_part(node.bounds, clips[i])]
        first_cover = -1
        for cover in covers:
            cover_order = cover.paint_order or 0
            if cover_order <= order:
                break
            # A cover never hides its own content, nor the control it is part of:
            # a click on it reaches the control (an image laid over a button's
            # words is the button's face).
            if cover.index <= i < cover.end or i < cover.index < node.end:
                continue
            assert cover.bounds is not None
            if not any(p.intersects(cover.bounds) for p in pieces):
                continue
            pieces = _subtract_all(pieces, cover.bounds)
            if first_cover < 0:
                first_cover = cover.index
            if not pieces:
                covered[i] = first_cover
                break
    return covered


def _clips(model: PageModel) -> list[Rect | None]:
    """Per node, the box its ancestors clip it to (None: not clipped), as the
    browser paints: an element whose `overflow` is not visible clips what it
    contains on that axis; an absolutely positioned box escapes the clips between
    it and its containing block (the nearest positioned ancestor), a fixed one all
    of them. The root and body clip the viewport, not their own boxes, and another
    document is not clipped by its frame here (both: judged whole, as before)."""
    nodes = model.nodes
    clips: list[Rect | None] = [None] * len(nodes)
    # What the node's in-flow content is clipped to, and its absolute content.
    inner: list[Rect | None] = [None] * len(nodes)
    positioned: list[Rect | None] = [None] * len(nodes)
    element, shadow = NodeType.ELEMENT, NodeType.SHADOW_ROOT
    for node in nodes:
        i, parent = node.index, node.parent
        if parent < 0 or node.node_type not in (element, shadow, NodeType.TEXT):
            continue  # a document: its own viewport
        style = node.style
        position = style.position if style is not None and node.is_element else "static"
        if position == "fixed":
            clip = None
        elif position == "absolute":
            clip = positioned[parent]
        else:
            clip = inner[parent]
        clips[i] = clip
        if node.node_type is not element and node.node_type is not shadow:
            continue
        inner[i] = clip
        positioned[i] = clip if position != "static" else positioned[parent]
        bounds = node.bounds
        if style is None or bounds is None or node.name in ("html", "body"):
            continue
        clip_x, clip_y = style.overflow_x != "visible", style.overflow_y != "visible"
        if clip_x or clip_y:
            inner[i] = _clip_to(clip, bounds, clip_x=clip_x, clip_y=clip_y)
            if position != "static":
                positioned[i] = inner[i]
    return clips


def _clip_to(clip: Rect | None, box: Rect, *, clip_x: bool, clip_y: bool) -> Rect:
    """`clip` narrowed to `box` on the clipping axes (unbounded on the others)."""
    far = 1e9  # an axis that does not clip: as wide as any page
    own = Rect(
        box.x if clip_x else -far,
        box.y if clip_y else -far,
        box.width if clip_x else 2 * far,
        box.height if clip_y else 2 * far,
    )
    return own if clip is None else clip.intersection(own)


def _drawn_part(bounds: Rect, clip: Rect | None) -> Rect:
    """What a cover can hide of a box: its part inside its clip. Content clipped
    away entirely (a marquee's text that has scrolled on, a carousel's next slide)
    is not drawn now but passes through, or comes into, the clipping box: it is
    judged there, so where a moving marquee happens to be at a capture does not
    decide whether its links are covered."""
    if clip is None or clip.is_empty():
        return bounds  # clips that do not meet: nothing better to judge by
    drawn = bounds.intersection(clip)
    return clip if drawn.is_empty() else drawn


def _is_interactive_leaf(node: Node) -> bool:
    return aria_role(node) in INTERACTIVE_ROLES


def _subtract_all(pieces: list[Rect], cover: Rect) -> list[Rect]:
    out: list[Rect] = []
    for piece in pieces:
        if not piece.intersects(cover):
            out.append(piece)
        elif not cover.contains(piece):
            out.extend(_subtract(piece, cover))
    return out


def _subtract(target: Rect, cover: Rect) -> list[Rect]:
    parts: list[Rect] = []
    if target.y < cover.y:
        parts.append(Rect(target.x, target.y, target.width, cover.y - target.y))
    if cover.bottom < target.bottom:
        parts.append(Rect(target.x, cover.bottom, target.width, target.bottom - cover.bottom))
    top = max(target.y, cover.y)
    bottom = min(target.bottom, cover.bottom)
    if target.x < cover.x:
        parts.append(Rect(target.x, top, cover.x - target.x, bottom - top))
    if cover.right < target.right:
        parts.append(Rect(cover.right, top, target.right - cover.right, bottom - top))
    return [p for p in parts if not p.is_empty()]
