"""Sortable lists and grids built by the real libraries (jQuery UI's `sortable`,
SortableJS; ``tests/pages/vendor``), compacted in a real headless Chromium.

jQuery UI puts its one mousedown handler on the list and marks it ``ui-sortable``:
its items get ids and say ``draggable="true"``; SortableJS tiles with a grab cursor
likewise. `drag` onto another item moves one before it, in a list and across the
rows of a grid, as the page's own order shows, through the direct transport and
through ``trimtab mcp``.
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

PAGE = "widgets-sortable-libraries.html"
PACKING = "document.getElementById('packing-order').textContent"
PHOTOS = "document.getElementById('tiles-order').textContent"


async def test_items_of_a_sortable_list_and_grid_have_ids_and_say_draggable(
    page: PageTarget,
) -> None:
    """Each item of the jQuery UI list and of the SortableJS grid is a control that
    says draggable, named by its text."""
    loaded = await compacted(page, PAGE)
    seen = lines(loaded.compaction)
    start = seen.index("<h1>Packing list</h1>")
    assert seen[start + 1 : start + 5] == [
        f'<clickable id="?" draggable="true">{name}</clickable>'
        for name in ("Tent", "Stove", "Sleeping bag", "Head torch")
    ]
    start = seen.index("<h2>Photos</h2>")
    assert seen[start + 1 : start + 7] == [
        f'<clickable id="?" draggable="true">{name}</clickable>'
        for name in ("Lake", "Ridge", "Camp", "Forest", "Summit", "Valley")
    ]


async def test_drag_moves_an_item_before_another_in_a_list_and_a_grid(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Dragging "Head torch" onto "Tent" takes it up the jQuery UI list to Tent (dropped
    on Tent's middle, jQuery UI leaves it just below); dragging "Valley" (second row)
    onto "Lake" (first row) moves it into the first row of the grid, beside Lake (before
    or after it: SortableJS decides by how the pointer's last moves reach Lake, which on
    a loaded machine arrive fewer and later, as with a person's drag)."""
    tab, now = await open_tab(page, pages_server.url(PAGE))
    await act(tab, "drag", id=eid(now, "Head torch"), to=eid(now, "Tent"))
    assert await page_says(page, PACKING) == "Tent,Head torch,Stove,Sleeping bag"
    await act(tab, "drag", id=eid(now, "Valley"), to=eid(now, "Lake"))
    order = str(await page_says(page, PHOTOS)).split(",")
    assert sorted(order[:2]) == ["Lake", "Valley"], order
    assert sorted(order) == sorted(["Lake", "Ridge", "Camp", "Forest", "Summit", "Valley"])


async def test_an_outside_agent_reorders_the_list(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Through ``trimtab mcp`` the list's items have ids and a drag of "Sleeping bag"
    onto "Tent" moves it up beside Tent."""
    async with (
        open_link_host(page, pages_server.url(PAGE)) as host,
        host.mcp_client() as client,
    ):
        await host.share(TAB)
        xml, is_error, _ = await call(client, "capture_snapshot")
        assert not is_error, xml
        ids = dict(
            (name, found)
            for found, name in re.findall(r'<clickable id="(\w+)" draggable="true">([^<]+)<', xml)
        )
        _, is_error, _ = await call(client, "drag", id=ids["Sleeping bag"], to=ids["Tent"])
        assert not is_error
    assert await page_says(page, PACKING) == "Tent,Sleeping bag,Stove,Head torch"
