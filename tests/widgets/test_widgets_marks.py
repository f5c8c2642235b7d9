"""Drawn shapes and marks a person clicks, compacted in a real headless Chromium.

Shapes of an `<svg>` with their own handlers (a drawing app's board) are named by
their `<title>`, else by their fill and kind; a tile or a grid's mark drawn by one
image named by a single letter or digit keeps that character. Each is clicked by
its id through the direct transport and through ``trimtab mcp``, and the page's own
state shows the press reached it.
"""

from __future__ import annotations

import re

import pytest

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.link_host import TAB, open_link_host
from tests.support.outside import call
from tests.widgets.test_widgets import act, compacted, eid, lines, open_tab, page_says

pytestmark = pytest.mark.browser

CHOSEN = "document.getElementById('chosen').textContent"


async def test_svg_shapes_and_single_character_tiles_are_named(page: PageTarget) -> None:
    """Each clickable shape says what it is (its title, else its fill and kind) and each
    tile its letter or digit, so no two read alike."""
    loaded = await compacted(page, "widgets-marks.html")
    seen = lines(loaded.compaction)
    assert (
        '<svg id="?" size="460x120" icon="board"><clickable id="?" icon="red circle"/>'
        '<clickable id="?" icon="blue square"/><clickable id="?" icon="green triangle"/>'
        '<clickable id="?" icon="banner"/></svg>'
    ) in seen, seen
    assert (
        '<clickable id="?" icon="7"/><clickable id="?" icon="3"/><clickable id="?" label="o"/>'
        in (seen)
    ), seen


async def test_a_shape_and_a_tile_are_clicked_by_their_ids(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A click on the green triangle's id and on tile 7's id runs each one's own handler."""
    tab, now = await open_tab(page, pages_server.url("widgets-marks.html"))
    await act(tab, "click", id=eid(now, "green triangle"))
    assert await page_says(page, CHOSEN) == "triangle"
    await act(tab, "click", id=eid(now, "7"))
    assert await page_says(page, CHOSEN) == "tile 7"


async def test_an_outside_agent_clicks_a_shape_by_its_name(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Through ``trimtab mcp`` the snapshot names the red circle and a click on its id
    reaches the circle's handler, not the board's other shapes."""
    async with (
        open_link_host(page, pages_server.url("widgets-marks.html")) as host,
        host.mcp_client() as client,
    ):
        await host.share(TAB)
        xml, is_error, _ = await call(client, "capture_snapshot")
        assert not is_error, xml
        circle = re.search(r'<clickable id="(\w+)" icon="red circle"/>', xml)
        assert circle is not None, xml
        _, is_error, _ = await call(client, "click", id=circle[1])
        assert not is_error
    assert await page_says(page, CHOSEN) == "circle"
