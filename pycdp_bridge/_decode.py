"""Decoding CDP replies, without I/O: what the capture's calls returned, as plain values.

Every function here takes the JSON a CDP command returned (a dict, as recorded) and
gives back the model's values, so tests can drive them with recorded replies:

* `decode_snapshot`: ``DOMSnapshot.captureSnapshot``'s string table, node arrays,
  layout arrays and rare data into one `NodeState` per backend node id, plus what the
  snapshot says about each document and the text ``DOM.getDocument`` leaves out.
* `decode_ax`: ``Accessibility.get*AXTree`` nodes into `AXInfo` per backend node id.
* `cut_off`, `interactive_nodes`, `subframe_ids`, `frame_owners`: walks over
  ``DOM.getDocument`` JSON that tell the I/O which calls to make next.
* `content_inset`: ``DOM.getBoxModel`` into where a frame's document starts.
* `viewport`: ``Page.getLayoutMetrics`` into the visible rectangle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from ._model import AXInfo, Rect, Style

__all__ = [
    "DOM_WHITESPACE",
    "INTERACTIVE_TAGS",
    "SNAPSHOT_STYLES",
    "DocumentState",
    "Json",
    "Layout",
    "NodeState",
    "SnapshotData",
    "content_inset",
    "cut_off",
    "decode_ax",
    "decode_snapshot",
    "frame_owners",
    "interactive_nodes",
    "subframe_ids",
    "viewport",
]

Json = Mapping[str, Any]

#: Elements the pipeline keeps for their role, whose AX role and name
#: ``ax="interactive"`` fetches.
INTERACTIVE_TAGS = frozenset(
    {
        "a", "area", "button", "input", "select", "textarea", "option", "summary",
        "details", "label", "iframe", "frame", "video", "audio", "dialog",
        "h1", "h2", "h3", "h4", "h5", "h6",
        "nav", "main", "header", "footer", "aside", "form", "search", "section",
    }
)  # fmt: skip
_INTERACTIVE_ATTRIBUTES = ("role", "tabindex", "contenteditable", "aria-label", "aria-labelledby")

#: The computed styles the capture asks DOMSnapshot for, in the order decoded here.
#: Where an iframe's document starts inside its box (border plus padding) is not
#: among them: every style costs a value per layout object, and only frame owners
#: need that one (`frame_insets` reads it from their box models instead).
#: `_model.Style` has one field each; only what the pipeline reads, since each one
#: costs the browser a value per layout object.
SNAPSHOT_STYLES: tuple[str, ...] = (
    "display",
    "visibility",
    "opacity",
    "background-color",
    "background-image",
    "content",
    "cursor",
    "pointer-events",
    "position",
    "z-index",
    "overflow-x",
    "overflow-y",
    "resize",
)
_STYLE_FIELDS = tuple(name.replace("-", "_") for name in SNAPSHOT_STYLES)

#: What the DOM agent strips when it leaves whitespace-only text nodes out of
#: ``getDocument`` (Blink's IsSpaceOrNewline: ASCII space, tab and line breaks, and
#: the characters of bidirectional class WS). A no-break space is text to it.
DOM_WHITESPACE = (
    " \t\n\v\f\r\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u205f\u3000"
)

#: getDocument ends longer text nodes with "…" at this many characters.
DOM_TEXT_LIMIT = 10_000

ELEMENT, TEXT, CDATA, DOCUMENT, FRAGMENT = 1, 3, 4, 9, 11


@attrs.define(eq=False)
class Layout:
    """The first layout object of a node: its box, paint order, styles and text."""

    bounds: Rect
    paint_order: int | None
    style: Style | None
    client_rect: Rect | None
    scroll_rect: Rect | None
    text: str


@attrs.define(eq=False)
class NodeState:
    """What the snapshot says about one DOM node."""

    layout: Layout | None = None
    clickable: bool = False
    input_value: str | None = None
    checked: bool = False
    selected: bool = False


@attrs.frozen
class DocumentState:
    """What the snapshot says about one document: its scroll offset and title."""

    scroll_x: float = 0.0
    scroll_y: float = 0.0
    title: str = ""


@attrs.define(eq=False)
class SnapshotData:
    """One ``captureSnapshot`` reply, decoded."""

    #: Backend node id → what the snapshot says about that node.
    states: dict[int, NodeState] = attrs.field(factory=dict)
    #: Frame id → its document's scroll offset and title.
    documents: dict[str, DocumentState] = attrs.field(factory=dict)
    #: Rendered whitespace-only text nodes, which ``DOM.getDocument`` leaves out
    #: although they separate words (``<b>a</b> <i>b</i>``): parent backend id → list
    #: of (backend id of the previous sibling or None, the text node as DOM JSON).
    whitespace: dict[int, list[tuple[int | None, Json]]] = attrs.field(factory=dict)
    #: Text nodes longer than getDocument gives them: backend id → the whole text.
    long_texts: dict[int, str] = attrs.field(factory=dict)
    #: Backend id of the top document's node: another one than ``DOM.getDocument``'s
    #: root means the page navigated between the two calls.
    root_id: int | None = None


def decode_snapshot(snapshot: Json) -> SnapshotData:
    """Decode a ``DOMSnapshot.captureSnapshot`` reply asked for `SNAPSHOT_STYLES`."""
    decoded = SnapshotData()
    # An absent string is index -1 throughout the reply: with "" appended, -1 reads
    # it without a test per lookup.
    strings: list[str] = [*snapshot["strings"], ""]
    string = strings.__getitem__
    style_cache: dict[tuple[int, ...], Style] = {}

    for document in snapshot["documents"]:
        if decoded.root_id is None and document["nodes"].get("backendNodeId"):
            decoded.root_id = int(document["nodes"]["backendNodeId"][0])
        decoded.documents[string(document["frameId"])] = DocumentState(
            float(document.get("scrollOffsetX", 0.0)),
            float(document.get("scrollOffsetY", 0.0)),
            string(document["title"]),
        )
        nodes = document["nodes"]
        backend_ids: list[int] = nodes["backendNodeId"]
        states: dict[int, NodeState] = {}

        def state(
            node_index: int,
            states: dict[int, NodeState] = states,
            backend_ids: list[int] = backend_ids,
        ) -> NodeState:
            backend = backend_ids[node_index]
            found = states.get(backend)
            if found is None:
                found = states[backend] = NodeState()
            return found

        layout = document["layout"]
        paint_orders: list[int] = layout.get("paintOrders", [])
        client_rects: list[list[float]] = layout.get("clientRects", [])
        scroll_rects: list[list[float]] = layout.get("scrollRects", [])
        texts: list[int] = layout["text"]
        all_bounds: list[list[float]] = layout["bounds"]
        all_styles: list[list[int]] = layout["styles"]
        # One pass over every layout object of a large page: locals, not attribute
        # lookups or helper calls, where they are not needed.
        for li, node_index in enumerate(layout["nodeIndex"]):
            backend = backend_ids[node_index]
            node_state = states.get(backend)
            if node_state is None:
                node_state = states[backend] = NodeState()
            elif node_state.layout is not None:
                # Later layout objects of one node (a pseudo-element's text fragment,
                # continuations) add no box of their own, only their text.
                if not node_state.layout.text:
                    node_state.layout.text = string(texts[li])
                continue
            style_key = tuple(all_styles[li])
            parsed = style_cache.get(style_key)
            if parsed is None:
                parsed = style_cache[style_key] = _parse_style(list(map(string, style_key)))
            # Positional, the box made here: keywords and a helper call cost more
            # than the rest of this loop. x and y as floats, as `Rect.offset` by
            # (0, 0) would make them (the join shares the Rect then).
            x, y, width, height = all_bounds[li]
            node_state.layout = Layout(
                Rect(x + 0.0, y + 0.0, width, height),
                paint_orders[li] if li < len(paint_orders) else None,
                parsed if style_key else None,
                _rect(client_rects, li) if client_rects else None,
                _rect(scroll_rects, li) if scroll_rects else None,
                strings[texts[li]],
            )
        _read_text_nodes(nodes, set(layout["nodeIndex"]), string, decoded)
        for field in ("inputValue", "textValue"):
            rare = nodes.get(field, {})
            for node_index, value in zip(
                rare.get("index", ()), rare.get("value", ()), strict=False
            ):
                state(node_index).input_value = string(value)
        for node_index in nodes.get("inputChecked", {}).get("index", ()):
            state(node_index).checked = True
        for node_index in nodes.get("optionSelected", {}).get("index", ()):
            state(node_index).selected = True
        for node_index in nodes.get("isClickable", {}).get("index", ()):
            state(node_index).clickable = True
        decoded.states.update(states)
    return decoded


def _read_text_nodes(
    nodes: Json, rendered: set[int], string: Callable[[int], str], into: SnapshotData
) -> None:
    """Collect rendered whitespace-only text nodes and where they stand among siblings,
    and the whole value of text nodes longer than getDocument gives them."""
    parents: list[int] = nodes["parentIndex"]
    types: list[int] = nodes["nodeType"]
    values: list[int] = nodes["nodeValue"]
    backend_ids: list[int] = nodes["backendNodeId"]
    # Per node, its latest child seen so far (-1: none yet); a list, not a dict: this
    # runs for every node of the page.
    last_child = [-1] * len(parents)
    for index, parent in enumerate(parents):
        if parent < 0:
            continue
        previous = last_child[parent]
        last_child[parent] = index
        if types[index] != TEXT:
            continue
        text = string(values[index])
        if len(text) > DOM_TEXT_LIMIT:
            into.long_texts[backend_ids[index]] = text
        # Exactly the ones getDocument leaves out: a no-break space it keeps would
        # otherwise stand twice in the tree.
        if text and index in rendered and not text.strip(DOM_WHITESPACE):
            entry = {"nodeType": TEXT, "nodeValue": text, "backendNodeId": backend_ids[index]}
            before = backend_ids[previous] if previous >= 0 else None
            into.whitespace.setdefault(backend_ids[parent], []).append((before, entry))


def _rect(rects: list[list[float]], index: int) -> Rect | None:
    if index < len(rects) and len(rects[index]) == 4:
        return Rect(*rects[index])
    return None


def _parse_style(values: list[str]) -> Style:
    if len(values) != len(SNAPSHOT_STYLES):
        return Style()
    fields: dict[str, Any] = dict(zip(_STYLE_FIELDS, values, strict=False))
    try:
        fields["opacity"] = float(fields["opacity"])
    except ValueError:
        fields["opacity"] = 1.0
    return Style(**fields)


def content_inset(box_model: Json) -> tuple[float, float]:
    """Border plus padding, left and top, of a ``DOM.getBoxModel`` reply's ``model``:
    where a frame owner's document starts inside its box."""
    content, border = box_model["content"], box_model["border"]
    return float(content[0]) - float(border[0]), float(content[1]) - float(border[1])


