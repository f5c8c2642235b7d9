"""Widgets that used to be missing from the XML, compacted in a real headless Chromium.

Sortable lists (rows and grips a person drags), spinners whose arrows are out of
the tab order, colour palettes, and buttons whose words an image covers: each
fixture under ``tests/pages/widgets-*.html`` builds one the way sites build it,
the assertions are on the exact lines the model reads (ids as ``id="?"``), and the
actions go through the real tools.
"""

from __future__ import annotations

import pytest

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.widgets.test_widgets import act, compacted, eid, lines, open_tab, page_says, recapture

pytestmark = pytest.mark.browser

# -- sortable lists -----------------------------------------------------------------


async def test_sortable_rows_and_grips_have_ids_and_say_draggable(page: PageTarget) -> None:
    """A CSS-drawn grip with a grab cursor, rows with a move cursor and draggable="true"
    rows each get an id and say draggable, whichever element holds the listeners."""
    loaded = await compacted(page, "widgets-sortable.html")
    seen = lines(loaded.compaction)
    assert seen[seen.index("<h2>Today</h2>") + 1 :] == [
        '<clickable id="?" icon="grip" draggable="true"/>Write the report',
        '<clickable id="?" icon="grip" draggable="true"/>Call the bank',
        '<clickable id="?" icon="grip" draggable="true"/>Buy milk',
        "report,call,milk",
        "<h2>Recipe steps</h2>",
        '<clickable id="?" draggable="true">Boil water</clickable>',
        '<clickable id="?" draggable="true">Add pasta</clickable>',
        "<h2>Playlist</h2>",
        '<clickable id="?" draggable="true">Blue in Green</clickable>',
        '<clickable id="?" draggable="true">So What</clickable>',
    ]


async def test_grip_dragged_by_id_reorders_the_list_and_keeps_its_id(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Dragging the last row's grip onto the first one's moves that row first; every
    grip keeps its id in the new order."""
    tab, before = await open_tab(page, pages_server.url("widgets-sortable.html"))
    grips = [c for c in before.controls.values() if c.name.startswith("grip")]
    assert len(grips) == 3
    await act(tab, "drag", id=grips[2].eid, to=grips[0].eid)
    assert await page_says(page, "document.getElementById('order').textContent") == (
        "milk,report,call"
    )
    after = await recapture(page)
    assert [c.eid for c in after.controls.values() if c.name.startswith("grip")] == [
        grips[2].eid,
        grips[0].eid,
        grips[1].eid,
    ]


async def test_grip_id_follows_its_row_in_a_page_in_another_order(page: PageTarget) -> None:
    """Grips alike but for their row are told apart by the row's text, so a grip's id
    does not depend on its place in the list."""
    row = '<li><span style="cursor:grab;display:inline-block;width:12px">&#8942;</span>{}</li>'
    first = await compacted(page, "<ul>" + row.format("Alpha") + row.format("Beta") + "</ul>")
    second = await compacted(page, "<ul>" + row.format("Beta") + row.format("Alpha") + "</ul>")
    order = [c.eid for c in first.compaction.controls.values()]
    assert len(order) == 2
    assert [c.eid for c in second.compaction.controls.values()] == order[::-1]


async def test_text_inside_a_draggable_card_is_no_grip_of_its_own(page: PageTarget) -> None:
    """Only where the move or grab cursor starts is draggable: the row's text inside it
    inherits the cursor and is not a control of its own."""
    loaded = await compacted(
        page,
        '<main><div style="cursor:move;width:200px"><b>Card</b> <i>due today</i></div></main>',
    )
    assert lines(loaded.compaction) == [
        '<clickable id="?" draggable="true">Card due today</clickable>'
    ]


# -- spinners -------------------------------------------------------------------------


async def test_spinbutton_says_value_range_and_its_arrows_are_there(page: PageTarget) -> None:
    """A role=spinbutton field says its value, min and max; jQuery UI's arrows (out of
    the tab order, hidden from screen readers, drawn by a sprite) are up and down,
    and arrows with titles are named by them."""
    loaded = await compacted(page, "widgets-spinner.html")
    assert lines(loaded.compaction)[1:] == [
        'Quantity <spinbutton id="?" value="5" min="1" max="10"/>',
        '<button id="?" icon="up"/>',
        '<button id="?" icon="down"/>',
        "Delivery time",
        '<button id="?" label="Next hour"/>',
        '<spinbutton id="?" label="Hour" min="0" max="23">09</spinbutton>',
        '<button id="?" label="Previous hour"/>',
        ":",
        '<button id="?" label="Next minute"/>',
        '<spinbutton id="?" label="Minute" min="0" max="55">30</spinbutton>',
        '<button id="?" label="Previous minute"/>',
    ]


async def test_spinner_arrows_clicked_by_id_count(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Clicking the up arrow by its id counts the field up (the widget listens for
    mousedown on its wrapper), and a titled arrow counts its part of the time."""
    tab, now = await open_tab(page, pages_server.url("widgets-spinner.html"))
    await act(tab, "click", id=eid(now, "up", attr="icon"))
    assert await page_says(page, "document.getElementById('quantity').value") == "6"
    await act(tab, "click", id=eid(now, "Next hour"))
    assert await page_says(page, "document.getElementById('hour').textContent") == "10"
    after = await recapture(page)
    assert 'Quantity <spinbutton id="?" value="6" min="1" max="10"/>' in lines(after)


