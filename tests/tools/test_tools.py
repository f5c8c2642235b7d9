"""The agent tools in a real headless Chromium: acting like a person, refusing misaimed actions."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import pytest
import trio
from lxml import etree

from pycdp_bridge import Browser, PageTarget, protocol
from tests.support import StaticServer, serve_static
from tests.support.targets import RecordingTarget
from tests.support.xmltree import eid_of, listed_lines
from trimtab.tab import Tab
from trimtab.tools import TOOLS, ToolResult, run_tool, tool_spec

pytestmark = pytest.mark.browser


def parse(xml: str) -> etree._Element:
    """Parse a tool's XML with a real parser (it must be well-formed)."""
    return etree.fromstring(xml.encode())


async def open_tab(page: PageTarget, url: str) -> tuple[Tab, str]:
    """Load `url` in the page through the navigate tool; the session and the baseline XML."""
    tab = Tab.open(page)
    result = await run_tool(tab, "navigate", {"url": url})
    assert not result.is_error, result.content
    assert result.kind == "baseline"
    return tab, result.content


async def act(tab: Tab, name: str, args: Mapping[str, object]) -> ToolResult:
    """Run a tool that must succeed (with the person's consent, should it need it)."""
    result = await run_tool(tab, name, args, consented=True)
    assert not result.is_error, result.content
    return result


async def needs_consent(tab: Tab, name: str, args: Mapping[str, object]) -> bool:
    """Whether the call asks for consent (when it does, nothing was done)."""
    result = await run_tool(tab, name, args)
    return result.consent is not None


# --- the catalogue --------------------------------------------------------------------------


def test_catalogue_specs_are_complete() -> None:
    """Every tool has a description, an object schema and a policy that fits what it does."""
    names = {spec.name for spec in TOOLS}
    assert names >= {
        "navigate", "back", "forward", "reload", "capture_snapshot", "click", "type",
        "press", "select", "check", "hover", "scroll", "find", "expand", "read", "wait_for",
    }  # fmt: skip
    for spec in TOOLS:
        assert spec.description
        assert spec.input_schema["type"] == "object"
    assert tool_spec("click").policy.side_effects
    assert tool_spec("navigate").policy.side_effects
    assert tool_spec("capture_snapshot").policy.reads_page
    assert not tool_spec("capture_snapshot").policy.side_effects
    find_key = tool_spec("find").policy.key
    assert find_key is not None
    assert find_key({"text": "  Add to BAG "}) == find_key({"text": "add to bag"})
    with pytest.raises(KeyError, match="unknown tool 'teleport'"):
        tool_spec("teleport")


# --- forms ---------------------------------------------------------------------------------


async def test_type_shows_new_value_in_diff(page: PageTarget, pages_server: StaticServer) -> None:
    """Typing replaces a field's value with trusted input, and the diff shows it."""
    tab, xml = await open_tab(page, pages_server.url("tools-form.html"))
    name = eid_of(xml, "input", "placeholder name")
    result = await act(tab, "type", {"id": name, "text": "Ada Lovelace"})
    assert result.kind in ("diff", "baseline")  # the memory sends the cheaper one
    assert "Ada Lovelace" in result.content
    assert "Typed: Ada Lovelace" in result.content  # the page saw input events
    assert "placeholder name" not in await page.evaluate("document.body.innerText")
    assert await page.evaluate("document.getElementById('name').value") == "Ada Lovelace"
    appended = await act(tab, "type", {"id": name, "text": "!", "clear": False})
    assert "Ada Lovelace!" in appended.content
    parse(result.content)


