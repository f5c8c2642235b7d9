"""No exception leaves a tool: browser and page errors become results with a plain
message, and `type` says when the field does not hold what was typed."""

from __future__ import annotations

import re

import pytest
import trio

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.frozen import frozen_site
from tests.support.xmltree import eid_of
from tests.tools.test_tools import act, open_tab, parse
from trimtab.driver import _button, _context
from trimtab.tools import _catalogue, run_tool

pytestmark = pytest.mark.browser


def field_after(xml: str, label: str) -> str:
    """The id of the first field right after the text `label` (a label before its field)."""
    match = re.search(re.escape(label) + r' <(?:input|textarea) id="([^"]+)"', xml)
    assert match, f"no field after {label!r} in:\n{xml}"
    return match.group(1)


async def test_type_into_field_that_hands_focus_to_a_popup(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A field whose focus handler disables it and focuses a pop-up's field gets nothing
    typed, and the answer is an error result showing the pop-up, not an exception."""
    tab, xml = await open_tab(page, pages_server.url("tool-errors-focus.html"))
    launcher = eid_of(xml, "input", "Search products")
    result = await run_tool(tab, "type", {"id": launcher, "text": "running shoes"})
    assert result.is_error
    assert "nothing was typed" in result.content
    assert "What are you looking for?" in result.content  # where the focus went
    parse(result.content)
    values = await page.evaluate(
        "[...document.querySelectorAll('input[type=search]')].map(i => i.value).join('|')"
    )
    assert values == "|"


async def test_type_says_when_the_field_holds_something_else(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A field that cuts (maxlength) or reformats (a phone mask) what is typed is
    reported with what it holds; a field that keeps the text is only told how the text
    went in."""
    tab, xml = await open_tab(page, pages_server.url("tool-errors-focus.html"))
    zip_code = field_after(xml, "ZIP code")
    cut = await act(tab, "type", {"id": zip_code, "text": "941031"})
    assert "holds '94103', not '941031'" in cut.content
    phone = eid_of(xml, "input", 'type="tel"')
    masked = await act(tab, "type", {"id": phone, "text": "5551234567"})
    assert "holds '(555) 123-4567'" in masked.content
    name = field_after(xml, "Name")
    plain = await act(tab, "type", {"id": name, "text": "Ada"})
    assert "<note>inserted without key events (nothing here listens for keys)</note>" in (
        plain.content
    )


async def test_page_error_is_a_result(page: PageTarget, pages_server: StaticServer) -> None:
    """An error the page throws while a tool acts (a field whose select() throws) comes
    back as an error result that quotes it, not as an exception out of run_tool."""
    tab, xml = await open_tab(page, pages_server.url("tool-errors-focus.html"))
    iban = field_after(xml, "Confirm IBAN")
    result = await run_tool(tab, "type", {"id": iban, "text": "DE89 3704"})
    assert result.is_error
    assert result.content.startswith("type stopped:"), result.content
    assert "do not paste it" in result.content


async def test_a_tool_stopped_at_its_time_limit_says_what_it_may_have_done(
    page: PageTarget, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A click whose handler keeps the page busy past the tools' time limit is answered
    while the page is still frozen, saying that the page stopped answering and that the
    click may have acted; a snapshot then says so too, and that nothing was done; once
    the page answers again, a snapshot works."""
    monkeypatch.setattr(_catalogue, "ACTION_TIMEOUT", 3.0)
    stopped = (
        "did not finish within 3 s: the page stopped answering (a script on it may be "
        "stuck, or the page is too big to read on a busy machine); "
    )
    async with frozen_site() as site:
        tab, xml = await open_tab(page, site.url)
        freeze = eid_of(xml, "button", "Freeze the page")
        clicked = await run_tool(tab, "click", {"id": freeze}, consented=True)
        assert clicked.is_error
        assert clicked.content == (
            f"click {stopped}it may have acted before it stopped: take a snapshot before "
            "trying again"
        ), clicked.content
        # Told while the click's handler still runs: it asks again whether to go on.
        asked = len(site.server.requests)
        with trio.fail_after(10):
            while len(site.server.requests) == asked:
                await trio.sleep(0.05)
        read = await run_tool(tab, "capture_snapshot", {})
        assert read.is_error
        assert read.content == (
            f"capture_snapshot {stopped}nothing was done; take a snapshot later, or reload the page"
        ), read.content
        site.release()
        after = await run_tool(tab, "capture_snapshot", {})
        assert not after.is_error, after.content
        assert 'title="Frozen page"' in after.content, after.content


def test_a_call_stopped_at_the_limit_is_answered_within_a_minute() -> None:
    """The tools' time limit and the bounded waits on a call's way out (the held
    button's release, the release of its objects) end well within the 60 s that a
    client on the MCP TypeScript SDK waits by default, so its model reads the answer."""
    way_out = _button._RELEASE_TIMEOUT + _context._RELEASE_WAIT
    assert _catalogue.ACTION_TIMEOUT + way_out <= 60 - 5
