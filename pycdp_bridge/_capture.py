"""Capture one tab into a `PageModel`: DOM tree, layout, styles and accessibility.

How the capture works, and why (figures from ``tests/bench/capture.py`` on this
machine, Chromium 156, 2 cores; see the report in that script's docstring):

* The tree comes from ``DOM.getDocument{pierce:true}`` (in slices, see below);
  layout, styles, form state and clickability from ``DOMSnapshot.captureSnapshot``;
  roles and names from ``Accessibility.getFullAXTree``. They run concurrently and are joined on
  ``backendNodeId`` (per session: ids are only unique within one renderer process).
* DOMSnapshot alone is not enough for the tree, though it lists every node of every
  in-process frame: it walks the *flat* tree, so shadow roots have no node of their
  own, light children of a shadow host appear under the ``<slot>`` they are assigned
  to (unassigned ones not at all), and where a shadow host sits inside a shadow tree
  of the same mode the boundary between the two trees cannot be told apart. The
  model promises shadow roots with their mode, so the default pays for
  ``DOM.getDocument`` (measured below); ``dom_snapshot=False`` skips the snapshot.
* The full AX tree is the costliest call by far, and the pipeline needs it only for
  roles and accessible names of the elements it keeps. Names follow rules
  (label[for], aria-labelledby, alt, title, content) that only the browser gets
  right, so the default asks the browser, but only about those elements: one
  ``Accessibility.getPartialAXTree{fetchRelatives:false}`` per candidate, all
  concurrent (``ax="interactive"``). ``ax=True`` reads the whole tree (every
  StaticText, generic and ignored node); ``ax=False`` skips AX entirely.

Measured on the largest corpus page (bootstrap3-css-docs-2021: 7,931 elements,
15,210 model nodes, 464 AX candidates), medians of 5 runs on a shared 2-core box;
absolute times swing 2x with the load of other jobs, ratios within a run hold:

====================================  ========  ========
call or variant                        run A      run B
====================================  ========  ========
``DOM.getDocument`` alone               421 ms    823 ms
``DOMSnapshot.captureSnapshot`` alone   888 ms  1,833 ms
``Accessibility.getFullAXTree`` alone 1,391 ms  2,831 ms
capture, ``ax=True``                  3,314 ms  7,467 ms
capture, ``ax="interactive"``             --    1,970 ms
capture, ``ax=False``                 1,267 ms  1,076 ms
capture, ``dom_snapshot=False``       1,202 ms  2,225 ms
====================================  ========  ========

So the default (getDocument + snapshot + AX for candidates) costs about a quarter of
the full-AX capture; getDocument adds about half a snapshot's time on its own,
less when overlapped, and is what gives shadow roots and exact tree structure.
* Frames: each in-process iframe's document is in the same ``getDocument`` and
  snapshot (its boxes in its own coordinates, shifted here by the iframe's content
  box); each needs its own ``getFullAXTree{frameId}``. Out-of-process iframes
  (cross-site; site isolation is on) are reached through
  ``Target.setAutoAttach{flatten:true}`` child sessions, captured the same way and
  grafted under their ``<iframe>`` element (found with ``DOM.getFrameOwner``).
* Deep trees: the browser turns each reply into JSON with a nesting limit (300), and
  a document nested deeper than about 140 elements fails as a whole in one
  ``getDocument``. The tree is read in slices of `DOM_DEPTH_SLICE` levels instead:
  one ``getDocument`` for ordinary pages, then one ``DOM.describeNode`` per subtree
  it cut off. Text is cut too: ``getDocument`` ends a text node at 10,000
  characters, so longer ones take their whole value from the snapshot.
* Dropped: comments, doctypes, processing instructions, ``<template>`` contents and
  user-agent shadow trees (an input's internals: the element's attributes and form
  state already say what they show). ``<script>``/``<style>`` stay; the pipeline
  drops and counts them.
* Never crashes on a failed part: without the snapshot the model has no layout and
  ``missing`` holds ``"dom_snapshot"``; without the AX tree, ``"ax_tree"``; a frame
  that could not be captured is ``"frame:<frameId>"``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal, TypeVar

import attrs
import trio

from . import _protocol as cdp
from ._errors import CDPError, TargetClosedError
from ._model import AXInfo, Frame, Node, NodeType, PageModel, Rect, Style
from ._target import Target

__all__ = ["INTERACTIVE_TAGS", "AXMode", "capture"]

#: True: the whole AX tree; "interactive": only elements kept by role; False: none.
AXMode = bool | Literal["interactive"]

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

T = TypeVar("T")
_Json = Mapping[str, Any]

#: Levels of the DOM tree read per call: two JSON levels each (node, its children
#: array), far below the browser's JSON nesting limit of 300 even with shadow roots
#: and frame documents in between, which add levels without using up depth.
DOM_DEPTH_SLICE = 48
# getDocument ends longer text nodes with "…" at this many characters.
_DOM_TEXT_LIMIT = 10_000

# Read beyond the model's `Style`: border and padding place an iframe's document
# inside it (read from styles so that captures without DOM rects place it too).
_EXTRA_STYLES = ("padding-left", "padding-top", "border-left-width", "border-top-width")
SNAPSHOT_STYLES = (*cdp.DEFAULT_SNAPSHOT_STYLES, *_EXTRA_STYLES)
_STYLE_FIELDS = tuple(name.replace("-", "_") for name in cdp.DEFAULT_SNAPSHOT_STYLES)

_ELEMENT, _TEXT, _CDATA, _DOCUMENT, _FRAGMENT = 1, 3, 4, 9, 11
# Pseudo-elements painted before an element's children; the rest come after them.
_LEADING_PSEUDO = frozenset({"marker", "before", "check"})
_TOGGLES = frozenset({"checkbox", "radio"})


@attrs.define(eq=False)
class _Layout:
    bounds: Rect
    paint_order: int | None
    style: Style | None
    client_rect: Rect | None
    scroll_rect: Rect | None
    text: str
    # Border plus padding, left and top: where a frame's document starts in its box.
    padding: tuple[float, float]


@attrs.define(eq=False)
class _NodeState:
    """What the snapshot says about one DOM node."""

    layout: _Layout | None = None
    clickable: bool = False
    input_value: str | None = None
    checked: bool = False
    selected: bool = False


@attrs.define(eq=False)
class _SessionCapture:
    """Raw results of one CDP session: the tab, or one out-of-process iframe."""

    session_id: str | None
    frame_id: str = ""
    document: _Json | None = None
    states: dict[int, _NodeState] = attrs.field(factory=dict)
    # Per frame id: (scroll x, scroll y, title) of the document, from the snapshot.
    documents: dict[str, tuple[float, float, str]] = attrs.field(factory=dict)
    ax: dict[int, AXInfo] = attrs.field(factory=dict)
    # Rendered whitespace-only text nodes, which DOM.getDocument leaves out although
    # they separate words ("<b>a</b> <i>b</i>"): parent backend id → list of
    # (backend id of the previous sibling or None, the text node as DOM JSON).
    whitespace: dict[int, list[tuple[int | None, _Json]]] = attrs.field(factory=dict)
    # Text nodes longer than getDocument gives them: backend id → the whole text.
    long_texts: dict[int, str] = attrs.field(factory=dict)
    snapshot_ok: bool = False
    failed: list[str] = attrs.field(factory=list)
    timings: dict[str, float] = attrs.field(factory=dict)


@attrs.frozen
class _Options:
    ax: AXMode
    dom_snapshot: bool
    rects: bool


async def capture(
    target: Target,
    *,
    ax: AXMode = "interactive",
    dom_snapshot: bool = True,
    child_frames: bool = True,
    rects: bool = True,
) -> PageModel:
    """Capture the target's page into a `PageModel` (see the module docstring).

    ``ax="interactive"`` (the default) asks the accessibility tree only about the
    elements the pipeline keeps by role (interactive ones, headings, landmarks,
    anything with a role, tabindex, ARIA label or click listener), one
    ``getPartialAXTree`` each; ``ax=True`` reads the whole tree, ``ax=False`` none.
    ``dom_snapshot=False`` skips the layout,
    ``child_frames=False`` out-of-process iframes, ``rects=False`` the client and
    scroll rectangles (DOMSnapshot's ``includeDOMRects``, a large share of its cost
    on big pages; boxes, paint order and styles stay). Raises CDPError only when the DOM
    tree itself cannot be read, TargetClosedError when the tab went away.
    """
    started = time.perf_counter()
    options = _Options(ax, dom_snapshot, rects)
    main = _SessionCapture(None)
    children: dict[str, _SessionCapture] = {}
    # (session of the owner's document, owner backendNodeId) -> child session id.
    owners: dict[tuple[str | None, int], str] = {}
    metrics: dict[str, Any] = {}
    frame_tree: dict[str, Any] = {}

    async def read_metrics() -> None:
        call = target.execute(cdp.page_get_layout_metrics())
        metrics.update(await _timed(main.timings, "layout_metrics", call))

    async def read_frame_tree() -> None:
        call = target.execute(cdp.page_get_frame_tree())
        frame_tree.update(await _timed(main.timings, "frame_tree", call))

    async def read_children() -> None:
        await _timed(main.timings, "auto_attach", _attach_children(target))
        sessions = {
            session_id: info
            for session_id, info in target.child_sessions().items()
            if info.get("type") == "iframe"
        }
        frame_sessions = {str(info.get("targetId")): sid for sid, info in sessions.items()}
        async with trio.open_nursery() as nursery:
            for session_id, info in sessions.items():
                child = children[session_id] = _SessionCapture(
                    session_id, frame_id=str(info.get("targetId", ""))
                )
                parent = frame_sessions.get(str(info.get("parentFrameId")))
                nursery.start_soon(_capture_child, target, child, parent, owners, options)

    with _one_error():
        async with trio.open_nursery() as nursery:
            nursery.start_soon(read_metrics)
            nursery.start_soon(read_frame_tree)
            if child_frames:
                nursery.start_soon(read_children)
            await _capture_session(target, main, options)

    joining = time.perf_counter()
    main_frame = frame_tree.get("frameTree", {}).get("frame", {})
    main.frame_id = str(main_frame.get("id", ""))
    builder = _Builder(main, children, owners)
    model = builder.build()
    model.viewport = _viewport(metrics)
    model.document_id = str(main_frame.get("loaderId", ""))
    missing = list(main.failed)
    for session_id, child in children.items():
        if session_id in builder.grafted:
            missing.extend(child.failed)
        elif child.document is None:
            missing.append(f"frame:{child.frame_id}")
    model.missing = tuple(dict.fromkeys(missing))
    timings = dict(main.timings)
    for child in children.values():
        for name, seconds in child.timings.items():
            timings[f"frames.{name}"] = timings.get(f"frames.{name}", 0.0) + seconds
    timings["join"] = time.perf_counter() - joining
    timings["total"] = time.perf_counter() - started
    model.timings = timings
    return model


@contextlib.contextmanager
def _one_error() -> Iterator[None]:
    """Concurrent calls to a tab that closed or crashed all fail alike: raise the first
    of those errors rather than a group of them, as the docstring of `capture` says."""
    try:
        yield
    except BaseExceptionGroup as group:
        closed, rest = group.split(TargetClosedError)
        if closed is None or rest is not None:
            raise
        first: BaseException = closed
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        raise first from group


async def _timed(timings: dict[str, float], name: str, call: Awaitable[T]) -> T:
    started = time.perf_counter()
    try:
        return await call
    finally:
        timings[name] = timings.get(name, 0.0) + time.perf_counter() - started


async def _attach_children(target: Target) -> None:
    """Auto-attach to out-of-process iframes, and to theirs in turn.

    The browser announces the children that already exist before it answers
    ``Target.setAutoAttach``, so after the call the target knows them all.
    """
    await target.execute(cdp.target_set_auto_attach())
    seen: set[str] = set()
    while fresh := [s for s in target.child_sessions() if s not in seen]:
        seen.update(fresh)
        async with trio.open_nursery() as nursery:
            for session_id in fresh:
                nursery.start_soon(_auto_attach_quietly, target, session_id)


async def _auto_attach_quietly(target: Target, session_id: str) -> None:
    # A worker, or a frame that went away meanwhile: nothing below it to capture.
    with contextlib.suppress(CDPError, TargetClosedError):
        await target.execute(cdp.target_set_auto_attach(), session_id=session_id)


async def _capture_child(
    target: Target,
    child: _SessionCapture,
    parent: str | None,
    owners: dict[tuple[str | None, int], str],
    options: _Options,
) -> None:
    """Capture an out-of-process iframe; on failure leave its document unset."""
    assert child.session_id is not None
    try:
        owner = await _timed(
            child.timings,
            "frame_owner",
            target.execute(cdp.dom_get_frame_owner(child.frame_id), session_id=parent),
        )
        owners[(parent, owner["backendNodeId"])] = child.session_id
        await _capture_session(target, child, options)
    except (CDPError, TargetClosedError):
        child.document = None


async def _capture_session(target: Target, cap: _SessionCapture, options: _Options) -> None:
    session = cap.session_id
    ax = options.ax
    dom_snapshot = options.dom_snapshot

    async def read_ax(frame_id: str | None) -> None:
        call = target.execute(cdp.accessibility_get_full_ax_tree(frame_id), session_id=session)
        try:
            tree = await _timed(cap.timings, "ax_tree", call)
        except CDPError:
            cap.failed.append("ax_tree" if frame_id is None else f"ax_tree:{frame_id}")
            return
        _read_ax(tree["nodes"], cap.ax)

    async def read_document() -> None:
        call = _read_dom_tree(target, session, cap)
        document = await _timed(cap.timings, "dom_get_document", call)
        cap.document = document["root"]
        if ax is True:
            # Each in-process iframe has an AX tree of its own.
            async with trio.open_nursery() as nursery:
                for frame_id in _subframe_ids(document["root"]):
                    nursery.start_soon(read_ax, frame_id)

    async def read_snapshot() -> None:
        call = target.execute(
            cdp.dom_snapshot_capture_snapshot(SNAPSHOT_STYLES, include_dom_rects=options.rects),
            session_id=session,
        )
        try:
            snapshot = await _timed(cap.timings, "dom_snapshot", call)
        except CDPError:
            cap.failed.append("dom_snapshot")
            return
        _read_snapshot(snapshot, cap)
        cap.snapshot_ok = True

    async def read_partial_ax(backend_node_id: int) -> None:
        call = target.execute(
            cdp.accessibility_get_partial_ax_tree(backend_node_id), session_id=session
        )
        try:
            tree = await _timed(cap.timings, "ax_partial", call)
        except CDPError:
            partial_failures.append(backend_node_id)  # or the node went away meanwhile
            return
        _read_ax(tree["nodes"], cap.ax)

    partial_failures: list[int] = []

    async with trio.open_nursery() as nursery:
        if dom_snapshot:
            nursery.start_soon(read_snapshot)
        if ax is True:
            nursery.start_soon(read_ax, None)
        await read_document()
    if ax == "interactive" and cap.document is not None:
        started = time.perf_counter()
        wanted = _interactive_nodes(cap.document, cap.states)
        async with trio.open_nursery() as nursery:
            for backend_node_id in wanted:
                nursery.start_soon(read_partial_ax, backend_node_id)
        if wanted and len(partial_failures) == len(wanted):
            cap.failed.append("ax_tree")
        # The calls overlap: report their wall time, not their sum.
        cap.timings["ax_tree"] = time.perf_counter() - started
        cap.timings.pop("ax_partial", None)


async def _read_dom_tree(target: Target, session: str | None, cap: _SessionCapture) -> _Json:
    """``DOM.getDocument`` with the whole tree, read `DOM_DEPTH_SLICE` levels at a
    time (see the module docstring); a subtree that went away between two calls
    stays empty and the capture's ``missing`` says ``"dom_subtree"``."""
    document = await target.execute(
        cdp.dom_get_document(DOM_DEPTH_SLICE, pierce=True), session_id=session
    )
    pending = _cut_off([document["root"]])
    lost = False

    async def read_below(node: dict[str, Any]) -> None:
        nonlocal lost
        try:
            described = await target.execute(
                cdp.dom_describe_node(
                    backend_node_id=int(node["backendNodeId"]), depth=DOM_DEPTH_SLICE, pierce=True
                ),
                session_id=session,
            )
        except CDPError:
            lost = True
            node["children"] = []
            return
        node["children"] = described["node"].get("children", [])
        pending.extend(_cut_off(node["children"]))

    while pending:
        batch, pending = pending, []
        async with trio.open_nursery() as nursery:
            for node in batch:
                nursery.start_soon(read_below, node)
    if lost:
        cap.failed.append("dom_subtree")
    return document


