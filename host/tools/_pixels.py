"""The pixels group: `screenshot`, for what only the image shows (a canvas, a chart,
an image's text, a colour that means something, overlapping layout).

The browser renders the clip already scaled (`Page.captureScreenshot` with a clip
and a scale), so the common case costs one CDP call and no decoding here. Pillow
steps in only where the browser cannot do the job: drawing the marks (the ids of the
controls in view, drawn on the image and never in the page, so the page can neither
see nor fake them) and, rarely, shrinking an image the browser returned larger than
asked (a rounding, a device pixel ratio it did not report).
"""

from __future__ import annotations

import base64
import io
import math
import os
from collections.abc import Mapping, Sequence
from typing import Final

import attrs
import trio
from PIL import Image, ImageDraw, ImageFont

from pycdp_bridge import CDPError, Rect, Target, layout_boxes
from pycdp_bridge import protocol as cdp

from ..driver import (
    Box,
    CallContext,
    Located,
    describe,
    gather,
    locate_with_info,
    scroll_into_view,
    session_offsets,
)
from ..pipeline import xml
from ..tab import rendered
from ._common import (
    ID_SCHEMA,
    READS,
    BadArguments,
    Refusal,
    ToolImage,
    ToolResult,
    bool_arg,
    schema,
    text_arg,
    tool,
)

__all__ = [
    "CAPTURE_TIMEOUT",
    "DEFAULT_MAX_SIDE",
    "JPEG_QUALITY",
    "MARK_COLOUR",
    "MAX_PIXELS",
    "MAX_SIDE_ENV",
    "PAGE_CAP",
    "max_side",
    "screenshot",
]

DEFAULT_MAX_SIDE: Final = 1280
"""The image's long side at most, in pixels, unless `MAX_SIDE_ENV` says otherwise."""
MAX_SIDE_ENV: Final = "TRIMTAB_SCREENSHOT_MAX_SIDE"
_SIDE_RANGE: Final = (256, 4096)
MAX_PIXELS: Final = 4_000_000
"""The image's pixels at most, whatever the long side allows (a large setting)."""
PAGE_CAP: Final = 16_384
"""CSS pixels of a full page or an element taken at most along each side; the rest is
said, not shown (a 30,000 px page would otherwise make the browser paint it whole)."""
JPEG_QUALITY: Final = 80
CAPTURE_TIMEOUT: Final = 15.0
"""Seconds the browser may take to render the image."""
# The marks: white text on a colour no common page uses for text backgrounds, with
# an outline of the element, so a label is told apart from the page's own badges.
MARK_COLOUR: Final = (219, 0, 120)
_MARK_TEXT: Final = (255, 255, 255)
_MARK_FONT_PX: Final = 11
_MIME: Final[Mapping[str, str]] = {"jpeg": "image/jpeg", "png": "image/png"}


