"""Acting on a page like a person: find the element, look where it is, then use input.

`locate` turns an eid into the live element (re-capturing the page when the id no
longer resolves), `target_point` scrolls it into view and picks a point of its
visible box that the browser's own hit test says belongs to it, and the remaining
helpers send trusted mouse and keyboard input through ``Input.*``. Anything that
would make us act on some other element (a stale id, a covering banner, a hidden
element) raises `Refusal` with a message written for the model.

Coordinates: ``DOM.getContentQuads`` answers in the viewport of the session's local
root, which is the tab's viewport for the main document and its same-process
iframes, and the iframe's own viewport for an out-of-process iframe. Each session
boundary adds the content-box origin of its ``<iframe>`` element in the parent
session; ``Input.dispatchMouseEvent`` on the tab's session takes tab coordinates
and the browser routes the event into the right frame.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs
import trio

from pycdp_bridge import (
    CDPError,
    JavaScriptError,
    ObjectRef,
    PageModel,
    Target,
    call_on,
    evaluate,
)
from pycdp_bridge import protocol as cdp

from ..pipeline import Compaction, Control, Secret, compact, secret_kind, xml
from ..tab import Tab, main_frame_id
from ._gather import gather
from ._listeners import KEY_EVENTS, OBJECT_GROUP, listener_types
from ._naming import cover_description, describe, names_layer
from ._scripts import script

__all__ = [
    "OBJECT_GROUP",
    "OWN_WORLD",
    "Aim",
    "Box",
    "Covered",
    "ElementInfo",
    "Located",
    "Point",
    "Refusal",
    "aim_at",
    "aim_in_frame",
    "cover_description",
    "describe",
    "element_info",
    "frame_of",
    "locate",
    "locate_with_info",
    "move_to",
    "own_object",
    "reaches",
    "scroll_into_view",
    "scroll_position",
    "secret_of",
    "session_offsets",
    "target_point",
    "viewport_size",
    "visible_boxes",
    "wheel",
]


class Refusal(Exception):
    """The tool will not act, for a reason the model should read (the message)."""


class Covered(Refusal):
    """The element is in view, but at every point of it the hit test finds another
    element drawn over it."""


#: Trimtab's own world, where the driver reads and watches an element (the submit
#: prediction's facts, the press witness): the page's scripts can neither see it nor
#: patch what it calls.
OWN_WORLD: Final = "trimtab-driver"


def _whole(value: float) -> float:
    return float(round(value))


@attrs.frozen
class Point:
    """A point in the tab's viewport, in whole CSS pixels.

    Whole because the hit test (``DOM.getNodeForLocation``) takes whole pixels while
    the mouse takes fractions: a point aimed at a fraction can test inside an element
    that clips it by less than a pixel and then press outside it (`_hit_test`).
    """

    x: float = attrs.field(converter=_whole)
    y: float = attrs.field(converter=_whole)


Box = tuple[float, float, float, float]
"""A visible box in the tab's viewport: left, top, right, bottom, in CSS pixels."""


@attrs.frozen(hash=False)
class Aim:
    """Where to act on an element: a point of its visible box that the browser's hit
    test gave to it, and where each session's document lies in tab coordinates, to
    hit-test that point again once the page reacted to the pointer (`reaches`)."""

    point: Point
    origins: Mapping[str | None, tuple[float, float]]


@attrs.frozen
class Boundary:
    """An out-of-process iframe between an element and the tab: its owner element."""

    owner_backend_id: int
    parent_session: str | None


@attrs.define(eq=False)
class _InOwnWorld:
    """A located element's remote object in `OWN_WORLD`, made once (`own_object`)."""

    object_id: str | None = None
    lock: trio.Lock = attrs.field(factory=trio.Lock)


