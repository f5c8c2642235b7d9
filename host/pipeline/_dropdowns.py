"""Custom drop-downs: a drawn face standing for a hidden native ``<select>``.

Drop-down libraries (selectric, select2, choices.js and many hand-made ones) keep
the page's real ``<select>``, which holds the value the form sends, and hide it:
out of sight in a box of no size, a pixel clipped away, ``display: none``,
``aria-hidden``, or transparent with clicks going through it. What a person sees
and clicks is a face the library draws beside it, showing the chosen option's text:
a sibling of the select or of its hiding box, or the wrapper around it. The face is
shown as the select it stands for, with its value and options (``<select
value="Express" options="Standard|Express|Pick up"/>``), and the hidden select is
not shown a second time; `select` on the face's id operates the face like a person.

A face is told by what it is and where, never by a library's class: within a few
levels of the hidden select, the nearest element a person operates (a combobox,
button or listbox role, a script's handler, a place in the tab order) with a box
they can click, that shows the selected option's text (and not every other option's
too: that is its open list), in a part of the page that holds no other select. A
field of a pixel or less inside the widget is its keyboard helper (selectric's),
which no person sees: it is not shown either. So each library is recognised by the
same two facts, the select hidden and the face beside or around it:

* Selectric wraps the select in a box of no size that clips it, and draws its face
  as the next sibling of that box (a pointer box whose clicks its wrapper hears);
* Select2 makes the select a clipped pixel and puts its container after it, whose
  ``role="combobox"`` element shows the chosen option;
* choices.js lays the select over its face at opacity 0 with ``pointer-events:
  none`` (clicks reach the face) and wraps both, with its open list, in the face
  (``role="listbox"``, in the tab order);
* a hand-made one hides the select (``display: none``) beside a focusable element
  or one with a handler that shows the chosen option.

A ``multiple`` select is left as it is: a face that adds options one by one and
removes each by its own button is not one select to choose in.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterator

import attrs

from pycdp_bridge import Node, PageModel

from ._filter import Visibility
from ._roles import FORM_TAGS, aria_role
from ._scripted import own_handler, scripted

__all__ = ["Dropdowns", "find_dropdowns"]

# How many levels above the select the widget reaches (selectric: the select, its
# hiding box, the wrapper).
_LEVELS = 3
# Siblings looked at on each side of the select, or of the box that hides it.
_NEAR = 2
# A face is at least this large on each side (CSS px); a field at most `_HELPER`
# on each side is a keyboard helper nobody sees.
_MIN_FACE = 8.0
_HELPER = 1.0
# The most nodes a face candidate's subtree is searched through.
_SEARCH_NODES = 200
_FACE_ROLES = frozenset({"combobox", "button", "listbox"})
_TOP = frozenset({"html", "body"})


@attrs.frozen
class Dropdowns:
    """The custom drop-downs of a page, by node index."""

    # Each face → the hidden select it stands for.
    faces: dict[int, int] = attrs.field(factory=dict)
    # What is not shown: the hidden selects that have a face, and their helpers.
    parts: frozenset[int] = frozenset()


def find_dropdowns(model: PageModel, visibility: Visibility) -> Dropdowns:
    """The faces of the page's hidden selects (see the module)."""
    faces: dict[int, int] = {}
    parts: set[int] = set()
    # Every select of the page, in document order: which boxes hold one is a search.
    selects = [n.index for n in model.nodes if n.name == "select" and n.is_element]
    for index in selects:
        node = model.nodes[index]
        if "multiple" in node.attributes:
            continue
        hidden = _hidden(model, node, visibility)
        cover = visibility.covered_by.get(node.index)
        if not hidden and cover is None:
            continue
        found = _face(model, node, visibility, selects)
        if found is None:
            continue
        face, widget = found
        if not hidden and not (cover is not None and face.index <= cover < face.end):
            continue  # covered, but by something else than its face
        faces[face.index] = node.index
        parts.add(node.index)
        parts.update(_helpers(model, widget))
    return Dropdowns(faces, frozenset(parts))


def chosen_text(model: PageModel, select: Node) -> str:
    """The text of the select's chosen option (its first when none says selected)."""
    first: str | None = None
    for inner in model.subtree(select)[1:]:
        if inner.name != "option":
            continue
        if inner.selected:
            return _label(model, inner)
        if first is None:
            first = _label(model, inner)
    return first or ""


def _label(model: PageModel, option: Node) -> str:
    """What an option shows, whitespace folded."""
    label = option.attributes.get("label") or " ".join(
        n.text for n in model.nodes[option.index + 1 : option.end] if n.is_text
    )
    return " ".join(label.split())


