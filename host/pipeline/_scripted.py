"""Controls a page makes by script: what the page does decides, not only how it looks.

An element without an interactive role is a control when the page made it one.
The browser says which elements have click handlers (DOMSnapshot's `isClickable`,
in the model as `Node.clickable`; an `onclick` attribute says it too), and the
pointer cursor says where a person is invited to click. Together:

* own handler: an element with its own click handler that shows the pointer
  cursor, its own or inherited (a "Reply" span inside a toolbar that sets the
  cursor but has no handler);
* delegated: the pointer cursor starts on the element (its parent shows another
  cursor) and an ancestor's handler receives its clicks (one listener on a list
  for all its items, or on an app's root); an item of a list whose handler is on
  the list is a control even when the list sets the cursor, and the list itself
  is not one (its items are what a person picks);
* icon: a small element with its own handler and no words, whose pointer cursor
  shows only on :hover (the capture sees the cursor at rest); likewise a short
  inline label with its own handler and no pointer ("Show more" as a bare span);
* focusable: a small element a script made focusable (`tabindex="0"`) without a
  role (a jQuery UI slider handle, operated with the arrow keys);
* draggable: what a person drags (`draggable`, below), a sortable list's row or
  its grip, whose listeners (pointerdown, dragstart) are often on the list and
  are not what the capture calls clickable;
* resizable: a panel a person resizes by its corner or edge (see _grips).

An element is draggable when the page marked it `draggable="true"`, when the
move or grab cursor starts on it (sortable lists, kanban cards, dialog title bars
and maps all invite a drag this way), or when it is one of the items of a container
a sortable library marked by class (jQuery UI's ``ui-sortable``, a ``sortable-list``):
the library's one listener is on the container, the items are what a person drags.

Native controls (links, buttons, fields) are controls by their role, not here;
their clickability says nothing of a page script.
"""

from __future__ import annotations

import enum
import re

from pycdp_bridge import Node, PageModel

from ._grips import resizable
from ._roles import NATIVE_CLICKABLE_TAGS

__all__ = ["Scripted", "draggable", "own_handler", "scripted"]

# An icon is at most this large on each side (CSS pixels).
_ICON_SIDE = 64.0
# A focusable element is small: this many nodes and characters at most.
_FOCUSABLE_NODES = 20
_FOCUSABLE_CHARS = 80
_ICON_NODES = 30
# A text button without the pointer cursor: one line of a few words.
_SHORT_HEIGHT = 48.0
_SHORT_NODES = 12
_SHORT_CHARS = 40
_INLINE_DISPLAYS = frozenset({"inline", "inline-block", "inline-flex", "contents"})
_WORD = re.compile(r"\w")
_SEGMENTS = re.compile(r"[-_]+")
_LISTS = frozenset({"ul", "ol"})
# A handler this high up is the page's, not a widget's.
_TOP = frozenset({"html", "body"})
# Cursors that invite a drag (the `-webkit-` forms are what older pages write).
_DRAG_CURSORS = frozenset({"move", "grab", "grabbing", "-webkit-grab", "-webkit-grabbing"})


class Scripted(enum.Enum):
    """Why a generic element is a control."""

    OWN_HANDLER = "handler"
    DELEGATED = "delegated"
    ICON = "icon"
    SHORT_TEXT = "short text"
    FOCUSABLE = "focusable"
    DRAGGABLE = "draggable"
    RESIZABLE = "resizable"


def own_handler(node: Node) -> bool:
    """The element has a click handler of its own (a script's, or an onclick)."""
    return node.clickable or "onclick" in node.attributes


def draggable(model: PageModel, node: Node) -> bool:
    """A person drags this element: it is marked `draggable="true"`, or the move or
    grab cursor starts on it (its nearest rendered ancestor shows another)."""
    if node.attributes.get("draggable", "").lower() == "true":
        return True
    if _sortable_item(model, node):
        return True
    style = node.style
    if style is None or _drag_cursor(style.cursor) is None or node.name in _TOP:
        return False
    return _drag_cursor(model.parent_cursor(node) or "") is None


def _sortable_item(model: PageModel, node: Node) -> bool:
    """One of two or more items of a container whose class says it is sortable."""
    parent = model.parent_of(node)
    if parent is None or parent.name in _TOP or not node.is_element:
        return False
    classes = parent.attributes.get("class", "")
    if "sortable" not in classes.lower():
        return False  # no word of it can be "sortable" (asked of every element)
    words = {
        w for token in parent.attributes.get("class", "").split() for w in _SEGMENTS.split(token)
    }
    if "sortable" not in {w.lower() for w in words}:
        return False
    return sum(1 for c in parent.children if model.nodes[c].is_element) >= 2


