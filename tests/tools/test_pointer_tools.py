"""The pointer and file tools: drag, double_click, select_text and upload, on a page
built like real boards, sliders, file lists, editors and upload fields."""

from __future__ import annotations

from pathlib import Path

import pytest

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.xmltree import eid_of
from tests.tools.test_tools import act, open_tab, parse
from trimtab.tools import run_tool, tool_spec

pytestmark = pytest.mark.browser

PAGE = "pointer-tools.html"


def add_card(xml: str, column: int) -> str:
    """The id of the "+ Add a card" button of the board's n-th column (0: To do)."""
    start = 0
    for _ in range(column + 1):
        start = xml.index("+ Add a card", start) + 1
    return eid_of(xml[start - 40 :], "button", "+ Add a card")


async def test_drag_card_onto_another_column(page: PageTarget, pages_server: StaticServer) -> None:
    """A draggable card dragged onto an element of another column is dropped there (HTML
    drag and drop, from trusted mouse input), and the answer shows it moved."""
    tab, xml = await open_tab(page, pages_server.url(PAGE))
    card = eid_of(xml, "a", "Write release notes")
    result = await act(tab, "drag", {"id": card, "to": add_card(xml, 1)})
    assert "Write release notes moved to Done" in result.content
    parse(result.content)
    column = await page.evaluate("document.getElementById('card-1').parentElement.id")
    assert column == "done"


async def test_drag_slider_handle_by_an_offset(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A slider handle that follows the mouse (a slider at its place on the track) is
    dragged by an offset in pixels."""
    tab, xml = await open_tab(page, pages_server.url(PAGE))
    handle = eid_of(xml, "slider", "")
    result = await act(tab, "drag", {"id": handle, "dx": 150})
    assert "Budget: 50 %" in result.content


async def test_drag_refusals(page: PageTarget, pages_server: StaticServer) -> None:
    """Drag refuses an element dropped onto itself, an offset out of the window, and
    arguments that give both or neither of a target and an offset; nothing moves."""
    tab, xml = await open_tab(page, pages_server.url(PAGE))
    card = eid_of(xml, "a", "Write release notes")
    itself = await run_tool(tab, "drag", {"id": card, "to": card})
    assert itself.is_error
    assert "onto itself" in itself.content
    away = await run_tool(tab, "drag", {"id": card, "dx": -5000})
    assert away.is_error
    assert "outside the" in away.content
    both = await run_tool(tab, "drag", {"id": card, "to": card, "dx": 3})
    assert both.is_error
    assert "not both" in both.content
    neither = await run_tool(tab, "drag", {"id": card})
    assert neither.is_error
    assert "bad arguments for drag" in neither.content
    assert await page.evaluate("document.getElementById('board-status').textContent") == ""


async def test_double_click_opens_a_file(page: PageTarget, pages_server: StaticServer) -> None:
    """A double-click reaches a list item's dblclick handler; a single click would not."""
    tab, xml = await open_tab(page, pages_server.url(PAGE))
    item = eid_of(xml, "option", "notes.txt")
    single = await act(tab, "click", {"id": item})
    assert "Opened" not in single.content
    result = await act(tab, "double_click", {"id": item})
    assert "Opened notes.txt" in result.content


async def test_select_text_then_bold(page: PageTarget, pages_server: StaticServer) -> None:
    """One word of an editor is selected (the note says which), and Control+B makes just
    that word bold; text the element does not hold, or too few matches, is refused."""
    tab, xml = await open_tab(page, pages_server.url(PAGE))
    editor = eid_of(xml, "textbox", "Hello world")
    selected = await act(tab, "select_text", {"id": editor, "text": "world"})
    assert "selected 'world'" in selected.content
    await act(tab, "press", {"key": "b", "modifiers": ["Control"]})
    html = await page.evaluate("document.querySelector('.editor').innerHTML")
    assert html == "Hello <b>world</b>, and hello again."
    second = await act(tab, "select_text", {"id": editor, "text": "hello", "occurrence": 1})
    assert "selected 'hello'" in second.content
    assert await page.evaluate("getSelection().toString()") == "hello"
    missing = await run_tool(tab, "select_text", {"id": editor, "text": "goodbye"})
    assert missing.is_error
    assert "does not hold the text 'goodbye'" in missing.content
    assert "Hello world" in missing.content  # it quotes what the element reads
    few = await run_tool(tab, "select_text", {"id": editor, "text": "hello", "occurrence": 3})
    assert few.is_error
    assert "no occurrence 3" in few.content


async def test_upload_through_the_label(
    page: PageTarget, pages_server: StaticServer, tmp_path: Path
) -> None:
    """A file given by path goes into the file field a styled label stands for, and the
    page sees it (name and size), only once the person consented (the spec says so)."""
    assert tool_spec("upload").needs_consent
    notes = tmp_path / "notes.txt"
    notes.write_text("twelve bytes")
    tab, xml = await open_tab(page, pages_server.url(PAGE))
    label = eid_of(xml, "clickable", "Choose files")
    args = {"id": label, "paths": [str(notes)]}
    unasked = await run_tool(tab, "upload", args)
    assert unasked.is_error
    assert "needs the person's consent" in unasked.content
    assert await page.evaluate("document.getElementById('attachment').files.length") == 0
    result = await run_tool(tab, "upload", args, consented=True)
    assert not result.is_error, result.content
    assert "Attached: notes.txt (12 bytes)" in result.content
    assert "now holds notes.txt" in result.content


async def test_upload_refusals(
    page: PageTarget, pages_server: StaticServer, tmp_path: Path
) -> None:
    """Upload refuses a missing file, a relative path, a type the field does not accept,
    and an element that is no file field; the field stays empty."""
    image = tmp_path / "photo.png"
    image.write_bytes(b"\x89PNG")
    tab, xml = await open_tab(page, pages_server.url(PAGE))
    field = eid_of(xml, "input", 'type="file"')
    gone = await run_tool(
        tab, "upload", {"id": field, "paths": [str(tmp_path / "no.pdf")]}, consented=True
    )
    assert gone.is_error
    assert "there is no file at" in gone.content
    relative = await run_tool(tab, "upload", {"id": field, "paths": ["cv.pdf"]}, consented=True)
    assert relative.is_error
    assert "absolute" in relative.content
    wrong = await run_tool(tab, "upload", {"id": field, "paths": [str(image)]}, consented=True)
    assert wrong.is_error
    assert "photo.png is not one of those" in wrong.content
    button = eid_of(xml, "button", "+ Add a card")
    other = await run_tool(tab, "upload", {"id": button, "paths": [str(image)]}, consented=True)
    assert other.is_error
    assert "is not a file field" in other.content
    assert await page.evaluate("document.getElementById('attachment').files.length") == 0
