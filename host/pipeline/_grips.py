"""Grips and small icons: what a person reads on a control's edge or beside its name.

A resizable element says so (``resizable="both"``): its computed CSS ``resize``
where its overflow is not visible (a `<textarea>` by default, a panel with
``resize: both``), or a grip drawn as a child at its edge whose resize cursor says
which way it pulls (``se-resize``: both ways; ``e-resize``/``col-resize``:
horizontally), as widget libraries draw their handles. A drag on the element by an
offset pulls that grip (the driver finds it again on the live page).

An icon of a few pixels inside a named control (a menu item's floppy disk, a
button's trash can, a caret) says what the name may not: the control keeps it as
``icon="…"``, named from its markup as other icons are (`icon_name`), unless its words
are already in the name ("Print" beside a printer), where it would cost tokens for
nothing.
"""

from __future__ import annotations

import re
from collections.abc import Container, Sequence

from pycdp_bridge import Node, PageModel

from ._icons import icon_name, icon_words

__all__ = ["beside_icon", "resizable"]

# The way each resize cursor pulls.
_CURSOR_AXES = {
    **dict.fromkeys(
        ("se-resize", "nw-resize", "ne-resize", "sw-resize", "nwse-resize", "nesw-resize"),
        "both",
    ),
    **dict.fromkeys(("e-resize", "w-resize", "ew-resize", "col-resize"), "horizontal"),
    **dict.fromkeys(("n-resize", "s-resize", "ns-resize", "row-resize"), "vertical"),
}
# CSS `resize` values, in a horizontal writing mode.
_RESIZE_AXES = {
    "both": "both",
    "horizontal": "horizontal",
    "inline": "horizontal",
    "vertical": "vertical",
    "block": "vertical",
}
# A grip is thin across the edge it sits on (jQuery UI's are 7 to 12 px).
_GRIP_SIDE = 20.0
# How far from the element's edge a grip may sit (borders, rounding).
_EDGE_SLACK = 4.0
# An icon beside a name is this many CSS px at most on each side, and at least
# this many (smaller: a dot, a rule, a spacer).
_ICON_MAX = 16.5
_ICON_MIN = 4.0
# Only the first nodes of a control are looked at: an icon sits at its start or end
# in a small control; a big one (a card) says more in words than any icon.
_SCAN_NODES = 30
_ICON_TAGS = frozenset({"svg", "img", "i"})
_ICON_CLASS = re.compile(r"icon|glyph|caret|chevron|arrow|sprite", re.IGNORECASE)
_WORD = re.compile(r"\w")
_WORDS = re.compile(r"[^\W_]+")
# A class that names an icon after "icon-" ("ui-icon-disk", "app-icon-trash").
_INFIX = re.compile(r"(?:^|[-_])icons?[-_]+(.+)$", re.IGNORECASE)
# What a caret or arrow says: that the control opens something.
_POINTERS = frozenset({"caret", "chevron", "arrow", "triangle", "expand", "dropdown"})


def resizable(model: PageModel, node: Node) -> str:
    """Which way a person may resize the element ("both", "horizontal", "vertical"),
    or "" when it is not resizable."""
    style = node.style
    if style is None or node.name in ("html", "body") or node.bounds is None:
        return ""
    if style.resize != "none" and (style.overflow_x != "visible" or style.overflow_y != "visible"):
        return _RESIZE_AXES.get(style.resize, "")
    # Asked of every element: only a child with a resize cursor can be a grip.
    nodes = model.nodes
    axes = {
        _grip_axis(child, node)
        for child in (nodes[c] for c in node.children)
        if child.style is not None and child.style.cursor in _CURSOR_AXES
    }
    axes.discard("")
    if not axes:
        return ""
    return axes.pop() if len(axes) == 1 else "both"


def _grip_axis(grip: Node, element: Node) -> str:
    """The way `grip` resizes `element` when it is a grip at its edge, else ""."""
    style, box, outer = grip.style, grip.bounds, element.bounds
    if style is None or box is None or outer is None or box.is_empty():
        return ""
    axis = _CURSOR_AXES.get(style.cursor, "")
    if not axis or min(box.width, box.height) > _GRIP_SIDE:
        return ""
    # At the edge it pulls (a corner's two): a divider in the middle of the element
    # (a split view's gutter) resizes its neighbours, not the element.
    side = abs(box.right - outer.right) <= _EDGE_SLACK or abs(box.x - outer.x) <= _EDGE_SLACK
    end = abs(box.bottom - outer.bottom) <= _EDGE_SLACK or abs(box.y - outer.y) <= _EDGE_SLACK
    at_edge = {"horizontal": side, "vertical": end, "both": side and end}[axis]
    return axis if at_edge else ""


def beside_icon(
    model: PageModel,
    control: Node,
    visible: str,
    said: Sequence[tuple[str, str]],
    controls: Container[int],
) -> str:
    """The name of the small icon drawn inside `control` beside the name it shows
    (`visible`): "disk", "trash"; "" when it has none, shows no words (an icon named
    only by a label is its face, which the label names), already has an icon name
    (`said`: its attributes), the icon is another control's (`controls`: their node
    indexes) or a grip, its words are already in the name, or it is the caret of a
    control that says it opens something."""
    attributes = dict(said)
    if not _WORD.search(visible) or "icon" in attributes:
        return ""
    name = f"{visible} {attributes.get('label', '')}"
    popup = "haspopup" in attributes or "expanded" in attributes
    nodes = model.nodes
    for inner in nodes[control.index + 1 : min(control.end, control.index + _SCAN_NODES)]:
        if not inner.is_element or inner.pseudo_type is not None or not _is_small_icon(inner):
            continue
        if inner.style is not None and inner.style.cursor in _CURSOR_AXES:
            continue  # a grip: the control says it is resizable
        if any(_WORD.search(n.text) for n in nodes[inner.index + 1 : inner.end] if n.is_text):
            continue
        if any(a.index in controls for a in _between(model, inner, control)):
            continue
        found = _infix_name(inner) or icon_name(model, inner, titles=False)
        named = [w.lower() for w in _WORDS.findall(name)]
        words = set(_WORDS.findall(found.lower()))
        if any(_alike(w, n) for w in words for n in named) or (words & _POINTERS and popup):
            return ""
        return found
    return ""


def _alike(word: str, named: str) -> bool:
    """The icon's word says what a word of the name says ("comment", "comments")."""
    if word == named:
        return True
    shorter, longer = sorted((word, named), key=len)
    return len(shorter) >= 4 and longer.startswith(shorter)


def _infix_name(icon: Node) -> str:
    """The name an icon set writes after "icon-" in a class ("ui-icon-disk": disk)."""
    for token in icon.attributes.get("class", "").split():
        marked = _INFIX.search(token)
        if marked:
            words = icon_words(marked.group(1))
            if words:
                return words
    return ""


def _is_small_icon(node: Node) -> bool:
    box, style = node.bounds, node.style
    if box is None or style is None or style.visibility != "visible" or style.opacity <= 0:
        return False
    if not (_ICON_MIN <= box.width <= _ICON_MAX and _ICON_MIN <= box.height <= _ICON_MAX):
        return False
    return (
        node.name in _ICON_TAGS
        or style.background_image != "none"
        or _ICON_CLASS.search(node.attributes.get("class", "")) is not None
    )


def _between(model: PageModel, inner: Node, top: Node) -> list[Node]:
    """`inner` and its ancestors below `top`."""
    found = [inner]
    for ancestor in model.ancestors(inner):
        if ancestor.index == top.index:
            break
        found.append(ancestor)
    return found