def _drag_cursor(cursor: str) -> str | None:
    # A cursor may list images before its keyword: "url(hand.cur), grab".
    keyword = cursor.rsplit(",", 1)[-1].strip() if "," in cursor else cursor
    return keyword if keyword in _DRAG_CURSORS else None


def _script_handler(node: Node) -> bool:
    """A handler a page script put there (a link's own clickability does not count)."""
    if "onclick" in node.attributes:
        return True
    return node.clickable and node.name not in NATIVE_CLICKABLE_TAGS and node.name not in _TOP


def _starts_pointer(model: PageModel, node: Node) -> bool:
    """The pointer cursor starts here: the nearest rendered ancestor shows another."""
    return model.parent_cursor(node) != "pointer"


def scripted(model: PageModel, node: Node) -> Scripted | None:
    """Why a generic element (no interactive role) is a control, or None."""
    if node.pseudo_type is not None:
        return None
    if draggable(model, node):
        return Scripted.DRAGGABLE
    style = node.style
    pointer = style is not None and style.cursor == "pointer"
    if own_handler(node):
        if node.name in _LISTS and any(model.nodes[c].name == "li" for c in node.children):
            return None  # the list delegates: its items are the controls
        # An inherited cursor counts for a script's handler, not for a label's
        # native clickability (a label inside a clickable option row).
        if pointer and (_starts_pointer(model, node) or _script_handler(node)):
            return Scripted.OWN_HANDLER
        if not pointer and _script_handler(node):
            if _is_icon(model, node):
                return Scripted.ICON
            if _is_short_text(model, node):
                return Scripted.SHORT_TEXT
    elif pointer:
        if node.name == "li" and _list_delegates(model, node):
            return Scripted.DELEGATED
        if _starts_pointer(model, node) and node.name != "label" and _delegated(model, node):
            return Scripted.DELEGATED
    if _focusable(model, node):
        return Scripted.FOCUSABLE
    if resizable(model, node):
        return Scripted.RESIZABLE
    return None


def _list_delegates(model: PageModel, item: Node) -> bool:
    """The nearest handler above a list item is a list's: one listener for all its
    items, those of nested lists included (a tree with one handler at its root)."""
    for ancestor in model.ancestors(item):
        if ancestor.name in _TOP or not ancestor.is_element:
            return False
        if _script_handler(ancestor):
            return ancestor.name in _LISTS
    return False


def _delegated(model: PageModel, node: Node) -> bool:
    for ancestor in model.ancestors(node):
        if ancestor.name in _TOP or not ancestor.is_element:
            return False
        if _script_handler(ancestor):
            return True
    return False


def _is_icon(model: PageModel, node: Node) -> bool:
    box = node.bounds
    if box is None or box.is_empty() or box.width > _ICON_SIDE or box.height > _ICON_SIDE:
        return False
    if node.end - node.index > _ICON_NODES:
        return False
    return not any(
        inner.is_text and inner.bounds is not None and _WORD.search(inner.text)
        for inner in model.nodes[node.index + 1 : node.end]
    )


def _is_short_text(model: PageModel, node: Node) -> bool:
    """A few inline words on one line: a text button, not a container with a listener."""
    box = node.bounds
    if box is None or box.is_empty() or box.height > _SHORT_HEIGHT:
        return False
    if node.end - node.index > _SHORT_NODES:
        return False
    chars = 0
    for inner in model.nodes[node.index + 1 : node.end]:
        if inner.is_text:
            chars += len(inner.text.strip())
        elif inner.style is not None and inner.style.display not in _INLINE_DISPLAYS:
            return False
    return 0 < chars <= _SHORT_CHARS


def _focusable(model: PageModel, node: Node) -> bool:
    raw = node.attributes.get("tabindex")
    if raw is None or "role" in node.attributes or node.name in NATIVE_CLICKABLE_TAGS:
        return False
    try:
        if int(raw.strip()) < 0:
            return False
    except ValueError:
        return False
    if node.bounds is None or node.bounds.is_empty():
        return False
    if node.end - node.index > _FOCUSABLE_NODES:
        return False
    inside = model.nodes[node.index + 1 : node.end]
    return sum(len(inner.text) for inner in inside if inner.is_text) <= _FOCUSABLE_CHARS
