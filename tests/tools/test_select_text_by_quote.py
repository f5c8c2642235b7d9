"""`select_text` without an element id (issue 37, point 2): text in a plain paragraph
is found by a quote of it, within a region of the snapshot or the whole page, and
selected with a real drag from its first character to its last, which the page hears;
a quote that is absent, or repeats without an occurrence, is refused. In a real
headless Chromium, through the direct transport and through ``trimtab mcp``."""

from __future__ import annotations

from typing import Any

import pytest

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.link_host import TAB, open_link_host
from tests.support.outside import call
from tests.support.targets import HitTestedAFrameLate
from tests.tools.test_tools import act, open_tab, parse
from trimtab.tab import Tab
from trimtab.tools import run_tool

pytestmark = pytest.mark.browser

PAGE = "select-quote.html"


async def selection(page: PageTarget) -> str:
    """What the page holds selected, spacing folded."""
    text: str = await page.evaluate("String(getSelection())")
    return " ".join(text.split())


async def heard(page: PageTarget) -> list[Any]:
    """The events the page's own listeners recorded."""
    events: list[Any] = await page.evaluate("window.events")
    return events


async def test_the_second_sentence_of_a_plain_paragraph_is_selected_by_quote(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A sentence of a paragraph with no id is selected by quoting it, the page hears
    the press, the selection change and the release, and the note says what the page
    holds selected; the same words in a hidden paragraph do not make it ambiguous."""
    tab, _ = await open_tab(page, pages_server.url(PAGE))
    done = await act(tab, "select_text", {"text": "Herons stood in the shallows."})
    parse(done.content)
    assert "selected 'Herons stood in the shallows.' in the page" in done.content
    assert await selection(page) == "Herons stood in the shallows."
    events = await heard(page)
    assert events.index("mousedown") < events.index("selectionchange") < events.index("mouseup")
    assert "Heard selection: Herons stood in the shallows." in done.content  # the diff


async def test_a_repeated_quote_is_selected_at_the_occurrence_asked_for(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """ "Read on." shows twice in the main region (and in the header and the aside): in
    region main, occurrence 2 selects the second one of its paragraph, not the first."""
    tab, _ = await open_tab(page, pages_server.url(PAGE))
    done = await act(tab, "select_text", {"text": "Read on.", "region": "main", "occurrence": 2})
    assert "selected 'Read on.' in region 'main' (match 2 of 2)" in done.content
    assert await selection(page) == "Read on."
    where = await page.evaluate(
        "(() => { const r = getSelection().getRangeAt(0);"
        " return [r.startContainer.parentElement.id, r.startOffset]; })()"
    )
    second = await page.evaluate("document.getElementById('second').textContent")
    assert where == ["second", second.index("Read on.", 1)]
    aside = await act(tab, "select_text", {"text": "Read on.", "region": "aside"})
    assert "selected 'Read on.' in region 'aside'" in aside.content
    assert await page.evaluate("getSelection().anchorNode.parentElement.closest('aside') !== null")


async def test_a_quote_across_bold_text_and_a_link_is_selected_whole(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A quote that runs through a <b> and into a link is selected exactly, by a drag
    that starts in plain text, without following the link."""
    tab, _ = await open_tab(page, pages_server.url(PAGE))
    quote = "largest flock of the day rested by the old mill"
    done = await act(tab, "select_text", {"text": quote})
    assert f"selected '{quote}' in the page" in done.content
    assert await selection(page) == quote
    whole = "The largest flock of the day rested by the old mill before noon."
    again = await act(tab, "select_text", {"text": whole, "region": "main"})
    assert f"selected '{whole}'" in again.content
    assert await selection(page) == whole
    assert await page.evaluate("location.hash") == ""


async def test_a_quote_below_the_fold_is_scrolled_to_and_selected(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A sentence far below the window is brought into view and selected in the
    region after the aside (``main-2``)."""
    tab, _ = await open_tab(page, pages_server.url(PAGE))
    done = await act(tab, "select_text", {"text": "It ends the notes.", "region": "main-2"})
    assert "selected 'It ends the notes.' in region 'main-2'" in done.content
    assert await selection(page) == "It ends the notes."
    assert await page.evaluate("scrollY") > 0


async def test_an_absent_or_ambiguous_quote_is_refused(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A quote the page does not show is refused naming it; one it shows several times
    is refused with how many and a request for the occurrence; a region that is not
    there is refused naming the regions; nothing is selected or pressed."""
    tab, _ = await open_tab(page, pages_server.url(PAGE))
    absent = await run_tool(tab, "select_text", {"text": "a flamingo <b>"})
    assert absent.is_error
    assert "the page does not show the text 'a flamingo &lt;b&gt;'" in absent.content
    ambiguous = await run_tool(tab, "select_text", {"text": "read on"})
    assert ambiguous.is_error
    assert "shows the text 'read on' 4 times: say which with occurrence (1 to 4)" in (
        ambiguous.content
    )
    few = await run_tool(tab, "select_text", {"text": "Read on.", "occurrence": 5})
    assert few.is_error
    assert "no occurrence 5" in few.content
    nowhere = await run_tool(tab, "select_text", {"text": "Read on.", "region": "footer"})
    assert nowhere.is_error
    assert "no region 'footer'" in nowhere.content
    assert "header, main, aside, main-2" in nowhere.content
    both = await run_tool(tab, "select_text", {"text": "x", "id": "k3x", "region": "main"})
    assert both.is_error
    assert "not both" in both.content
    assert await selection(page) == ""
    assert await heard(page) == []


async def test_an_outside_agent_selects_a_sentence_by_quote(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Through ``trimtab mcp`` a quote with no id selects the sentence, and the page's
    own listener shows what it heard selected."""
    async with (
        open_link_host(page, pages_server.url(PAGE)) as host,
        host.mcp_client() as client,
    ):
        await host.share(TAB)
        xml, is_error, _ = await call(client, "capture_snapshot")
        assert not is_error, xml
        text, is_error, _ = await call(
            client, "select_text", text="The count will be repeated in May."
        )
        assert not is_error, text
        assert "selected 'The count will be repeated in May.' in the page" in text
    assert await selection(page) == "The count will be repeated in May."
    assert await page.evaluate("document.getElementById('heard').textContent") == (
        "Heard selection: The count will be repeated in May."
    )


async def test_a_selection_the_page_shortened_is_mended_with_the_keyboard(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """When the page drops the last character of what the drag selected, Shift+Right
    extends the selection back to the quote, and the note says so; when the page takes
    the selection away, the note says plainly that it is not what was asked."""
    tab, _ = await open_tab(page, pages_server.url(PAGE))
    quote = "the stop at the end goes."
    mended = await act(tab, "select_text", {"text": quote})
    assert f"selected '{quote}' in the page" in mended.content
    assert "Shift+arrow keys mended it" in mended.content
    assert await selection(page) == quote
    cleared = await act(tab, "select_text", {"text": "nothing stays selected"})
    assert "NOT selected as asked: the page holds '' selected" in cleared.content
    assert "not 'nothing stays selected'" in cleared.content


async def test_text_that_leaves_the_pointer_at_every_frame_is_never_pressed_outside_it(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """When hovering the paragraph moves it away from under the pointer, and the bare
    page under the pointer then lets it come back, frame after frame, the selection's
    press never lands outside the paragraph: it is refused with nothing pressed, or
    pressed in the paragraph once the page holds still, on a link whose hit tests and
    presses reach the page a frame late (where a single hit test meets either phase)."""
    tab = Tab.open(HitTestedAFrameLate(page))
    for _ in range(3):
        opened = await run_tool(tab, "navigate", {"url": pages_server.url(PAGE)})
        assert not opened.is_error, opened.content
        await page.evaluate(
            """(() => {
              const style = document.createElement('style');
              style.textContent = '#first:hover { margin-top: 120px; }';
              document.head.append(style);
              window.pressedOn = [];
              document.addEventListener(
                'mousedown', (event) => window.pressedOn.push(event.target.id), true);
            })()"""
        )
        result = await run_tool(
            tab, "select_text", {"text": "Herons stood in the shallows."}, consented=True
        )
        pressed = await page.evaluate("window.pressedOn")
        if result.is_error:
            assert "nothing was pressed" in result.content, result.content
            assert pressed == []
        else:
            assert pressed == ["first"], (pressed, result.content)
