"""Pop-ups the browser's own pop-up blocker keeps, told in the action's answer: a page
may open a window only right after a click in it, so a second window from one click,
or one a page asks for on load, never opens; the model must hear that it was blocked
rather than wait for a tab. Through the host's ``tool`` request and through
`trimtab mcp`, on a real headless Chromium whose pop-up blocker is on (the browser's
own fact, ``Page.windowOpen`` without a user gesture, with no tab opened for it)."""

from __future__ import annotations

import re

import pytest
import trio

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.handlers_host import TAB, open_host
from tests.support.link_host import open_link_host
from tests.support.xmltree import control_id

pytestmark = pytest.mark.browser

BLOCKED = re.compile(r"it tried to open a pop-up on (\S+): the browser's pop-up blocker blocked it")


def orders(pages: StaticServer, query: str = "") -> str:
    return f"http://shop.test:{pages.port}/tabs-receipts.html{query}"


async def test_a_click_that_opens_two_windows_gets_one_and_hears_of_the_other(
    page: PageTarget, pages_server: StaticServer, nursery: trio.Nursery
) -> None:
    """One click asks for two receipts: the first opens (the click allows one window)
    and is told as opened; the second is named as blocked by the browser, once."""
    async with open_host(page, orders(pages_server), nursery) as host:
        first = await host.tool("capture_snapshot")
        answer = await host.tool(
            "click", id=control_id(first["content"], "button", "Open both receipts")
        )
        content = str(answer["content"])
        assert not answer["is_error"], content
        assert [m.group(1) for m in BLOCKED.finditer(content)] == [
            f"http://shop.test:{pages_server.port}/tabs-idp.html?page=receipt-2"
        ], content
        assert "tabs-idp.html?page=receipt-1" in content, content
        assert await host.evaluate("document.getElementById('status').textContent") == (
            "1 of 2 receipts opened."
        )


async def test_a_window_that_opens_is_not_called_blocked(
    page: PageTarget, pages_server: StaticServer, nursery: trio.Nursery
) -> None:
    """A click that opens one window says so and names no blocked pop-up."""
    async with open_host(page, orders(pages_server), nursery) as host:
        first = await host.tool("capture_snapshot")
        one = control_id(first["content"], "button", "Open the first receipt")
        answer = await host.tool("click", id=one)
        assert "pop-up blocker" not in str(answer["content"]), answer["content"]
        assert "receipt-1" in str(answer["content"])


async def test_a_page_that_asks_for_a_pop_up_on_load_is_told_through_mcp(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Through `trimtab mcp`: navigating to a page that asks for a window as it loads
    answers with the page and the pop-up the browser blocked; no tab was opened."""
    async with open_link_host(page, orders(pages_server)) as linked:
        await linked.share(TAB)
        async with linked.mcp_client() as client:
            await client.call_tool("capture_snapshot", {})
            went = await client.call_tool("navigate", {"url": orders(pages_server, "?offer=1")})
            text = went.content[0].text
            assert not went.is_error, text
            assert [m.group(1) for m in BLOCKED.finditer(text)] == [
                f"http://shop.test:{pages_server.port}/tabs-idp.html?page=offer"
            ], text
            listed = await client.call_tool("tabs", {})
            assert listed.content[0].text.count("<tab ") == 1, listed.content[0].text
