"""The output tree: what stages 2 and 3 build and the serializer writes."""

from __future__ import annotations

from attrs import define, field, frozen

__all__ = ["Control", "OutNode"]


@define(slots=True, eq=False)
class OutNode:
    """One element of the output: a region, a heading, a control, an image.

    ``children`` holds text runs (``str``, page text not yet escaped, ``"\\n"`` for a
    line break) and nested output nodes, in document order.
    """

    tag: str
    attrs: list[tuple[str, str]] = field(factory=list)
    children: list[OutNode | str] = field(factory=list)
    # Index of the model node this came from (-1 for synthetic nodes).
    node: int = -1
    # Stable element id; set on controls only.
    eid: str | None = None
    # The value of a secret field (shown masked, never written out): the request guard
    # looks for it in what the page sends to other sites.
    secret: str = field(default="", repr=False)
    # The kind of secret a field is for (`Secret.value`: "password"), filled or not.
    secret_kind: str = ""

    def text(self) -> str:
        """The visible text of this node and its descendants, whitespace folded."""
        parts: list[str] = []
        _collect_text(self, parts)
        return " ".join("".join(parts).split())

    def iter(self) -> list[OutNode]:
        """This node and every output node below it, in document order."""
        found: list[OutNode] = []
        stack: list[OutNode] = [self]
        while stack:
            node = stack.pop()
            found.append(node)
            stack.extend(c for c in reversed(node.children) if isinstance(c, OutNode))
        return found


def _collect_text(node: OutNode, parts: list[str]) -> None:
    for child in node.children:
        if isinstance(child, str):
            parts.append(child)
        else:
            parts.append(" ")
            _collect_text(child, parts)
            parts.append(" ")


@frozen
class Control:
    """An element a person can act on, as the id map keeps it for the tools."""

    eid: str
    node: int
    backend_node_id: int
    frame: int
    role: str
    name: str
    region: str
    # The URL of the document it is in (for a frame its embedder wrote, the
    # embedder's): which site acting on it acts on.
    frame_url: str = ""
    # Its tag and ``type`` attribute as the page XML writes them ("button", "submit"):
    # what it is in words for the person (the side panel's step words), from the
    # same facts the model read.
    tag: str = ""
    input_type: str = ""
    # A secret field's value, which the XML shows masked (never shown, never logged).
    secret: str = field(default="", repr=False)
    # A custom drop-down's face: the backend node id of the hidden <select> it stands
    # for, which `select` reads its options from and checks (0: none).
    stands_for: int = 0
    # The heading it is under (lower case) and the kind of secret a field is for
    # ("password"; "" for none): what a routine's step keeps to find it again.
    heading: str = ""
    secret_kind: str = ""