def decode_ax(nodes: Sequence[Json], into: dict[int, AXInfo] | None = None) -> dict[int, AXInfo]:
    """AX nodes (``getFullAXTree``/``getPartialAXTree``'s ``nodes``) by backend node id,
    added to ``into`` when given: one DOM node can have several AX nodes, and the first
    unignored one speaks for it."""
    found: dict[int, AXInfo] = {} if into is None else into
    for node in nodes:
        backend = node.get("backendDOMNodeId")
        if backend is None:
            continue
        known = found.get(backend)
        if known is not None and not known.ignored:
            continue
        properties = {
            prop["name"]: _ax_value(prop.get("value", {})) for prop in node.get("properties", ())
        }
        found[backend] = AXInfo(
            role=_ax_text(node.get("role")),
            name=_ax_text(node.get("name")),
            ignored=bool(node.get("ignored", False)),
            properties=properties,
            description=_ax_text(node.get("description")),
            value=_ax_text(node.get("value")),
        )
    return found


def _ax_text(value: Json | None) -> str:
    if not value or value.get("value") is None:
        return ""
    return str(value["value"])


def _ax_value(value: Json) -> object:
    """An AX property value as plain data: bool, number or str, or related node ids."""
    if "value" in value:
        return value["value"]
    related = value.get("relatedNodes")
    if related:
        return [r.get("backendDOMNodeId") for r in related]
    return None