async def test_form_filled_and_submitted(page: PageTarget, pages_server: StaticServer) -> None:
    """A form filled field by field and submitted with its button lands on the next page."""
    tab, xml = await open_tab(page, pages_server.url("tools-form.html"))
    await act(tab, "type", {"id": eid_of(xml, "input", "placeholder name"), "text": "Ada"})
    email = eid_of(xml, "input", 'type="email"')
    await act(tab, "type", {"id": email, "text": "ada@example.org"})
    note = eid_of(xml, "textarea", "")
    await act(tab, "type", {"id": note, "text": "hello"})
    submit = eid_of(xml, "button", "Create account")
    assert await needs_consent(tab, "click", {"id": submit})
    result = await act(tab, "click", {"id": submit})
    assert result.submits
    assert result.kind == "baseline"
    assert "Account created" in result.content
    assert "name=Ada, email=ada@example.org" in result.content
    parse(result.content)


async def test_type_submit_presses_enter(page: PageTarget, pages_server: StaticServer) -> None:
    """type(submit=true) presses Enter in the field, which submits its form."""
    tab, xml = await open_tab(page, pages_server.url("tools-form.html"))
    name = eid_of(xml, "input", "placeholder name")
    assert await needs_consent(tab, "type", {"id": name, "text": "x", "submit": True})
    result = await act(tab, "type", {"id": name, "text": "Grace", "submit": True})
    assert result.submits
    assert result.kind == "baseline"
    assert "name=Grace" in result.content


async def test_press_enter_submits(page: PageTarget, pages_server: StaticServer) -> None:
    """Enter pressed in a focused form field submits the form, and says so."""
    tab, xml = await open_tab(page, pages_server.url("tools-form.html"))
    email = eid_of(xml, "input", 'type="email"')
    await act(tab, "type", {"id": email, "text": "g@example.org"})
    assert await needs_consent(tab, "press", {"key": "Enter"})
    result = await act(tab, "press", {"key": "Enter"})
    assert result.submits
    assert "email=g@example.org" in result.content


async def test_press_tab_moves_focus(page: PageTarget, pages_server: StaticServer) -> None:
    """Tab moves the focus to the next field, where typed characters then land."""
    tab, xml = await open_tab(page, pages_server.url("tools-form.html"))
    await act(tab, "type", {"id": eid_of(xml, "input", "placeholder name"), "text": "A"})
    result = await act(tab, "press", {"key": "Tab"})
    assert not result.submits
    assert await page.evaluate("document.activeElement.id") == "email"
    await act(tab, "press", {"key": "z"})
    await act(tab, "press", {"key": "z", "modifiers": ["Shift"]})
    assert await page.evaluate("document.getElementById('email').value") == "zZ"
    bad = await run_tool(tab, "press", {"key": "Hyper"})
    assert bad.is_error
    assert "unknown key 'Hyper'" in bad.content


async def test_select_by_label_and_value(page: PageTarget, pages_server: StaticServer) -> None:
    """select picks an option by its text or value and fires the page's change handler."""
    tab, xml = await open_tab(page, pages_server.url("tools-form.html"))
    country = eid_of(xml, "select", "United States")
    result = await act(tab, "select", {"id": country, "value": "Canada"})
    assert "Chosen: ca" in result.content
    result = await act(tab, "select", {"id": country, "value": "fr"})
    assert "Chosen: fr" in result.content
    # a script watches its changes: it asks first
    missing = await run_tool(tab, "select", {"id": country, "value": "Narnia"}, consented=True)
    assert missing.is_error
    assert "no option 'Narnia'" in missing.content
    assert (
        "<option>United States</option> <option>Canada</option> <option>France</option>"
        in missing.content
    )


async def test_check_on_and_off(page: PageTarget, pages_server: StaticServer) -> None:
    """check clicks a checkbox only when its state differs, and radios are never unchecked."""
    tab, xml = await open_tab(page, pages_server.url("tools-widgets.html"))
    terms = eid_of(xml, "input", "I accept the terms")
    result = await act(tab, "check", {"id": terms, "on": True})
    assert 'checked="true"' in result.content
    assert await page.evaluate("document.getElementById('terms').checked") is True
    again = await act(tab, "check", {"id": terms, "on": True})
    assert again.kind == "text"
    assert "already checked" in again.content
    await act(tab, "check", {"id": terms, "on": False})
    assert await page.evaluate("document.getElementById('terms').checked") is False
    small = eid_of(xml, "input", "Small")
    refused = await run_tool(tab, "check", {"id": small, "on": False})
    assert refused.is_error
    assert "radio button" in refused.content
    large = eid_of(xml, "input", "Large")
    await act(tab, "check", {"id": large, "on": True})
    assert await page.evaluate("document.querySelector('[value=l]').checked") is True