@attrs.frozen
class Located:
    """A live element the tools may act on."""

    eid: str
    control: Control
    session: str | None  # CDP session of the element's document
    object_id: str  # Runtime remote object of the element, in `session`
    # Out-of-process iframe owners from the element's document up to the tab.
    boundaries: tuple[Boundary, ...] = ()
    # The frame whose document holds it, when the locator knew that (the tab's main
    # frame as its page observer follows it); None: `frame_of` asks the browser.
    frame_id: str | None = None
    # The element in `OWN_WORLD`, once `own_object` made it for this call.
    own: _InOwnWorld = attrs.field(factory=_InOwnWorld, eq=False, repr=False)

    @property
    def backend_id(self) -> int:
        return self.control.backend_node_id


@attrs.frozen
class ElementInfo:
    """What the element is and may do, read from the live DOM."""

    tag: str
    type: str
    role: str
    disabled: bool
    editable: bool  # takes typed text (text field, textarea, contenteditable)
    readonly: bool
    checked: bool | None  # None when it is not a checkbox, radio or switch
    submits: bool  # a click submits its form
    enter_submits: bool  # Enter in it submits its form
    text: str  # what it shows; for a secret field its label, never its value
    secret: Secret | None = None  # the kind of secret the field holds, if it holds one


# --- locating ---------------------------------------------------------------------------


async def locate(tab: Tab, eid: object) -> Located:
    """The live element an eid names, or `Refusal` when it is not on the page.

    The latest snapshot's id map is tried first. When the id's node is gone (or
    lives in a frame whose session only a capture knows) the page is captured
    again: the same eid in the fresh capture is the element meant only if it is the
    node the id was issued for in this document (ids never move to another element,
    see `SnapshotMemory.issued`); otherwise the id is stale.
    """
    eid = _eid_text(eid)
    control = _latest_control(tab, eid)
    if control is not None:
        object_id = await _live_object(tab.target, None, control.backend_node_id)
        if object_id is not None:
            return Located(eid, control, None, object_id, frame_id=_known_frame(tab, None, control))
    return await _locate_by_capture(tab, eid)


async def locate_with_info(tab: Tab, eid: object) -> tuple[Located, ElementInfo]:
    """`locate` and `element_info` together: for an id of the latest snapshot whose
    node is still in its document, one call reads both that it is and what it is."""
    eid = _eid_text(eid)
    control = _latest_control(tab, eid)
    if control is not None:
        try:
            object_id = await _object_for(tab.target, None, control.backend_node_id)
            raw = await call_on(tab.target, object_id, script("element-info.js"))
        except (CDPError, JavaScriptError):
            raw = None
        # A backend node id never names another node: connected, it is the element.
        if isinstance(raw, Mapping) and raw.get("connected") is True:
            located = Located(
                eid, control, None, object_id, frame_id=_known_frame(tab, None, control)
            )
            return located, _element_info(raw)
    element = await _locate_by_capture(tab, eid)
    return element, await element_info(tab.target, element)


def _eid_text(eid: object) -> str:
    if not isinstance(eid, str) or not eid.strip():
        raise Refusal(
            f"id must be an element id from the page, like 'k3x'; got {xml.text(repr(eid))}"
        )
    return eid.strip()


def _latest_control(tab: Tab, eid: str) -> Control | None:
    """The control the latest snapshot gave `eid`, when it is of the tab's own document
    (its node can be asked for directly); None when only a capture can tell."""
    latest = tab.latest
    if latest is None or eid not in latest.controls:
        return None
    control = latest.controls[eid]
    return control if control.frame == 0 else None


