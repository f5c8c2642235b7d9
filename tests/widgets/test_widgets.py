"""Widgets as real sites build them, compacted in a real headless Chromium.

Each page under ``tests/pages/widgets-*.html`` copies how sites build one kind of
widget (handlers on parents and children, icons drawn by CSS, ARIA-less sliders,
delegated handlers, calendars): the assertions are on the exact lines the model
reads, with ids written as ``id="?"`` where their value does not matter, and the
actions that used to fail are done through the real tools.
"""

from __future__ import annotations

import re

import pytest
import trio

from pycdp_bridge import PageTarget, capture
from tests.support import StaticServer
from tests.support.pages import PRODUCT, Loaded, load, load_and_compact, page_url, parse_xml
from trimtab.pipeline import Compaction, compact
from trimtab.tab import SnapshotMemory, Tab
from trimtab.tools import ToolResult, run_tool

pytestmark = pytest.mark.browser

TIMEOUT = 60
_ID = re.compile(r' id="[^"]+"')
# The id that starts a line of a list (the lines between a list's start and end tags).
_LISTED_ID = re.compile(
    r"(?<=\n)[a-z][a-z0-9]* (?=[^\n]*\n(?:[^<\n][^\n]*\n)*</(?:links|buttons)>)"
)


def lines(compaction: Compaction, region: str = "main") -> list[str]:
    """A region's lines as the model reads them, every id written as id="?" (and as
    `?` where it starts a line of a `<links>` or `<buttons>` list)."""
    found = [r for r in compaction.regions if r.key == region]
    assert len(found) == 1, f"expected one region {region!r} in:\n{compaction.xml}"
    return [_LISTED_ID.sub("? ", _ID.sub(' id="?"', item.xml)) for item in found[0].items]


def eid(compaction: Compaction, text: str, attr: str = "") -> str:
    """The id of the one control whose name (or `attr` value) is `text`."""
    found = [
        c.eid
        for c in compaction.controls.values()
        if (c.name == text if not attr else f'{attr}="{text}"' in _line_of(compaction, c.eid))
    ]
    assert len(found) == 1, f"expected one control {text!r}, found {found} in:\n{compaction.xml}"
    return found[0]


def _line_of(compaction: Compaction, eid: str) -> str:
    match = re.search(rf'<[a-z]+ id="{eid}"[^>]*>', compaction.xml)
    return match.group(0) if match else ""


async def compacted(page: PageTarget, name: str) -> Loaded:
    with trio.fail_after(TIMEOUT):
        return await load_and_compact(page, name)


async def recapture(page: PageTarget) -> Compaction:
    """The page as it is now, compacted as the product captures it."""
    with trio.fail_after(TIMEOUT):
        model = await capture(page, ax=PRODUCT.ax, rects=PRODUCT.rects)
    return compact(model)


async def open_tab(page: PageTarget, url: str) -> tuple[Tab, Compaction]:
    """Load `url` through the navigate tool; the session and the page's compaction."""
    tab = Tab.open(page)
    with trio.fail_after(TIMEOUT):
        result = await run_tool(tab, "navigate", {"url": url})
    assert not result.is_error, result.content
    return tab, await recapture(page)


async def act(tab: Tab, name: str, **args: object) -> ToolResult:
    """Run a tool that must succeed."""
    with trio.fail_after(TIMEOUT):
        result = await run_tool(tab, name, args)
    assert not result.is_error, result.content
    return result


async def page_says(page: PageTarget, expression: str) -> object:
    with trio.fail_after(TIMEOUT):
        return await page.evaluate(expression)


# -- pattern 2: handlers on children, trees ------------------------------------------


async def test_handlers_under_a_pointer_toolbar_keep_their_ids(page: PageTarget) -> None:
    """Spans with their own handlers inside a pointer-cursor toolbar without one are controls."""
    loaded = await compacted(page, "widgets-handlers.html")
    assert '<clickable id="?">Reply</clickable> <clickable id="?">Forward</clickable>' in lines(
        loaded.compaction
    )