async def test_readonly_and_non_field_refused(page: PageTarget, pages_server: StaticServer) -> None:
    """type refuses read-only fields and elements that are not text fields."""
    tab, xml = await open_tab(page, pages_server.url("tools-form.html"))
    code = eid_of(xml, "input", "X-1")
    refused = await run_tool(tab, "type", {"id": code, "text": "hack"})
    assert refused.is_error
    assert "read-only" in refused.content
    button = eid_of(xml, "button", "Create account")
    refused = await run_tool(tab, "type", {"id": button, "text": "hi"})
    assert refused.is_error
    assert "not a text field" in refused.content
    assert await page.evaluate("document.getElementById('code').value") == "X-1"


# --- clicks, links, hover -------------------------------------------------------------------------


async def test_link_followed_gives_baseline(page: PageTarget, pages_server: StaticServer) -> None:
    """A link click answers with the next page's baseline; back and forward collapse to it."""
    tab, xml = await open_tab(page, pages_server.url("tools-widgets.html"))
    link = eid_of(xml, "a", "Continue to the next page")
    result = await act(tab, "click", {"id": link})
    assert result.kind == "baseline"
    assert not result.submits
    assert "Received from=link" in result.content
    back = await act(tab, "back", {})
    assert back.kind == "baseline"
    # The page as it was when the agent left it: its regions collapse, their ids work.
    assert 'name="main" unchanged="true"' in back.content
    assert tab.latest is not None
    assert link in tab.latest.controls
    assert "Continue to the next page" in tab.expand("main")
    forward = await act(tab, "forward", {})
    assert 'name="main" unchanged="true"' in forward.content
    assert "Received from=link" in tab.expand("main")
    reloaded = await act(tab, "reload", {})
    assert reloaded.kind == "baseline"
    assert parse(reloaded.content).get("url") == pages_server.url("tools-done.html?from=link")
    nowhere = await run_tool(tab, "forward", {})
    assert nowhere.is_error
    assert "no next page" in nowhere.content


async def test_click_counts_once(page: PageTarget, pages_server: StaticServer) -> None:
    """One click tool call is one trusted click, and its effect is in the diff."""
    tab, xml = await open_tab(page, pages_server.url("tools-widgets.html"))
    button = eid_of(xml, "button", "Clicked 0 times")
    result = await act(tab, "click", {"id": button})
    assert result.kind == "diff"
    assert "Clicked 1 times" in result.content
    assert await page.evaluate("window.clicks") == 1
    parse(result.content)


async def test_hover_opens_menus(page: PageTarget, pages_server: StaticServer) -> None:
    """Hovering opens a CSS :hover menu and a mouseenter menu, whose links appear in the diff."""
    tab, xml = await open_tab(page, pages_server.url("tools-widgets.html"))
    assert "Laptops" not in xml
    result = await act(tab, "hover", {"id": eid_of(xml, "a", "Products")})
    assert "Laptops" in result.content
    result = await act(tab, "hover", {"id": eid_of(xml, "button", "Account")})
    assert "Sign out" in result.content
    laptops = eid_of(result.content, "a", "Sign out")
    followed = await act(tab, "click", {"id": laptops})
    assert "Received from=account" in followed.content


async def test_covered_button_refused(page: PageTarget, pages_server: StaticServer) -> None:
    """A button under a banner is not clicked, and the error names the banner."""
    tab, _ = await open_tab(page, pages_server.url("tools-widgets.html"))
    # The pipeline hides what is covered, so the id comes from the page uncovered.
    await page.evaluate("document.getElementById('banner').style.display = 'none'")
    xml = (await act(tab, "capture_snapshot", {})).content
    buried = eid_of(xml, "button", "Buy now")
    await page.evaluate("document.getElementById('banner').style.display = ''")
    result = await run_tool(tab, "click", {"id": buried})
    assert result.is_error
    assert "covered" in result.content
    assert 'id="banner"' in result.content
    assert "We use cookies" in result.content
    assert await page.evaluate("document.title") == "Widgets"


