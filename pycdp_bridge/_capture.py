"""Capture one tab into a `PageModel`: DOM tree, layout, styles and accessibility.

This module does the I/O: it issues the CDP commands, concurrently, and hands their
replies to `_decode` (pure functions over the replies) and `_join` (the model).

* Layout, styles, form state and clickability come from
  ``DOMSnapshot.captureSnapshot``; roles and names from the accessibility tree. They
  are joined to the tree on ``backendNodeId``.
* The tree comes from the snapshot itself when it can stand for it (`_snapshot_tree`):
  it lists every node of every in-process frame, but walks the *flat* tree, so
  within author shadow trees shadow roots have no node of their own, light children
  of a shadow host appear under the ``<slot>`` they are assigned to (unassigned ones
  not at all), and where a shadow host sits inside a shadow tree of the same mode
  the boundary between the two trees cannot be told apart. The model promises
  shadow roots with their mode, so a page with any shadow root also pays for
  ``DOM.getDocument{pierce:true}`` (in slices, see below), asked once the snapshot
  shows one; ``dom_tree=True`` asks for it with the snapshot from the start (a page
  known to have shadow roots), ``dom_snapshot=False`` skips the snapshot.
* The full AX tree is the costliest call by far (``python -m tests.bench.capture``
  prints each call's time), and the pipeline needs it only for roles and accessible
  names of the elements it keeps. Names follow rules (label[for], aria-labelledby,
  alt, title, content) that only the browser gets right, so ``ax="interactive"``
  asks the browser only about those elements: one
  ``Accessibility.getPartialAXTree{fetchRelatives:false}`` per candidate, all
  concurrent. ``ax=True`` reads the whole tree (every StaticText, generic and
  ignored node); ``ax=False`` skips AX entirely.
* Frames: each in-process iframe's document is in the same ``getDocument`` and
  snapshot (its boxes in its own coordinates, shifted by the iframe's content box);
  each needs its own ``getFullAXTree{frameId}``. Out-of-process iframes (cross-site;
  site isolation is on) are reached through ``Target.setAutoAttach{flatten:true}``
  child sessions, captured the same way and grafted under their ``<iframe>`` element
  (found with ``DOM.getFrameOwner``).
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
  that could not be captured is ``"frame:<frameId>"``; a subtree that went away
  between two slices, ``"dom_subtree"``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from functools import partial
from typing import Any, Literal, TypeVar

import attrs
import trio

from . import _protocol as cdp
from ._decode import (
    INTERACTIVE_TAGS,
    SNAPSHOT_STYLES,
    Json,
    content_inset,
    cut_off,
    decode_ax,
    decode_snapshot,
    frame_owners,
    interactive_nodes,
    subframe_ids,
    viewport,
)
from ._errors import CDPError, DialogOpenError, TargetClosedError
from ._gc import gc_paused
from ._join import SessionCapture, join
from ._model import PageModel, Rect
from ._snapshot_tree import document_from_snapshot, frame_owner_ids, has_shadow_roots
from ._target import Target

__all__ = ["DOM_DEPTH_SLICE", "INTERACTIVE_TAGS", "SNAPSHOT_STYLES", "AXMode", "capture"]

#: True: the whole AX tree; "interactive": only elements kept by role; False: none.
AXMode = bool | Literal["interactive"]

T = TypeVar("T")

#: Levels of the DOM tree read per call: two JSON levels each (node, its children
#: array), far below the browser's JSON nesting limit of 300 even with shadow roots
#: and frame documents in between, which add levels without using up depth.
DOM_DEPTH_SLICE = 48


@attrs.frozen
class _Options:
    ax: AXMode
    dom_snapshot: bool
    rects: bool
    # The tree from DOM.getDocument along with the snapshot, not from the snapshot.
    dom_tree: bool


async def capture(
    target: Target,
    *,
    ax: AXMode = "interactive",
    dom_snapshot: bool = True,
    child_frames: bool = True,
    rects: bool = True,
    dom_tree: bool = False,
    frame_tree: Mapping[str, Any] | None = None,
) -> PageModel:
    """Capture the target's page into a `PageModel` (see the module docstring).

    ``ax="interactive"`` (the default) asks the accessibility tree only about the
    elements the pipeline keeps by role (interactive ones, headings, landmarks,
    anything with a role, tabindex, ARIA label or click listener), one
    ``getPartialAXTree`` each; ``ax=True`` reads the whole tree, ``ax=False`` none.
    ``dom_snapshot=False`` skips the layout,
    ``child_frames=False`` out-of-process iframes, ``rects=False`` the client and
    scroll rectangles (DOMSnapshot's ``includeDOMRects``, a large share of its cost
    on big pages; boxes, paint order and styles stay), ``dom_tree=True`` the tree from
    ``DOM.getDocument`` rather than from the snapshot. ``frame_tree`` is a
    ``Page.getFrameTree`` reply the caller read just before (to know the document it
    captures): the capture takes it as its first frame tree instead of asking again.
    Raises CDPError only when the DOM tree itself cannot be read, TargetClosedError
    when the tab went away, DialogOpenError when the page shows a dialog (each once,
    not in a group of the concurrent calls').
    """
    options = _Options(ax, dom_snapshot, rects, dom_tree or not dom_snapshot)
    # The collector waits from the first request to the end of the join: the replies'
    # JSON and what is decoded from it are freed unwalked (see `_gc`).
    with gc_paused():
        return await _capture(target, options, child_frames=child_frames, first=frame_tree)


async def _capture(
    target: Target,
    options: _Options,
    *,
    child_frames: bool,
    first: Mapping[str, Any] | None,
) -> PageModel:
    started = time.perf_counter()
    main = SessionCapture(None)
    children: dict[str, SessionCapture] = {}
    # (session of the owner's document, owner backendNodeId) -> child session id.
    owners: dict[tuple[str | None, int], str] = {}
    metrics: dict[str, Any] = {}
    # The main frame before the capture's other calls and after them (see `_issue`).
    frame_trees: list[dict[str, Any]] = [dict(first or {}), {}]

    async def read_metrics() -> None:
        call = target.execute(cdp.page_get_layout_metrics())
        metrics.update(await _timed(main.timings, "layout_metrics", call))

    async def read_frame_tree(index: int) -> None:
        call = target.execute(cdp.page_get_frame_tree())
        frame_trees[index] = dict(await _timed(main.timings, "frame_tree", call))

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
                child = children[session_id] = SessionCapture(
                    session_id, frame_id=str(info.get("targetId", ""))
                )
                parent = frame_sessions.get(str(info.get("parentFrameId")))
                nursery.start_soon(
                    _capture_child, target, child, parent, owners, options, capture_of
                )

    def capture_of(session_id: str | None) -> SessionCapture:
        return main if session_id is None else children[session_id]

    joined: tuple[PageModel, set[str]] | CDPError
    join_seconds = 0.0
    with _one_error():
        # The second frame tree is answered in `late`: the browser takes a few
        # milliseconds over it after a large snapshot, and the parts are joined
        # meanwhile instead of after it.
        async with trio.open_nursery() as late:
            async with trio.open_nursery() as nursery:
                # Sent in this order, so the browser answers the small calls first
                # rather than after the large ones, and the first frame tree comes
                # before the DOM calls without a round trip of its own. The second is
                # asked once they have answered, while the snapshot is decoded.
                if first is None:
                    await _issue(nursery, partial(read_frame_tree, 0))
                await _issue(nursery, read_metrics)
                if child_frames:
                    await _issue(nursery, read_children)
                second = partial(_issue, late, partial(read_frame_tree, 1))
                await _capture_session(target, main, options, then=second)
            joining = time.perf_counter()
            main_frame = frame_trees[0].get("frameTree", {}).get("frame", {})
            main.frame_id = str(main_frame.get("id", ""))
            try:
                with gc_paused():
                    joined = join(main, children, owners)
            except CDPError as exc:
                # Raised as it is, not in a group of the nursery's.
                joined = exc
                late.cancel_scope.cancel()
            join_seconds = time.perf_counter() - joining
    if isinstance(joined, CDPError):
        raise joined
    model, grafted = joined
    after = frame_trees[1].get("frameTree", {}).get("frame", {})
    model.viewport = viewport(metrics)
    model.document_id = str(main_frame.get("loaderId", ""))
    # The frame trees bracket the DOM calls when the transport sends in order; the
    # document's own node tells, in any order, whether the tree and snapshot agree.
    root_id = main.document.get("backendNodeId") if main.document is not None else None
    model.navigated = model.document_id != str(after.get("loaderId", "")) or (
        main.snapshot_ok and main.snapshot.root_id not in (None, root_id)
    )
    missing = list(main.failed)
    for session_id, child in children.items():
        if session_id in grafted:
            missing.extend(child.failed)
        elif child.document is None:
            missing.append(f"frame:{child.frame_id}")
    model.missing = tuple(dict.fromkeys(missing))
    timings = dict(main.timings)
    for child in children.values():
        for name, seconds in child.timings.items():
            timings[f"frames.{name}"] = timings.get(f"frames.{name}", 0.0) + seconds
    timings["join"] = join_seconds
    timings["total"] = time.perf_counter() - started
    model.timings = timings
    return model


@contextlib.contextmanager
def _one_error() -> Iterator[None]:
    """Concurrent calls to a tab that closed or crashed, or whose page shows a dialog,
    all fail alike: raise the first of those errors rather than a group of them (the
    tab's going first: it outlasts the dialog), as the docstring of `capture` says."""
    try:
        yield
    except BaseExceptionGroup as group:
        closed, rest = group.split(TargetClosedError)
        blocked = None
        if rest is not None:
            blocked, rest = rest.split(DialogOpenError)
        found = closed if closed is not None else blocked
        if rest is not None or found is None:
            raise
        first: BaseException = found
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        raise first from group


async def _timed(timings: dict[str, float], name: str, call: Awaitable[T]) -> T:
    started = time.perf_counter()
    try:
        return await call
    finally:
        timings[name] = timings.get(name, 0.0) + time.perf_counter() - started


async def _issue(nursery: trio.Nursery, call: Callable[[], Awaitable[None]]) -> None:
    """Start `call` in `nursery` and return once it has sent its first request.

    A task runs from ``task_status.started()`` until its first checkpoint, and a
    transport writes a request before its first one (its send lock is FIFO when
    contended), so calls issued one after the other reach the browser in that order,
    and one session's commands run in the order they arrive: `capture` sends its
    small calls before the large ones this way, without waiting for any of them.
    """

    async def run(*, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        await call()

    await nursery.start(run)


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
    child: SessionCapture,
    parent: str | None,
    owners: dict[tuple[str | None, int], str],
    options: _Options,
    capture_of: Callable[[str | None], SessionCapture],
) -> None:
    """Capture an out-of-process iframe; on failure leave its document unset."""
    assert child.session_id is not None
    try:
        owner = await _timed(
            child.timings,
            "frame_owner",
            target.execute(cdp.dom_get_frame_owner(child.frame_id), session_id=parent),
        )
        backend_id = int(owner["backendNodeId"])
        owners[(parent, backend_id)] = child.session_id
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_read_inset, target, capture_of(parent), backend_id)
            await _capture_session(target, child, options)
    except (CDPError, TargetClosedError):
        child.document = None


async def _read_inset(target: Target, cap: SessionCapture, backend_id: int) -> None:
    """Where a frame owner's document starts inside its box; none for an owner without
    a box (not rendered), whose frame's nodes have no boxes either."""
    try:
        reply = await target.execute(
            cdp.dom_get_box_model(backend_node_id=backend_id), session_id=cap.session_id
        )
    except CDPError:
        return
    cap.insets[backend_id] = content_inset(reply["model"])


async def _capture_session(
    target: Target,
    cap: SessionCapture,
    options: _Options,
    *,
    then: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """The session's DOM tree, snapshot and AX data; `then` is awaited once the DOM
    tree and the snapshot have answered, before the snapshot is decoded: it sends a
    request and returns (`_issue` into a nursery of the caller's)."""
    session = cap.session_id
    ax = options.ax
    dom_snapshot = options.dom_snapshot
    # What has answered of "tree" (the whole DOM tree, slices too) and "snapshot" (its
    # reply in, or failed): `then` goes out once both have.
    answered: set[str] = set()

    async def answer(part: str) -> None:
        """Note that `part` has answered; the second one sends `then`'s request before
        it returns, so the request is on its way while the caller decodes (a task
        merely started would send it only once the decoding is over)."""
        if part in answered:
            return
        answered.add(part)
        if then is not None and len(answered) == 2:
            await then()

    async def read_ax(frame_id: str | None) -> None:
        call = target.execute(cdp.accessibility_get_full_ax_tree(frame_id), session_id=session)
        try:
            tree = await _timed(cap.timings, "ax_tree", call)
        except CDPError:
            cap.failed.append("ax_tree" if frame_id is None else f"ax_tree:{frame_id}")
            return
        with gc_paused():
            decode_ax(tree["nodes"], cap.ax)

    async def read_document() -> None:
        call = _read_dom_tree(target, session, cap)
        try:
            document = await _timed(cap.timings, "dom_get_document", call)
        finally:
            await answer("tree")
        await with_tree(document["root"])

    async def with_tree(root: Json, owners: list[int] | None = None) -> None:
        """Keep the tree and read what its frames need; `owners` are its frame owners'
        backend ids when the caller knows them without walking it."""
        cap.document = root
        async with trio.open_nursery() as nursery:
            # Where each in-process iframe's document starts: asked while the browser
            # still takes the snapshot, so answered right after it.
            for backend_id in frame_owners(root) if owners is None else owners:
                nursery.start_soon(_read_inset, target, cap, backend_id)
            if ax is True:
                # Each in-process iframe has an AX tree of its own.
                for frame_id in subframe_ids(root):
                    nursery.start_soon(read_ax, frame_id)

    async def read_snapshot() -> None:
        call = target.execute(
            cdp.dom_snapshot_capture_snapshot(SNAPSHOT_STYLES, include_dom_rects=options.rects),
            session_id=session,
        )
        snapshot: Json | None = None
        try:
            snapshot = await _timed(cap.timings, "dom_snapshot", call)
        except CDPError:
            cap.failed.append("dom_snapshot")
        # Without a snapshot, or with a shadow root in it, the tree is the DOM agent's.
        from_snapshot = (
            not options.dom_tree and snapshot is not None and not has_shadow_roots(snapshot)
        )
        if from_snapshot:
            await answer("tree")
        await answer("snapshot")
        root: Json | None = None
        if snapshot is not None:
            with gc_paused():
                decoding = time.perf_counter()
                cap.snapshot = decode_snapshot(snapshot)
                treeing = time.perf_counter()
                if from_snapshot:
                    root = document_from_snapshot(snapshot)
                done = time.perf_counter()
            cap.timings["decode"] = cap.timings.get("decode", 0.0) + treeing - decoding
            if from_snapshot:
                cap.timings["tree"] = cap.timings.get("tree", 0.0) + done - treeing
            cap.snapshot_ok = True
        if root is not None:
            assert snapshot is not None
            await with_tree(root, frame_owner_ids(snapshot))
        elif not options.dom_tree:
            await read_document()

    async def read_partial_ax(backend_node_id: int) -> None:
        call = target.execute(
            cdp.accessibility_get_partial_ax_tree(backend_node_id), session_id=session
        )
        try:
            tree = await _timed(cap.timings, "ax_partial", call)
        except CDPError:
            partial_failures.append(backend_node_id)  # or the node went away meanwhile
            return
        decode_ax(tree["nodes"], cap.ax)

    partial_failures: list[int] = []

    async with trio.open_nursery() as nursery:
        if options.dom_tree:
            await _issue(nursery, read_document)
        if dom_snapshot:
            await _issue(nursery, read_snapshot)
        if ax is True:
            await _issue(nursery, partial(read_ax, None))
        if not dom_snapshot:
            await answer("snapshot")
    if ax == "interactive" and cap.document is not None:
        started = time.perf_counter()
        wanted = interactive_nodes(cap.document, cap.snapshot.states)
        async with trio.open_nursery() as nursery:
            for backend_node_id in wanted:
                nursery.start_soon(read_partial_ax, backend_node_id)
        if wanted and len(partial_failures) == len(wanted):
            cap.failed.append("ax_tree")
        # The calls overlap: report their wall time, not their sum.
        cap.timings["ax_tree"] = time.perf_counter() - started
        cap.timings.pop("ax_partial", None)


async def _read_dom_tree(target: Target, session: str | None, cap: SessionCapture) -> Json:
    """``DOM.getDocument`` with the whole tree, read `DOM_DEPTH_SLICE` levels at a
    time (see the module docstring); a subtree that went away between two calls
    stays empty and the capture's ``missing`` says ``"dom_subtree"``."""
    document = await target.execute(
        cdp.dom_get_document(DOM_DEPTH_SLICE, pierce=True), session_id=session
    )
    pending = cut_off([document["root"]])
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
        pending.extend(cut_off(node["children"]))

    while pending:
        batch, pending = pending, []
        async with trio.open_nursery() as nursery:
            for node in batch:
                nursery.start_soon(read_below, node)
    if lost:
        cap.failed.append("dom_subtree")
    return document


async def layout_boxes(target: Target) -> dict[int, Rect]:
    """Backend node id → its layout box now, for the tab's own documents (a frame's
    boxes in its own coordinates): one ``DOMSnapshot`` without styles, so a screenshot's
    marks sit where the elements are at that moment, whatever scrolled since a capture."""
    reply = await target.execute(
        cdp.dom_snapshot_capture_snapshot((), include_paint_order=False, include_dom_rects=False)
    )
    decoded = decode_snapshot(reply)
    return {
        backend: state.layout.bounds
        for backend, state in decoded.states.items()
        if state.layout is not None
    }
