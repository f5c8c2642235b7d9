"""Small icons, grips and covering pickers, compacted and operated in a real headless
Chromium on a page built with jQuery UI itself (``tests/pages/vendor``).

A small icon beside a control's name (a jQuery UI menu item's, a button's) is kept
with its meaning; a textarea, a panel with CSS ``resize`` and a jQuery UI
``.resizable()`` panel say ``resizable="both"``, and `drag` by an offset pulls their
grip: the page's own size follows and the answer says it. A click on a control under
an open colour picker is refused with the picker named in words and what closes it
(Escape only when a script hears keys on its way); Escape closes it and the click
then goes through.
"""

from __future__ import annotations

import re

import pytest
import trio

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.link_host import TAB, open_link_host
from tests.support.outside import call
from tests.widgets.test_widgets import (
    TIMEOUT,
    act,
    compacted,
    eid,
    lines,
    open_tab,
    page_says,
    recapture,
)
from trimtab.tools import run_tool

pytestmark = pytest.mark.browser

PAGE = "widgets-grips.html"
LOG = "document.getElementById('log').textContent"
SIZE = "(el => [el.offsetWidth, el.offsetHeight])(document.getElementById('{}'))"
PICKER_OPEN = "getComputedStyle(document.getElementById('picker')).display !== 'none'"


async def test_a_covering_picker_is_named_and_escape_closes_it(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A click on a button under an open colour picker (half or wholly hidden) is
    refused naming the picker in words and that Escape or a click outside closes it;
    Escape closes it, and the click then reaches the button."""
    tab, now = await open_tab(page, pages_server.url(PAGE))
    await act(tab, "click", id=eid(now, "Colour"))
    assert await page_says(page, PICKER_OPEN) is True
    with trio.fail_after(TIMEOUT):
        refused = await run_tool(tab, "click", {"id": eid(now, "Apply colour")})
    assert refused.is_error, refused.content
    assert (
        'is covered by an open colour picker <div dom-id="picker"/> '
        "(press Escape or click outside it to close it)"
    ) in refused.content, refused.content
    assert await page_says(page, LOG) == ""
    # A button the picker hides whole is left out of the page's XML; its id, still
    # held, is refused as covered, not as gone.
    assert "Preview" not in (await recapture(page)).xml
    with trio.fail_after(TIMEOUT):
        hidden = await run_tool(tab, "click", {"id": eid(now, "Preview")})
    assert hidden.is_error, hidden.content
    assert "is covered by an open colour picker" in hidden.content, hidden.content
    await act(tab, "press", key="Escape")
    assert await page_says(page, PICKER_OPEN) is False
    await act(tab, "click", id=eid(now, "Apply colour"))
    assert await page_says(page, LOG) == "applied"


# A colour picker that only a click outside closes: no script hears a key anywhere.
MOUSE_ONLY_PICKER = """<main style="width:360px">
<div style="position:relative">
  <button id="colour">Colour</button>
  <div id="picker" style="display:none; position:absolute; top:30px; left:0; width:220px;
    height:120px; z-index:10; background:#fff; border:1px solid #888">
    <div style="margin:10px; height:100px; background:linear-gradient(red, yellow, lime, cyan,
      blue, magenta, red)"></div>
  </div>
  <p><button id="apply">Apply colour</button></p>
</div>
</main>
<script>
const picker = document.getElementById("picker");
const open = () => { picker.style.display = "block"; };
document.getElementById("colour").addEventListener("click", open);
document.addEventListener("mousedown", (event) => {
  if (!picker.contains(event.target) && event.target.id !== "colour") picker.style.display = "none";
});
</script>"""


async def test_a_covering_picker_no_key_closes_says_only_a_click_outside(
    page: PageTarget,
) -> None:
    """A picker that no script hears keys for (none on it, its ancestors, the document
    or the window) is named without the Escape hint: a click outside closes it."""
    loaded = await compacted(page, MOUSE_ONLY_PICKER)
    tab, now = await open_tab(page, loaded.model.url)
    await act(tab, "click", id=eid(now, "Colour"))
    with trio.fail_after(TIMEOUT):
        refused = await run_tool(tab, "click", {"id": eid(now, "Apply colour")})
    assert refused.is_error, refused.content
    assert (
        'is covered by an open colour picker <div dom-id="picker"/> (click outside it to close it)'
    ) in refused.content, refused.content


async def test_small_icons_beside_names_are_kept_with_their_meaning(page: PageTarget) -> None:
    """A jQuery UI menu item's icon, an icon button's icon and a drawn caret say what
    they are (disk, gear, trash, caret); an icon whose word the name already says
    (Print) and a submenu's caret beside haspopup cost nothing."""
    loaded = await compacted(page, PAGE)
    seen = lines(loaded.compaction)
    assert '<clickable id="?"><menuitem id="?" icon="disk">Save</menuitem></clickable>' in seen
    assert '<clickable id="?"><menuitem id="?">Print</menuitem></clickable>' in seen
    assert (
        '<clickable id="?"><menuitem id="?" haspopup="menu">Export</menuitem></clickable>' in seen
    )
    assert (
        '<button id="?" icon="gear">Settings</button> <button id="?" icon="trash">Remove</button>'
        ' Tent <clickable id="?" icon="untag"/>'
    ) in seen, seen
    assert '<button id="?" icon="caret">Sort by</button>' in seen, seen


