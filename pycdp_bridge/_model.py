"""The page model: one tab's DOM, layout and accessibility data joined per node.

`capture()` builds it from CDP; the compaction pipeline only reads it. Nodes live in
one flat list in document order (pre-order, shadow roots before light children,
an iframe's document right after the iframe element), so a pass over the page is a
loop over a list and a subtree is a contiguous slice (``node.index`` up to
``node.end``). We chose attrs classes with slots over columnar arrays: the pipeline
touches a few fields of every node, and attribute access on a slotted object is
as fast as indexing a column while keeping one name per field (measured in
``tests/bench``: building the model for the largest corpus page is a small share of
the capture time, which the browser dominates).
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from typing import Final

import attrs

__all__ = [
    "AXInfo",
    "Frame",
    "Node",
    "NodeType",
    "PageModel",
    "Rect",
    "Style",
]


class NodeType(enum.IntEnum):
    """The DOM node types the model keeps (comments, doctypes and PIs are dropped)."""

    ELEMENT = 1
    TEXT = 3
    DOCUMENT = 9
    SHADOW_ROOT = 11  # DocumentFragment; the only fragments in a live tree are shadow roots


#: The widest side a box may have and still be empty: four of Chromium's layout units
#: (1/64 px), far below anything drawn (a hairline on a 3x screen is 1/3 px).
THINNEST = 1 / 16


@attrs.frozen
class Rect:
    """An axis-aligned box in CSS pixels, in the top-level document's coordinates."""

    x: float
    y: float
    width: float
    height: float

    @property
    def right(self) -> float:
        return self.x + self.width

    @property
    def bottom(self) -> float:
        return self.y + self.height

    @property
    def area(self) -> float:
        return self.width * self.height

    def is_empty(self) -> bool:
        """No area a person could see: a side of at most `THINNEST` pixels.

        A box of zero width moved by a fractional transform (a marquee, a CSS
        ticker) comes back rounded out to one layout unit (1/64 px) in some frames
        and not in others; it is as empty in both.
        """
        return self.width <= THINNEST or self.height <= THINNEST

    def intersection(self, other: Rect) -> Rect:
        """The part of this box inside `other` (empty when they do not meet)."""
        x, y = max(self.x, other.x), max(self.y, other.y)
        right, bottom = min(self.right, other.right), min(self.bottom, other.bottom)
        return Rect(x, y, max(0.0, right - x), max(0.0, bottom - y))

    def contains(self, other: Rect) -> bool:
        return (
            self.x <= other.x
            and self.y <= other.y
            and self.right >= other.right
            and self.bottom >= other.bottom
        )

    def intersects(self, other: Rect) -> bool:
        return not (
            self.right <= other.x
            or other.right <= self.x
            or self.bottom <= other.y
            or other.bottom <= self.y
        )

    def offset(self, dx: float, dy: float) -> Rect:
        return Rect(self.x + dx, self.y + dy, self.width, self.height)


@attrs.frozen
class Style:
    """The computed styles the pipeline reads, parsed once at capture time."""

    display: str = "inline"
    visibility: str = "visible"
    opacity: float = 1.0
    background_color: str = "rgba(0, 0, 0, 0)"
    # CSS `content`: "normal" on most elements; `url(...)` where an image replaces
    # the element or fills a ::before (icons drawn by CSS, named from the file).
    content: str = "normal"
    cursor: str = "auto"
    pointer_events: str = "auto"
    position: str = "static"
    z_index: str = "auto"
    # The snapshot does not include text colours by default; the pipeline uses
    # these to tell a transparent scrim from a covering panel.
    background_image: str = "none"
    # "visible" or what clips the element's content on that axis ("hidden", "clip",
    # "auto", "scroll"): what a cover can hide of content is only the part drawn.
    overflow_x: str = "visible"
    overflow_y: str = "visible"
    # "none", or which way a person may drag the element's corner to resize it
    # ("both", "horizontal", "vertical", "block", "inline"); it takes effect only
    # where the overflow is not visible.
    resize: str = "none"


@attrs.frozen
class AXInfo:
    """What the browser's accessibility tree says about one DOM node."""

    role: str
    name: str
    ignored: bool = False
    # Flattened AX properties: {"focusable": True, "checked": "true", "level": 2, ...}
    properties: Mapping[str, object] = attrs.field(factory=dict)
    description: str = ""
    value: str = ""


@attrs.frozen
class Frame:
    """One document of the page: the main frame, an iframe, or an out-of-process iframe."""

    index: int
    frame_id: str
    url: str
    # CDP session that owns this document; None for the target's own session.
    session_id: str | None
    # Index of the <iframe>/<frame> element that holds this document, -1 for the main frame.
    owner: int
    # Offset added to this document's boxes to place them in top-level coordinates.
    offset_x: float = 0.0
    offset_y: float = 0.0


# The members as plain module names: looking one up on the enum class costs more than
# the test it is for (0.1 µs in Python 3.11), and the pipeline tests every node.
_ELEMENT: Final = NodeType.ELEMENT
_TEXT: Final = NodeType.TEXT


