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

from ._accname import NameIndex, markup_states
from ._filter import Visibility
from ._roles import (
    BLOCK_DISPLAYS,
    CELL_DISPLAYS,
    DATE_INPUT_FORMATS,
    FORM_TAGS,
    HEADING_TAGS,
    INTERACTIVE_ROLES,
    TEXT_INPUT_TYPES,
    aria_role,
    landmark_of,
)
from ._tree import OutNode
from ._xml import listed

__all__ = ["BuildOptions", "Built", "ControlFacts", "build_tree"]

# An element nested deeper than this is read as flat text. The HTML parser stops
# nesting at 512 levels, but scripts build deeper trees, and Chromium lays out a few
# thousand levels before it gives up; compact() raises Python's recursion limit to
# match (about three frames per level).
MAX_DEPTH = 5_000
# Containment ratio above which a clickable inside another one is the same target.
CONTAINMENT = 0.99

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
_STATES = (
    ("disabled", "disabled"),
    ("required", "required"),
    ("readonly", "readonly"),
    ("invalid", "invalid"),
)
_SPACE = re.compile(r"\s+")
_SELECT_LISTED = 8  # a select lists all its options up to this many, else the first ones
_SELECT_FIRST = 4


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


def _fold(text: str) -> str:
    return " ".join(text.split())