def viewport(metrics: Json) -> Rect:
    """The CSS layout viewport of a ``Page.getLayoutMetrics`` reply, in page coordinates."""
    visible = metrics.get("cssLayoutViewport", {})
    return Rect(
        float(visible.get("pageX", 0)),
        float(visible.get("pageY", 0)),
        float(visible.get("clientWidth", 0)),
        float(visible.get("clientHeight", 0)),
    )


def cut_off(nodes: Iterable[Any]) -> list[dict[str, Any]]:
    """Nodes in these ``getDocument`` subtrees that have children the reply left out: a
    child count and no ``children``. Shadow roots and frame documents come with their
    host even where the depth ran out, as such nodes; user-agent shadow trees are not
    read."""
    found: list[dict[str, Any]] = []
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if node.get("shadowRootType") == "user-agent":
            continue
        if "children" not in node and node.get("childNodeCount", 0) > 0:
            found.append(node)
        stack.extend(node.get("children", ()))
        stack.extend(node.get("shadowRoots", ()))
        if "contentDocument" in node:
            stack.append(node["contentDocument"])
    return found


def interactive_nodes(root: Json, states: Mapping[int, NodeState]) -> list[int]:
    """Backend ids of the elements the pipeline keeps by role (`INTERACTIVE_TAGS`, an
    ARIA attribute or tabindex, or a click listener), whose AX info ``ax="interactive"``
    asks for."""
    found: list[int] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.get("nodeType") == ELEMENT:
            backend = int(node.get("backendNodeId", 0))
            state = states.get(backend)
            attributes = node.get("attributes", ())[::2]
            if (
                str(node.get("nodeName", "")).lower() in INTERACTIVE_TAGS
                or (state is not None and state.clickable)
                or any(name in attributes for name in _INTERACTIVE_ATTRIBUTES)
            ):
                found.append(backend)
        if node.get("shadowRootType") != "user-agent":
            stack.extend(node.get("children", ()))
            stack.extend(node.get("shadowRoots", ()))
            if "contentDocument" in node:
                stack.append(node["contentDocument"])
    return found


def frame_owners(root: Json) -> list[int]:
    """Backend ids of the elements that hold an in-process frame's document in a
    ``getDocument`` tree."""
    found: list[int] = []
    stack = [root]
    while stack:
        node = stack.pop()
        document = node.get("contentDocument")
        if document is not None:
            found.append(int(node.get("backendNodeId", 0)))
            stack.append(document)
        stack.extend(node.get("children", ()))
        stack.extend(node.get("shadowRoots", ()))
    return found


def subframe_ids(root: Json) -> list[str]:
    """Frame ids of the in-process iframes in a ``getDocument`` tree."""
    found: list[str] = []
    stack = [root]
    while stack:
        node = stack.pop()
        document = node.get("contentDocument")
        if document is not None:
            if node.get("frameId"):
                found.append(str(node["frameId"]))
            stack.append(document)
        stack.extend(node.get("children", ()))
        stack.extend(node.get("shadowRoots", ()))
    return found
