"""Stage 3 for controls: what a control's element says of its state, value and kind.

`ControlEncoder` is the part of the builder (`_build`) that encodes one control once
the walk decided it is one: tree state, field labels and placeholders, the input
types and their compound forms (date, time, number, range), select options, states
from markup and ARIA, and same-site-shortened hrefs.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from pycdp_bridge import Node, PageModel

from ._accname import VALUED_STATES, markup_states
from ._roles import DATE_INPUT_FORMATS, INTERACTIVE_ROLES, TEXT_INPUT_TYPES, aria_role, input_type
from ._secrets import Secret, mask, secret_kind
from ._tree import OutNode
from ._xml import listed

__all__ = ["RANGE_ROLES", "ControlEncoder", "fold"]

_STATES = (
    ("disabled", "disabled"),
    ("required", "required"),
    ("readonly", "readonly"),
    ("invalid", "invalid"),
)
_NESTED_LISTS = frozenset({"ul", "ol"})
_GROUP_ROLES = frozenset({"group", "tree"})
# Roles whose value lies in a range ARIA states (aria-valuenow, -min, -max).
RANGE_ROLES = frozenset({"spinbutton", "slider"})
_SELECT_LISTED = 8  # a select lists all its options up to this many, else the first ones
_SELECT_FIRST = 4


def fold(text: str) -> str:
    """Page text as one line: runs of whitespace become one space."""
    return " ".join(text.split())


class ControlEncoder:
    """Encoding of controls; the builder supplies the page and the accessible names."""

    model: PageModel
    nodes: list[Node]
    shown: list[bool]
    removed: list[bool]
    labelled: set[int]
    origin: tuple[str, str]

    def _name(self, node: Node, content: str | None = None) -> str:
        raise NotImplementedError

    # -- trees --------------------------------------------------------------

    def _nested_lists(self, node: Node, role: str) -> list[int]:
        """The sublists of a tree item (a treeitem, or a list item that is a control)."""
        if role != "treeitem" and node.name != "li":
            return []
        return [c for c in node.children if self._is_sublist(self.nodes[c])]

    def _is_sublist(self, node: Node) -> bool:
        if not node.is_element:
            return False
        role = node.attributes.get("role", "").strip().lower()
        return role in _GROUP_ROLES or (not role and node.name in _NESTED_LISTS)

    def _tree_state(self, node: Node, role: str, control: OutNode, nested: list[int]) -> None:
        """`expanded` and `level` of a tree item; ARIA says them, or the nesting of
        clickable list items (a folder's sublist, shown or not) does."""
        if role == "treeitem":
            raw = node.attributes.get("aria-level", "")
            level = (
                int(raw)
                if raw.isdigit()
                else 1 + sum(1 for a in self.model.ancestors(node) if aria_role(a) == "treeitem")
            )
            if level > 1:
                control.attrs.append(("level", str(level)))
            return
        if role in INTERACTIVE_ROLES or "aria-expanded" in node.attributes:
            return
        item = node if node.name == "li" else self.model.parent_of(node)
        if item is None or item.name != "li":
            return
        if item is node:
            sublists = [self.nodes[c] for c in nested]
        else:
            after = item.children[item.children.index(node.index) + 1 :]
            sublists = [self.nodes[c] for c in after if self._is_sublist(self.nodes[c])]
        sublists = [s for s in sublists if any(self.nodes[c].name == "li" for c in s.children)]
        level = sum(1 for a in self.model.ancestors(node) if a.name == "li") + (item is node)
        if sublists:
            control.attrs.append(("expanded", "true" if self._opened(sublists) else "false"))
        if level > 1:
            control.attrs.append(("level", str(level)))

    def _opened(self, sublists: list[Node]) -> bool:
        for sublist in sublists:
            if self.removed[sublist.index]:
                continue
            for inner in self.model.subtree(sublist):
                if inner.is_text and self.shown[inner.index] and inner.text.strip():
                    return True
        return False

    def _field_label(self, node: Node, control: OutNode) -> None:
        # A visible <label> already stands next to the field as text; its name
        # would only repeat it.
        if node.index in self.labelled:
            return
        name = self._name(node)
        if name and name != node.attributes.get("placeholder"):
            control.attrs.append(("label", name))

    def _placeholder(self, node: Node, control: OutNode, value: str) -> None:
        placeholder = fold(node.attributes.get("placeholder", ""))
        if placeholder and not value and ("label", placeholder) not in control.attrs:
            control.attrs.append(("placeholder", placeholder))

    def _input(self, node: Node, control: OutNode) -> None:
        kind = input_type(node)
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
                control.children.append(fold(text))
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
        secret = self._secret(node, kind)
        if secret is not None:
            control.secret_kind = secret.value
            if value:
                attrs_out.append(("value", mask(secret, value)))
                control.secret = value
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

    def _secret(self, node: Node, kind: str) -> Secret | None:
        """The kind of secret a field holds (see `_secrets`), from its markup and name."""
        attributes = node.attributes
        names = (attributes.get("name", ""), attributes.get("id", ""), self._name(node))
        return secret_kind(kind, attributes.get("autocomplete", ""), names)

    def _textarea_value(self, node: Node, value: str) -> str:
        """A text area's value as shown: masked when it holds a secret."""
        secret = self._secret(node, "textarea") if value else None
        return value if secret is None else mask(secret, value)

    def _range(self, node: Node, role: str, control: OutNode, visible: str) -> None:
        """A spin button or slider the page made (a role on a field or a span): its
        kind, and the value and bounds its ARIA states give, the value when its
        visible text does not already say it."""
        control.tag = role
        attributes = node.attributes
        said = {key for key, _ in control.attrs}
        if "value" not in said:
            value = fold(attributes.get("aria-valuetext") or attributes.get("aria-valuenow", ""))
            if value and value not in visible:
                control.attrs.append(("value", value))
        for key in ("min", "max"):
            bound = attributes.get(f"aria-value{key}", "").strip()
            if bound and key not in said:
                control.attrs.append((key, bound))

    def _select(self, node: Node, control: OutNode) -> None:
        control.tag = "select"
        self._field_label(node, control)
        options: list[str] = []
        chosen: list[str] = []
        # An option the page hid is left out; all of them when the whole select is
        # hidden under a custom drop-down's face, which shows them (_dropdowns).
        each = not self.removed[node.index]
        for inner in self.model.subtree(node)[1:]:
            if inner.name != "option" or (each and self.removed[inner.index]):
                continue
            label = fold(inner.attributes.get("label") or self._option_text(inner))
            options.append(label)
            if inner.selected:
                chosen.append(label)
        if "multiple" in node.attributes:
            control.attrs.append(("multiple", "true"))
        if chosen:
            # A card's expiry picked from a list is as secret as one typed in.
            secret = self._secret(node, "select")
            shown = listed(chosen) if secret is None else mask(secret, listed(chosen))
            control.attrs.append(("value", shown))
            if secret is not None and len(chosen) == 1:
                control.secret = chosen[0]
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
        # Shown as true or mixed (expanded also as false); the attribute when the AX
        # tree does not say.
        for key, aria in VALUED_STATES:
            value = props.get(key)
            if value is None:
                value = node.attributes.get(aria)
            if value in (True, "true", "mixed"):
                control.attrs.append((key, "true" if value is True else str(value)))
            elif key == "expanded" and value in (False, "false"):
                control.attrs.append((key, "false"))
        # What a click opens (a submenu, a listbox, a dialog: a menu item says it
        # always, other controls when `expanded` does not already), and the current
        # item of a set (a pager's page, a step, today's date).
        popup = node.attributes.get("aria-haspopup", "").strip().lower()
        if (
            popup
            and popup != "false"
            and (control.tag == "menuitem" or not any(k == "expanded" for k, _ in control.attrs))
        ):
            control.attrs.append(("haspopup", "menu" if popup == "true" else popup))
        current = node.attributes.get("aria-current", "").strip().lower()
        if current and current != "false":
            control.attrs.append(("current", current))

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