async def _locate_by_capture(tab: Tab, eid: str) -> Located:
    """`locate` for an id the latest snapshot cannot resolve: a fresh capture decides."""
    latest = tab.latest
    # With the tab's own options, so that names (and so ids) are computed as the
    # snapshots that sent the id computed them.
    model = await tab.memory.capture()
    reserved = tab.memory.reserved(model)
    fresh = compact(model, count=False, reserved=reserved)
    control_or_none = fresh.controls.get(eid)
    # Ids the model read in earlier snapshots of other documents are not remembered,
    # so a mistyped id gets the same answer: either way the cure is a fresh look.
    stale = f"stale id {xml.text(eid)}: it is not on the page any more; take a snapshot"
    if control_or_none is None:
        raise Refusal(await _covered_now(tab, eid) or stale)
    control = control_or_none
    frame = model.frames[control.frame]
    seen = tab.memory.issued.get(eid) if reserved else None
    if seen is not None and seen.backend_node_id != control.backend_node_id:
        # The node the model saw is gone (a live one keeps its id). A node the page
        # re-created in its place, alike in what the model saw of it, is that element
        # (a re-render); anything else is not what the model meant.
        if _seen_as(seen) != _seen_as(control):
            raise Refusal(
                f"stale id {xml.text(eid)}: the element it named ({seen.role} "
                f"{xml.text(repr(seen.name[:60]))}) is not on the page any more; it is now "
                f"another element ({control.role} {xml.text(repr(control.name[:60]))}); "
                "take a snapshot"
            )
    elif reserved and seen is None and (latest is None or eid not in latest.controls):
        # No snapshot of this document gave this id (mistyped, or another page's).
        raise Refusal(stale)
    object_id = await _live_object(tab.target, frame.session_id, control.backend_node_id)
    if object_id is None:
        raise Refusal(stale)
    return Located(
        eid,
        control,
        frame.session_id,
        object_id,
        _boundaries(model, control.frame),
        _known_frame(tab, frame.session_id, control),
    )


async def _covered_now(tab: Tab, eid: str) -> str | None:
    """Why an element the fresh capture left out cannot be acted on when it is still in
    the tab's document, under something drawn over all of it (an open picker): the
    `Covered` refusal, which names what covers it; None otherwise."""
    seen = tab.memory.issued.get(eid)
    if seen is None or seen.frame != 0:
        return None
    object_id = await _live_object(tab.target, None, seen.backend_node_id)
    if object_id is None:
        return None
    element = Located(eid, seen, None, object_id, frame_id=_known_frame(tab, None, seen))
    try:
        await aim_at(tab.target, element, await element_info(tab.target, element), tab.latest)
    except Covered as exc:
        return str(exc)
    except (Refusal, CDPError, JavaScriptError):
        return None  # hidden, or gone meanwhile: the id is stale
    return None


_NUMBER = re.compile(r"\d[\d,.]*")


def _seen_as(control: Control) -> tuple[str, str]:
    """What the model saw of a control: its role and name, numbers aside (counters)."""
    return control.role, _NUMBER.sub("#", " ".join(control.name.split()))


def _boundaries(model: PageModel, frame_index: int) -> tuple[Boundary, ...]:
    found: list[Boundary] = []
    frame = model.frames[frame_index]
    while frame.owner >= 0:
        owner = model.nodes[frame.owner]
        parent = model.frames[owner.frame]
        if parent.session_id != frame.session_id:
            found.append(Boundary(owner.backend_node_id, parent.session_id))
        frame = parent
    return tuple(found)


async def _live_object(target: Target, session: str | None, backend_id: int) -> str | None:
    """A remote object for a node still in its document, or None when it is gone."""
    try:
        object_id = await _object_for(target, session, backend_id)
        connected = await call_on(target, object_id, script("is-connected.js"), session_id=session)
    except (CDPError, JavaScriptError):
        return None
    return object_id if connected is True else None


async def element_info(target: Target, element: Located) -> ElementInfo:
    """Read what the element is and may do from the live DOM."""
    info = await call_on(
        target, element.object_id, script("element-info.js"), session_id=element.session
    )
    return _element_info(info)


