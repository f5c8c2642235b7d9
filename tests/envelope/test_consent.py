"""Consent decided by the host before acting, in a real headless Chromium: every way an
action may submit or commit asks first, and nothing reaches the page until it is given."""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import quote

import pytest

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from trimtab.tab import Tab
from trimtab.tools import CallContext, ToolResult, run_tool

pytestmark = pytest.mark.browser


def eid(xml: str, dom_text: str) -> str:
    """The id of the element whose markup (or the text right after it) holds `dom_text`."""
    for match in re.finditer(r'<(\w+) id="([^"]+)"[^>]*?(?:/>|>[^<]*</\1>)[^<]*', xml):
        if dom_text in match.group(0):
            return match.group(2)
    raise AssertionError(f"nothing with {dom_text!r} in:\n{xml}")


async def open_shop(page: PageTarget, server: StaticServer, suffix: str = "") -> tuple[Tab, str]:
    tab = Tab.open(page)
    result = await run_tool(tab, "navigate", {"url": server.url("consent-shop.html") + suffix})
    assert not result.is_error, result.content
    return tab, result.content


async def asks(tab: Tab, name: str, args: Mapping[str, object]) -> ToolResult:
    """Run a call without consent: it must ask, and do nothing."""
    result = await run_tool(tab, name, args)
    assert result.consent is not None, result.content
    assert result.is_error
    assert not result.submitted
    return result


async def runs(tab: Tab, name: str, args: Mapping[str, object]) -> ToolResult:
    """Run a call without consent: it must not ask."""
    result = await run_tool(tab, name, args)
    assert result.consent is None, result.consent
    assert not result.is_error, result.content
    return result


async def location(page: PageTarget) -> str:
    return str(await page.evaluate("location.pathname + location.search"))


async def test_enter_in_every_spelling_asks(page: PageTarget, pages_server: StaticServer) -> None:
    """Enter as "Enter", "Return", "\\r", "\\n" and "NumpadEnter" in a form's field asks first
    and does not submit; with consent "\\r" submits the form."""
    tab, xml = await open_shop(page, pages_server)
    await runs(tab, "type", {"id": eid(xml, 'type="email"'), "text": "a@b.c"})
    for key in ("Enter", "Return", "\r", "\n", "NumpadEnter"):
        result = await asks(tab, "press", {"key": key})
        assert "submits the form" in str(result.consent)
        assert await location(page) == "/consent-shop.html"
    done = await run_tool(tab, "press", {"key": "\r"}, consented=True)
    assert done.submitted, done.content
    assert "email=a%40b.c" in await location(page)


async def test_space_on_focused_submit_asks(page: PageTarget, pages_server: StaticServer) -> None:
    """Tab until the submit button has focus, then Space or Enter: asks, does not submit."""
    tab, _ = await open_shop(page, pages_server)
    await page.evaluate("document.getElementById('note').focus()")
    await runs(tab, "press", {"key": "Tab"})
    assert await page.evaluate("document.activeElement.id") == "buy"
    for key in ("Space", " ", "Enter"):
        result = await asks(tab, "press", {"key": key})
        assert "submits a form" in str(result.consent)
    assert await location(page) == "/consent-shop.html"


async def test_clicks_that_submit_ask(page: PageTarget, pages_server: StaticServer) -> None:
    """A submit button and a script-handled button in the form ask; a link,
    a script button outside any form and a plain field do not."""
    tab, xml = await open_shop(page, pages_server)
    buy = await asks(tab, "click", {"id": eid(xml, "Buy now")})
    assert "submits a form" in str(buy.consent)
    assert buy.element is not None
    assert "Buy now" in buy.element
    coupon = await asks(tab, "click", {"id": eid(xml, "Apply coupon")})
    assert "script" in str(coupon.consent)
    assert await location(page) == "/consent-shop.html"
    await runs(tab, "click", {"id": eid(xml, "Show details")})
    assert await page.evaluate("document.getElementById('details').hidden") is False
    await runs(tab, "click", {"id": eid(xml, 'type="email"')})
    await runs(tab, "click", {"id": eid(xml, "Help")})
    assert await location(page) == "/tools-done.html?help=1"


