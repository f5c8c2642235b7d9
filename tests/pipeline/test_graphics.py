"""Graphics only pixels show, in the XML: a canvas chart, a named SVG chart and a video
are told of (tag, id, label, size), so the model knows when a `screenshot` is worth
it and can take one of just that element; a button's or link's icon, a decoration
hidden from assistive technology, a small inline icon, a hidden canvas and a tracking
pixel are not (they would cost tokens on every page and say nothing)."""

from __future__ import annotations

import re

import pytest

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.tools.test_screenshot import near, shot
from tests.tools.test_tools import open_tab

pytestmark = pytest.mark.browser

GREEN = (20, 160, 60)


async def test_only_the_pictures_a_person_would_look_at_are_told_of(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """The canvas chart, the named SVG chart and the video come out with an id and their
    size; the logo and the button's icon stay their controls' faces; the decoration,
    the 12 px icon, the hidden canvas and the 1x1 canvas are left out."""
    _, xml = await open_tab(page, pages_server.url("graphics-kinds.html"))
    found = re.findall(r"<(canvas|svg|video) id=\"[^\"]+\"([^>]*)>", xml)
    assert [(tag, attrs.rstrip("/").strip()) for tag, attrs in found] == [
        # No name from the page: its id gives the hint, as for an icon.
        ("canvas", 'size="480x200" icon="elevation"'),
        ("svg", 'size="240x120" label="Visitors per month"'),
        ("video", 'size="320x180"'),
    ], xml
    assert 'label="Trailhead home"' in xml  # the logo is its link's face
    assert re.search(r'<button id="[^"]+">Search</button>', xml), xml
    assert "Elevation along the trail" in xml
    assert "Open all year" in xml


async def test_a_screenshot_of_the_canvas_id_is_the_chart(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """`screenshot` of the canvas's id is an image of the canvas's size with the drawn
    colour where the chart put it."""
    tab, xml = await open_tab(page, pages_server.url("graphics-kinds.html"))
    canvas = re.search(r'<canvas id="([^"]+)"', xml)
    assert canvas is not None, xml
    result, picture = await shot(tab, id=canvas.group(1))
    assert picture.size == (480, 200), result.content
    assert near(picture.getpixel((240, 150)), GREEN)
    assert near(picture.getpixel((240, 20)), (255, 255, 255))