def _cut_off(nodes: Iterable[Any]) -> list[dict[str, Any]]:
    """Nodes in these subtrees that have children the reply left out: a child count
    and no ``children``. Shadow roots and frame documents come with their host even
    where the depth ran out, as such nodes; user-agent shadow trees are not read."""
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


def _interactive_nodes(root: _Json, states: Mapping[int, _NodeState]) -> list[int]:
    found: list[int] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.get("nodeType") == _ELEMENT:
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


def _subframe_ids(root: _Json) -> list[str]:
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


def _read_snapshot(snapshot: _Json, cap: _SessionCapture) -> None:
    strings: list[str] = snapshot["strings"]
    style_cache: dict[tuple[int, ...], tuple[Style, tuple[float, float]]] = {}

    def string(index: int) -> str:
        return strings[index] if index >= 0 else ""

    for document in snapshot["documents"]:
        cap.documents[string(document["frameId"])] = (
            float(document.get("scrollOffsetX", 0.0)),
            float(document.get("scrollOffsetY", 0.0)),
            string(document["title"]),
        )
        nodes = document["nodes"]
        backend_ids: list[int] = nodes["backendNodeId"]
        states: dict[int, _NodeState] = {}

        def state(
            node_index: int,
            states: dict[int, _NodeState] = states,
            backend_ids: list[int] = backend_ids,
        ) -> _NodeState:
            backend = backend_ids[node_index]
            found = states.get(backend)
            if found is None:
                found = states[backend] = _NodeState()
            return found

        layout = document["layout"]
        paint_orders: list[int] = layout.get("paintOrders", [])
        client_rects: list[list[float]] = layout.get("clientRects", [])
        scroll_rects: list[list[float]] = layout.get("scrollRects", [])
        for li, node_index in enumerate(layout["nodeIndex"]):
            node_state = state(node_index)
            if node_state.layout is not None:
                # Later layout objects of one node (a pseudo-element's text fragment,
                # continuations) add no box of their own, only their text.
                if not node_state.layout.text:
                    node_state.layout.text = string(layout["text"][li])
                continue
            style_key = tuple(layout["styles"][li])
            parsed = style_cache.get(style_key)
            if parsed is None:
                parsed = style_cache[style_key] = _parse_style([string(i) for i in style_key])
            node_state.layout = _Layout(
                bounds=Rect(*layout["bounds"][li]),
                paint_order=paint_orders[li] if li < len(paint_orders) else None,
                style=parsed[0] if style_key else None,
                client_rect=_rect(client_rects, li),
                scroll_rect=_rect(scroll_rects, li),
                text=string(layout["text"][li]),
                padding=parsed[1],
            )
        _read_whitespace(nodes, set(layout["nodeIndex"]), string, cap)
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
        cap.states.update(states)