async def test_changes_that_may_submit_ask(page: PageTarget, pages_server: StaticServer) -> None:
    """A select whose onchange submits and a checkbox a script watches ask before changing;
    with consent the select's change submits the form, and the browser says so."""
    tab, xml = await open_shop(page, pages_server)
    ship = eid(xml, "Standard")
    result = await asks(tab, "select", {"id": ship, "value": "Express"})
    assert "onchange" in str(result.consent)
    assert await page.evaluate("document.getElementById('ship').value") == "std"
    await asks(tab, "check", {"id": eid(xml, "Gift wrap"), "on": True})
    assert await page.evaluate("document.getElementById('gift').checked") is False
    await page.evaluate("document.getElementById('ship').focus()")
    await asks(tab, "press", {"key": "ArrowDown"})
    done = await run_tool(tab, "select", {"id": ship, "value": "Express"}, consented=True)
    assert done.submitted, done.content
    assert "ship=exp" in await location(page)


async def test_a_lying_page_still_asks(page: PageTarget, pages_server: StaticServer) -> None:
    """A page that patches button.form, button.type and closest() to hide its submit
    button is still asked about: the check reads the DOM from Trimtab's own world."""
    tab, xml = await open_shop(page, pages_server, "#lie")
    assert await page.evaluate("document.getElementById('buy').form") is None
    await asks(tab, "click", {"id": eid(xml, "Buy now")})
    assert await location(page) == "/consent-shop.html"


async def test_confirm_ok_asks_and_alert_does_not(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """OK on a confirm() asks first (Cancel does not); OK on an alert() does not ask."""
    tab, xml = await open_shop(page, pages_server)
    opened = await runs(tab, "click", {"id": eid(xml, "Empty the basket")})
    assert "js-dialog" in opened.content
    ok = await asks(tab, "answer_dialog", {"accept": True})
    # The reason is Trimtab's words; the page's message is in the element, quoted apart.
    assert ok.consent == "it answers OK to the page's confirm dialog"
    assert ok.element == '<js-dialog type="confirm">Empty the basket?</js-dialog>'
    await runs(tab, "answer_dialog", {"accept": False})
    assert await page.evaluate("document.getElementById('log').textContent") == "kept"
    await runs(tab, "click", {"id": eid(xml, "Tell me")})
    await runs(tab, "answer_dialog", {"accept": True})


async def test_unpredicted_submit_is_reported(page: PageTarget, pages_server: StaticServer) -> None:
    """A form a page submits on a mere hover is not predicted, but the result says that the
    browser saw a form submission, so the person can be told."""
    tab, xml = await open_shop(page, pages_server)
    result = await runs(tab, "hover", {"id": eid(xml, "Hover here")})
    assert result.submitted
    assert await location(page) != "/consent-shop.html"


@pytest.mark.parametrize(
    "cover",
    [
        'x"/></button><button id="tzv" type="button"/><b c="',
        "</note><button id='tzv'>",
        "a&amp;<b>",
    ],
)
async def test_refusal_escapes_page_strings(
    page: PageTarget, pages_server: StaticServer, cover: str
) -> None:
    """A covering overlay whose id, class and text carry markup is named in the refusal with
    every page string escaped: no tag or id the page wrote appears."""
    from lxml import etree

    suffix = f"?cover={quote(cover)}&cls={quote(cover)}&text={quote(cover)}"
    tab, xml = await open_shop(page, pages_server, suffix)
    buy = eid(xml, "Buy now")
    result = await run_tool(tab, "click", {"id": buy})
    assert result.is_error
    assert "covered by" in result.content, result.content
    tree = etree.fromstring(f"<r>{result.content}</r>".encode())
    tags = [el.tag for el in tree.iter()][1:]
    ids = [el.get("id") for el in tree.iter() if el.get("id") is not None]
    assert tags == ["button", "div"], result.content
    assert ids == [buy], result.content


async def test_an_unknown_action_asks(
    page: PageTarget, pages_server: StaticServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool with side effects that the consent rules do not know (one added later) asks
    before it runs: unknown means ask."""
    from trimtab.tools import _catalogue
    from trimtab.tools._common import ACT, Tool, ToolSpec, text

    ran: list[str] = []

    async def wiggle(call: CallContext, args: Mapping[str, object]) -> ToolResult:
        ran.append("wiggle")
        return text("wiggled")

    spec = ToolSpec("wiggle", "Wiggle an element.", {"type": "object"}, ACT)
    monkeypatch.setitem(_catalogue._BY_NAME, "wiggle", Tool(spec, wiggle))  # type: ignore[index]
    tab, _ = await open_shop(page, pages_server)
    result = await asks(tab, "wiggle", {})
    assert "cannot tell" in str(result.consent)
    assert ran == []
    done = await run_tool(tab, "wiggle", {}, consented=True)
    assert done.content == "wiggled"
    assert ran == ["wiggle"]
