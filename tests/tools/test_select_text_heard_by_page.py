"""`select_text` selects as a person does, so that the page hears it (issue 25, point 3):
on a Quill-shaped editor that learns its selection only from mouse and keyboard
events, in a real headless Chromium."""

from __future__ import annotations

import pytest

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.xmltree import eid_of
from tests.tools.test_tools import act, open_tab, parse

pytestmark = pytest.mark.browser

PAGE = "press-editor.html"


async def test_the_editor_formats_the_words_select_text_selected(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """The words are selected with a press, a drag and a release: the editor's own
    model learns the selection, the note quotes what the page holds selected, and
    Bold makes exactly those words bold."""
    tab, xml = await open_tab(page, pages_server.url(PAGE))
    editor = eid_of(xml, "textbox", "quick brown")
    selected = await act(tab, "select_text", {"id": editor, "text": "brown fox"})
    parse(selected.content)
    assert "selected 'brown fox'" in selected.content
    assert "Selected 9 characters at 10" in selected.content
    await act(tab, "click", {"id": eid_of(xml, "button", "Bold")})
    html = await page.evaluate("document.querySelector('.ql-editor').innerHTML")
    assert html == "The quick <strong>brown fox</strong> jumps over the lazy dog."


async def test_words_at_the_end_of_the_text_are_italicised(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Words that end the editor's text, up to its last character, are the ones the
    editor's model holds and Italic formats."""
    tab, xml = await open_tab(page, pages_server.url(PAGE))
    editor = eid_of(xml, "textbox", "quick brown")
    selected = await act(tab, "select_text", {"id": editor, "text": "lazy dog"})
    assert "selected 'lazy dog'" in selected.content
    await act(tab, "click", {"id": eid_of(xml, "button", "Italic")})
    html = await page.evaluate("document.querySelector('.ql-editor').innerHTML")
    assert html == "The quick brown fox jumps over the <em>lazy dog</em>."