class _Builder:
    def __init__(self, model: PageModel, visibility: Visibility, options: BuildOptions) -> None:
        self.model = model
        self.nodes = model.nodes
        self.shown = visibility.shown
        self.removed = visibility.removed
        self.covered_by = visibility.covered_by
        self.options = options
        self.controls: list[tuple[OutNode, ControlFacts]] = []
        self.elements_out = 0
        self.line_open = False  # the current line already has content
        self.region_path: list[str] = []
        self.heading_stack: list[str] = [""]
        self.scope: list[str] = []
        self.in_pre = 0
        self.in_heading = ""
        # Bounds of the control we are inside, for nested-clickable folding.
        self.active_control: Node | None = None
        self.names = NameIndex(model, visibility.removed, visibility.shown)
        self.labelled = self.names.labelled
        self.name_cache: dict[int, str] = {}
        origin = urlsplit(model.url)
        self.origin = (origin.scheme, origin.netloc)
        self.page_path = origin.path

    # -- text -------------------------------------------------------------

    def add_text(self, out: list[OutNode | str], raw: str) -> None:
        if self.in_pre:
            piece = raw.replace("\r\n", "\n")
        else:
            piece = _SPACE.sub(" ", raw)
            if piece == " " and not self.line_open:
                return
        if not piece:
            return
        if out and isinstance(out[-1], str):
            out[-1] += piece
        else:
            out.append(piece)
        if piece.strip():
            self.line_open = True

    def line_break(self, out: list[OutNode | str]) -> None:
        if not self.line_open:
            return
        if out and isinstance(out[-1], str):
            out[-1] += "\n"
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
        if kind is NodeType.TEXT:
            # Whitespace between inline elements separates words even where the
            # browser made no layout object for it.
            if self.shown[i] or node.text.isspace():
                self.add_text(out, node.text)
            return
        if kind is not NodeType.ELEMENT:
            # Documents of iframes and shadow roots are part of the page.
            pushed = self._push_scope(node)
            self.walk_children(node, out, depth)
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
        if display in CELL_DISPLAYS and self.line_open:
            self.add_text(out, " | ")
        if block:
            self.line_break(out)

        region = landmark_of(node, self.model)
        role = aria_role(node)
        if region is not None and self.active_control is None:
            self._region(node, region, out, depth)
        elif self._is_control(node, role):
            self._control(node, role, out, depth)
        elif tag in HEADING_TAGS or role == "heading":
            self._heading(node, out, depth)
        elif tag == "img" and self.options.images and self.active_control is None:
            alt = _fold(node.attributes.get("alt", ""))
            if alt and self.shown[i]:
                self.elements_out += 1
                out.append(OutNode("img", [("alt", alt)], node=i))
                self.line_open = True
        else:
            pre = tag in ("pre", "textarea", "listing", "plaintext")
            self.in_pre += pre
            self.walk_children(node, out, depth)
            self.in_pre -= pre
        if block:
            self.line_break(out)

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
            region.attrs.append(("label", _fold(label)))
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
        if node.name in ("video", "audio") and "controls" in node.attributes:
            # The browser's own play/mute/seek buttons live in a user-agent shadow
            # tree the capture leaves out; the player is one control for them.
            return self._reachable(node)
        if role in INTERACTIVE_ROLES:
            if role == "option" and node.name == "option":
                return False  # folded into its <select>
            if self.active_control is not None and not self._own_target(node, role):
                return False
            return self._reachable(node)
        if node.name == "input" and node.attributes.get("type", "").lower() == "hidden":
            return False
        # A generic element a script made clickable: it starts the pointer cursor.
        style = node.style
        if style is None or style.cursor != "pointer":
            return False
        if not (node.clickable or "onclick" in node.attributes):
            return False
        parent = self.model.parent_of(node)
        if parent is not None and parent.style is not None and parent.style.cursor == "pointer":
            return False
        if self.active_control is not None and not self._own_target(node, role):
            return False
        return self._reachable(node)

    def _own_target(self, node: Node, role: str) -> bool:
        """Inside another control: does this element stay a separate target?"""
        outer = self.active_control
        assert outer is not None
        if node.name in FORM_TAGS or role in INTERACTIVE_ROLES:
            return True
        if "onclick" in node.attributes or node.attributes.get("aria-label"):
            return True
        inner_box, outer_box = node.bounds, outer.bounds
        if inner_box is None or outer_box is None or inner_box.area <= 0:
            return False
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
        if tag == "input":
            self._input(node, control)
        elif tag == "select":
            self._select(node, control)
        elif tag == "textarea":
            control.tag = "textarea"
            self._field_label(node, control)
            value = node.input_value if node.input_value is not None else ""
            if value:
                attrs_out.append(("value", value))
            self._placeholder(node, control, value)
        else:
            if tag in ("video", "audio"):
                control.tag = tag
            else:
                control.tag = _TAG_BY_ROLE.get(role, "clickable") if role else "clickable"
            if tag == "button" and self._submits(node):
                attrs_out.append(("type", "submit"))
            if tag == "a" and self.options.hrefs:
                href = self._href(node.attributes.get("href"))
                if href:
                    attrs_out.append(("href", href))
            outer = self.active_control
            self.active_control = node
            self.line_open = False
            self.walk_children(node, control.children, depth)
            self.active_control = outer
            self._name_if_unseen(node, control)
            self._aria_states(node, control)
        self._states(node, control)
        if out and isinstance(out[-1], str) and out[-1][-1:].isalnum():
            out[-1] += " "
        out.append(control)
        self.line_open = True
        visible = control.text()
        facts = ControlFacts(
            node=node.index,
            role=role or "clickable",
            name=self._name(node, visible) or visible,
            href=node.attributes.get("href", "") if tag == "a" else "",
            region_path=tuple(self.region_path),
            heading=self.heading_stack[-1],
            scope=tuple(self.scope),
            context=self.in_heading + ("+text" if visible else "-text"),
        )
        self.controls.append((control, facts))

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
            cached = _fold(ax.name) if ax is not None else self.names.name(node, content)
            self.name_cache[node.index] = cached
        return cached

    def _name_if_unseen(self, node: Node, control: OutNode) -> None:
        """Add the accessible name when the visible text does not already carry it."""
        visible = control.text()
        name = self._name(node, visible)
        if name and name.lower() not in visible.lower():
            control.attrs.append(("label", name))

    def _field_label(self, node: Node, control: OutNode) -> None:
        # A visible <label> already stands next to the field as text; its name
        # would only repeat it.
        if node.index in self.labelled:
            return
        name = self._name(node)
        if name and name != node.attributes.get("placeholder"):
            control.attrs.append(("label", name))

    def _placeholder(self, node: Node, control: OutNode, value: str) -> None:
        placeholder = _fold(node.attributes.get("placeholder", ""))
        if placeholder and not value and ("label", placeholder) not in control.attrs:
            control.attrs.append(("placeholder", placeholder))

    def _input(self, node: Node, control: OutNode) -> None:
        kind = node.attributes.get("type", "text").lower()
        attrs_out = control.attrs
        control.tag = "input"
        value = (
            node.input_value if node.input_value is not None else node.attributes.get("value", "")
        )
        if kind in ("submit", "reset", "button", "image"):
            control.tag = "button"
            text = value or node.attributes.get("alt", "") or self._name(node)
            if kind in ("submit", "image"):
                attrs_out.append(("type", "submit"))
            if text:
                control.children.append(_fold(text))
            return
        if kind in ("checkbox", "radio"):
            attrs_out.append(("type", kind))
            self._field_label(node, control)
            if node.checked:
                attrs_out.append(("checked", "true"))
            return
        if kind not in TEXT_INPUT_TYPES or kind not in ("text", ""):
            attrs_out.append(("type", kind))
        self._field_label(node, control)
        if kind == "password":
            if value:
                attrs_out.append(("value", "•" * min(len(value), 8)))
        elif kind == "file":
            if value:
                attrs_out.append(("value", value.rsplit("\\", 1)[-1]))
        elif value:
            attrs_out.append(("value", value))
        self._placeholder(node, control, value)
        fmt = DATE_INPUT_FORMATS.get(kind)
        if fmt is not None:
            attrs_out.append(("format", fmt))
        if kind in DATE_INPUT_FORMATS or kind in ("number", "range"):
            for key in ("min", "max", "step"):
                bound = node.attributes.get(key)
                if bound:
                    attrs_out.append((key, bound))

    def _select(self, node: Node, control: OutNode) -> None:
        control.tag = "select"
        self._field_label(node, control)
        options: list[str] = []
        chosen: list[str] = []
        for inner in self.model.subtree(node)[1:]:
            if inner.name != "option" or self.removed[inner.index]:
                continue
            label = _fold(inner.attributes.get("label") or self._option_text(inner))
            options.append(label)
            if inner.selected:
                chosen.append(label)
        if "multiple" in node.attributes:
            control.attrs.append(("multiple", "true"))
        if chosen:
            control.attrs.append(("value", listed(chosen)))
        if len(options) <= _SELECT_LISTED:
            control.attrs.append(("options", listed(options)))
        else:
            control.attrs.append(("options", str(len(options))))
            control.attrs.append(("first", listed(options[:_SELECT_FIRST])))

    def _option_text(self, option: Node) -> str:
        return " ".join(
            self.nodes[c].text for c in range(option.index + 1, option.end) if self.nodes[c].is_text
        )

    def _states(self, node: Node, control: OutNode) -> None:
        props = node.ax.properties if node.ax is not None else markup_states(node)
        for key, name in _STATES:
            value = props.get(key)
            if (
                value is True
                or value == "true"
                or (
                    key in ("disabled", "required", "readonly")
                    and key in node.attributes
                    and key not in props
                )
            ):
                control.attrs.append((name, "true"))

    def _aria_states(self, node: Node, control: OutNode) -> None:
        props = node.ax.properties if node.ax is not None else markup_states(node)
        for key in ("checked", "pressed", "selected", "expanded"):
            value = props.get(key)
            if value is None:
                value = node.attributes.get(f"aria-{key}")
            if value in (True, "true", "mixed"):
                control.attrs.append((key, "true" if value is True else str(value)))
            elif key == "expanded" and value in (False, "false"):
                control.attrs.append((key, "false"))

    def _href(self, raw: str | None) -> str:
        if not raw:
            return ""
        href = raw.strip()
        if href.lower().startswith("javascript:") or href == "#":
            return ""
        parts = urlsplit(href)
        if parts.scheme and (parts.scheme, parts.netloc) != self.origin:
            return href
        if not parts.scheme and not parts.netloc:
            return href  # already relative: the page wrote it short
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        if parts.fragment:
            path += "#" + parts.fragment
        return path