def _element_info(info: Mapping[str, Any]) -> ElementInfo:
    secret = secret_of(info.get("hints"))
    return ElementInfo(
        tag=str(info["tag"]),
        type=str(info["type"]),
        role=str(info["role"]),
        disabled=bool(info["disabled"]),
        editable=bool(info["editable"]),
        readonly=bool(info["readonly"]),
        checked=None if info["checked"] is None else bool(info["checked"]),
        submits=bool(info["submits"]),
        enter_submits=bool(info["enterSubmits"]),
        text=str(info["label"] if secret is not None else info["text"]),
        secret=secret,
    )


def secret_of(hints: object) -> Secret | None:
    """The kind of secret a field holds, from the hints ``js/helpers.js`` ``fieldHints``
    read in the page (None for an element that is not a field)."""
    if not isinstance(hints, Mapping):
        return None
    names = hints.get("names")
    return secret_kind(
        str(hints.get("type", "")),
        str(hints.get("autocomplete", "")),
        [str(n) for n in names] if isinstance(names, list) else [],
    )


# --- where to act -------------------------------------------------------------------------

# Share of the box where candidate points lie: the centre first, then inner points.
_CANDIDATES = ((0.5, 0.5), (0.25, 0.5), (0.75, 0.5), (0.5, 0.25), (0.5, 0.75), (0.15, 0.15))


async def target_point(
    target: Target, element: Located, info: ElementInfo, latest: Compaction | None
) -> Point:
    """Scroll the element into view and return a visible point the hit test gives to it."""
    return (await aim_at(target, element, info, latest)).point


async def aim_at(
    target: Target,
    element: Located,
    info: ElementInfo,
    latest: Compaction | None,
    *,
    scroll: bool = True,
) -> Aim:
    """Scroll the element into view (unless `scroll` is false: a button is held) and aim
    at a visible point of it that the hit test gives to it; `Refusal` when there is none."""
    if scroll:
        await scroll_into_view(target, element, info)
    boxes, origins = await _boxes(target, element)
    if not boxes:
        raise Refusal(
            f"{describe(element, info)} has no visible box in the viewport (hidden, zero size "
            "or clipped away); it cannot be reached like a person would"
        )
    first_cover: str | None = None
    for left, top, right, bottom in boxes[:2]:
        for fx, fy in _CANDIDATES:
            point = Point(left + (right - left) * fx, top + (bottom - top) * fy)
            cover = await _hit_test(target, element, point, origins, latest)
            if cover is None:
                return Aim(point, origins)
            first_cover = first_cover or cover
    raise Covered(
        f"{describe(element, info)} is covered by {first_cover}: a click would land on that "
        "instead. Deal with what covers it first (close or accept it), then try again."
    )


async def visible_boxes(target: Target, element: Located) -> list[Box]:
    """The element's boxes in the viewport now (tab coordinates), largest first; what
    is drawn over them does not count (a dragged item over its drop target)."""
    boxes, _ = await _boxes(target, element)
    return boxes


async def _boxes(
    target: Target, element: Located
) -> tuple[list[Box], dict[str | None, tuple[float, float]]]:
    """The element's visible boxes, largest first, and each session's document origin."""
    offsets = await session_offsets(target, element)
    # These three reads are independent: one round trip for all.
    origins, reply, metrics = await gather(
        lambda: _document_origins(target, offsets),
        lambda: target.execute(
            cdp.dom_get_content_quads(backend_node_id=element.backend_id),
            session_id=element.session,
        ),
        lambda: target.execute(cdp.page_get_layout_metrics()),
    )
    dx, dy = offsets[element.session]
    quads: Sequence[Sequence[float]] = reply.get("quads", [])
    viewport = metrics.get("cssLayoutViewport", metrics.get("layoutViewport", {}))
    width = float(viewport.get("clientWidth", 0))
    height = float(viewport.get("clientHeight", 0))
    boxes = sorted(
        (box for box in (_visible_box(q, dx, dy, width, height) for q in quads) if box),
        key=lambda b: (b[2] - b[0]) * (b[3] - b[1]),
        reverse=True,
    )
    return boxes, origins