@attrs.define(slots=True, eq=False, repr=False)
class Node:
    """One DOM node of the page with its layout and accessibility data.

    The pipeline treats nodes as read-only; capture fills them once.
    """

    index: int
    node_type: NodeType
    # Lower-case tag name for elements; "#text", "#document" or "#shadow-root" otherwise.
    name: str
    backend_node_id: int
    frame: int
    parent: int
    children: list[int] = attrs.field(factory=list)
    # Index one past the last node of this node's subtree (filled by the builder).
    end: int = 0
    attributes: dict[str, str] = attrs.field(factory=dict)
    # nodeValue for text nodes; for pseudo-elements (name "::before", "::after",
    # "::marker"...) the text they generate, which exists nowhere in the DOM.
    text: str = ""
    # Layout: None when the node has no layout object (display:none, not rendered)
    # or when the DOMSnapshot was missing.
    bounds: Rect | None = None
    paint_order: int | None = None
    style: Style | None = None
    # As DOMSnapshot gives them, not positioned on the page: client_rect is
    # (clientLeft, clientTop, clientWidth, clientHeight), scroll_rect is
    # (scrollLeft, scrollTop, scrollWidth, scrollHeight).
    client_rect: Rect | None = None
    scroll_rect: Rect | None = None
    # DOMSnapshot's isClickable: the element itself has a click, mousedown or mouseup
    # listener, or is natively clickable (a link, a form control). A listener on an
    # ancestor does not count, so this tells what the page made clickable where.
    clickable: bool = False
    # Live form state (the DOM attributes hold only the initial values).
    input_value: str | None = None
    checked: bool | None = None
    selected: bool | None = None
    ax: AXInfo | None = None
    shadow_root_type: str | None = None  # "open", "closed" or "user-agent" on shadow roots
    pseudo_type: str | None = None
    # For <iframe>/<frame> elements: index of the Frame whose document they hold.
    content_frame: int | None = None

    @property
    def is_element(self) -> bool:
        return self.node_type is _ELEMENT

    @property
    def is_text(self) -> bool:
        return self.node_type is _TEXT

    def attr(self, name: str, default: str | None = None) -> str | None:
        return self.attributes.get(name, default)

    def __repr__(self) -> str:
        label = self.name if not self.is_text else repr(self.text[:30])
        return f"<Node #{self.index} {label} backend={self.backend_node_id}>"


@attrs.define(slots=True, eq=False)
class PageModel:
    """Everything captured from one tab at one moment."""

    url: str
    title: str
    nodes: list[Node]
    frames: list[Frame]
    # Layout viewport of the top-level document in CSS pixels (x, y = scroll offset).
    viewport: Rect
    # Parts of the capture that failed ("dom_snapshot", "ax_tree", "frame:<id>"...).
    # The model still builds without them; the pipeline reports them in its stats.
    missing: tuple[str, ...] = ()
    # Seconds spent per CDP call (wall time: the browser, the pipe and parsing the
    # reply), decoding the snapshot ("decode"), building the tree from it ("tree")
    # and joining ("join"), for stats and benchmarks.
    timings: dict[str, float] = attrs.field(factory=dict)
    # Hash of the document identity (main frame loader id); changes on navigation.
    document_id: str = ""
    # The main frame navigated while the capture ran: its parts may be of two
    # documents (`capture` reads the frame tree before and after them).
    navigated: bool = False

    @property
    def root(self) -> Node:
        return self.nodes[0]

    def __len__(self) -> int:
        return len(self.nodes)

    def elements(self) -> Iterator[Node]:
        return (n for n in self.nodes if n.node_type is NodeType.ELEMENT)

    def element_count(self) -> int:
        """DOM elements (pseudo-elements such as ::marker are not counted)."""
        element = NodeType.ELEMENT
        return sum(1 for n in self.nodes if n.node_type is element and n.pseudo_type is None)

    def subtree(self, node: Node) -> list[Node]:
        """The node and all its descendants, in document order."""
        return self.nodes[node.index : node.end]

    def parent_of(self, node: Node) -> Node | None:
        return self.nodes[node.parent] if node.parent >= 0 else None

    def parent_cursor(self, node: Node) -> str | None:
        """The computed ``cursor`` the node inherits: that of its nearest ancestor with
        a computed style, None when none has one (no snapshot, or nothing rendered).

        A node whose ``style.cursor`` is ``"pointer"`` while this is not starts the
        pointer cursor itself, rather than inheriting it. Ancestors without a layout
        object (``display: contents``, for one) have no style in the snapshot and are
        passed over.
        """
        for ancestor in self.ancestors(node):
            if ancestor.style is not None:
                return ancestor.style.cursor
        return None

    def ancestors(self, node: Node) -> Iterator[Node]:
        i = node.parent
        while i >= 0:
            parent = self.nodes[i]
            yield parent
            i = parent.parent