def max_side() -> int:
    """The long side setting: `MAX_SIDE_ENV` within 256-4,096, else `DEFAULT_MAX_SIDE`."""
    raw = os.environ.get(MAX_SIDE_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_SIDE
    try:
        value = int(raw)
    except ValueError:
        raise BadArguments(f"{MAX_SIDE_ENV}={raw!r} is not a whole number of pixels") from None
    low, high = _SIDE_RANGE
    return min(max(value, low), high)


@attrs.frozen
class _Region:
    """What to capture: a rectangle in document CSS pixels, and how to name it."""

    rect: Rect
    what: str  # "viewport" | "element" | "page"
    beyond_viewport: bool
    cut: str | None = None  # what of it was left out, Trimtab's words


@tool(
    "screenshot",
    "The page as an image: the viewport, one element (id) or the full page. marks: "
    "the ids of the controls in view drawn on it.",
    schema(
        {
            "id": ID_SCHEMA,
            "full_page": {"type": "boolean"},
            "marks": {"type": "boolean"},
            "format": {"enum": ["jpeg", "png"]},
        }
    ),
    READS,
    group="pixels",
)
async def screenshot(call: CallContext, args: Mapping[str, object]) -> ToolResult:
    tab = call.tab
    eid = text_arg(args, "id", required=False)
    full_page = bool_arg(args, "full_page", False)
    marks = bool_arg(args, "marks", False)
    image_format = text_arg(args, "format", required=False) or "jpeg"
    if image_format not in _MIME:
        raise BadArguments(f"format must be jpeg or png; got {image_format!r}")
    if eid is not None and full_page:
        raise BadArguments("give either id or full_page, not both")
    longest = max_side()
    if eid is not None:
        element, info = await locate_with_info(tab, eid)
        await scroll_into_view(tab.target, element, info)
        box, metrics = await gather(
            lambda: element_box(tab.target, element),
            lambda: tab.target.execute(cdp.page_get_layout_metrics()),
        )
        view = _viewport(metrics)
        if box is None or box[2] - box[0] < 1 or box[3] - box[1] < 1:
            size = "no box" if box is None else f"{box[2] - box[0]:g}x{box[3] - box[1]:g} px"
            raise Refusal(
                f"{describe(element, info)} has no size on the page ({size}): there is "
                "nothing to show; take a snapshot or screenshot the viewport"
            )
        region = _element_region(box, view, _content(metrics))
    else:
        metrics = await tab.target.execute(cdp.page_get_layout_metrics())
        view = _viewport(metrics)
        region = (
            _page_region(_content(metrics), view) if full_page else _Region(view, "viewport", False)
        )
    ratio = _device_ratio(metrics)
    scale = _scale(region.rect, ratio, longest)
    rect = region.rect
    clip = (rect.x, rect.y, rect.width, rect.height, scale)

    async def shoot() -> bytes:
        # A tab not in front renders no frame to capture until the browser is asked
        # to render it (`rendered`: a capture not answered within a moment is, and a
        # tab in front pays nothing); bounded, so a tab that still renders nothing is
        # named as such rather than as a stuck page.
        with trio.move_on_after(CAPTURE_TIMEOUT) as limit:
            async with rendered(tab.target):
                reply = await tab.target.execute(
                    cdp.page_capture_screenshot(
                        image_format=image_format,
                        quality=JPEG_QUALITY if image_format == "jpeg" else None,
                        clip=clip,
                        beyond_viewport=region.beyond_viewport,
                    )
                )
        if limit.cancelled_caught:
            raise Refusal(
                f"the browser rendered no image of the tab within {CAPTURE_TIMEOUT:g} s "
                "(a minimised window may render nothing); try again once it is shown"
            )
        return base64.b64decode(reply["data"])

    labels: list[tuple[str, Rect]] = []
    latest = tab.latest
    if marks and latest is not None:
        raw, boxes = await gather(shoot, lambda: layout_boxes(tab.target))
        for mark_eid, control in latest.controls.items():
            found = boxes.get(control.backend_node_id) if control.frame == 0 else None
            if (
                found is not None
                and found.width >= 1
                and found.height >= 1
                and _overlaps(found, region.rect)
            ):
                labels.append((mark_eid, found))
    else:
        raw = await shoot()
    image = _finish(raw, image_format, region.rect, scale * ratio, longest, labels)
    facts: dict[str, object] = {
        "of": region.what,
        "width": image.width,
        "height": image.height,
        "marks": len(labels) if marks else None,
    }
    notes = [n for n in (region.cut,) if n]
    if marks and latest is None:
        notes.append("no ids marked: there is no snapshot yet; take one, then ask again")
    note = "".join(f"\n{xml.element('note', content=n)}" for n in notes)
    return ToolResult(
        content=xml.element("screenshot", facts) + note + "\n",
        kind="text",
        image=image,
    )


async def element_box(target: Target, element: Located) -> Box | None:
    """The element's whole box in tab viewport coordinates, past the viewport's edges
    too (the screenshot clips to it); None when it has no layout box."""
    offsets = await session_offsets(target, element)
    try:
        reply = await target.execute(
            cdp.dom_get_content_quads(backend_node_id=element.backend_id),
            session_id=element.session,
        )
    except CDPError:  # "Could not compute content quads": not rendered
        return None
    quads: Sequence[Sequence[float]] = reply.get("quads", [])
    if not quads:
        return None
    dx, dy = offsets[element.session]
    xs = [q[i] + dx for q in quads for i in (0, 2, 4, 6)]
    ys = [q[i] + dy for q in quads for i in (1, 3, 5, 7)]
    return min(xs), min(ys), max(xs), max(ys)


def _viewport(metrics: Mapping[str, object]) -> Rect:
    """The visible part of the page, in document CSS pixels."""
    view = metrics.get("cssVisualViewport") or metrics.get("visualViewport") or {}
    assert isinstance(view, Mapping)
    return Rect(
        float(view.get("pageX", 0)),
        float(view.get("pageY", 0)),
        float(view.get("clientWidth", 0)),
        float(view.get("clientHeight", 0)),
    )


def _content(metrics: Mapping[str, object]) -> Rect:
    size = metrics.get("cssContentSize") or metrics.get("contentSize") or {}
    assert isinstance(size, Mapping)
    return Rect(0.0, 0.0, float(size.get("width", 0)), float(size.get("height", 0)))


def _device_ratio(metrics: Mapping[str, object]) -> float:
    """Device pixels per CSS pixel: the browser's capture is in device pixels."""
    css = metrics.get("cssVisualViewport")
    device = metrics.get("visualViewport")
    if not isinstance(css, Mapping) or not isinstance(device, Mapping):
        return 1.0
    css_width = float(css.get("clientWidth", 0))
    device_width = float(device.get("clientWidth", 0))
    if css_width <= 0 or device_width <= 0:
        return 1.0
    return device_width / css_width


def _page_region(content: Rect, view: Rect) -> _Region:
    width = min(max(content.width, view.width), PAGE_CAP)
    height = min(max(content.height, view.height), PAGE_CAP)
    cut = None
    if content.height > PAGE_CAP or content.width > PAGE_CAP:
        cut = (
            f"the page is {content.width:.0f}x{content.height:.0f} CSS px; this shows its "
            f"top left {width:.0f}x{height:.0f} (scroll, then screenshot the viewport, "
            "for the rest)"
        )
    return _Region(Rect(0.0, 0.0, width, height), "page", True, cut)


def _element_region(box: tuple[float, float, float, float], view: Rect, content: Rect) -> _Region:
    """The element's box (viewport coordinates) as a clip in document coordinates,
    within the page; past the viewport only when the element is larger than it."""
    left, top = max(box[0] + view.x, 0.0), max(box[1] + view.y, 0.0)
    right = min(box[2] + view.x, max(content.width, view.right))
    bottom = min(box[3] + view.y, max(content.height, view.bottom))
    cut = None
    if right - left > PAGE_CAP or bottom - top > PAGE_CAP:
        cut = (
            f"the element is {right - left:.0f}x{bottom - top:.0f} CSS px; this shows its "
            f"top left {min(right - left, PAGE_CAP):.0f}x{min(bottom - top, PAGE_CAP):.0f}"
        )
        right, bottom = min(right, left + PAGE_CAP), min(bottom, top + PAGE_CAP)
    rect = Rect(left, top, right - left, bottom - top)
    inside = rect.x >= view.x and rect.y >= view.y
    inside = inside and rect.right <= view.right + 0.5 and rect.bottom <= view.bottom + 0.5
    return _Region(rect, "element", not inside, cut)


def _scale(rect: Rect, ratio: float, longest: int) -> float:
    """The capture's scale: at most one image pixel per CSS pixel (a sharper image of
    a high-density screen costs the model more and shows it nothing it needs), the
    long side at most `longest`, and at most `MAX_PIXELS` pixels."""
    long_css = max(rect.width, rect.height, 1.0)
    by_side = longest / long_css
    by_pixels = math.sqrt(MAX_PIXELS / max(rect.width * rect.height, 1.0))
    return min(1.0, by_side, by_pixels) / ratio


def _overlaps(box: Rect, clip: Rect) -> bool:
    return box.x < clip.right and box.right > clip.x and box.y < clip.bottom and box.bottom > clip.y


def _finish(
    raw: bytes,
    image_format: str,
    clip: Rect,
    factor: float,
    longest: int,
    labels: list[tuple[str, Rect]],
) -> ToolImage:
    """The browser's image as the tool answers it: as it came when it fits and has no
    marks to draw (no decoding), else shrunk and/or marked and encoded again."""
    with Image.open(io.BytesIO(raw)) as opened:  # reads the header only
        width, height = opened.size
        fits = max(width, height) <= longest and width * height <= MAX_PIXELS
        if fits and not labels:
            return ToolImage(raw, _MIME[image_format], width, height)
        picture = opened.convert("RGB")
    if not fits:
        shrink = min(longest / max(width, height), math.sqrt(MAX_PIXELS / (width * height)))
        size = (max(1, int(width * shrink)), max(1, int(height * shrink)))
        picture = picture.resize(size, Image.Resampling.LANCZOS)
        factor *= size[0] / width
    if labels:
        _draw_marks(picture, clip, factor, labels)
    out = io.BytesIO()
    if image_format == "jpeg":
        picture.save(out, "JPEG", quality=JPEG_QUALITY)
    else:
        picture.save(out, "PNG")
    return ToolImage(out.getvalue(), _MIME[image_format], picture.width, picture.height)


def _draw_marks(
    picture: Image.Image, clip: Rect, factor: float, labels: list[tuple[str, Rect]]
) -> None:
    """Each control's outline and its id in a small label at its top left corner
    (inside the image: an element cut by the edge keeps its label in view)."""
    draw = ImageDraw.Draw(picture)
    font = ImageFont.load_default(_MARK_FONT_PX)
    for eid, box in labels:
        left = (box.x - clip.x) * factor
        top = (box.y - clip.y) * factor
        right = (box.right - clip.x) * factor
        bottom = (box.bottom - clip.y) * factor
        draw.rectangle((left, top, right - 1, bottom - 1), outline=MARK_COLOUR, width=1)
        text_left, text_top, text_right, text_bottom = draw.textbbox((0, 0), eid, font=font)
        label_width = text_right - text_left + 4
        label_height = text_bottom - text_top + 4
        x = min(max(left, 0.0), picture.width - label_width)
        y = min(max(top, 0.0), picture.height - label_height)
        draw.rectangle((x, y, x + label_width - 1, y + label_height - 1), fill=MARK_COLOUR)
        draw.text((x + 2 - text_left, y + 2 - text_top), eid, font=font, fill=_MARK_TEXT)
