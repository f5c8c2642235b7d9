"""Sortable lists and grids built by the real libraries (jQuery UI's `sortable`,
SortableJS; ``tests/pages/vendor``), compacted in a real headless Chromium.

jQuery UI puts its one mousedown handler on the list and marks it ``ui-sortable``:
its items get ids and say ``draggable="true"``; SortableJS tiles with a grab cursor
likewise. `drag` with ``place`` puts one item exactly before or after another, in a
list and across the rows of a grid, as the page's own order shows, through the direct
transport and through ``trimtab mcp``; without ``place`` the answer says where the
library put it; where the page refuses the move the answer says so.
"""

from __future__ import annotations

import re

import pytest

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.link_host import TAB, open_link_host
from tests.support.outside import call
from tests.widgets.test_widgets import act, compacted, eid, lines, open_tab, page_says
from trimtab.tools import run_tool

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


async def test_drag_places_an_item_before_or_after_another_in_a_list(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """In the jQuery UI list, "Head torch" (last) placed before "Tent" (first) lands
    exactly before it, and "Tent" placed after "Stove" exactly after it, each said in
    the answer."""
    tab, now = await open_tab(page, pages_server.url(PAGE))
    torch, tent, stove = eid(now, "Head torch"), eid(now, "Tent"), eid(now, "Stove")
    result = await act(tab, "drag", id=torch, to=tent, place="before")
    assert await page_says(page, PACKING) == "Head torch,Tent,Stove,Sleeping bag"
    assert f'id="{torch}"&gt;Head torch&lt;/li&gt; landed before' in result.content
    result = await act(tab, "drag", id=tent, to=stove, place="after")
    assert await page_says(page, PACKING) == "Head torch,Stove,Tent,Sleeping bag"
    assert "landed after" in result.content
    assert "NOT" not in result.content


async def test_drag_places_a_tile_before_or_after_another_across_a_grid(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """In the SortableJS grid, "Valley" (second row) placed before "Lake" (first row)
    lands exactly before it, then placed after it exactly after it."""
    tab, now = await open_tab(page, pages_server.url(PAGE))
    valley, lake = eid(now, "Valley"), eid(now, "Lake")
    await act(tab, "drag", id=valley, to=lake, place="before")
    assert await page_says(page, PHOTOS) == "Valley,Lake,Ridge,Camp,Forest,Summit"
    result = await act(tab, "drag", id=valley, to=lake, place="after")
    assert await page_says(page, PHOTOS) == "Lake,Valley,Ridge,Camp,Forest,Summit"
    assert "Valley&lt;/div&gt; landed after" in result.content


async def test_drag_without_place_says_where_the_library_put_it(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Dropped on the middle of "Tent", jQuery UI leaves "Head torch" just below it, and
    the answer says it landed after Tent."""
    tab, now = await open_tab(page, pages_server.url(PAGE))
    result = await act(tab, "drag", id=eid(now, "Head torch"), to=eid(now, "Tent"))
    assert await page_says(page, PACKING) == "Tent,Head torch,Stove,Sleeping bag"
    assert "Head torch&lt;/li&gt; landed after &lt;li" in result.content


async def test_a_move_the_page_refuses_is_said_plainly(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """The playlist keeps its pinned "Intro" first (SortableJS refuses any move next to
    it): "Outro" placed before Intro does not get there, and the answer says where it
    landed instead of claiming it."""
    tab, now = await open_tab(page, pages_server.url(PAGE))
    result = await act(tab, "drag", id=eid(now, "Outro"), to=eid(now, "Intro"), place="before")
    order = str(await page_says(page, "document.getElementById('playlist-order').textContent"))
    assert order.startswith("Intro,"), order
    said = re.search(r"<note>NOT placed as asked: (.*?)</note>", result.content)
    assert said is not None, result.content
    # Wherever the library left it, after Intro (next to it, or further down).
    assert re.fullmatch(
        r"&lt;li id=\"\w+\"&gt;Outro&lt;/li&gt; landed (\d item\(s\) )?after "
        r"&lt;li id=\"\w+\"&gt;Intro&lt;/li&gt;, not just before it, in two drags \(.*\)",
        said.group(1),
    ), said.group(1)


async def test_place_is_checked(page: PageTarget, pages_server: StaticServer) -> None:
    """A place other than before or after, or without to, is refused naming the value."""
    tab, now = await open_tab(page, pages_server.url(PAGE))
    tent = eid(now, "Tent")
    wrong = await run_tool(tab, "drag", {"id": tent, "to": eid(now, "Stove"), "place": "below"})
    assert wrong.is_error
    assert "'below'" in wrong.content, wrong.content
    alone = await run_tool(tab, "drag", {"id": tent, "dx": 5, "place": "after"})
    assert alone.is_error
    assert "needs to" in alone.content, alone.content


async def test_an_outside_agent_reorders_the_list(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Through ``trimtab mcp`` the list's items have ids and "Sleeping bag" placed before
    "Tent" lands first, as the answer says."""
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
        answer, is_error, _ = await call(
            client, "drag", id=ids["Sleeping bag"], to=ids["Tent"], place="before"
        )
        assert not is_error, answer
        assert "Sleeping bag&lt;/li&gt; landed before" in answer
    assert await page_says(page, PACKING) == "Sleeping bag,Tent,Stove,Head torch"