def _read_whitespace(
    nodes: _Json, rendered: set[int], string: Callable[[int], str], cap: _SessionCapture
) -> None:
    """Collect rendered whitespace-only text nodes and where they stand among siblings,
    and the whole value of text nodes longer than getDocument gives them."""
    parents: list[int] = nodes["parentIndex"]
    types: list[int] = nodes["nodeType"]
    values: list[int] = nodes["nodeValue"]
    backend_ids: list[int] = nodes["backendNodeId"]
    last_child: dict[int, int] = {}
    for index, parent in enumerate(parents):
        if parent < 0:
            continue
        previous = last_child.get(parent)
        last_child[parent] = index
        if types[index] != _TEXT:
            continue
        text = string(values[index])
        if len(text) > _DOM_TEXT_LIMIT:
            cap.long_texts[backend_ids[index]] = text
        if index not in rendered:
            continue
        if text and text.isspace():
            entry = {"nodeType": _TEXT, "nodeValue": text, "backendNodeId": backend_ids[index]}
            before = backend_ids[previous] if previous is not None else None
            cap.whitespace.setdefault(backend_ids[parent], []).append((before, entry))


def _rect(rects: list[list[float]], index: int) -> Rect | None:
    if index < len(rects) and len(rects[index]) == 4:
        return Rect(*rects[index])
    return None