async def test_disabled_button_refused(page: PageTarget, pages_server: StaticServer) -> None:
    """A disabled button is refused as disabled and never clicked."""
    tab, xml = await open_tab(page, pages_server.url("tools-widgets.html"))
    pay = eid_of(xml, "button", "Pay")
    result = await run_tool(tab, "click", {"id": pay})
    assert result.is_error
    assert "disabled" in result.content
    assert await page.evaluate("document.title") == "Widgets"


async def test_stale_id_refused(page: PageTarget, pages_server: StaticServer) -> None:
    """An id whose element left the page, or that no element has, is refused as stale."""
    tab, xml = await open_tab(page, pages_server.url("tools-widgets.html"))
    vanish = eid_of(xml, "button", "Remove me")
    await act(tab, "click", {"id": vanish})
    result = await run_tool(tab, "click", {"id": vanish})
    assert result.is_error
    assert result.content.startswith(f"stale id {vanish}"), result.content
    unknown = await run_tool(tab, "click", {"id": "zz9"})
    assert unknown.is_error
    assert unknown.content.startswith("stale id zz9")


async def test_id_survives_rerender(page: PageTarget, pages_server: StaticServer) -> None:
    """An element re-created by the page keeps its id, and the tools act on the new node."""
    tab, xml = await open_tab(page, pages_server.url("tools-widgets.html"))
    button = eid_of(xml, "button", "Clicked 0 times")
    await page.evaluate(
        "(() => { const b = document.getElementById('count');"
        " b.replaceWith(b.cloneNode(true)); })()"
    )
    await page.evaluate(
        "document.getElementById('count').onclick = function () {"
        " this.textContent = 'Clicked ' + (++window.clicks) + ' times'; }"
    )
    result = await act(tab, "click", {"id": button})
    assert "Clicked 1 times" in result.content


async def test_closed_tab_is_a_clear_error(page: PageTarget, pages_server: StaticServer) -> None:
    """A tab that closed gives an error result naming it, not an exception."""
    tab, xml = await open_tab(page, pages_server.url("tools-widgets.html"))
    button = eid_of(xml, "button", "Clicked 0 times")
    await page.close()
    with trio.fail_after(10):
        while not page.closed:
            await trio.sleep(0.05)
    result = await run_tool(tab, "click", {"id": button})
    assert result.is_error
    assert "tab closed" in result.content


