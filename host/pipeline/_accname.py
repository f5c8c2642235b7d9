"""Accessible names and states from the DOM, for captures without the AX tree.

The browser's accessibility tree is the reference, but it is the costliest part of
a capture and the pipeline needs only the names and states of the controls it
keeps. This module computes them from markup for the controls alone, following
the accessible-name rules in the order that matters in practice: aria-labelledby,
aria-label, a <label> (for= or wrapping), alt and title, then the element's own
text; and states from the HTML attributes and their aria-* forms.
"""

from __future__ import annotations

from collections.abc import Collection

from pycdp_bridge import Node, NodeType, PageModel

__all__ = ["VALUED_STATES", "NameIndex", "markup_states"]

_NAME_FROM_CONTENT = frozenset(
    {"a", "button", "summary", "option", "h1", "h2", "h3", "h4", "h5", "h6", "td", "th", "li"}
)


class NameIndex:
    """Id and label lookups over one page model, built once per compaction."""

    def __init__(
        self,
        model: PageModel,
        removed: list[bool],
        shown: list[bool],
        covered: Collection[int] = (),
    ) -> None:
        self.model = model
        self.removed = removed
        self.shown = shown
        # Text painted over by another element still names its control: a person
        # clicks the picture laid over a button's words, and the browser's name
        # for the button is those words.
        self.covered = covered
        self.by_id: dict[str, Node] = {}
        self.label_for: dict[str, Node] = {}
        # Fields named by a rendered <label> (for= or wrapping): the label's text
        # already stands in the output next to them.
        self.labelled: set[int] = set()
        element = NodeType.ELEMENT
        for node in model.nodes:
            if node.node_type is not element:
                continue
            element_id = node.attributes.get("id")
            if element_id:
                self.by_id.setdefault(element_id, node)
            if node.name == "label" and not removed[node.index]:
                target = node.attributes.get("for")
                if target:
                    self.label_for.setdefault(target, node)
                else:
                    self.labelled.update(
                        inner.index
                        for inner in model.nodes[node.index + 1 : node.end]
                        if inner.name in ("input", "select", "textarea")
                    )
        self.labelled.update(
            self.by_id[target].index for target in self.label_for if target in self.by_id
        )

    def text_of(self, node: Node) -> str:
        """The rendered text of a subtree, alt text of its images included.

        Like the browser's name computation, hidden descendants do not count
        (a menu button's collapsed submenu is not part of its name), and text
        covered by another element does.
        """
        parts: list[str] = []
        shown, covered = self.shown, self.covered
        for inner in self.model.subtree(node):
            if self.removed[inner.index]:
                continue
            if inner.is_text:
                if shown[inner.index] or inner.index in covered:
                    parts.append(inner.text)
            elif inner.name == "img":
                parts.append(" " + inner.attributes.get("alt", "") + " ")
        return " ".join("".join(parts).split())

    def name(self, node: Node, content: str | None = None) -> str:
        """The accessible name of a control, computed from markup.

        `content` is the control's rendered text when the caller has it already.
        """
        attributes = node.attributes
        labelledby = attributes.get("aria-labelledby")
        if labelledby:
            parts = [self.text_of(self.by_id[i]) for i in labelledby.split() if i in self.by_id]
            joined = " ".join(p for p in parts if p)
            if joined:
                return joined
        label = attributes.get("aria-label", "").strip()
        if label:
            return " ".join(label.split())
        if node.name in ("input", "select", "textarea"):
            element_id = attributes.get("id")
            owner = self.label_for.get(element_id) if element_id else None
            if owner is None:
                owner = next((a for a in self.model.ancestors(node) if a.name == "label"), None)
            if owner is not None:
                text = self.text_of(owner)
                if text:
                    return text
            kind = attributes.get("type", "").lower()
            if kind in ("submit", "reset", "button"):
                return attributes.get("value") or {"submit": "Submit", "reset": "Reset"}.get(
                    kind, ""
                )
            if kind == "image":
                return attributes.get("alt") or attributes.get("value") or "Submit"
        if node.name == "img":
            return " ".join(attributes.get("alt", "").split())
        if node.name in _NAME_FROM_CONTENT or attributes.get("role") in (
            "button",
            "link",
            "tab",
            "menuitem",
            "option",
            "treeitem",
            "checkbox",
            "radio",
            "switch",
        ):
            text = content or self.text_of(node)
            if text:
                return text
        return " ".join((attributes.get("title") or attributes.get("placeholder") or "").split())


_FLAGS = tuple((key, f"aria-{key}") for key in ("disabled", "required", "readonly"))
#: States whose ARIA attribute holds a value ("true", "mixed", "false"), each with
#: that attribute's name.
VALUED_STATES = tuple(
    (key, f"aria-{key}") for key in ("checked", "pressed", "selected", "expanded")
)
# Every attribute a state is read from: most controls have none of them.
_STATE_ATTRIBUTES = frozenset(
    {key for key, _ in _FLAGS} | {aria for _, aria in (*_FLAGS, *VALUED_STATES)} | {"aria-invalid"}
)


def markup_states(node: Node) -> dict[str, object]:
    """AX-like states (disabled, required, checked, expanded, ...) from attributes."""
    attributes = node.attributes
    states: dict[str, object] = {}
    if _STATE_ATTRIBUTES.isdisjoint(attributes):
        return states
    for key, aria in _FLAGS:
        if key in attributes or attributes.get(aria) == "true":
            states[key] = True
    if attributes.get("aria-invalid") in ("true", "grammar", "spelling"):
        states["invalid"] = True
    for key, aria in VALUED_STATES:
        value = attributes.get(aria)
        if value is not None:
            states[key] = value
    return states
