"""Stages 2 and 3: simplify the visible page into the output tree.

Only nodes that mean something to a person become output elements: landmarks
(regions), headings, controls (anything a person can act on), and images with a
text alternative. Every other element is a wrapper the walk passes through
(hoisting), leaving its text in place: block boundaries become line breaks and
table cells are separated by " | ", as in innerText. Adjacent text merges.

Controls carry only what helps to act on them: a stable id, the kind (the tag),
the accessible name when the visible text does not already say it, the live value,
states, and a same-site-shortened href. Compound controls (select, date, time,
number, range) say their format and range in one element.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urlsplit

import attrs

from pycdp_bridge import Node, NodeType, PageModel

from ._accname import NameIndex
from ._dropdowns import find_dropdowns
from ._encode import RANGE_ROLES, ControlEncoder, fold
from ._filter import Visibility
from ._frames import FrameMarker, site_name
from ._graphics import GRAPHIC_TAGS, graphic_size, is_graphic
from ._grips import beside_icon, resizable
from ._icons import icon_name
from ._roles import (
    BLOCK_DISPLAYS,
    CELL_DISPLAYS,
    FORM_TAGS,
    HEADING_TAGS,
    INTERACTIVE_ROLES,
    LANDMARK_BY_TAG,
    aria_role,
    input_type,
    landmark_of,
)
from ._scripted import Scripted, draggable, own_handler, scripted
from ._sliders import track_position
from ._tree import OutNode

__all__ = ["BuildOptions", "Built", "ControlFacts", "build_tree"]

# An element nested deeper than this is read as flat text. The HTML parser stops
# nesting at 512 levels, but scripts build deeper trees, and Chromium lays out a few
# thousand levels before it gives up; compact() raises Python's recursion limit to
# match (about three frames per level).
MAX_DEPTH = 5_000
# Containment ratio above which a clickable inside another one is the same target.
CONTAINMENT = 0.99
# An element with its own handler inside a control is the same target when it
# covers at least this share of the control (a span filling its link); smaller,
# it is a target of its own (the star of a clickable message row).
SAME_TARGET = 0.7
# A table cell whose content is at most this long (and holds no table, heading or
# landmark) is read on its row's line: its inner line breaks become spaces. Longer
# cells are a layout table's columns and keep their lines.
FLAT_CELL_CHARS = 200
_FLAT_CELL_NODES = 150
_NOT_FLAT = frozenset({"table", "h1", "h2", "h3", "h4", "h5", "h6", *LANDMARK_BY_TAG})
# A grip's id is derived from this much of its row's text.
_ROW_CHARS = 80
# A `|` of page text inside a table cell, written so that it cannot be read as the
# separator between cells (GitHub-flavoured Markdown's table escape).
CELL_PIPE = "\\|"

# Output tag per role for controls that are not native form fields.
_TAG_BY_ROLE = {
    "link": "a",
    "button": "button",
    "tab": "tab",
    "menuitem": "menuitem",
    "menuitemcheckbox": "menuitem",
    "menuitemradio": "menuitem",
    "option": "option",
    "treeitem": "treeitem",
    "switch": "switch",
    "checkbox": "checkbox",
    "radio": "radio",
    "slider": "slider",
    "spinbutton": "spinbutton",
    "combobox": "combobox",
    "listbox": "listbox",
    "textbox": "textbox",
    "searchbox": "textbox",
    "textfield": "textbox",
}
# Boolean AX states worth a token, with the attribute name we write.
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w")
# The walk tests every node's type: an enum member looked up on its class costs
# 0.1 µs (Python 3.11), a module name a fraction of that.
_TEXT = NodeType.TEXT
_ELEMENT = NodeType.ELEMENT


@attrs.frozen
class BuildOptions:
    """Knobs of stages 2 and 3."""

    # Show link targets (shortened to a path on the same site).
    hrefs: bool = False
    # Keep images that have a text alternative as <img alt="..."/>.
    images: bool = True


@attrs.frozen
class ControlFacts:
    """What identifies a control to a person: the input of its stable id."""

    node: int
    role: str
    name: str
    href: str
    region_path: tuple[str, ...]
    heading: str
    scope: tuple[str, ...]  # frame and shadow-host path
    # How it shows: "h3" inside a heading, "+text"/"-text" with or without visible
    # text (an image link and the title link next to it are two targets).
    context: str = ""
    # A custom drop-down's face: the node of the hidden <select> it stands for.
    stands_for: int = -1


@attrs.define(slots=True)
class Built:
    """The output tree of one page and the controls in it, in document order."""

    root: OutNode
    controls: list[tuple[OutNode, ControlFacts]]
    elements_out: int


def build_tree(model: PageModel, visibility: Visibility, options: BuildOptions) -> Built:
    """Walk the visible page once and build the output tree."""
    builder = _Builder(model, visibility, options)
    root = OutNode("page")
    builder.walk_children(model.root, root.children, 0)
    return Built(root, builder.controls, builder.elements_out)


def _extend(out: list[OutNode | str], piece: str) -> None:
    """Add `piece` to the text run that ends `out`, in place where Python can: a run
    held only by a local name grows in place, where ``out[-1] += piece`` copies the
    whole run for every piece (quadratic on a page of long text: a chapter's
    paragraphs all go to one run)."""
    run = out.pop()
    assert isinstance(run, str)
    run += piece
    out.append(run)


def _is_cell(node: Node) -> bool:
    return node.style is not None and node.style.display in CELL_DISPLAYS


class _Builder(ControlEncoder, FrameMarker):
    def __init__(self, model: PageModel, visibility: Visibility, options: BuildOptions) -> None:
        self.model = model
        self.nodes = model.nodes
        self.shown = visibility.shown
        self.removed = visibility.removed
        self.covered_by = visibility.covered_by
        self.options = options
        self.controls: list[tuple[OutNode, ControlFacts]] = []
        self.control_nodes: set[int] = set()
        self.elements_out = 0
        self.line_open = False  # the current line already has content
        self.region_path: list[str] = []
        self.heading_stack: list[str] = [""]
        self.scope: list[str] = []
        self.in_pre = 0
        self.in_heading = ""
        # Open table rows, innermost last: [row node index, cells seen so far,
        # 1 when the row is read as one line].
        self.rows: list[list[int]] = []
        # Inside a table cell (its page text escapes "|"), and inside a cell read
        # on one line (its line breaks are spaces).
        self.in_cell = 0
        self.flat = 0
        # Bounds of the control we are inside, for nested-clickable folding.
        self.active_control: Node | None = None
        dropdowns = find_dropdowns(model, visibility)
        self.faces, self.dropdown_parts = dropdowns.faces, dropdowns.parts
        self.names = NameIndex(model, visibility.removed, visibility.shown, visibility.covered_by)
        self.labelled = self.names.labelled
        self.name_cache: dict[int, str] = {}
        origin = urlsplit(model.url)
        self.origin = (origin.scheme, origin.netloc)
        self.page_path = origin.path
        self.sites = [site_name(model.url)]

    # -- text -------------------------------------------------------------

    def add_text(self, out: list[OutNode | str], raw: str) -> None:
        """Add page text to the current line (the one place page text enters lines)."""
        if self.in_pre and not self.flat:
            piece = raw.replace("\r\n", "\n")
        else:
            piece = _SPACE.sub(" ", raw)
            if piece[:1] == " " and out and isinstance(out[-1], str) and out[-1][-1:] == " ":
                # The spaces of adjacent text nodes collapse into one, as the page
                # shows them (`a  |  b` read `a | b`): one token less per run.
                piece = piece[1:]
            if piece in ("", " ") and not self.line_open:
                return
        if self.in_cell and "|" in piece:
            piece = piece.replace("|", CELL_PIPE)
        self._append(out, piece)

    def _append(self, out: list[OutNode | str], piece: str) -> None:
        if not piece:
            return
        if out and isinstance(out[-1], str):
            _extend(out, piece)
        else:
            out.append(piece)
        if piece.strip():
            self.line_open = True

    def line_break(self, out: list[OutNode | str]) -> None:
        if not self.line_open:
            return
        if self.flat:
            # Inside a cell read on one line: a block boundary separates words only.
            if not (out and isinstance(out[-1], str) and out[-1][-1:].isspace()):
                self._append(out, " ")
            return
        if out and isinstance(out[-1], str):
            _extend(out, "\n")
        else:
            out.append("\n")
        self.line_open = False

    # -- walk -------------------------------------------------------------

    def walk_children(self, node: Node, out: list[OutNode | str], depth: int) -> None:
        for child in node.children:
            self.walk(self.nodes[child], out, depth + 1)

    def walk(self, node: Node, out: list[OutNode | str], depth: int) -> None:
        i = node.index
        if self.removed[i]:
            return
        kind = node.node_type
        if kind is _TEXT:
            # Whitespace between inline elements separates words even where the
            # browser made no layout object for it.
            if self.shown[i] or node.text.isspace():
                self.add_text(out, node.text)
            return
        if kind is not _ELEMENT:
            # Documents of iframes and shadow roots are part of the page; a frame of
            # another site in a region of its own (`_frames`).
            pushed = self._push_scope(node)
            self.walk_document(node, out, depth)
            if pushed:
                self.scope.pop()
            return
        if depth > MAX_DEPTH:
            self.add_text(out, " ".join(self._subtree_text(node)))
            return

        tag = node.name
        style = node.style
        display = style.display if style is not None else ""
        block = display in BLOCK_DISPLAYS
        if tag == "br":
            self.line_break(out)
            return
        cell = display in CELL_DISPLAYS
        flat = False
        if cell:
            row = self.rows[-1] if self.rows and self.rows[-1][0] == node.parent else None
            flat = row is not None and row[2] == 1 and not self.flat
            self._cell_separator(node, out, row)
        if block:
            self.line_break(out)
        if display == "table-row":
            self.rows.append([i, 0, int(self._flat_row(node))])
            mark = (len(out), out[-1] if out and isinstance(out[-1], str) else None)
            self._element(node, out, depth)
            self.rows.pop()
            self._drop_empty_row(out, mark)
        elif cell:
            self.in_cell += 1
            self.flat += flat
            self._element(node, out, depth)
            self.flat -= flat
            self.in_cell -= 1
        else:
            self._element(node, out, depth)
        if block:
            self.line_break(out)

    def _cell_separator(self, node: Node, out: list[OutNode | str], row: list[int] | None) -> None:
        """` | ` before every cell of a one-line row but its first, empty cells included."""
        if row is None or not row[2]:
            # A cell outside a row of its own (CSS tables, anonymous rows) or in a
            # layout row of long cells: it is separated from what stands before
            # it on its line only.
            if self.line_open:
                self._append(out, " | ")
            return
        if row[1]:
            if out and isinstance(out[-1], str):
                out[-1] = out[-1].rstrip(" ")
            self._append(out, " | ")
            self.line_open = True
        row[1] += 1

    def _drop_empty_row(self, out: list[OutNode | str], mark: tuple[int, str | None]) -> None:
        """A row of empty cells (a spacer row) leaves no line of bare separators."""
        size, last = mark
        start = size - 1 if last is not None else size
        added = out[start:]
        if not all(isinstance(piece, str) for piece in added):
            return
        before = last or ""
        strings = [piece for piece in added if isinstance(piece, str)]
        if strings and len(strings[0]) >= len(before):
            # The row's text alone: joining the whole run it grew (a table of plain rows
            # is one run) would copy the run once per row.
            text = strings[0][len(before) :] + "".join(strings[1:])
        else:
            text = "".join(strings)[len(before) :]
        if text.replace("|", "").strip():
            return
        del out[start:]
        if last is not None:
            out.append(last)
        self.line_open = bool(before.strip()) and not before.endswith("\n")

    def _flat_row(self, row: Node) -> bool:
        """Whether a table row is read as one line: two cells or more, all short.

        A row of one cell has no columns to keep in line (a sidebar box laid out
        as a table), and a row with a long cell is a layout table's: their cells
        keep their lines.
        """
        cells = [self.nodes[c] for c in row.children if _is_cell(self.nodes[c])]
        return len(cells) >= 2 and all(self._flat_cell(cell) for cell in cells)

    def _flat_cell(self, node: Node) -> bool:
        """Whether a cell is short enough to read on its row's line."""
        if self.removed[node.index]:
            return True
        if node.end - node.index > _FLAT_CELL_NODES:
            return False
        chars = 0
        for inner in self.model.nodes[node.index + 1 : node.end]:
            if inner.is_text:
                if self.shown[inner.index]:
                    chars += len(inner.text.strip())
            elif inner.name in _NOT_FLAT or _is_cell(inner):
                return False
        return chars <= FLAT_CELL_CHARS

    def _element(self, node: Node, out: list[OutNode | str], depth: int) -> None:
        """An element's own meaning: a region, a control, a heading, an image or a wrapper."""
        i = node.index
        tag = node.name
        if i in self.dropdown_parts:
            return  # a custom drop-down's hidden select: its face shows it (_dropdowns)

        region = landmark_of(node, self.model)
        role = aria_role(node)
        if region is not None and self.active_control is None:
            self._region(node, region, out, depth)
        elif self._is_control(node, role):
            self._control(node, role, out, depth)
        elif tag in HEADING_TAGS or role == "heading":
            self._heading(node, out, depth)
        elif tag == "img" and self.options.images and self.active_control is None:
            alt = fold(node.attributes.get("alt", ""))
            if alt and self.shown[i]:
                self.elements_out += 1
                out.append(OutNode("img", [("alt", alt)], node=i))
                self.line_open = True
        else:
            # A wrapper, most elements of a page: its children walked here, without
            # `walk_children`'s call per element.
            pre = tag in ("pre", "textarea", "listing", "plaintext")
            self.in_pre += pre
            nodes, walk = self.nodes, self.walk
            for child in node.children:
                walk(nodes[child], out, depth + 1)
            self.in_pre -= pre

    def _push_scope(self, node: Node) -> bool:
        if node.node_type is NodeType.SHADOW_ROOT:
            host = self.model.parent_of(node)
            self.scope.append(f"shadow:{host.name if host else ''}")
            return True
        if node.node_type is NodeType.DOCUMENT and node.parent >= 0:
            owner = self.model.parent_of(node)
            label = ""
            if owner is not None:
                label = owner.attributes.get("name") or owner.attributes.get("src", "")
            self.scope.append(f"frame:{label}")
            return True
        return False

    def _subtree_text(self, node: Node) -> Iterator[str]:
        for inner in self.model.subtree(node):
            if inner.is_text and self.shown[inner.index]:
                yield inner.text

    # -- regions and headings ---------------------------------------------

    def _region(self, node: Node, name: str, out: list[OutNode | str], depth: int) -> None:
        region = OutNode("region", [("name", name)], node=node.index)
        label = node.attributes.get("aria-label", "")
        if label:
            region.attrs.append(("label", fold(label)))
        self.line_open = False
        self.region_path.append(name)
        self.heading_stack.append("")
        self.walk_children(node, region.children, depth)
        self.heading_stack.pop()
        self.region_path.pop()
        if any(isinstance(c, OutNode) or c.strip() for c in region.children):
            out.append(region)
        self.line_open = False

    def _heading(self, node: Node, out: list[OutNode | str], depth: int) -> None:
        level = HEADING_TAGS.get(node.name)
        if level is None:
            # role=heading: aria-level (the browser's AX tree says the same), else 2.
            declared: object = node.ax.properties.get("level") if node.ax is not None else None
            if declared is None:
                raw = node.attributes.get("aria-level", "")
                declared = int(raw) if raw.isdigit() else None
            level = declared if isinstance(declared, int) and 1 <= declared <= 6 else 2
        heading = OutNode(f"h{level}", node=node.index)
        self.line_open = False
        outer_heading, self.in_heading = self.in_heading, heading.tag
        self.walk_children(node, heading.children, depth)
        self.in_heading = outer_heading
        text = heading.text()
        if text or any(isinstance(c, OutNode) for c in heading.children):
            self.elements_out += 1
            self.heading_stack[-1] = text.lower()
            out.append(heading)
            self.line_open = True

    # -- controls ---------------------------------------------------------

    def _is_control(self, node: Node, role: str) -> bool:
        if node.name in ("html", "body"):
            return False
        if node.index in self.faces:
            return self._reachable(node)
        if node.name in ("video", "audio") and "controls" in node.attributes:
            # The browser's own play/mute/seek buttons live in a user-agent shadow
            # tree the capture leaves out; the player is one control for them.
            return self._reachable(node)
        if is_graphic(node, inside_control=self.active_control is not None):
            return self._reachable(node)  # a picture only pixels show (_graphics)
        if role in INTERACTIVE_ROLES:
            if role == "option" and node.name == "option":
                return False  # folded into its <select>
            if self.active_control is not None and not self._own_target(node, role):
                return False
            return self._reachable(node)
        if node.name == "input" and input_type(node) == "hidden":
            return False
        # A generic element the page made a control by script (see _scripted).
        how = scripted(self.model, node)
        if how is None:
            return False
        if self.active_control is not None and not self._own_target(node, role, how):
            return False
        return self._reachable(node)

    def _own_target(self, node: Node, role: str, how: Scripted | None = None) -> bool:
        """Inside another control: does this element stay a separate target?"""
        outer = self.active_control
        assert outer is not None
        if node.name in FORM_TAGS or role in INTERACTIVE_ROLES:
            return True
        if node.attributes.get("aria-label"):
            return True
        inner_box, outer_box = node.bounds, outer.bounds
        if inner_box is None or outer_box is None or inner_box.area <= 0:
            return False
        if (how is not None and how is not Scripted.DELEGATED) or own_handler(node):
            # Its own handler: a target of its own unless it is the control's
            # whole face (a span filling its link).
            return inner_box.area < SAME_TARGET * outer_box.area
        overlap_w = min(inner_box.right, outer_box.right) - max(inner_box.x, outer_box.x)
        overlap_h = min(inner_box.bottom, outer_box.bottom) - max(inner_box.y, outer_box.y)
        overlap = max(0.0, overlap_w) * max(0.0, overlap_h)
        return overlap / inner_box.area < CONTAINMENT

    def _reachable(self, node: Node) -> bool:
        i = node.index
        if self.shown[i]:
            return True
        if i in self.covered_by:
            return False
        # An inline link wrapping blocks has no box of its own: its content shows.
        return any(self.shown[j] for j in range(i + 1, node.end))

    def _control(self, node: Node, role: str, out: list[OutNode | str], depth: int) -> None:
        tag = node.name
        attrs_out: list[tuple[str, str]] = []
        control = OutNode("", attrs_out, node=node.index)
        self.elements_out += 1
        nested: list[int] = []
        visible: str | None = None
        # A custom drop-down's face is the select it stands for (see _dropdowns).
        stands_for = self.faces.get(node.index, -1)
        if stands_for >= 0:
            node, role = self.nodes[stands_for], aria_role(self.nodes[stands_for])
            self._select(node, control)
        elif tag == "input":
            self._input(node, control)
            if role in RANGE_ROLES and "role" in node.attributes:
                self._range(node, role, control, "")
        elif tag == "select":
            self._select(node, control)
        elif tag == "textarea":
            control.tag = "textarea"
            self._field_label(node, control)
            value = node.input_value if node.input_value is not None else ""
            if value:
                shown = self._textarea_value(node, value)
                attrs_out.append(("value", shown))
                if shown != value:
                    control.secret = value
            self._placeholder(node, control, value)
        else:
            if tag in ("video", "audio") or tag in GRAPHIC_TAGS:
                control.tag = tag
                if tag in GRAPHIC_TAGS and "controls" not in node.attributes:
                    attrs_out.append(("size", graphic_size(node)))
            else:
                control.tag = _TAG_BY_ROLE.get(role, "clickable") if role else "clickable"
            if tag == "button" and self._submits(node):
                attrs_out.append(("type", "submit"))
            if tag == "a" and self.options.hrefs:
                href = self._href(node.attributes.get("href"))
                if href:
                    attrs_out.append(("href", href))
            nested = self._nested_lists(node, role)
            outer = self.active_control
            self.active_control = node
            self.line_open = False
            for child in node.children:
                if child not in nested:
                    self.walk(self.nodes[child], control.children, depth + 1)
            self.active_control = outer
            # The control's text is final here: what follows adds attributes only.
            visible = control.text()
            self._name_if_unseen(node, control, role, visible)
            if role in RANGE_ROLES:
                self._range(node, role, control, visible)
            elif not role:
                self._handle(node, control)
            self._aria_states(node, control)
            self._tree_state(node, role, control, nested)
            icon = beside_icon(self.model, node, visible, attrs_out, self.control_nodes)
            if icon:
                attrs_out.append(("icon", icon))
        if visible is None:  # a form field: its text is what its branch made
            visible = control.text()
        self._states(node, control)
        drag = draggable(self.model, node)
        if drag:
            attrs_out.append(("draggable", "true"))
        resize = resizable(self.model, node)
        if resize:
            attrs_out.append(("resizable", resize))
        self.control_nodes.add(node.index)
        if out and isinstance(out[-1], str) and out[-1][-1:].isalnum():
            _extend(out, " ")
        out.append(control)
        self.line_open = True
        facts = ControlFacts(
            node=control.node,
            role=role or "clickable",
            name=self._identity_name(node, control, visible, drag),
            href=node.attributes.get("href", "") if tag == "a" else "",
            region_path=tuple(self.region_path),
            heading=self.heading_stack[-1],
            scope=tuple(self.scope),
            context=self.in_heading + ("+text" if visible else "-text"),
            stands_for=stands_for,
        )
        self.controls.append((control, facts))
        # A tree item's own subtree (the items of an open folder) follows it
        # line by line instead of standing inside it.
        for child in nested:
            self.walk(self.nodes[child], out, depth + 1)

    def _handle(self, node: Node, control: OutNode) -> None:
        """A slider handle without ARIA is a slider at its place on the track (see
        _sliders); the name its markup gave ("slider handle") says no more than that."""
        position = track_position(self.model, node)
        if position is None:
            return
        control.tag = "slider"
        control.attrs[:] = [(k, v) for k, v in control.attrs if k != "icon"]
        control.attrs.append(("value", f"{position}%"))

    def _identity_name(self, node: Node, control: OutNode, visible: str, drag: bool) -> str:
        """The name an id is derived from: the accessible name, else what the element
        shows or says of itself (its text, label or icon name)."""
        said = dict(control.attrs)
        name = self._name(node, visible) or visible or said.get("label") or said.get("icon", "")
        if drag and not _WORD.search(visible):
            # A sortable row's grip is told apart by the row it moves, so that it
            # keeps its id when the rows are in another order.
            row = self.model.parent_of(node)
            if row is not None:
                name = f"{name} {self.names.text_of(row)[:_ROW_CHARS]}"
        return name

    def _submits(self, node: Node) -> bool:
        """A <button> that submits a form when clicked (the default type, in a form)."""
        if node.attributes.get("type", "submit").strip().lower() != "submit":
            return False
        return "form" in node.attributes or any(
            a.name == "form" for a in self.model.ancestors(node)
        )

    def _name(self, node: Node, content: str | None = None) -> str:
        """The accessible name; `content` is the control's visible text when known."""
        cached = self.name_cache.get(node.index)
        if cached is None:
            ax = node.ax
            cached = fold(ax.name) if ax is not None else self.names.name(node, content)
            self.name_cache[node.index] = cached
        return cached

    def _name_if_unseen(self, node: Node, control: OutNode, role: str, visible: str) -> None:
        """Add the accessible name when the visible text (`control.text()`) does not
        already carry it; an icon with neither gets a name derived from its markup
        (see _icons)."""
        name = self._name(node, visible)
        if not name and not visible and role not in INTERACTIVE_ROLES:
            # A script-made control has no name from its content in the AX rules,
            # but a person reads the image inside it.
            name = self.names.text_of(node)
        if name and name.lower() not in visible.lower():
            control.attrs.append(("label", name))
        elif not name and not visible:
            icon = icon_name(self.model, node)
            if icon:
                control.attrs.append(("icon", icon))
