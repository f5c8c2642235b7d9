"""Page models built by hand, for tests of the pipeline and the snapshot memory that
need a page no browser has to make (and Hypothesis examples by the hundred)."""

from __future__ import annotations

import attrs

from pycdp_bridge import Frame, Node, NodeType, PageModel, Rect

__all__ = ["ModelBuilder"]


@attrs.define
class ModelBuilder:
    """Nodes added in document order (each after its parent), then one `PageModel` of
    them: one frame, no layout (the model says its DOMSnapshot is missing, so the
    pipeline keeps everything that markup does not hide)."""

    nodes: list[Node] = attrs.field(factory=list)

    def add(
        self, kind: NodeType, name: str, parent: int, text: str = "", **attributes: str
    ) -> Node:
        """A node of ``kind`` under the node at index ``parent`` (-1: the document)."""
        node = Node(
            index=len(self.nodes),
            node_type=kind,
            name=name,
            backend_node_id=100 + len(self.nodes),
            frame=0,
            parent=parent,
            attributes=dict(attributes),
            text=text,
        )
        if parent >= 0:
            self.nodes[parent].children.append(node.index)
        self.nodes.append(node)
        return node

    def model(self, url: str, title: str) -> PageModel:
        """The page of the nodes added, each node's subtree ending after its last child's."""
        nodes = self.nodes
        for node in reversed(nodes):
            node.end = max([node.index + 1, *(nodes[c].end for c in node.children)])
        return PageModel(
            url=url,
            title=title,
            nodes=nodes,
            frames=[Frame(index=0, frame_id="F0", url=url, session_id=None, owner=-1)],
            viewport=Rect(0, 0, 1280, 720),
            missing=("dom_snapshot",),
            document_id="doc",
        )