async def aim_in_frame(target: Target, element: Located, x: float, y: float) -> Aim:
    """An aim at (`x`, `y`) of the viewport of the element's frame (its session's, for
    an out-of-process iframe), in tab coordinates, for `reaches` and the mouse."""
    offsets = await session_offsets(target, element)
    origins = await _document_origins(target, offsets)
    dx, dy = offsets[element.session]
    return Aim(Point(x + dx, y + dy), origins)


async def reaches(
    target: Target, element: Located, aim: Aim, latest: Compaction | None
) -> str | None:
    """None when the aimed point still reaches the element (the hit test finds it or
    something inside it), else a description of what is there now."""
    return await _hit_test(target, element, aim.point, aim.origins, latest)


async def _scroll_into_view(
    target: Target,
    session: str | None,
    backend_id: int,
    element: Located | None = None,
    info: ElementInfo | None = None,
) -> None:
    try:
        await target.execute(
            cdp.dom_scroll_into_view_if_needed(backend_node_id=backend_id), session_id=session
        )
    except CDPError as exc:
        if element is None or info is None:
            raise Refusal(
                f"the frame that holds the element is not rendered ({exc.message})"
            ) from exc
        raise Refusal(
            f"{describe(element, info)} is not rendered (hidden or detached: {exc.message})"
        ) from exc


async def session_offsets(
    target: Target, element: Located
) -> dict[str | None, tuple[float, float]]:
    """Each session's origin in tab coordinates, outermost first."""
    offsets: dict[str | None, tuple[float, float]] = {None: (0.0, 0.0)}
    # Boundaries run from the element up; the session below the outermost is the
    # element's own session when there is one boundary, else the next inner parent.
    chain = list(reversed(element.boundaries))
    inner_sessions = [b.parent_session for b in chain[1:]] + [element.session]
    for boundary, inner in zip(chain, inner_sessions[: len(chain)], strict=True):
        px, py = offsets.get(boundary.parent_session, (0.0, 0.0))
        box = await target.execute(
            cdp.dom_get_box_model(backend_node_id=boundary.owner_backend_id),
            session_id=boundary.parent_session,
        )
        content = box["model"]["content"]
        offsets[inner] = (px + float(content[0]), py + float(content[1]))
    return offsets


def _visible_box(
    quad: Sequence[float], dx: float, dy: float, width: float, height: float
) -> Box | None:
    xs = [quad[i] + dx for i in (0, 2, 4, 6)]
    ys = [quad[i] + dy for i in (1, 3, 5, 7)]
    left, right = max(min(xs), 0.0), min(max(xs), width)
    top, bottom = max(min(ys), 0.0), min(max(ys), height)
    if right - left < 1 or bottom - top < 1:
        return None
    return left, top, right, bottom


async def _hit_test(
    target: Target,
    element: Located,
    point: Point,
    origins: Mapping[str | None, tuple[float, float]],
    latest: Compaction | None,
) -> str | None:
    """None when `point` reaches the element, else a description of what it hits.

    `origins` places each session's document in tab coordinates (`_document_origins`).
    """
    # From the tab down: each iframe owner must get the point before its document does.
    checks: list[tuple[str | None, int | None]] = [
        (b.parent_session, b.owner_backend_id) for b in reversed(element.boundaries)
    ]
    checks.append((element.session, None))
    for session, owner in checks:
        ox, oy = origins.get(session, (0.0, 0.0))
        for x, y in _pixels_around(point.x - ox, point.y - oy):
            cover = await _hit_at(target, element, session, owner, x, y, latest)
            if cover is not None:
                return cover
    return None


def _pixels_around(x: float, y: float) -> list[tuple[int, int]]:
    """The whole pixels a document point may fall in: itself when whole (the tab's own
    document), else the ones around it (a frame at a fractional offset), which must
    all reach the element, since the mouse lands on the fraction."""
    xs = sorted({math.floor(x), math.ceil(x)})
    ys = sorted({math.floor(y), math.ceil(y)})
    return [(px, py) for px in xs for py in ys]