def _parse_style(values: list[str]) -> tuple[Style, tuple[float, float]]:
    if len(values) != len(SNAPSHOT_STYLES):
        return Style(), (0.0, 0.0)
    fields: dict[str, Any] = dict(zip(_STYLE_FIELDS, values, strict=False))
    try:
        fields["opacity"] = float(fields["opacity"])
    except ValueError:
        fields["opacity"] = 1.0
    left, top, border_left, border_top = (_px(v) for v in values[len(_STYLE_FIELDS) :])
    return Style(**fields), (left + border_left, top + border_top)


def _px(value: str) -> float:
    try:
        return float(value.removesuffix("px"))
    except ValueError:
        return 0.0


def _read_ax(nodes: Sequence[_Json], into: dict[int, AXInfo]) -> None:
    for node in nodes:
        backend = node.get("backendDOMNodeId")
        if backend is None:
            continue
        known = into.get(backend)
        if known is not None and not known.ignored:
            continue  # one DOM node, several AX nodes: the first unignored one speaks for it
        properties = {
            prop["name"]: _ax_value(prop.get("value", {})) for prop in node.get("properties", ())
        }
        into[backend] = AXInfo(
            role=_ax_text(node.get("role")),
            name=_ax_text(node.get("name")),
            ignored=bool(node.get("ignored", False)),
            properties=properties,
            description=_ax_text(node.get("description")),
            value=_ax_text(node.get("value")),
        )


