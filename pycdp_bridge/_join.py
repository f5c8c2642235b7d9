"""The join: per-session capture results into one `PageModel`, without I/O.

The DOM trees of ``DOM.getDocument`` (the tab's, and each out-of-process iframe's)
give the nodes in document order; the decoded snapshot and AX trees are joined to
them on ``backendNodeId`` (per session: ids are only unique within one renderer
process). Each out-of-process iframe's document is grafted under its ``<iframe>``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

import attrs

from ._decode import (
    CDATA,
    DOCUMENT,
    ELEMENT,
    FRAGMENT,
    TEXT,
    DocumentState,
    NodeState,
    SnapshotData,
)
from ._errors import CDPError
from ._model import AXInfo, Frame, Node, NodeType, PageModel, Rect

__all__ = ["SessionCapture", "join"]

Json = Mapping[str, Any]

# Pseudo-elements painted before an element's children; the rest come after them.
_LEADING_PSEUDO = frozenset({"marker", "before", "check"})
_TOGGLES = frozenset({"checkbox", "radio"})
_NO_DOCUMENT = DocumentState()


@attrs.define(eq=False)
class SessionCapture:
    """What the capture read through one CDP session: the tab, or one out-of-process
    iframe (``session_id`` None is the tab's own session)."""

    session_id: str | None
    frame_id: str = ""
    #: ``DOM.getDocument``'s root, the whole tree; None when it could not be read.
    document: Json | None = None
    snapshot: SnapshotData = attrs.field(factory=SnapshotData)
    snapshot_ok: bool = False
    ax: dict[int, AXInfo] = attrs.field(factory=dict)
    #: Parts that could not be read, for `PageModel.missing`.
    failed: list[str] = attrs.field(factory=list)
    timings: dict[str, float] = attrs.field(factory=dict)
    #: Frame owner elements of this session (backend id) → border plus padding, left
    #: and top: where their frame's document starts inside their box.
    insets: dict[int, tuple[float, float]] = attrs.field(factory=dict)


def join(
    main: SessionCapture,
    children: Mapping[str, SessionCapture],
    owners: Mapping[tuple[str | None, int], str],
) -> tuple[PageModel, set[str]]:
    """The page model of the tab's capture and its children's (by session id), and the
    session ids of the children that were grafted into it.

    ``owners`` maps (session of the owner's document, owner backendNodeId) to the child
    session whose document that element shows. The model's viewport, document id and
    ``missing`` are left for the caller, which knows them.
    """
    builder = _Builder(main, children, owners)
    return builder.build(), builder.grafted


# One node to add: its JSON, parent index, frame index, the capture of its session,
# and for a document the id of the frame it is the document of ("" when unknown). A
# plain tuple, unpacked where it is read: one is made per node of the page, and a
# named tuple's constructor costs several times a tuple display's.
_Visit: TypeAlias = tuple[Json, int, int, "SessionCapture", str]


class _Builder:
    """Flattens the per-session DOM trees into the model's document-order node list."""

    def __init__(
        self,
        main: SessionCapture,
        children: Mapping[str, SessionCapture],
        owners: Mapping[tuple[str | None, int], str],
    ) -> None:
        self.main = main
        self.children = children
        self.owners = owners
        self.nodes: list[Node] = []
        self.frames: list[Frame] = []
        self.grafted: set[str] = set()

    def build(self) -> PageModel:
        root = self.main.document
        if root is None:
            raise CDPError("DOM.getDocument", 0, "capture returned no document")
        self._walk((root, -1, -1, self.main, self.main.frame_id))
        main_frame = self.frames[0]
        title = self.main.snapshot.documents.get(main_frame.frame_id, _NO_DOCUMENT).title
        if not title and not self.main.snapshot_ok:
            title = self._title_element_text()
        return PageModel(
            url=str(root.get("documentURL", "")),
            title=title,
            nodes=self.nodes,
            frames=self.frames,
            viewport=Rect(0.0, 0.0, 0.0, 0.0),
        )

    def _walk(self, start: _Visit) -> None:
        # Iterative: real pages nest deeper than Python's recursion limit allows.
        stack = [start]
        add, children_of = self._add, self._children_of
        while stack:
            visit = stack.pop()
            node = add(visit)
            if node is not None and node.node_type is not _TEXT_NODE:
                stack.extend(reversed(children_of(visit, node)))
        # Nodes are in document order, so a subtree ends where its last child's does;
        # children come after their parent, so they are done first walking backwards.
        nodes = self.nodes
        for node in reversed(nodes):
            children = node.children
            if children:
                node.end = nodes[children[-1]].end

    def _add(self, visit: _Visit) -> Node | None:
        # Once per node of the page: the Node is built with its values in one call,
        # and lookups are kept out of the common paths.
        json, parent, frame, cap, _ = visit
        node_type = json.get("nodeType")
        if node_type == ELEMENT:
            name = str(json.get("nodeName", "")).lower()
        elif node_type in (TEXT, CDATA):
            name = "#text"
        elif node_type == DOCUMENT:
            frame = self._open_frame(visit)
            name = "#document"
        elif node_type == FRAGMENT:
            if json.get("shadowRootType") == "user-agent":
                return None
            name = "#shadow-root"
        else:
            return None  # comments, doctypes, processing instructions
        nodes = self.nodes
        index = len(nodes)
        backend = int(json.get("backendNodeId", 0))
        snapshot = cap.snapshot
        state = snapshot.states.get(backend)
        node = Node(index, _NODE_TYPES[node_type], name, backend, frame, parent)
        node.end = index + 1
        if node_type == ELEMENT:
            raw = json.get("attributes")
            if raw:
                # Name, value, name, value...: one iterator zipped with itself pairs
                # them without slicing. No `strict=`: on zip a keyword argument costs
                # more than the pairing (an odd last name is dropped either way).
                pairs = iter(raw)
                node.attributes = dict(zip(pairs, pairs))  # noqa: B905
            node.pseudo_type = json.get("pseudoType")
        elif node_type == FRAGMENT:
            node.shadow_root_type = json.get("shadowRootType")
        elif node_type != DOCUMENT:
            node.text = snapshot.long_texts.get(backend) or str(json.get("nodeValue", ""))
        if state is not None:
            layout = state.layout
            if layout is not None:
                this_frame = self.frames[frame]
                dx, dy = this_frame.offset_x, this_frame.offset_y
                # Snapshot bounds are floats already (see `_decode`), so a zero offset
                # would give an equal Rect: the frozen one is shared instead of copied.
                node.bounds = layout.bounds if dx == dy == 0.0 else layout.bounds.offset(dx, dy)
                node.paint_order = layout.paint_order
                node.style = layout.style
                node.client_rect = layout.client_rect
                node.scroll_rect = layout.scroll_rect
                if node.pseudo_type is not None:
                    node.text = layout.text
            if node_type == ELEMENT:
                node.clickable = state.clickable
                node.input_value = state.input_value
                if name == "input" and node.attributes.get("type", "").lower() in _TOGGLES:
                    node.checked = state.checked
                elif name == "option":
                    node.selected = state.selected
        ax = cap.ax
        if ax:
            node.ax = ax.get(backend)
        nodes.append(node)
        if parent >= 0:
            nodes[parent].children.append(index)
        return node

    def _children_of(self, visit: _Visit, node: Node) -> Sequence[_Visit]:
        json, _, _, cap, _ = visit
        index, frame = node.index, node.frame
        spaces = cap.snapshot.whitespace.get(node.backend_node_id)
        if not (
            spaces
            or "pseudoElements" in json
            or "shadowRoots" in json
            or "contentDocument" in json
            or (self.owners and (cap.session_id, int(json.get("backendNodeId", 0))) in self.owners)
        ):
            # Most nodes: their DOM children and nothing else (the general case below
            # gives the same list).
            return [(child, index, frame, cap, "") for child in json.get("children", ())]
        leading: list[Json] = []
        trailing: list[Json] = []
        for pseudo in json.get("pseudoElements", ()):
            (leading if pseudo.get("pseudoType") in _LEADING_PSEUDO else trailing).append(pseudo)
        ordered: list[Json] = [*json.get("shadowRoots", ()), *leading]
        visits = [(child, index, frame, cap, "") for child in ordered]
        document = json.get("contentDocument")
        if document is not None:
            visits.append((document, index, frame, cap, str(json.get("frameId", ""))))
        visits.extend((child, index, frame, cap, "") for child in _with_whitespace(json, spaces))
        session = self.owners.get((cap.session_id, int(json.get("backendNodeId", 0))))
        child_cap = self.children.get(session) if session is not None else None
        if child_cap is not None and child_cap.document is not None and session is not None:
            self.grafted.add(session)
            visits.append((child_cap.document, index, frame, child_cap, child_cap.frame_id))
        visits.extend((pseudo, index, frame, cap, "") for pseudo in trailing)
        return visits

    def _open_frame(self, visit: _Visit) -> int:
        """Register the document's Frame and place it inside its owner element."""
        json, owner, _, cap, frame_id = visit
        frame_id = frame_id or _html_frame_id(json)
        offset_x = offset_y = 0.0
        if owner >= 0:
            holder = self.nodes[owner]
            parent_frame = self.frames[holder.frame]
            offset_x, offset_y = parent_frame.offset_x, parent_frame.offset_y
            state = self._state_of(holder)
            if holder.bounds is not None and state is not None and state.layout is not None:
                holder_cap = self._cap_of_frame(holder.frame)
                inset = holder_cap.insets.get(holder.backend_node_id, (0.0, 0.0))
                scroll = cap.snapshot.documents.get(frame_id, _NO_DOCUMENT)
                offset_x = holder.bounds.x + inset[0] - scroll.scroll_x
                offset_y = holder.bounds.y + inset[1] - scroll.scroll_y
        frame_index = len(self.frames)
        self.frames.append(
            Frame(
                index=frame_index,
                frame_id=frame_id,
                url=str(json.get("documentURL", "")),
                session_id=cap.session_id,
                owner=owner,
                offset_x=offset_x,
                offset_y=offset_y,
            )
        )
        if owner >= 0:
            self.nodes[owner].content_frame = frame_index
        return frame_index

    def _cap_of_frame(self, frame: int) -> SessionCapture:
        session = self.frames[frame].session_id
        if session is None:
            return self.main
        return self.children[session]

    def _state_of(self, node: Node) -> NodeState | None:
        return self._cap_of_frame(node.frame).snapshot.states.get(node.backend_node_id)

    def _title_element_text(self) -> str:
        for node in self.nodes:
            if node.frame == 0 and node.name == "title" and node.children:
                return "".join(self.nodes[c].text for c in node.children).strip()
        return ""


def _with_whitespace(json: Json, spaces: list[tuple[int | None, Json]] | None) -> Sequence[Json]:
    """The DOM children of a node with its rendered whitespace text put back in place."""
    children: Sequence[Json] = json.get("children", ())
    if not spaces:
        return children
    after: dict[int | None, list[Json]] = {}
    for before, entry in spaces:
        after.setdefault(before, []).append(entry)
    merged: list[Json] = list(after.get(None, ()))
    for child in children:
        merged.append(child)
        merged.extend(after.get(int(child.get("backendNodeId", 0)), ()))
    return merged


def _html_frame_id(document: Json) -> str:
    """getDocument puts a document's frame id on its root element, not on the document."""
    for child in document.get("children", ()):
        if child.get("frameId"):
            return str(child["frameId"])
    return ""


_TEXT_NODE = NodeType.TEXT
_NODE_TYPES = {
    ELEMENT: NodeType.ELEMENT,
    TEXT: NodeType.TEXT,
    CDATA: NodeType.TEXT,
    DOCUMENT: NodeType.DOCUMENT,
    FRAGMENT: NodeType.SHADOW_ROOT,
}
