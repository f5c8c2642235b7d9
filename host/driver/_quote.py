"""Text found by what it says: a quote of the page's visible text, within a region of
the snapshot or the whole page, where text in a plain paragraph has no element id.

`locate_quote` finds the quote's match (refusing one the page does not show, or one
that repeats when no occurrence was asked for), scrolls it into view and aims at its
first and last characters, with the innermost element that holds it all standing for
it in hit tests; `drag_select` (``_drag``) then selects it as a hand does.
`extend_selection` mends a selection the drag got short or long with Shift and the
arrow keys, as a person mends it on the keyboard.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from pycdp_bridge import CDPError, JavaScriptError, ObjectRef, PageModel, Target, call_on, evaluate
from pycdp_bridge import protocol as cdp

from ..pipeline import Control, Region, compact, xml
from ..tab import Tab
from ._element import Aim, ElementInfo, Located, Refusal, aim_in_frame, element_info
from ._keyboard import MODIFIER_BITS, key_press, parse_key
from ._scripts import script

__all__ = ["Quote", "extend_selection", "locate_quote", "page_selection", "squashed"]

# Key presses a selection is mended by at most: a drag lands within a character or
# two of its ends, so more means the drag selected something else altogether.
_MEND_KEYS = 8


@attrs.frozen
class Quote:
    """A quote's match on the page: where to press and release to select it."""

    element: Located  # the innermost element holding the whole match
    info: ElementInfo
    start: Aim
    end: Aim
    selected: str  # the page's text of the match, spacing folded
    count: int  # how many times the scope shows the quote
    where: str  # the scope in words: "the page", "region 'main'"


def squashed(text: str) -> str:
    """`text` with its whitespace runs as one space and its ends trimmed, as the quote
    is matched."""
    return " ".join(text.split())


async def locate_quote(tab: Tab, quote: str, occurrence: int | None, region: str | None) -> Quote:
    """The `occurrence`-th match of `quote` in the visible text of `region` (a region
    key of the snapshot: ``main``, ``nav-2``) or of the whole page; `Refusal` when it
    is absent, or repeats and `occurrence` is None."""
    target = tab.target
    model = await tab.memory.capture()
    root, rest, where = await _scope(tab, model, region)
    args: list[object] = [quote, occurrence or 1, "points", *rest]
    try:
        span: Mapping[str, Any] = await call_on(target, root, script("quote-span.js"), *args)
    except (CDPError, JavaScriptError) as exc:
        raise Refusal(f"the text of {where} could not be read ({exc}); take a snapshot") from exc
    shown = xml.text(repr(quote))
    count = int(span["count"])
    if count == 0:
        raise Refusal(f"{where} does not show the text {shown}; quote it as the snapshot writes it")
    if occurrence is None and count > 1:
        raise Refusal(
            f"{where} shows the text {shown} {count} times: say which with occurrence "
            f"(1 to {count}), or quote more of it"
        )
    if not span["found"]:
        raise Refusal(
            f"{where} shows the text {shown} {count} time(s), so there is no "
            f"occurrence {occurrence}"
        )
    holder = await call_on(
        target,
        root,
        script("quote-span.js"),
        quote,
        occurrence or 1,
        "element",
        *rest,
        return_by_value=False,
    )
    element = await _holder(target, holder.get("objectId"), where)
    # The element first, then the match within it: a long paragraph taller than the
    # window scrolls to the quote, not only to its own top.
    await target.execute(
        cdp.dom_scroll_into_view_if_needed(backend_node_id=element.backend_id, rect=span["rect"])
    )
    span = await call_on(target, root, script("quote-span.js"), *args)
    if not span.get("found") or not span["inView"]:
        raise Refusal(
            f"the text {shown} in {where} does not fit in the window, so it cannot be "
            "selected in one drag; select a shorter part of it"
        )
    start = await aim_in_frame(target, element, span["start"]["x"], span["start"]["y"])
    end = await aim_in_frame(target, element, span["end"]["x"], span["end"]["y"])
    info = await element_info(target, element)
    return Quote(element, info, start, end, str(span["selected"]), count, where)


