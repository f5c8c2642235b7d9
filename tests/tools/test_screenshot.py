"""`screenshot` in a real headless Chromium: what only pixels show, scaled, bounded, marked."""

from __future__ import annotations

import io
import re

import pytest
import trio
from PIL import Image

from pycdp_bridge import PageTarget, protocol
from tests.support import StaticServer
from tests.support.xmltree import eid_of
from tests.tools.test_tools import open_tab
from trimtab.tab import Tab
from trimtab.tools import ToolImage, ToolResult, run_tool, tool_spec
from trimtab.tools._pixels import MARK_COLOUR, MAX_SIDE_ENV, PAGE_CAP

pytestmark = pytest.mark.browser

# The chart's bars (tests/pages/pixels-chart.html): canvas at (20, 100), bars from its
# bottom edge; January blue 100 px tall at x 60, February orange 220 px at x 240.
BLUE = (30, 90, 220)
ORANGE = (250, 140, 0)
GREEN = (20, 160, 60)
LATE_RED = (200, 30, 30)
PURPLE = (150, 0, 200)


def decoded(image: ToolImage) -> Image.Image:
    """The tool's image as pixels (it must decode as what it says it is)."""
    picture = Image.open(io.BytesIO(image.data))
    assert picture.format == {"image/jpeg": "JPEG", "image/png": "PNG"}[image.mime]
    assert picture.size == (image.width, image.height)
    return picture.convert("RGB")


def near(pixel: tuple[int, ...], colour: tuple[int, int, int], tolerance: int = 40) -> bool:
    """Whether a pixel is the colour, give or take JPEG's losses."""
    return all(abs(a - b) <= tolerance for a, b in zip(pixel[:3], colour, strict=True))


async def shot(tab: Tab, **args: object) -> tuple[ToolResult, Image.Image]:
    result = await run_tool(tab, "screenshot", args)
    assert not result.is_error, result.content
    assert result.image is not None
    return result, decoded(result.image)


def test_screenshot_spec_is_a_read_of_the_pixels_group() -> None:
    """The tool is a page read in its own group, cached until the page changes."""
    spec = tool_spec("screenshot")
    assert spec.group == "pixels"
    assert spec.policy.reads_page
    assert not spec.policy.side_effects