async def _hit_at(
    target: Target,
    element: Located,
    session: str | None,
    owner: int | None,
    x: int,
    y: int,
    latest: Compaction | None,
) -> str | None:
    """None when the whole document pixel (`x`, `y`) of `session` reaches the iframe
    `owner` (or, without one, the element), else what it hits."""
    hit = await target.execute(
        cdp.dom_get_node_for_location(x, y, include_user_agent_shadow_dom=False),
        session_id=session,
    )
    hit_id = int(hit["backendNodeId"])
    if owner is not None:
        if hit_id != owner:
            frame = await _object_for(target, session, owner)
            return await _describe_hit(target, session, hit_id, latest, frame)
        return None
    if hit_id == element.backend_id:
        return None  # the element itself (backend ids name one node each)
    hit_object = await _object_for(target, session, hit_id)
    inside = await call_on(
        target,
        element.object_id,
        script("contains-hit.js"),
        ObjectRef(hit_object),
        session_id=session,
    )
    if inside is not True:
        return await _describe_hit(target, session, hit_id, latest, element.object_id)
    return None


async def _document_origins(
    target: Target, offsets: Mapping[str | None, tuple[float, float]]
) -> dict[str | None, tuple[float, float]]:
    """Where each session's document starts, in tab coordinates, for
    ``DOM.getNodeForLocation``, which takes document coordinates: the session's
    viewport origin less how far its document is scrolled. Read once per element,
    after it was scrolled into view."""
    sessions = list(offsets)
    scrolls = await gather(
        *(
            lambda session=session: evaluate(target, script("scroll-offset.js"), session_id=session)
            for session in sessions
        )
    )
    return {
        session: (offsets[session][0] - float(sx), offsets[session][1] - float(sy))
        for session, (sx, sy) in zip(sessions, scrolls, strict=True)
    }


def _known_frame(tab: Tab, session: str | None, control: Control) -> str | None:
    """The id of the frame whose document holds `control`, when the tab knows it
    without asking: its main frame's, for an element of the main document."""
    return tab.revisions.main_frame if session is None and control.frame == 0 else None


async def frame_of(target: Target, element: Located) -> str:
    """The frame id of the document that holds `element`."""
    if element.session is None and element.control.frame == 0:
        # The latest capture found it in the tab's main document. Were it moved to
        # another frame's document since, resolving it in this frame's world fails:
        # "cannot tell", which asks, as an unknown should.
        if element.frame_id is not None:
            return element.frame_id
        return await main_frame_id(target)
    document, tree = await gather(
        lambda: call_on(
            target,
            element.object_id,
            script("owner-document.js"),
            return_by_value=False,
            session_id=element.session,
        ),
        lambda: target.execute(cdp.page_get_frame_tree(), session_id=element.session),
    )
    described = await target.execute(
        cdp.dom_describe_node(object_id=str(document["objectId"])), session_id=element.session
    )
    frame = described["node"].get("frameId")
    return str(frame if frame is not None else tree["frameTree"]["frame"]["id"])


async def own_object(target: Target, element: Located) -> str:
    """The element as a remote object of `OWN_WORLD` in its frame: made on first use
    (the world, then the node resolved in it) and kept for the rest of the call, so
    the submit prediction and the press witness share one world and one object.
    Raises what the browser raised (the page went away: `CDPError`)."""
    own = element.own
    async with own.lock:
        if own.object_id is None:
            frame = await frame_of(target, element)
            world = await target.execute(
                cdp.page_create_isolated_world(frame, world_name=OWN_WORLD),
                session_id=element.session,
            )
            resolved = await target.execute(
                cdp.dom_resolve_node(
                    backend_node_id=element.backend_id,
                    execution_context_id=int(world["executionContextId"]),
                    object_group=OBJECT_GROUP,
                ),
                session_id=element.session,
            )
            own.object_id = str(resolved["object"]["objectId"])
        return own.object_id