async def test_custom_slider_says_its_value_and_range(page: PageTarget) -> None:
    """A role=slider thumb without text says the value and range of its ARIA states."""
    loaded = await compacted(
        page,
        '<main>Volume <div role="slider" tabindex="0" aria-label="Volume" aria-valuenow="30"'
        ' aria-valuemin="0" aria-valuemax="100"'
        ' style="display:inline-block;width:16px;height:16px;background:#36c">'
        "</div></main>",
    )
    assert lines(loaded.compaction) == [
        'Volume <slider id="?" label="Volume" value="30" min="0" max="100"/>'
    ]


async def test_aria_hidden_link_and_field_out_of_tab_order_stay_out(page: PageTarget) -> None:
    """Arrows out of the tab order stay, but a card's image link out of it (a duplicate
    of the title link) and a sign-up form's honeypot field are still dropped."""
    loaded = await compacted(
        page,
        '<main><a href="/a" aria-hidden="true" tabindex="-1">'
        '<img src="a.png" width="40" height="40" alt=""></a> <a href="/a">Article</a>'
        ' <button tabindex="-1" aria-hidden="true" title="Next" style="width:20px;height:20px">'
        '</button><div aria-hidden="true" style="position:absolute;left:-5000px">'
        '<input type="text" name="b_91c4" tabindex="-1" value=""></div></main>',
    )
    assert lines(loaded.compaction) == ['<a id="?">Article</a> <button id="?" label="Next"/>']


# -- swatches -------------------------------------------------------------------------


async def test_palette_swatches_are_named_by_colour_or_their_value(page: PageTarget) -> None:
    """Cells that differ only by colour are named by it (a CSS name, else hex), cells
    with a data-value or title by those, fabric images by their files."""
    loaded = await compacted(page, "widgets-swatches.html")
    assert lines(loaded.compaction)[1:] == [
        "Text colour",
        '<clickable id="?" icon="red"/>',
        '<clickable id="?" icon="orange"/>',
        '<clickable id="?" icon="yellow"/>',
        '<clickable id="?" icon="green"/>',
        '<clickable id="?" icon="blue"/>',
        '<clickable id="?" icon="indigo"/>',
        '<clickable id="?" icon="#e06666"/>',
        '<clickable id="?" icon="black"/>',
        "Chosen: none",
        "Colour",
        '<clickable id="?" icon="Midnight"/>',
        '<clickable id="?" icon="Sand"/>',
        '<clickable id="?" label="Forest green"/>',
        "Fabric",
        '<clickable id="?" icon="linen natural"/>',
        '<clickable id="?" icon="velvet bottle green"/>',
    ]
    palette = [c.eid for c in loaded.compaction.controls.values()][:8]
    assert len(set(palette)) == 8


async def test_swatch_clicked_by_its_colour(page: PageTarget, pages_server: StaticServer) -> None:
    """The swatch named orange is the orange cell: clicking it picks orange."""
    tab, now = await open_tab(page, pages_server.url("widgets-swatches.html"))
    await act(tab, "click", id=eid(now, "orange", attr="icon"))
    assert await page_says(page, "document.getElementById('chosen').textContent") == (
        "Chosen: rgb(255, 165, 0)"
    )


async def test_lone_filled_icon_keeps_its_markup_name(page: PageTarget) -> None:
    """A filled control with no other colours beside it is no swatch: its class names it."""
    loaded = await compacted(
        page,
        '<main><p>Menu <span class="menu-toggle" onclick="void 0" style="display:inline-block;'
        'width:20px;height:20px;background:#333;cursor:pointer"></span></p></main>',
    )
    assert lines(loaded.compaction) == ['Menu <clickable id="?" icon="menu toggle"/>']


# -- names from HTML ids -----------------------------------------------------------------


async def test_buttons_under_an_image_face_are_named_by_their_words(page: PageTarget) -> None:
    """Buttons whose words an image covers are named by those words, then by their
    title, never by their HTML id ("login", "subbtn")."""
    loaded = await compacted(page, "widgets-names.html")
    assert lines(loaded.compaction)[1:4] == [
        'Email <input id="?" type="email"/> <button id="?" label="Log in"/>',
        "Newsletter",
        '<clickable id="?" label="Subscribe"/> <clickable id="?" label="Help and contact"/>',
    ]


async def test_button_under_its_own_face_is_clicked_by_id(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A button covered by an image inside it is still the control a click reaches."""
    tab, now = await open_tab(page, pages_server.url("widgets-names.html"))
    await act(tab, "click", id=eid(now, "Log in"))
    assert await page_says(page, "document.getElementById('log').textContent") == "Logging in"
    await act(tab, "click", id=eid(now, "Subscribe"))
    assert await page_says(page, "document.getElementById('log').textContent") == "Subscribed"