async def test_a_confirm_dialog_is_the_actions_result_and_is_answered(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A click that opens confirm() returns the dialog (its message escaped), other tools
    answer with it and do nothing, and answer_dialog(false) returns what changed."""
    tab, xml = await open_tab(page, pages_server.url("tools-dialogs.html"))
    clicked = await act(tab, "click", {"id": eid_of(xml, "button", "Empty basket")})
    assert clicked.kind == "text"
    [dialog] = parse(f"<r>{clicked.content}</r>").iter("js-dialog")
    assert dialog.get("type") == "confirm"
    assert dialog.get("message") == 'Empty the basket? "Both" <tents> go.'
    assert "answer_dialog(accept=true)" in clicked.content
    blocked = await run_tool(tab, "find", {"text": "basket"})
    assert blocked.is_error
    assert "<js-dialog" in blocked.content
    answered = await act(tab, "answer_dialog", {"accept": False})
    assert answered.kind == "diff"
    assert "Kept the basket." in answered.content
    again = await run_tool(tab, "answer_dialog", {"accept": True})
    assert again.is_error
    assert "no JavaScript dialog" in again.content


async def test_a_prompt_takes_text_and_an_alert_is_acknowledged(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A prompt shows its default answer and takes the text given; an alert is answered
    with OK; text is refused for anything but a prompt."""
    tab, xml = await open_tab(page, pages_server.url("tools-dialogs.html"))
    asked = await act(tab, "click", {"id": eid_of(xml, "button", "Name the order")})
    [dialog] = parse(f"<r>{asked.content}</r>").iter("js-dialog")
    assert (dialog.get("type"), dialog.get("default")) == ("prompt", "Guest")
    named = await act(tab, "answer_dialog", {"accept": True, "text": "Ada"})
    assert "Hello Ada" in named.content
    saved = await act(tab, "click", {"id": eid_of(xml, "button", "Save")})
    assert 'type="alert" message="Saved."' in saved.content
    refused = await run_tool(tab, "answer_dialog", {"accept": True, "text": "x"})
    assert refused.is_error
    assert "only for a prompt" in refused.content
    done = await act(tab, "answer_dialog", {"accept": True})
    assert done.kind == "diff"


async def test_leaving_a_page_that_asks_first_waits_for_the_answer(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """navigate away from a page with a beforeunload handler returns its dialog; accepting
    it lets the navigation go on and returns the new page."""
    tab, xml = await open_tab(page, pages_server.url("tools-dialogs.html"))
    await page.evaluate("addEventListener('beforeunload', (e) => e.preventDefault())")
    # Chromium asks only on pages the person has interacted with.
    await act(tab, "click", {"id": eid_of(xml, "button", "Name the order")})
    await act(tab, "answer_dialog", {"accept": False})
    leaving = await act(tab, "navigate", {"url": pages_server.url("tools-done.html")})
    assert 'type="beforeunload"' in leaving.content
    left = await act(tab, "answer_dialog", {"accept": True})
    assert left.kind == "baseline"
    assert parse(left.content).get("url") == pages_server.url("tools-done.html")


async def test_a_link_that_opens_a_new_tab_says_so(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Clicking a target=_blank link or a button that calls window.open keeps the
    agent's tab in front and answers with its diff (the host's answer names the new
    tab); a link into this tab answers with the page it went to."""
    guide = pages_server.url("tools-done.html")
    tab, xml = await open_tab(page, pages_server.url("tools-links.html"))
    opened = await act(tab, "click", {"id": eid_of(xml, "a", "Open the guide")})
    # The agent's tab is in front again: the page is not throttled as a background tab.
    assert await page.evaluate("document.visibilityState") == "visible"
    popped = await act(tab, "click", {"id": eid_of(xml, "button", "Pop up the form")})
    assert await page.evaluate("document.visibilityState") == "visible"
    framed = await act(tab, "click", {"id": eid_of(xml, "a", "Guide in the frame")})
    here = await act(tab, "click", {"id": eid_of(xml, "a", "Read here")})
    others = await page.browser.execute(protocol.target_get_targets())
    for info in others["targetInfos"]:
        if info["type"] == "page" and info["targetId"] != page.target_id:
            await page.browser.execute(protocol.target_close_target(info["targetId"]))
    assert (opened.kind, popped.kind, framed.kind) == ("diff", "diff", "diff")
    assert [r.is_error for r in (opened, popped, framed)] == [False, False, False]
    assert here.kind == "baseline"
    assert parse(here.content).get("url") == guide


async def test_crashed_page_is_a_clear_error_and_navigate_recovers(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """After the page crashes a tool answers at once that it crashed, and navigate or
    reload brings the tab back with a fresh baseline."""
    url = pages_server.url("tools-widgets.html")

    async def crash() -> None:
        async with page.listen("Inspector.targetCrashed") as crashes:
            await page.execute(protocol.page_navigate("chrome://crash"))
            await crashes.__anext__()

    tab, xml = await open_tab(page, url)
    button = eid_of(xml, "button", "Clicked 0 times")
    await crash()
    for name, args in (("click", {"id": button}), ("capture_snapshot", {})):
        result = await run_tool(tab, name, args)
        assert result.is_error, name
        assert "the page crashed" in result.content
        assert "navigate(url) or reload()" in result.content
    navigated = await act(tab, "navigate", {"url": url})
    await crash()
    reloaded = await act(tab, "reload", {})
    assert (navigated.kind, reloaded.kind) == ("baseline", "baseline")
    assert "Clicked 0 times" in navigated.content
    # The reloaded page is the one the agent just saw: its regions collapse.
    assert '<region name="main" unchanged="true"' in reloaded.content


# --- scrolling and reading ------------------------------------------------------------------------


async def test_scroll_loads_more(page: PageTarget, pages_server: StaticServer) -> None:
    """Scrolling down moves the page, and content the page loads on scroll shows in the diff."""
    tab, xml = await open_tab(page, pages_server.url("tools-scroll.html"))
    assert "Story number 11" not in xml
    seen = ""
    for _ in range(8):
        result = await act(tab, "scroll", {"direction": "down"})
        seen += result.content
        if "Story number 11" in seen:
            break
    assert "Story number 11" in seen
    assert await page.evaluate("window.scrollY") > 0
    up = await act(tab, "scroll", {"direction": "up"})
    assert up.kind in ("diff", "baseline")
    top = await act(tab, "scroll", {"direction": "up"})
    for _ in range(10):
        if "did not move" in top.content:
            break
        top = await act(tab, "scroll", {"direction": "up"})
    assert "already at the top" in top.content
    parse(top.content)


async def test_find_read_expand(page: PageTarget, pages_server: StaticServer) -> None:
    """find lists matching elements with ids, read gives full text and options, expand a region."""
    tab, xml = await open_tab(page, pages_server.url("tools-form.html"))
    found = await act(tab, "find", {"text": "  CREATE account "})
    assert found.kind == "text"
    tree = parse(found.content)
    assert tree.get("count") == "1"
    assert "Create account" in found.content
    fields = parse((await act(tab, "find", {"role": "textbox"})).content)
    assert int(fields.get("count", "0")) >= 2
    country = eid_of(xml, "select", "United States")
    read = await act(tab, "read", {"id": country})
    options = [o.text for o in parse(read.content).iter("option")]
    assert options == ["United States", "Canada", "France"]
    name = eid_of(xml, "input", "placeholder name")
    assert "placeholder name" in (await act(tab, "read", {"id": name})).content
    first = parse(xml).find("region")
    assert first is not None
    expanded = await act(tab, "expand", {"region": first.get("name")})
    assert "Create account" in expanded.content
    missing = await run_tool(tab, "expand", {"region": "nowhere"})
    assert missing.is_error
    assert "no region 'nowhere'" in missing.content


async def test_read_link_and_text(page: PageTarget, pages_server: StaticServer) -> None:
    """read gives a link's absolute URL and its text."""
    tab, xml = await open_tab(page, pages_server.url("tools-widgets.html"))
    link = eid_of(xml, "a", "Continue to the next page")
    read = parse((await act(tab, "read", {"id": link})).content)
    assert read.get("href") == pages_server.url("tools-done.html?from=link")
    assert read.text == "Continue to the next page"


async def test_wait_for_text_and_timeout(page: PageTarget, pages_server: StaticServer) -> None:
    """wait_for returns once late text appears, and fails clearly when it never does."""
    tab, xml = await open_tab(page, pages_server.url("tools-widgets.html"))
    # A click that settles before the page's timer fires: the text comes later.
    await page.evaluate(
        "document.getElementById('later').onclick = () => setTimeout(() => {"
        " document.getElementById('delayed-box').textContent = 'Results are ready'; }, 1500)"
    )
    clicked = await act(tab, "click", {"id": eid_of(xml, "button", "Load results")})
    assert "Results are ready" not in clicked.content
    result = await act(tab, "wait_for", {"text": "results ARE ready", "timeout": 10})
    assert "Results are ready" in result.content
    missing = await run_tool(tab, "wait_for", {"text": "Never shown", "timeout": 0.6})
    assert missing.is_error
    assert "'Never shown' did not appear" in missing.content
    bad = await run_tool(tab, "wait_for", {})
    assert bad.is_error
    assert "needs text or id" in bad.content


# --- the corpus ---------------------------------------------------------------------------


@pytest.mark.corpus
async def test_corpus_category_link(page: PageTarget, corpus: Path, nursery: trio.Nursery) -> None:
    """On a saved books-toscrape page, following a category link gives the next page's baseline."""
    site = corpus / "flows" / "books-toscrape"
    server: StaticServer = await nursery.start(serve_static, site)
    tab, xml = await open_tab(page, server.url("01-a-light-in-the-attic/index.html"))
    poetry = eid_of(xml, "a", "Poetry")
    result = await act(tab, "click", {"id": poetry})
    assert result.kind == "baseline"
    url = parse(result.content).get("url")
    assert url is not None
    assert url.startswith(server.origin)
    assert "category" in url


@pytest.mark.corpus
async def test_corpus_login_fields(page: PageTarget, corpus: Path, nursery: trio.Nursery) -> None:
    """On a saved LinkedIn login page, the email and password fields are filled, not submitted."""
    server: StaticServer = await nursery.start(
        serve_static, corpus / "pages" / "linkedin-login-2017"
    )
    tab, xml = await open_tab(page, server.url("index.html"))
    email = eid_of(xml, "input", 'placeholder="Email or phone number"')
    password = eid_of(xml, "input", 'placeholder="Password"')
    typed = await act(tab, "type", {"id": email, "text": "ada@example.org"})
    assert 'value="ada@example.org"' in typed.content
    secret = await act(tab, "type", {"id": password, "text": "hunter2"})
    assert "hunter2" not in secret.content
    sign_in = eid_of(xml, "button", "Sign in")
    assert await needs_consent(tab, "click", {"id": sign_in})  # and it is never clicked
    values = await page.evaluate(
        "Array.from(document.querySelectorAll('input'), (i) => i.value).filter(Boolean)"
    )
    assert "ada@example.org" in values
    assert "hunter2" in values
    assert parse(secret.content).get("url") == server.url("index.html")


# --- frames and shadow roots ----------------------------------------------------------------


async def test_click_in_frames_and_shadow_root(
    page: PageTarget, pages_server: StaticServer, second_server: StaticServer
) -> None:
    """Buttons in an open shadow root, a same-origin iframe and a cross-site iframe get clicked."""
    url = pages_server.url(f"tools-frames.html#cross=http://localhost:{second_server.port}")
    tab, xml = await open_tab(page, url)
    shadow = await act(tab, "click", {"id": eid_of(xml, "button", "Shadow button")})
    assert "Shadow pressed" in shadow.content
    frame_buttons = re.findall(r'<button id="([^"]+)"[^>]*>Frame button</button>', xml)
    frame_buttons += [eid for _, eid, text in listed_lines(xml, "button") if text == "Frame button"]
    assert len(frame_buttons) == 2, xml
    for count, eid in enumerate(frame_buttons, start=1):
        result = await act(tab, "click", {"id": eid})
        assert result.content.count("Frame button pressed") >= 1
        latest = tab.latest
        assert latest is not None
        assert latest.xml.count("Frame button pressed") == count


async def test_click_far_below_the_first_screen(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A button several screens down is scrolled to and clicked, the page scrolled or not."""
    tab, xml = await open_tab(page, pages_server.url("tools-long-list.html"))
    last = eid_of(xml, "button", "Details of #1030")
    result = await act(tab, "click", {"id": last})
    assert "Opened order #1030" in result.content
    middle = eid_of(xml, "button", "Details of #1015")
    result = await act(tab, "click", {"id": middle})
    assert "Opened order #1015" in result.content


async def test_select_takes_an_option_name_copied_from_the_snapshot(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """An option whose text holds `|` or `\\` is listed escaped, and select takes the name
    exactly as the snapshot lists it."""
    tab, xml = await open_tab(page, pages_server.url("tools-select-pipes.html"))
    listed = parse(xml).xpath("//select/@options")[0]
    assert listed == r"Standard \| 3-5 days|Express \| next day|Pick up in store \\ Main St"
    ship = eid_of(xml, "select", "Standard")
    result = await act(tab, "select", {"id": ship, "value": r"Express \| next day"})
    assert "Chosen: exp" in result.content
    result = await act(tab, "select", {"id": ship, "value": r"Pick up in store \\ Main St"})
    assert "Chosen: pick" in result.content
    result = await act(tab, "select", {"id": ship, "value": "Standard | 3-5 days"})
    assert "Chosen: std" in result.content


async def test_click_in_a_tab_the_person_is_not_looking_at(
    browser: Browser, page: PageTarget, pages_server: StaticServer
) -> None:
    """A click in a background tab reaches a page that sees itself visible and focused
    (as it would for a person), and the tab stays in the background."""
    tab, xml = await open_tab(page, pages_server.url("tools-background.html"))
    front = await browser.new_page("about:blank")
    await front.execute(protocol.page_bring_to_front())
    more = eid_of(xml, "button", "Load more")
    result = await act(tab, "click", {"id": more})
    assert "Clicked while visible, focused" in result.content
    assert "Second post" in result.content
    assert await front.evaluate("document.visibilityState") == "visible"


async def test_clicks_in_a_background_tab_that_keeps_animating(
    browser: Browser, page: PageTarget, pages_server: StaticServer
) -> None:
    """In a background tab whose page animates on every frame, each click still moves the
    pointer over the element before pressing, then presses and releases, in that order
    (the browser holds a hidden page's mouse moves for its next frame)."""
    tab, xml = await open_tab(page, pages_server.url("tools-background-ticker.html"))
    front = await browser.new_page("about:blank")
    await front.execute(protocol.page_bring_to_front())
    deal = eid_of(xml, "clickable", "Two-person tent")
    await act(tab, "click", {"id": deal})
    result = await act(tab, "click", {"id": deal})
    assert "Cart: 2 tents (added while visible)" in result.content
    assert "move down, up, click, move down, up, click" in result.content
    assert await front.evaluate("document.visibilityState") == "visible"


HIDDEN_FOR = 1.5


async def test_a_background_tab_that_keeps_animating_renders_while_the_agent_acts(
    browser: Browser, page: PageTarget, pages_server: StaticServer
) -> None:
    """In a background tab whose page animates on every frame, a hover and a scroll reach
    the page, and what the page renders on the next animation frame in answer (a
    submenu, more items of a feed) is in the tools' answers, as in a tab in front; the
    browser is asked to render the tab (a screencast) while such an action lasts."""
    recording = RecordingTarget(page)
    tab = Tab.open(recording)
    loaded = await run_tool(
        tab, "navigate", {"url": pages_server.url("tools-background-ticker.html")}
    )
    assert not loaded.is_error, loaded.content
    camping = eid_of(loaded.content, "a", "Camping")
    await act(tab, "hover", {"id": eid_of(loaded.content, "clickable", "Two-person tent")})
    front = await browser.new_page("about:blank")
    await front.execute(protocol.page_bring_to_front())
    # Chromium throttles a hidden page's rendering once it has been hidden (or not
    # driven) for a moment.
    await trio.sleep(HIDDEN_FOR)
    hovered = await act(tab, "hover", {"id": camping})
    assert "Tents" in hovered.content
    assert "Stoves" in hovered.content
    await trio.sleep(HIDDEN_FOR)
    scrolled = await act(tab, "scroll", {"direction": "down"})
    assert "Sleeping bag, $89" in scrolled.content
    casts = [m for m in recording.methods if m in ("Page.startScreencast", "Page.stopScreencast")]
    # At least one each for the hover and the scroll behind (in front the page renders
    # and needs none), each stopped once its action was over.
    assert casts.count("Page.startScreencast") >= 2
    assert casts == ["Page.startScreencast", "Page.stopScreencast"] * (len(casts) // 2)
    assert await front.evaluate("document.visibilityState") == "visible"
