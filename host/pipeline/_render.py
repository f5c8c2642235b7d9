"""Rendering the output tree: a region's body as items, one per line, and inline XML.

Every page string goes through `_xml` here (see `trimtab.pipeline.xml`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import attrs

from . import _xml
from ._tree import OutNode

__all__ = ["MORE", "Item", "Replace", "open_tag", "render_items", "render_node"]

# The marker that stands for the rest of a long text (see `_cut_long_texts`).
MORE = "more"

_LINE_SPACE = re.compile(r"[ \t]*\n[ \t\n]*")


@attrs.frozen
class Item:
    """One line of a region's body: its XML and what diffs and markers say of it.

    Markers and diffs read these fields, never the XML: page text cannot be taken
    for an id or a tag, and no regular expression re-reads what was rendered.
    """

    xml: str  # well-formed on its own (see `render_items`)
    eids: tuple[str, ...]  # ids of the controls on the line, in order
    text: str  # the line's visible text, whitespace folded (page text, not escaped)
    name: str  # what a person would call the line when it has no text: its first
    # control's label, alt text, value or placeholder, else its tag


Replace = Callable[[OutNode], "str | None"]


def render_node(node: OutNode, replace: Replace | None = None) -> str:
    """Serialize an output node and its subtree as XML.

    ``replace`` may answer a nested region with other XML (a collapsed or trimmed
    form); None keeps the region as it is.
    """
    if node.tag == "region":
        items = render_items(node, replace)
        return open_tag(node) + "\n" + "".join(item.xml + "\n" for item in items) + "</region>\n"
    parts: list[str] = []
    _render_inline(node, parts)
    return "".join(parts)


def render_items(region: OutNode, replace: Replace | None = None) -> list[Item]:
    """The body of a region as items: one per line, a nested region as one item.

    Every item is well-formed XML on its own, so trimming and diffs can cut
    between items without breaking the document.
    """
    items: list[Item] = []
    line = _Line()
    last = len(region.children) - 1
    for position, child in enumerate(region.children):
        if isinstance(child, str):
            pieces = _LINE_SPACE.sub("\n", child).split("\n")
            for k, piece in enumerate(pieces):
                if k > 0:
                    line.flush(items)
                if position == last and k == len(pieces) - 1:
                    piece = piece.rstrip()
                if piece:
                    line.xml.append(_xml.text(piece))
                    line.text.append(piece)
        elif child.tag == "region":
            line.flush(items)
            swapped = replace(child) if replace is not None else None
            rendered = swapped if swapped is not None else render_node(child, replace)
            nested = _Line()
            nested.xml.append(rendered.rstrip("\n"))
            nested.add_node(child)
            nested.flush(items)
        else:
            _render_inline(child, line.xml)
            if child.tag != MORE:  # the rest of a long text is not on the line
                line.add_node(child)
    line.flush(items)
    return items


# Attributes that name an element a person sees without text, in the order a person
# would use them for it.
_NAMING = ("label", "icon", "alt", "value", "placeholder")


@attrs.define
class _Line:
    """A line of a region while it is rendered."""

    xml: list[str] = attrs.field(factory=list)
    text: list[str] = attrs.field(factory=list)
    eids: list[str] = attrs.field(factory=list)
    names: list[str] = attrs.field(factory=list)

    def add_node(self, node: OutNode) -> None:
        self.text.append(f" {node.text()} ")
        for inner in node.iter():
            if inner.eid is not None:
                self.eids.append(inner.eid)
            if inner.tag != "region" and (inner.eid is not None or inner.tag == "img"):
                named = dict(inner.attrs)
                self.names.append(next((named[a] for a in _NAMING if named.get(a)), inner.tag))

    def flush(self, items: list[Item]) -> None:
        xml = "".join(self.xml).strip()
        if xml:
            text = " ".join("".join(self.text).split())
            name = " ".join(self.names[0].split()) if self.names else ""
            items.append(Item(xml, tuple(self.eids), text, name))
        self.xml.clear()
        self.text.clear()
        self.eids.clear()
        self.names.clear()


def open_tag(node: OutNode) -> str:
    attrs_xml = "".join(f' {key}="{_xml.attr(value)}"' for key, value in node.attrs)
    return f"<{node.tag}{attrs_xml}>"


def _render_inline(node: OutNode, parts: list[str]) -> None:
    """A control, heading or image on one line: its line breaks become spaces."""
    if not node.children or node.tag == MORE:
        # A long text's marker holds the rest of the text for searches; it shows only
        # its attributes.
        attrs_xml = "".join(f' {key}="{_xml.attr(value)}"' for key, value in node.attrs)
        parts.append(f"<{node.tag}{attrs_xml}/>")
        return
    parts.append(open_tag(node))
    last = len(node.children) - 1
    for position, child in enumerate(node.children):
        if isinstance(child, str):
            piece = " ".join(child.split()) if not child.isspace() else " "
            if child[:1].isspace() and position > 0 and piece != " ":
                piece = " " + piece
            if child[-1:].isspace() and position < last and piece != " ":
                piece += " "
            if position == 0:
                piece = piece.lstrip()
            if position == last:
                piece = piece.rstrip()
            parts.append(_xml.text(piece))
        else:
            _render_inline(child, parts)
    parts.append(f"</{node.tag}>")