async def test_handler_inside_a_clickable_row_keeps_its_own_id(page: PageTarget) -> None:
    """A star with its own handler inside a clickable message row is a control of its own."""
    loaded = await compacted(page, "widgets-handlers.html")
    assert (
        '<clickable id="?">Quarterly report <clickable id="?">Star</clickable></clickable>'
        in lines(loaded.compaction)
    )


async def test_clicks_on_child_handlers_reach_them(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Clicking Reply and the row's star by their ids runs their own handlers."""
    tab, now = await open_tab(page, pages_server.url("widgets-handlers.html"))
    await act(tab, "click", id=eid(now, "Reply"))
    assert await page_says(page, "document.getElementById('log').textContent") == "Replying"
    await act(tab, "click", id=eid(now, "Star"))
    assert await page_says(page, "document.getElementById('log').textContent") == "Starred"


async def test_aria_tree_item_opens_with_state_level_and_same_id(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A treeitem says expanded, its children follow with their level, and it keeps its id."""
    tab, before = await open_tab(page, pages_server.url("widgets-handlers.html"))
    assert '<treeitem id="?" expanded="false">Work</treeitem>' in lines(before)
    assert '<treeitem id="?">Personal</treeitem>' in lines(before)
    work = eid(before, "Work")
    await act(tab, "click", id=work)
    after = await recapture(page)
    seen = lines(after)
    start = seen.index('<treeitem id="?" expanded="true">Work</treeitem>')
    assert seen[start : start + 4] == [
        '<treeitem id="?" expanded="true">Work</treeitem>',
        '<treeitem id="?" level="2">Clients</treeitem>',
        '<treeitem id="?" level="2">Invoices</treeitem>',
        '<treeitem id="?">Personal</treeitem>',
    ]
    assert eid(after, "Work") == work


async def test_plain_list_tree_folder_opens_with_state_and_same_id(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A folder of a nested list without ARIA says expanded, and keeps its id when it opens."""
    tab, before = await open_tab(page, pages_server.url("widgets-handlers.html"))
    seen = lines(before)
    start = seen.index('<clickable id="?" expanded="false">Projects</clickable>')
    assert seen[start + 1] == '<clickable id="?">Archive</clickable>'
    projects = eid(before, "Projects")
    await act(tab, "click", id=projects)
    after = await recapture(page)
    seen = lines(after)
    start = seen.index('<clickable id="?" expanded="true">Projects</clickable>')
    assert seen[start : start + 4] == [
        '<clickable id="?" expanded="true">Projects</clickable>',
        '<clickable id="?" level="2">Alpha</clickable>',
        '<clickable id="?" level="2">Beta</clickable>',
        '<clickable id="?">Archive</clickable>',
    ]
    assert eid(after, "Projects") == projects


async def test_tree_with_one_handler_at_its_root_opens_by_item_ids(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Items of a tree whose only handler is on its root list are controls; a folder says
    expanded, opens by its id, keeps it, and its children follow with their level."""
    tab, before = await open_tab(page, pages_server.url("widgets-handlers.html"))
    seen = lines(before)
    start = seen.index('<clickable id="?" expanded="false">Music</clickable>')
    assert seen[start + 1] == '<clickable id="?">Podcasts</clickable>'
    music = eid(before, "Music")
    await act(tab, "click", id=music)
    after = await recapture(page)
    seen = lines(after)
    start = seen.index('<clickable id="?" expanded="true">Music</clickable>')
    assert seen[start : start + 4] == [
        '<clickable id="?" expanded="true">Music</clickable>',
        '<clickable id="?" level="2">Jazz</clickable>',
        '<clickable id="?" level="2">Blues</clickable>',
        '<clickable id="?">Podcasts</clickable>',
    ]
    assert eid(after, "Music") == music
    await act(tab, "click", id=eid(after, "Blues"))
    assert await page_says(page, "document.getElementById('log').textContent") == ("Playlist Blues")


async def test_label_in_a_clickable_row_is_not_a_second_control(page: PageTarget) -> None:
    """A label's native clickability under its row's pointer cursor adds no control."""
    loaded = await compacted(
        page,
        '<main><div id="row" style="cursor:pointer;padding:8px;width:300px">'
        '<input type="radio" id="r"> <label for="r">Express delivery</label></div></main>'
        '<script>document.getElementById("row").addEventListener("click", () => {})</script>',
    )
    assert lines(loaded.compaction) == [
        '<clickable id="?"><input id="?" type="radio"/> Express delivery</clickable>'
    ]


async def test_short_text_with_its_own_handler_is_a_control(page: PageTarget) -> None:
    """A few words with their own handler are a control even without the pointer cursor;
    an article with a listener (for text selection) stays text."""
    loaded = await compacted(
        page,
        '<main><p>Comments (3) <span id="more">Show more</span></p>'
        '<div id="article"><p>First paragraph of the story.</p><p>Second one.</p></div></main>'
        "<script>"
        'document.getElementById("more").addEventListener("click", () => {});'
        'document.getElementById("article").addEventListener("mouseup", () => {});'
        "</script>",
    )
    assert lines(loaded.compaction) == [
        'Comments (3) <clickable id="?">Show more</clickable>',
        "First paragraph of the story.",
        "Second one.",
    ]


# -- pattern 3: icon controls ---------------------------------------------------------


async def test_icon_controls_get_names_from_their_markup(page: PageTarget) -> None:
    """Nameless icons are named from background and content images, icon classes, SVG
    titles and symbols, img files and a wrapper's title; a :hover-only pointer icon stays."""
    loaded = await compacted(page, "widgets-icons.html")
    assert lines(loaded.compaction) == [
        "<h1>Compose</h1>",
        '<button id="?" icon="format bold"/>',
        '<button id="?" icon="format italic"/>',
        '<button id="?" icon="underline"/>',
        '<clickable id="?" icon="star"/> <clickable id="?" icon="trash can"/>'
        ' <clickable id="?" icon="reply arrow"/> <clickable id="?" icon="forward"/>'
        ' <clickable id="?" icon="label"/> <clickable id="?" icon="Move to folder"/>'
        ' <clickable id="?" icon="archive"/>',
        "Nothing done yet",
    ]


async def test_icon_names_tell_alike_icons_apart_in_their_ids(page: PageTarget) -> None:
    """Icons with derived names hash their ids from them: ten icons, ten identities."""
    loaded = await compacted(page, "widgets-icons.html")
    names = [c.name for c in loaded.compaction.controls.values()]
    assert len(names) == 10
    assert len(set(names)) == 10


async def test_hover_only_pointer_icon_is_clicked_by_its_id(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """The archive icon, whose pointer cursor shows only on :hover, is clicked by its id."""
    tab, now = await open_tab(page, pages_server.url("widgets-icons.html"))
    await act(tab, "click", id=eid(now, "archive", attr="icon"))
    assert await page_says(page, "document.getElementById('log').textContent") == (
        "Clicked archive"
    )


async def test_generated_class_names_give_no_icon_name(page: PageTarget) -> None:
    """Hashed and minified class names and spacer images are not read as icon names."""
    loaded = await compacted(
        page,
        '<main><p>Tools <span class="sc-bdVaJa css-1x2y3z gb" id="a1" '
        'style="display:inline-block;width:16px;height:16px;cursor:pointer;'
        'background:url(img/transparent.gif)"></span></p></main>'
        '<script>document.getElementById("a1").addEventListener("click", () => {})</script>',
    )
    assert lines(loaded.compaction) == ['Tools <clickable id="?"/>']


# -- pattern 4: operable widgets without roles ------------------------------------------


async def test_slider_handle_without_role_is_operated(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A jQuery UI slider's focusable handle span is a slider at its place on the track:
    clicked, then moved by key."""
    tab, now = await open_tab(page, pages_server.url("widgets-operable.html"))
    assert '<slider id="?" value="30%"/>' in lines(now)
    handle = re.search(r'<slider id="(\w+)" value="30%"/>', now.xml)
    assert handle is not None, now.xml
    await act(tab, "click", id=handle[1])
    await act(tab, "press", key="ArrowRight")
    assert await page_says(page, "document.getElementById('price-value').textContent") == (
        "Up to 400 EUR"
    )


async def test_aria_hidden_spinner_arrows_are_buttons(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Visible role=button arrows marked aria-hidden are kept and clicked."""
    tab, now = await open_tab(page, pages_server.url("widgets-operable.html"))
    seen = lines(now)
    start = seen.index('<input id="?" label="Travellers" value="2"/>')
    assert seen[start + 1] == "<buttons>\n? ▲\n? ▼\n</buttons>"
    await act(tab, "click", id=eid(now, "▲"))
    assert await page_says(page, "document.getElementById('travellers').value") == "3"


async def test_aria_hidden_duplicate_out_of_tab_order_stays_out(page: PageTarget) -> None:
    """An aria-hidden link the page took out of the tab order (a duplicate) is still dropped."""
    loaded = await compacted(
        page,
        '<main><a href="/a" aria-hidden="true" tabindex="-1">'
        '<img src="a.png" width="40" height="40" alt=""></a> <a href="/a">Article</a></main>',
    )
    assert lines(loaded.compaction) == ['<a id="?">Article</a>']


async def test_delegated_suggestions_are_each_a_control(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Autocomplete items whose handler is on the list are each a control, clicked by id."""
    tab, now = await open_tab(page, pages_server.url("widgets-operable.html"))
    assert lines(now)[-3:] == [
        '<clickable id="?">Paris, France</clickable>',
        '<clickable id="?">Parma, Italy</clickable>',
        '<clickable id="?">Paramaribo, Suriname</clickable>',
    ]
    await act(tab, "click", id=eid(now, "Parma, Italy"))
    assert await page_says(page, "document.getElementById('city').value") == "Parma"


# -- pattern 5: tables and grids --------------------------------------------------------


async def test_calendar_weeks_stay_rows_with_empty_days(page: PageTarget) -> None:
    """Block or inline day links, a week is one line and leading empty days keep their place."""
    loaded = await compacted(page, "widgets-tables.html")
    seen = lines(loaded.compaction)
    days = " | ".join(f'<a id="?">{n}</a>' for n in range(4, 11))
    assert seen[1:8] == [
        "March 2027",
        "Mo | Tu | We | Th | Fr | Sa | Su",
        '| | | | <a id="?">1</a> | <a id="?">2</a> | <a id="?">3</a>',
        days,
        "April 2027",
        "Mo | Tu | We | Th | Fr | Sa | Su",
        '| | | <a id="?">1</a> | <a id="?">2</a> | <a id="?">3</a> | <a id="?">4</a>',
    ]


async def test_pipe_in_cell_text_is_escaped_and_cell_lines_join(page: PageTarget) -> None:
    """A `|` in a cell's text is `\\|`; a cell's blocks share its row's line; empty cells stay."""
    loaded = await compacted(page, "widgets-tables.html")
    assert lines(loaded.compaction)[-3:] == [
        "Route | Note | Fare",
        "Paris \\| Lyon | Direct 2 h | 45 EUR",
        "Lyon | | 30 EUR",
    ]


async def test_layout_cells_and_spacer_rows(page: PageTarget) -> None:
    """Long cells and one-cell rows keep their lines; a row of empty cells leaves no line."""
    long_text = "Long paragraph of the layout column. " * 8
    loaded = await compacted(
        page,
        "<main><table>"
        f"<tr><td><h2>News</h2><p>{long_text}</p><p>Second paragraph</p></td>"
        "<td><p>Side one</p><p>Side two</p></td></tr>"
        "<tr><td></td><td></td></tr>"
        "<tr><td><p>Box line one</p><p>Box line two</p></td></tr>"
        "</table></main>",
    )
    assert lines(loaded.compaction) == [
        "<h2>News</h2>",
        long_text.strip(),
        "Second paragraph",
        "Side one",
        "Side two",
        "Box line one",
        "Box line two",
    ]


# -- pattern 9: smaller ones ------------------------------------------------------------


async def test_invalid_input_type_is_a_text_field(page: PageTarget) -> None:
    """An unknown `type` is a text field, as the browser treats it; a known one stays."""
    loaded = await compacted(page, "widgets-states.html")
    seen = lines(loaded.compaction)
    assert 'Nickname <input id="?"/>' in seen
    assert 'Code <input id="?"/>' in seen
    assert 'Colour <input id="?" type="color" value="#336699"/>' in seen


async def test_submenu_items_say_haspopup(page: PageTarget) -> None:
    """Menu items that open a submenu say haspopup="menu"; a plain one does not."""
    loaded = await compacted(page, "widgets-states.html")
    assert lines(loaded.compaction, "nav") == [
        '<menuitem id="?">Home</menuitem>'
        ' <menuitem id="?" expanded="false" haspopup="menu">Products</menuitem>'
        ' <menuitem id="?" expanded="false" haspopup="menu">Account</menuitem>'
    ]


async def test_current_page_of_a_pager_is_marked(page: PageTarget) -> None:
    """The pager's current page says current="page"."""
    loaded = await compacted(page, "widgets-states.html")
    assert lines(loaded.compaction, "nav-2") == [
        '<a id="?">1</a> <a id="?" current="page">2</a> <a id="?">3</a> <a id="?">Next</a>'
    ]


def shelf(title: str) -> str:
    """A page without landmarks whose tool block (a search field first) repeats on every page."""
    rows = "".join(f"<p><a href='/c/{n}'>Shelf {n}</a></p>" for n in range(6))
    return (
        f"<!doctype html><html lang='en'><head><title>{title}</title></head><body>"
        "<div class='tools'><p><input placeholder='Search the shelf'></p>"
        f"<p><input aria-label='Copies' value='1'></p>{rows}</div>"
        f"<div><h1>{title}</h1></div></body></html>"
    )


async def test_unchanged_run_starting_with_a_field_names_it(page: PageTarget) -> None:
    """An `<unchanged>` run whose first line is a field names it by its placeholder."""
    memory = SnapshotMemory(page)
    memory.render(await load(page, shelf("Sapiens")))
    second = memory.render(await load(page, shelf("Soumission")))
    markers = parse_xml(second.xml).findall(".//unchanged")
    assert [m.get("first") for m in markers] == ["Search the shelf"]


ICON_ROW = (
    "<!doctype html><html lang='en'><head><title>Mail</title><style>"
    ".act{display:inline-block;width:20px;height:20px;cursor:pointer}"
    ".star{background:url(icons/star.svg)}.trash{background:url(icons/trash.svg)}"
    "</style></head><body><main><h1>Inbox</h1>"
    + "".join(f"<p>Message {n} from the archive of this mailbox.</p>" for n in range(30))
    + "<div id='actions'><span class='act star' onclick=''></span>"
    " <span class='act trash' onclick=''></span></div>"
    "<p id='log'>Nothing done yet</p></main></body></html>"
)


async def test_diff_of_icon_lines_has_no_empty_del_or_ins(page: PageTarget) -> None:
    """Removing a line of icon-only controls gives a `<del>` that names it and lists
    their ids; no diff holds an empty del or ins."""
    memory = SnapshotMemory(page)
    await page.navigate(page_url(ICON_ROW))
    first = await memory.snapshot()
    await page.evaluate(
        "document.getElementById('actions').remove();"
        "document.getElementById('log').textContent = 'Message deleted'"
    )
    diff = await memory.snapshot()
    assert diff.kind == "diff"
    assert "<del></del>" not in diff.xml
    assert "<ins></ins>" not in diff.xml
    tree = parse_xml(diff.xml)
    removed = tree.findall(".//del")
    icons = [c.eid for c in first.compaction.controls.values()]
    # The icon line is named by its first icon; the log line that changed follows it.
    assert [(d.text, d.get("ids")) for d in removed] == [("star Nothing done yet", " ".join(icons))]
    added = tree.findall(".//ins")
    assert [" ".join("".join(a.itertext()).split()) for a in added] == ["Message deleted"]