async def test_resizable_elements_say_so(page: PageTarget) -> None:
    """A textarea, a panel with CSS resize and a jQuery UI resizable panel (its grip a
    small div in the corner) each say resizable="both"; the grip is no icon of its own."""
    loaded = await compacted(page, PAGE)
    seen = lines(loaded.compaction)
    assert 'Notes <textarea id="?" resizable="both"/>' in seen
    assert (
        '<clickable id="?" resizable="both">Packing list: tent, stove, sleeping bag.</clickable>'
        in seen
    )
    assert '<clickable id="?" resizable="both">Route sketch</clickable>' in seen


async def test_a_grip_says_which_way_and_a_gutter_is_no_grip(page: PageTarget) -> None:
    """A thin child at a panel's right edge with the col-resize cursor makes the panel
    resizable horizontally; a divider with that cursor in the middle of a split view
    resizes its neighbours, not the view, which says nothing."""
    grip = "position:absolute;top:0;bottom:0;width:6px;cursor:col-resize"
    loaded = await compacted(
        page,
        '<main><div style="position:relative;width:200px;height:40px">Sidebar'
        f'<div style="{grip};right:0"></div></div>'
        '<div style="position:relative;width:300px;height:40px">Split view'
        f'<div style="{grip};left:150px"></div></div></main>',
    )
    assert lines(loaded.compaction) == [
        '<clickable id="?" resizable="horizontal">Sidebar</clickable>',
        "Split view",
    ]


@pytest.mark.parametrize(
    ("dom_id", "name"),
    [
        ("notes", "Notes"),
        ("panel", "Packing list: tent, stove, sleeping bag."),
        ("sketch", "Route sketch"),
    ],
)
async def test_drag_by_an_offset_resizes_by_the_grip(
    page: PageTarget, pages_server: StaticServer, dom_id: str, name: str
) -> None:
    """`drag` on a resizable element by (80, 40) pulls its corner grip: the page's own
    size grows by that much and the answer says the new size."""
    tab, now = await open_tab(page, pages_server.url(PAGE))
    before = await page_says(page, SIZE.format(dom_id))
    assert isinstance(before, list), before
    element = eid(now, name)
    result = await act(tab, "drag", id=element, dx=80, dy=40)
    after = await page_says(page, SIZE.format(dom_id))
    assert after == [before[0] + 80, before[1] + 40], (before, after)
    assert re.search(
        rf'<note>resized &lt;\w+ id="{element}"[^<]* from {before[0]}x{before[1]} to '
        rf"{after[0]}x{after[1]} \(CSS px\)</note>",
        result.content,
    ), result.content


async def test_an_outside_agent_resizes_the_notes(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Through ``trimtab mcp`` the notes textarea says resizable, and a drag by its id
    makes the page's textarea taller by the offset."""
    before = None
    async with (
        open_link_host(page, pages_server.url(PAGE)) as host,
        host.mcp_client() as client,
    ):
        await host.share(TAB)
        xml, is_error, _ = await call(client, "capture_snapshot")
        assert not is_error, xml
        found = re.search(r'<textarea id="(\w+)" resizable="both"/>', xml)
        assert found, xml
        before = await page_says(page, SIZE.format("notes"))
        answer, is_error, _ = await call(client, "drag", id=found.group(1), dx=0, dy=50)
        assert not is_error, answer
        assert "resized &lt;textarea" in answer, answer
    assert isinstance(before, list), before
    assert await page_says(page, SIZE.format("notes")) == [before[0], before[1] + 50]