def _hidden(model: PageModel, select: Node, visibility: Visibility) -> bool:
    """No person sees the select: not rendered or hidden from them, a pixel or less,
    off the page's top or left, inside a clipping box of no size, or transparent with
    every click going through it to what is drawn below."""
    if visibility.removed[select.index]:
        return True
    style = select.style
    if style is not None and style.opacity <= 0 and style.pointer_events == "none":
        # Kept by the filter as a transparent control, which is what a click reaches
        # only when clicks stop on it.
        return True
    box = select.bounds
    if box is None or box.width <= _HELPER or box.height <= _HELPER:
        return True
    if box.right <= 0 or box.bottom <= 0:
        return True
    for ancestor in itertools.islice(model.ancestors(select), _LEVELS):
        style, clip = ancestor.style, ancestor.bounds
        if style is None or clip is None or ancestor.name in _TOP:
            continue
        if (style.overflow_x != "visible" and clip.width < 1) or (
            style.overflow_y != "visible" and clip.height < 1
        ):
            return True
    return False


def _face(
    model: PageModel, select: Node, visibility: Visibility, selects: list[int]
) -> tuple[Node, Node] | None:
    """The select's face and the widget it belongs to (the box holding both, or the
    face's own container where that box holds other selects), or None."""
    text = chosen_text(model, select).lower()
    # Beside the face, a library may keep its open list, which shows the chosen text
    # among all the others: that is not the face.
    others = tuple(t for t in _option_texts(model, select) if t != text)
    branch = select
    for _ in range(_LEVELS):
        parent = model.parent_of(branch)
        if parent is None or not parent.is_element or parent.name in _TOP:
            return None
        alone = _selects_in(selects, parent) == 1
        for sibling in _near_siblings(model, parent, branch):
            if not _selects_in(selects, sibling):
                face = _first_face(model, sibling, visibility, text, others)
                if face is not None:
                    return face, parent if alone else sibling
        if not alone:
            return None  # the parent holds another drop-down: this one's widget ended
        if _is_face(model, parent, visibility, text):
            return parent, parent
        branch = parent
    return None


def _near_siblings(model: PageModel, parent: Node, branch: Node) -> Iterator[Node]:
    """The element siblings of `branch`, nearest first, `_NEAR` on each side (those
    after it first: a face follows what it stands for)."""
    elements = [model.nodes[c] for c in parent.children if model.nodes[c].is_element]
    at = next(i for i, n in enumerate(elements) if n.index == branch.index)
    yield from elements[at + 1 : at + 1 + _NEAR]
    yield from reversed(elements[max(0, at - _NEAR) : at])


def _selects_in(selects: list[int], node: Node) -> int:
    """How many of the page's selects (their indexes, in order) `node` holds."""
    return bisect.bisect_left(selects, node.end) - bisect.bisect_left(selects, node.index)


def _first_face(
    model: PageModel, root: Node, visibility: Visibility, text: str, others: tuple[str, ...]
) -> Node | None:
    """The first element under `root` (itself included) that is a face and not a list
    showing every other option too."""
    for inner in model.nodes[root.index : min(root.end, root.index + _SEARCH_NODES)]:
        if inner.is_element and _is_face(model, inner, visibility, text, others):
            return inner
    return None


def _option_texts(model: PageModel, select: Node) -> list[str]:
    """The select's options' texts, folded and lower case."""
    return [_label(model, o).lower() for o in model.subtree(select)[1:] if o.name == "option"]


def _is_face(
    model: PageModel, node: Node, visibility: Visibility, text: str, others: tuple[str, ...] = ()
) -> bool:
    """A person clicks it and reads the chosen option's text on it (and not, with
    `others`, every other option's as well: then it is the open list)."""
    i = node.index
    box = node.bounds
    if visibility.removed[i] or not visibility.shown[i] or box is None:
        return False
    if box.width < _MIN_FACE or box.height < _MIN_FACE or node.name in FORM_TAGS:
        return False
    operable = (
        aria_role(node) in _FACE_ROLES
        or own_handler(node)
        or node.attributes.get("tabindex", "").strip().isdigit()
        or scripted(model, node) is not None
    )
    if not operable:
        return False
    shown = " ".join(
        n.text
        for n in model.nodes[i + 1 : min(node.end, i + _SEARCH_NODES)]
        if n.is_text and visibility.shown[n.index]
    )
    shown = " ".join(shown.split()).lower()
    if text not in shown:
        return False
    rest = shown.replace(text, "", 1)  # "Small" is not shown by "Extra small" alone
    return not (others and all(other in rest for other in others))


def _helpers(model: PageModel, widget: Node) -> Iterator[int]:
    """Fields of a pixel or less in the widget: its keyboard helpers (none in a box too
    large to be one widget)."""
    if widget.end - widget.index > _SEARCH_NODES:
        return
    for inner in model.subtree(widget):
        box = inner.bounds
        tiny = box is not None and box.width <= _HELPER and box.height <= _HELPER
        if tiny and inner.name in ("input", "textarea"):
            yield inner.index
