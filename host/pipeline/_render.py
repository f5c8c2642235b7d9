"""Rendering the output tree: a region's body as items, one per line, and inline XML.

Every page string goes through `_xml` here (see `trimtab.pipeline.xml`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import attrs

from . import _xml
from ._tree import OutNode

__all__ = [
    "LISTS",
    "MORE",
    "Item",
    "Replace",
    "lines_shown",
    "open_tag",
    "render_items",
    "render_node",
]

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
    listed: list[tuple[str, str] | None] = []  # per item: its list and line, if it may be one
    last = len(region.children) - 1
    for position, child in enumerate(region.children):
        if isinstance(child, str):
            pieces = _LINE_SPACE.sub("\n", child).split("\n")
            for k, piece in enumerate(pieces):
                if k > 0:
                    line.flush(items, listed)
                if position == last and k == len(pieces) - 1:
                    piece = piece.rstrip()
                if piece:
                    line.xml.append(_xml.text(piece))
                    line.text.append(piece)
                    line.loose = line.loose or not piece.isspace()
        elif child.tag == "region":
            line.flush(items, listed)
            swapped = replace(child) if replace is not None else None
            rendered = swapped if swapped is not None else render_node(child, replace)
            nested = _Line()
            nested.xml.append(rendered.rstrip("\n"))
            nested.add_node(child)
            nested.loose = True
            nested.flush(items, listed)
        else:
            _render_inline(child, line.xml)
            if child.tag != MORE:  # the rest of a long text is not on the line
                line.add_node(child)
            else:
                line.loose = True
    line.flush(items, listed)
    return _listed(items, listed)


# The elements that list links and buttons one per line (see `_listed`), and the most
# one holds: a diff or a trimmed region shows or hides a whole list.
LISTS = {"a": "links", "button": "buttons"}
_LIST_MOST = 12


def _listed(items: list[Item], listed: list[tuple[str, str] | None]) -> list[Item]:
    """Runs of two or more lines that are each one plain link (or button) as `<links>`
    (`<buttons>`) lists, one per line: its id, a space, its text. A link costs its id
    and its text, not a start and an end tag, which were most of a link-heavy page's
    XML (`<a id="k3x">Compare all models</a>` is `k3x Compare all models`).

    The elements of a list have the same attributes besides their ids (`type="submit"`
    on each button): the list's start tag carries them. A list holds at most
    `_LIST_MOST` lines; a longer run is cut into lists of nearly equal length.
    """
    if sum(line is not None for line in listed) < 2:
        return items
    out: list[Item] = []
    k = 0
    while k < len(items):
        first = listed[k]
        end = k + 1
        while first is not None and end < len(items):
            following = listed[end]
            if following is None or following[0] != first[0]:
                break
            end += 1
        if first is None or end - k < 2:
            out.append(items[k])
            k += 1
            continue
        head = first[0]
        tag = head[1:].split(" ", 1)[0].rstrip(">")
        parts = -(-(end - k) // _LIST_MOST)
        for part in range(parts):
            start, stop = k + (end - k) * part // parts, k + (end - k) * (part + 1) // parts
            if stop - start < 2:
                out.extend(items[start:stop])
                continue
            run = items[start:stop]
            body = "\n".join(line[1] for line in listed[start:stop] if line is not None)
            out.append(
                Item(
                    f"{head}\n{body}\n</{tag}>",
                    tuple(eid for item in run for eid in item.eids),
                    " ".join(item.text for item in run),
                    run[0].name,
                )
            )
        k = end
    return out


def lines_shown(xml: str) -> int:
    """How many lines of the page one item's XML shows: a list's elements, else 1 (what
    dedup and trimming measure a region by, as before lists)."""
    if xml.startswith(_LIST_STARTS):
        return xml.count("\n") - 1
    return 1


_LIST_STARTS = tuple(f"<{listing}{end}" for listing in LISTS.values() for end in (">", " "))


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
    nodes: list[OutNode] = attrs.field(factory=list)
    loose: bool = False  # text or a marker beside the line's elements

    def add_node(self, node: OutNode) -> None:
        self.nodes.append(node)
        self.text.append(f" {node.text()} ")
        for inner in node.iter():
            if inner.eid is not None:
                self.eids.append(inner.eid)
            if inner.tag != "region" and (inner.eid is not None or inner.tag == "img"):
                named = dict(inner.attrs)
                self.names.append(next((named[a] for a in _NAMING if named.get(a)), inner.tag))

    def flush(self, items: list[Item], listed: list[tuple[str, str] | None]) -> None:
        xml = "".join(self.xml).strip()
        if xml:
            text = " ".join("".join(self.text).split())
            name = " ".join(self.names[0].split()) if self.names else ""
            items.append(Item(xml, tuple(self.eids), text, name))
            listed.append(self._listed(xml))
        self.xml.clear()
        self.text.clear()
        self.eids.clear()
        self.names.clear()
        self.nodes.clear()
        self.loose = False

    def _listed(self, xml: str) -> tuple[str, str] | None:
        """The line as a line of a list (`_listed`): the list's start tag and the line,
        if it is one plain link or button: nothing beside it, text and no element
        inside, no attribute that names it (those differ from one to the next)."""
        if self.loose or len(self.nodes) != 1:
            return None
        node = self.nodes[0]
        listing = LISTS.get(node.tag)
        if listing is None or node.eid is None or node.attrs[:1] != [("id", node.eid)]:
            return None
        if any(key in _NAMING for key, _ in node.attrs):
            return None
        if not all(isinstance(child, str) for child in node.children):
            return None
        head = open_tag(node)
        close = f"</{node.tag}>"
        if not (xml.startswith(head) and xml.endswith(close)) or len(xml) == len(head) + len(close):
            return None
        shared = "".join(f' {key}="{_xml.attr(value)}"' for key, value in node.attrs[1:])
        return f"<{listing}{shared}>", f"{node.eid} {xml[len(head) : -len(close)]}"


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