async def test_canvas_chart_value_is_in_the_pixels(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A chart drawn on a canvas, which the XML cannot describe, shows in the viewport
    image: a JPEG of the viewport's size with each bar's colour where the chart drew it."""
    tab, xml = await open_tab(page, pages_server.url("pixels-chart.html"))
    assert "rgb(250" not in xml  # the values are nowhere in the text
    result, picture = await shot(tab)
    assert result.image is not None
    assert result.image.mime == "image/jpeg"
    width = await page.evaluate("document.documentElement.clientWidth")
    height = await page.evaluate("innerHeight")
    assert (result.image.width, result.image.height) == (width, height)
    assert result.kind == "text"
    assert f'width="{width}"' in result.content
    assert 'of="viewport"' in result.content
    # Canvas (20, 100); bars from y 400: blue 300-400 at x 80-200, orange 180-400 at 260-380.
    assert near(picture.getpixel((140, 350)), BLUE)
    assert near(picture.getpixel((320, 200)), ORANGE)
    assert near(picture.getpixel((500, 300)), GREEN)
    # Above the blue bar the canvas is white: the bar's height is in the pixels.
    assert near(picture.getpixel((140, 250)), (255, 255, 255))


async def test_png_and_scaled_to_the_long_side_setting(
    page: PageTarget, pages_server: StaticServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`format: png` answers a PNG; the long side setting scales the whole viewport
    down, the chart's colours still where it drew them (at the scale)."""
    tab, _ = await open_tab(page, pages_server.url("pixels-chart.html"))
    monkeypatch.setenv(MAX_SIDE_ENV, "640")
    result, picture = await shot(tab, format="png")
    assert result.image is not None
    assert result.image.mime == "image/png"
    width = await page.evaluate("document.documentElement.clientWidth")
    assert max(picture.size) == 640 or max(picture.size) == round(width * 640 / width)
    factor = picture.width / width
    assert near(picture.getpixel((int(320 * factor), int(200 * factor))), ORANGE, 30)


async def test_element_shot_is_scrolled_to_and_clipped(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """An element below the fold is scrolled into view and the image is just its box."""
    tab, xml = await open_tab(page, pages_server.url("pixels-chart.html"))
    button = eid_of(xml, "button", "Load older sales")
    result, picture = await shot(tab, id=button)
    rect = await page.evaluate(
        "(() => { const r = [...document.querySelectorAll('button')].at(-1)"
        ".getBoundingClientRect(); return [r.width, r.height, r.top]; })()"
    )
    assert picture.size == (round(rect[0]), round(rect[1]))
    assert 0 <= rect[2] < await page.evaluate("innerHeight")  # scrolled into view
    assert 'of="element"' in result.content


async def test_full_page_shows_what_is_below_the_fold(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """The full page is one image of the whole document, scaled so its long side fits:
    the red section 2,400 px down is in it, the viewport not scrolled."""
    tab, _ = await open_tab(page, pages_server.url("pixels-chart.html"))
    width = await page.evaluate("document.documentElement.clientWidth")
    result, picture = await shot(tab, full_page=True)
    assert 'of="page"' in result.content
    assert picture.height == 1280  # 3,000 px tall, scaled to the long side
    factor = 1280 / 3000
    assert abs(picture.width - width * factor) <= 1
    assert near(picture.getpixel((int(250 * factor), int(2430 * factor))), LATE_RED)
    assert await page.evaluate("scrollY") == 0


async def test_a_30000_px_page_is_bounded(page: PageTarget, pages_server: StaticServer) -> None:
    """A 30,000 px page gives a bounded image of its top part, and says what was left out."""
    tab, _ = await open_tab(page, pages_server.url("pixels-chart.html"))
    await page.evaluate("document.body.style.height = '30000px'")
    result, picture = await shot(tab, full_page=True)
    assert max(picture.size) <= 1280
    assert picture.height == 1280
    assert "top left" in result.content
    assert "30000" in result.content
    assert str(PAGE_CAP) in result.content


async def test_marks_draw_the_snapshot_ids_where_the_controls_are(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """With marks, each control in view gets its id from the latest snapshot drawn at
    its top left corner: the label's colour is there, and the count matches the ids."""
    tab, xml = await open_tab(page, pages_server.url("pixels-chart.html"))
    week = eid_of(xml, "button", "Week")
    result, picture = await shot(tab, marks=True)
    count = re.search(r'marks="(\d+)"', result.content)
    assert count is not None
    in_view = {"Home", "Reports", "Day", "Week", "Month"}
    assert int(count.group(1)) >= len(in_view)
    # The Week button: left 20 + 80 + 8 (+ its inline gap), top 60; its label's colour
    # is just inside that corner, where the page has a grey button face.
    left, top = await page.evaluate(
        "(() => { const r = document.querySelectorAll('#range button')[1]"
        ".getBoundingClientRect(); return [r.left, r.top]; })()"
    )
    assert near(picture.getpixel((int(left) + 1, int(top) + 1)), MARK_COLOUR, 50)
    # Without marks the same place is the page's own button.
    _, plain = await shot(tab)
    assert not near(plain.getpixel((int(left) + 1, int(top) + 1)), MARK_COLOUR, 50)
    # The off-screen button below the fold is not counted.
    del week


async def test_bad_ids_and_zero_size_are_refused(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A stale id and an element that lost its size are clear errors, not images."""
    tab, xml = await open_tab(page, pages_server.url("pixels-chart.html"))
    stale = await run_tool(tab, "screenshot", {"id": "zz9"})
    assert stale.is_error
    assert "stale id" in stale.content
    assert stale.image is None
    month = eid_of(xml, "button", "Month")
    await page.evaluate(
        "(() => { const b = document.querySelectorAll('#range button')[2];"
        " b.style.width = '0'; b.style.height = '0'; b.style.padding = '0';"
        " b.style.border = '0'; b.style.overflow = 'hidden'; b.style.fontSize = '0'; })()"
    )
    zero = await run_tool(tab, "screenshot", {"id": month})
    assert zero.is_error, zero.content
    assert "no size" in zero.content
    both = await run_tool(tab, "screenshot", {"id": month, "full_page": True})
    assert both.is_error
    assert "either id or full_page" in both.content


async def test_background_tab_is_captured_fresh(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A tab that is not in front (another tab over it) is captured as it is now: a bar
    the page drew while in the background is in the image, not a frame from before, and
    the other tab stays in front."""
    tab, _ = await open_tab(page, pages_server.url("pixels-chart.html"))
    front = await page.browser.new_page("about:blank")
    await front.execute(protocol.page_bring_to_front())
    # Chromium throttles a hidden page's rendering once it has been hidden a moment.
    await trio.sleep(1.5)
    await page.evaluate(
        "(() => { const c = document.getElementById('chart').getContext('2d');"
        " c.fillStyle = 'rgb(150, 0, 200)'; c.fillRect(0, 250, 40, 50); })()"
    )
    _, picture = await shot(tab)
    assert near(picture.getpixel((320, 200)), ORANGE)
    assert near(picture.getpixel((40, 380)), PURPLE)
    assert await front.evaluate("document.visibilityState") == "visible"


async def test_crashed_tab_is_an_error(page: PageTarget, pages_server: StaticServer) -> None:
    """A tab whose renderer crashed answers a clear error at once, not an image."""
    tab, _ = await open_tab(page, pages_server.url("pixels-chart.html"))
    async with page.listen("Inspector.targetCrashed") as crashes:
        await page.execute(protocol.page_navigate("chrome://crash"))
        await crashes.__anext__()
    result = await run_tool(tab, "screenshot", {})
    assert result.is_error
    assert "the page crashed" in result.content
    assert result.image is None


async def test_marks_on_a_scrolled_page_sit_on_the_controls_in_view(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Scrolled down to the red section, the marks are drawn where its button is in the
    viewport now (the boxes are the page's at capture time), and the controls scrolled
    out of view are not marked."""
    tab, _ = await open_tab(page, pages_server.url("pixels-chart.html"))
    await page.evaluate("window.scrollTo(0, 2300)")
    snapshot = await run_tool(tab, "capture_snapshot", {})
    assert not snapshot.is_error, snapshot.content
    result, picture = await shot(tab, marks=True)
    assert 'marks="1"' in result.content, result.content
    left, top = await page.evaluate(
        "(() => { const r = document.querySelector('#late button')"
        ".getBoundingClientRect(); return [r.left, r.top]; })()"
    )
    assert 0 < top < picture.height
    assert near(picture.getpixel((int(left) + 1, int(top) + 1)), MARK_COLOUR, 50)
    # The section's own red, away from the label, is the page's.
    assert near(picture.getpixel((int(left) + 250, int(top) - 20)), LATE_RED)


async def test_marks_before_any_snapshot_say_so(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Marks asked before the tab was ever looked at: the image comes without marks and
    a note says why (no ids have been issued that a mark could name)."""
    await page.navigate(pages_server.url("pixels-chart.html"))
    result, picture = await shot(Tab.open(page), marks=True)
    assert 'marks="0"' in result.content
    assert "no snapshot yet" in result.content
    assert near(picture.getpixel((320, 200)), ORANGE)


async def test_an_element_taller_than_the_viewport_is_shown_whole(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """An element taller than the viewport is captured whole (beyond the viewport's
    edge), down to its bottom."""
    tab, xml = await open_tab(page, pages_server.url("pixels-chart.html"))
    button = eid_of(xml, "button", "Load older sales")
    await page.evaluate(
        "(() => { const b = document.querySelector('#late button'); b.style.height = '1000px';"
        " b.style.width = '200px'; b.style.background = 'rgb(20, 160, 60)';"
        " b.style.border = '0'; })()"
    )
    _, picture = await shot(tab, id=button)
    assert picture.size == (200, 1000)
    assert near(picture.getpixel((100, 20)), GREEN)
    assert near(picture.getpixel((100, 980)), GREEN)