async def _object_for(target: Target, session: str | None, backend_id: int) -> str:
    resolved = await target.execute(
        cdp.dom_resolve_node(backend_node_id=backend_id, object_group=OBJECT_GROUP),
        session_id=session,
    )
    return str(resolved["object"]["objectId"])


async def _describe_hit(
    target: Target,
    session: str | None,
    backend_id: int,
    latest: Compaction | None,
    covered: str,
) -> str:
    """Name what the hit test found over the object `covered` (the element, or the
    frame that holds it): the layer it belongs to in words (see ``cover_description``),
    tag, id attribute, class, text, and its eid if any."""
    hit_object = await _object_for(target, session, backend_id)
    facts = await call_on(
        target, hit_object, script("describe-cover.js"), ObjectRef(covered), session_id=session
    )
    eid = await _eid_of(target, session, hit_object, latest)
    hears_keys = None
    if names_layer(facts):
        hears_keys = await _hears_keys(target, session, hit_object)
    return cover_description(facts, eid, hears_keys)


async def _hears_keys(target: Target, session: str | None, hit_object: str) -> bool | None:
    """Whether a script listens for keys on the way from the cover up to the window
    (the cover, its ancestors, the document, the window): only then may Escape close
    it; None when the browser could not say."""
    try:
        return bool(KEY_EVENTS & await listener_types(target, session, hit_object, page_world=True))
    except (CDPError, JavaScriptError, ValueError):
        return None


async def _eid_of(
    target: Target, session: str | None, hit_object: str, latest: Compaction | None
) -> str | None:
    if latest is None:
        return None
    # Backend ids are unique per renderer, so only the tab's own controls are compared.
    by_backend = {c.backend_node_id: c.eid for c in latest.controls.values() if c.frame == 0}
    if session is not None or not by_backend:
        return None
    control = await call_on(
        target, hit_object, script("closest-control.js"), return_by_value=False, session_id=session
    )
    object_id = control.get("objectId")
    if object_id is None:
        return None
    node = await target.execute(cdp.dom_describe_node(object_id=object_id), session_id=session)
    return by_backend.get(int(node["node"]["backendNodeId"]))


async def scroll_into_view(target: Target, element: Located, info: ElementInfo) -> None:
    """Scroll the page (and the iframes holding the element) until it is in view."""
    for boundary in reversed(element.boundaries):
        await _scroll_into_view(target, boundary.parent_session, boundary.owner_backend_id)
    await _scroll_into_view(target, element.session, element.backend_id, element, info)


# --- mouse ---------------------------------------------------------------


async def move_to(target: Target, point: Point) -> None:
    """Move the mouse to `point` (hover)."""
    await target.execute(cdp.input_dispatch_mouse_event("mouseMoved", point.x, point.y))


async def wheel(target: Target, point: Point, delta: float) -> None:
    """Turn the mouse wheel at `point` by `delta` CSS pixels (down when positive)."""
    await target.execute(
        cdp.input_dispatch_mouse_event("mouseWheel", point.x, point.y, delta_x=0, delta_y=delta)
    )


async def viewport_size(target: Target) -> tuple[float, float]:
    """The width and height of the tab's layout viewport, in CSS pixels."""
    metrics = await target.execute(cdp.page_get_layout_metrics())
    viewport: Mapping[str, Any] = metrics["cssLayoutViewport"]
    return float(viewport["clientWidth"]), float(viewport["clientHeight"])


async def scroll_position(target: Target) -> float:
    """How far the page is scrolled down, in CSS pixels."""
    metrics = await target.execute(cdp.page_get_layout_metrics())
    return float(metrics["cssVisualViewport"]["pageY"])