async def _scope(tab: Tab, model: PageModel, key: str | None) -> tuple[str, list[object], str]:
    """Where to look for a quote: the remote object to search under, the script's
    further arguments (after, before, then elements whose text does not count) and
    the scope in words."""
    target = tab.target
    body = await evaluate(target, script("page-body.js"), return_by_value=False)
    body_id = str(body["objectId"]) if isinstance(body, Mapping) and body.get("objectId") else None
    if body_id is None:
        raise Refusal("the page has no body to select text in; take a snapshot")
    if key is None:
        return body_id, [None, None], "the page"
    fresh = compact(model, count=False, reserved=tab.memory.reserved(model))
    regions = {region.key: region for region in fresh.regions}
    found = regions.get(key.strip())
    if found is None:
        names = ", ".join(regions) or "none"
        raise Refusal(
            f"there is no region {xml.text(repr(key))} on the page now (it has: "
            f"{xml.text(names)}); take a snapshot"
        )
    where = f"region {xml.text(repr(found.key))}"
    if found.site or found.name == "frame":
        raise Refusal(f"{where} is a frame: select text in it by an element id inside it")
    if found.out.node >= 0:
        node = model.nodes[found.out.node]
        if node.frame != 0:
            raise Refusal(f"{where} is inside a frame: select text in it by an element id")
        return await _object(target, node.backend_node_id), [None, None], where
    # An implicit region is the page's text outside the landmarks it lies between.
    top = [region for region in fresh.regions if region.depth == 0]
    at = top.index(found)
    marked = [region for region in top if region.out.node >= 0]
    before = next((r for r in top[at + 1 :] if r.out.node >= 0), None)
    after = next((r for r in reversed(top[:at]) if r.out.node >= 0), None)
    refs: list[object] = []
    for region in (after, before):
        refs.append(None if region is None else await _ref(target, model, region))
    refs += [await _ref(target, model, region) for region in marked]
    return body_id, refs, where


async def _ref(target: Target, model: PageModel, region: Region) -> ObjectRef:
    return ObjectRef(await _object(target, model.nodes[region.out.node].backend_node_id))


async def _object(target: Target, backend_id: int) -> str:
    try:
        resolved = await target.execute(cdp.dom_resolve_node(backend_node_id=backend_id))
    except CDPError as exc:
        raise Refusal(f"the region left the page ({exc.message}); take a snapshot") from exc
    return str(resolved["object"]["objectId"])


async def _holder(target: Target, object_id: object, where: str) -> Located:
    """The element holding the match, as a `Located` without an id of its own."""
    if not isinstance(object_id, str):
        raise Refusal(f"the text of {where} changed while it was read; take a snapshot")
    node = await target.execute(cdp.dom_describe_node(object_id=object_id))
    backend_id = int(node["node"]["backendNodeId"])
    control = Control("", -1, backend_id, 0, "text", "", "")
    return Located("", control, None, object_id)


async def extend_selection(target: Target, element: Located, wanted: str) -> str:
    """Mend the page's selection towards `wanted` with Shift and the arrow keys, which
    move its far end a character at a time: on when it is a start of `wanted`, back
    when `wanted` is a start of it. The selection's text once done."""
    selected = await page_selection(target, element)
    goal = squashed(wanted)
    shift = MODIFIER_BITS["Shift"]
    for _ in range(_MEND_KEYS):
        now = squashed(selected)
        if now == goal:
            break
        if now and goal.startswith(now):
            key = parse_key("ArrowRight")
        elif now.startswith(goal):
            key = parse_key("ArrowLeft")
        else:
            break  # another start: the keyboard moves only the far end
        await key_press(target, key, shift)
        selected = await page_selection(target, element)
    return selected


async def page_selection(target: Target, element: Located) -> str:
    """The text the page holds selected in the element's document (in a field: the
    field's selected text)."""
    return str(
        await call_on(
            target, element.object_id, script("page-selection.js"), session_id=element.session
        )
    )
