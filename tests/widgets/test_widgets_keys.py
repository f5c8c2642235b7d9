"""Keys a widget listens to, in a real headless Chromium: a terminal that reads each
key press (its own keydown handler, nothing kept in its field) hears every character
`type` types, and Enter; a field nobody listens to for keys gets the text inserted.
Each answer says which was done; the same through ``trimtab mcp``."""

from __future__ import annotations

import pytest

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.link_host import TAB, open_link_host
from tests.support.outside import call
from tests.support.xmltree import eid_of
from tests.tools.test_tools import act, open_tab, parse

pytestmark = pytest.mark.browser

PAGE = "widgets-keys.html"
SCREEN = "document.getElementById('screen').textContent"


async def test_a_terminal_hears_each_key_and_the_answer_says_so(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """`type` into the terminal's input sends s, t, a, t, u, s and Enter as key presses:
    the terminal runs the command; the answer's note says the text was typed key by key."""
    tab, xml = await open_tab(page, pages_server.url(PAGE))
    result = await act(
        tab, "type", {"id": eid_of(xml, "textarea", ""), "text": "status", "submit": True}
    )
    assert await page.evaluate("window.received") == [*"status", "Enter"]
    assert "$ status\nlink up\n$ " in str(await page.evaluate(SCREEN))
    note = parse(result.content).findtext("note") or ""
    assert "typed key by key" in note


async def test_a_field_nobody_listens_to_gets_the_text_inserted_and_says_so(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A plain field with no key listener on its path gets the text at once; the answer
    says no key events were sent."""
    tab, xml = await open_tab(page, pages_server.url(PAGE))
    result = await act(tab, "type", {"id": eid_of(xml, "input", ""), "text": "call the ISP"})
    assert await page.evaluate("document.getElementById('notes').value") == "call the ISP"
    assert "inserted without key events" in (parse(result.content).findtext("note") or "")


async def test_an_outside_agent_types_into_the_terminal(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Through ``trimtab mcp`` typing "status" reaches the terminal as six key presses."""
    async with (
        open_link_host(page, pages_server.url(PAGE)) as host,
        host.mcp_client() as client,
    ):
        await host.share(TAB)
        xml, is_error, _ = await call(client, "capture_snapshot")
        assert not is_error, xml
        answer, is_error, _ = await call(
            client, "type", id=eid_of(xml, "textarea", ""), text="status"
        )
        assert not is_error, answer
        assert "typed key by key" in answer
    assert await page.evaluate("window.received") == [*"status"]