def _ax_text(value: _Json | None) -> str:
    if not value or value.get("value") is None:
        return ""
    return str(value["value"])


def _ax_value(value: _Json) -> object:
    """An AX property value as plain data: bool, number or str, or related node ids."""
    if "value" in value:
        return value["value"]
    related = value.get("relatedNodes")
    if related:
        return [r.get("backendDOMNodeId") for r in related]
    return None


def _viewport(metrics: _Json) -> Rect:
    viewport = metrics.get("cssLayoutViewport", {})
    return Rect(
        float(viewport.get("pageX", 0)),
        float(viewport.get("pageY", 0)),
        float(viewport.get("clientWidth", 0)),
        float(viewport.get("clientHeight", 0)),
    )


@attrs.define(eq=False)
class _Visit:
    json: _Json
    parent: int
    frame: int
    cap: _SessionCapture
    # For a document: the id of the frame it is the document of, when known.
    frame_id: str = ""


class _Builder:
    """Flattens the per-session DOM trees into the model's document-order node list."""

    def __init__(
        self,
        main: _SessionCapture,
        children: Mapping[str, _SessionCapture],
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
        self._walk(_Visit(root, -1, -1, self.main, self.main.frame_id))
        main_frame = self.frames[0]
        title = self.main.documents.get(main_frame.frame_id, (0.0, 0.0, ""))[2]
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
        stack: list[_Visit | int] = [start]
        nodes = self.nodes
        while stack:
            item = stack.pop()
            if isinstance(item, int):
                nodes[item].end = len(nodes)
                continue
            index = self._add(item)
            if index is None:
                continue
            stack.append(index)
            stack.extend(reversed(self._children_of(item, index)))

    def _add(self, visit: _Visit) -> int | None:
        json = visit.json
        node_type = json.get("nodeType")
        frame = visit.frame
        if node_type == _DOCUMENT:
            frame = self._open_frame(visit)
        elif node_type == _FRAGMENT and json.get("shadowRootType") == "user-agent":
            return None
        elif node_type not in (_ELEMENT, _TEXT, _CDATA, _FRAGMENT):
            return None  # comments, doctypes, processing instructions
        index = len(self.nodes)
        backend = int(json.get("backendNodeId", 0))
        state = visit.cap.states.get(backend)
        layout = state.layout if state is not None else None
        node = Node(
            index=index,
            node_type=_NODE_TYPES[node_type],
            name=_node_name(json, node_type),
            backend_node_id=backend,
            frame=frame,
            parent=visit.parent,
            end=index + 1,
        )
        if node_type == _ELEMENT:
            raw = json.get("attributes", ())
            node.attributes = dict(zip(raw[::2], raw[1::2], strict=False))
            node.pseudo_type = json.get("pseudoType")
        elif node_type in (_TEXT, _CDATA):
            node.text = visit.cap.long_texts.get(backend) or str(json.get("nodeValue", ""))
        elif node_type == _FRAGMENT:
            node.shadow_root_type = json.get("shadowRootType")
        if layout is not None:
            this_frame = self.frames[frame]
            node.bounds = layout.bounds.offset(this_frame.offset_x, this_frame.offset_y)
            node.paint_order = layout.paint_order
            node.style = layout.style
            node.client_rect = layout.client_rect
            node.scroll_rect = layout.scroll_rect
            if node.pseudo_type is not None:
                node.text = layout.text
        if state is not None and node_type == _ELEMENT:
            node.clickable = state.clickable
            node.input_value = state.input_value
            if node.name == "input" and node.attributes.get("type", "").lower() in _TOGGLES:
                node.checked = state.checked
            elif node.name == "option":
                node.selected = state.selected
        node.ax = visit.cap.ax.get(backend)
        self.nodes.append(node)
        if visit.parent >= 0:
            self.nodes[visit.parent].children.append(index)
        return index

    def _children_of(self, visit: _Visit, index: int) -> list[_Visit]:
        json = visit.json
        frame = self.nodes[index].frame
        cap = visit.cap
        leading: list[_Json] = []
        trailing: list[_Json] = []
        for pseudo in json.get("pseudoElements", ()):
            (leading if pseudo.get("pseudoType") in _LEADING_PSEUDO else trailing).append(pseudo)
        ordered: list[_Json] = [*json.get("shadowRoots", ()), *leading]
        visits = [_Visit(child, index, frame, cap) for child in ordered]
        document = json.get("contentDocument")
        if document is not None:
            visits.append(_Visit(document, index, frame, cap, str(json.get("frameId", ""))))
        spaces = cap.whitespace.get(self.nodes[index].backend_node_id)
        visits.extend(_Visit(child, index, frame, cap) for child in _with_whitespace(json, spaces))
        session = self.owners.get((cap.session_id, int(json.get("backendNodeId", 0))))
        child_cap = self.children.get(session) if session is not None else None
        if child_cap is not None and child_cap.document is not None and session is not None:
            self.grafted.add(session)
            visits.append(_Visit(child_cap.document, index, frame, child_cap, child_cap.frame_id))
        visits.extend(_Visit(pseudo, index, frame, cap) for pseudo in trailing)
        return visits

    def _open_frame(self, visit: _Visit) -> int:
        """Register the document's Frame and place it inside its owner element."""
        json = visit.json
        cap = visit.cap
        owner = visit.parent
        frame_id = visit.frame_id or _html_frame_id(json)
        offset_x = offset_y = 0.0
        if owner >= 0:
            holder = self.nodes[owner]
            parent_frame = self.frames[holder.frame]
            offset_x, offset_y = parent_frame.offset_x, parent_frame.offset_y
            state = self._state_of(holder)
            if holder.bounds is not None and state is not None and state.layout is not None:
                inset = state.layout.padding
                scroll = cap.documents.get(frame_id, (0.0, 0.0, ""))
                offset_x = holder.bounds.x + inset[0] - scroll[0]
                offset_y = holder.bounds.y + inset[1] - scroll[1]
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

    def _cap_of_frame(self, frame: int) -> _SessionCapture:
        session = self.frames[frame].session_id
        if session is None:
            return self.main
        return self.children[session]

    def _state_of(self, node: Node) -> _NodeState | None:
        return self._cap_of_frame(node.frame).states.get(node.backend_node_id)

    def _title_element_text(self) -> str:
        for node in self.nodes:
            if node.frame == 0 and node.name == "title" and node.children:
                return "".join(self.nodes[c].text for c in node.children).strip()
        return ""


def _with_whitespace(json: _Json, spaces: list[tuple[int | None, _Json]] | None) -> Sequence[_Json]:
    """The DOM children of a node with its rendered whitespace text put back in place."""
    children: Sequence[_Json] = json.get("children", ())
    if not spaces:
        return children
    after: dict[int | None, list[_Json]] = {}
    for before, entry in spaces:
        after.setdefault(before, []).append(entry)
    merged: list[_Json] = list(after.get(None, ()))
    for child in children:
        merged.append(child)
        merged.extend(after.get(int(child.get("backendNodeId", 0)), ()))
    return merged


def _html_frame_id(document: _Json) -> str:
    """getDocument puts a document's frame id on its root element, not on the document."""
    for child in document.get("children", ()):
        if child.get("frameId"):
            return str(child["frameId"])
    return ""


def _node_name(json: _Json, node_type: int) -> str:
    if node_type == _ELEMENT:
        return str(json.get("nodeName", "")).lower()
    if node_type in (_TEXT, _CDATA):
        return "#text"
    if node_type == _DOCUMENT:
        return "#document"
    return "#shadow-root"


_NODE_TYPES = {
    _ELEMENT: NodeType.ELEMENT,
    _TEXT: NodeType.TEXT,
    _CDATA: NodeType.TEXT,
    _DOCUMENT: NodeType.DOCUMENT,
    _FRAGMENT: NodeType.SHADOW_ROOT,
}
