"""The person's secrets never reach the model: a password's, a card's and a one-time
code's values are masked in the XML, its diffs, ``read``, ``find`` and the side panel's
inspector, and the person is asked before the agent types into such a field."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import trio
from lxml import etree

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.handlers_host import TAB, Host, open_host
from trimtab.pipeline import Secret, mask, secret_kind
from trimtab.tab import Tab
from trimtab.tools import run_tool

pytestmark = pytest.mark.browser

CHECKOUT = "secrets-checkout.html"
# Every secret value on the checkout page, and spellings of them a leak could take.
SECRETS = (
    "4242 4242 4242 4242",
    "4242424242424242",
    "4242 4242",
    "737",
    "12/29",
    "5791",
    "918273",
    "hunter2",
)


def parse(xml: str) -> etree._Element:
    """Parse XML with a real parser (it must be well-formed)."""
    return etree.fromstring(xml.encode())


def field(tree: etree._Element, label: str) -> etree._Element:
    """The field whose visible label (the text right before it) is `label`."""
    for element in tree.iter("input", "select"):
        before = element.getprevious()
        said = (before.tail if before is not None else element.getparent().text) or ""
        if said.strip().endswith(label):
            return element
    raise AssertionError(f"no field labelled {label!r} in:\n{etree.tostring(tree).decode()}")


def without_address(answer: str, server: StaticServer) -> str:
    """An answer without the test server's address, whose random port may hold any
    digits (port 40005 holds "4000"): what is left is what the page and Trimtab said."""
    return answer.replace(server.origin, "")


def leaks(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


def texts_of(value: object) -> list[str]:
    """Every string in a JSON value (keys included), depth first."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in (str(k), *texts_of(v))]
    if isinstance(value, list):
        return [t for item in value for t in texts_of(item)]
    return []


async def open_checkout(page: PageTarget, server: StaticServer) -> tuple[Tab, str]:
    tab = Tab.open(page)
    loaded = await run_tool(tab, "navigate", {"url": server.url(CHECKOUT)})
    assert not loaded.is_error, loaded.content
    return tab, loaded.content


# --- the rule ---------------------------------------------------------------------------------


def test_autocomplete_tokens_and_names_mark_secret_fields() -> None:
    """Autocomplete field names mark a secret after any section, shipping/billing and
    contact tokens; a name, id or label saying card number, CVC/CVV/security code or
    expiry does too; a card holder's name, an e-mail or a search field is no secret."""
    assert secret_kind("text", "cc-number", ()) is Secret.CARD_NUMBER
    assert secret_kind("text", "section-pay billing cc-number", ()) is Secret.CARD_NUMBER
    assert secret_kind("tel", "shipping cc-csc", ()) is Secret.CARD_CODE
    assert secret_kind("text", " Billing CC-EXP ", ()) is Secret.CARD_EXPIRY
    assert secret_kind("number", "cc-exp-year", ()) is Secret.CARD_EXPIRY
    assert secret_kind("text", "one-time-code", ()) is Secret.ONE_TIME_CODE
    assert secret_kind("password", "", ()) is Secret.PASSWORD
    assert secret_kind("text", "current-password webauthn", ()) is Secret.PASSWORD
    assert secret_kind("text", "", ("cardNumber",)) is Secret.CARD_NUMBER
    assert secret_kind("text", "", ("", "cc_number")) is Secret.CARD_NUMBER
    assert secret_kind("text", "", ("Card number",)) is Secret.CARD_NUMBER
    assert secret_kind("text", "", ("card-cvc",)) is Secret.CARD_CODE
    assert secret_kind("text", "", ("CVV",)) is Secret.CARD_CODE
    assert secret_kind("text", "", ("Security code",)) is Secret.CARD_CODE
    assert secret_kind("text", "", ("expDate",)) is Secret.CARD_EXPIRY
    assert secret_kind("text", "", ("Expiry (MM/YY)",)) is Secret.CARD_EXPIRY
    for kind, autocomplete, names in (
        ("text", "cc-name", ("Name on card",)),
        ("email", "email", ("Email",)),
        ("search", "off", ("Search the store", "q")),
        ("text", "", ("Card type", "Discount code", "Postcode")),
    ):
        assert secret_kind(kind, autocomplete, names) is None, names


def test_a_card_number_shows_its_last_four_digits_and_other_secrets_nothing() -> None:
    """A card number shows ``•••• 4242``; any other secret (and a card number too short
    to hide its digits) shows only bullets, at most eight."""
    assert mask(Secret.CARD_NUMBER, "4242 4242 4242 4242") == "•••• 4242"
    assert mask(Secret.CARD_NUMBER, "4242") == "••••"
    assert mask(Secret.CARD_CODE, "737") == "•••"
    assert mask(Secret.CARD_EXPIRY, "12/29") == "•••••"
    assert mask(Secret.ONE_TIME_CODE, "918273") == "••••••"
    assert mask(Secret.PASSWORD, "correct horse battery staple") == "••••••••"
    assert mask(Secret.PASSWORD, "") == ""


# --- the XML, diffs and reads ----------------------------------------------------------------


async def test_filled_secret_fields_are_masked_in_the_snapshot(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A checkout page's filled card number shows as ``•••• 4242``, its CVC, expiry,
    security code, one-time code and password only as filled, and nothing else of them
    is in the XML; the card holder's name and a note stay readable."""
    _, xml = await open_checkout(page, pages_server)
    tree = parse(xml)
    assert field(tree, "Card number").get("value") == "•••• 4242"
    for label in ("CVC", "Expiry", "Security code", "Code from your phone", "Password"):
        value = field(tree, label).get("value") or ""
        assert value, label
        assert set(value) == {"•"}, (label, value)
    assert set(field(tree, "Expiry month").get("value") or "") == {"•"}
    assert field(tree, "Name on card").get("value") == "Ada Lovelace"
    assert field(tree, "Delivery note").get("value") == "Leave at door 3"
    assert leaks(xml) == []


async def test_typing_a_card_number_diffs_only_its_last_four_digits(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """After typing a new card number and CVC, the diff shows the number's last four
    digits and the CVC only as filled; ``read``, ``find`` and ``select_text`` (which would
    tell whether a text is in the field) give away no more."""
    tab, xml = await open_checkout(page, pages_server)
    number = field(parse(xml), "Card number").get("id")
    cvc = field(parse(xml), "CVC").get("id")
    typed = await run_tool(
        tab, "type", {"id": number, "text": "4000 0566 5566 5556"}, consented=True
    )
    coded = await run_tool(tab, "type", {"id": cvc, "text": "9031"}, consented=True)
    assert not typed.is_error, typed.content
    assert not coded.is_error, coded.content
    assert typed.kind == "diff"
    assert "•••• 5556" in typed.content
    for answer in (typed.content, coded.content):
        parse(answer)
        shown = without_address(answer, pages_server)
        assert [digits for digits in ("4000", "0566", "9031") if digits in shown] == [], shown
    assert await page.evaluate("document.getElementById('number').value") == ("4000 0566 5566 5556")
    read = await run_tool(tab, "read", {"id": number})
    assert "•••• 5556" in read.content, read.content
    assert "4000" not in without_address(read.content, pages_server)
    read_cvc = await run_tool(tab, "read", {"id": cvc})
    assert "••••" in read_cvc.content, read_cvc.content
    assert "9031" not in without_address(read_cvc.content, pages_server)
    found = await run_tool(tab, "find", {"text": "4000 0566 5566 5556"})
    assert 'count="0"' in found.content, found.content
    for probe in ("5556", "4000"):
        selected = await run_tool(tab, "select_text", {"id": number, "text": probe})
        assert selected.is_error, selected.content
        assert "is a card number field" in selected.content
        assert "0566" not in without_address(selected.content, pages_server)


async def test_a_typed_secret_the_page_changes_is_not_echoed(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """When a page keeps less of a typed card code than was typed, the note says how many
    characters it holds, not which."""
    tab, xml = await open_checkout(page, pages_server)
    await page.evaluate("document.getElementById('cvc').maxLength = 3")
    cvc = field(parse(xml), "CVC").get("id")
    typed = await run_tool(tab, "type", {"id": cvc, "text": "4821"}, consented=True)
    assert "holds 3 characters, not the 4 typed" in typed.content, typed.content
    assert "482" not in without_address(typed.content, pages_server)


# --- asking before typing a secret -------------------------------------------------------------


@pytest.fixture
async def host(
    page: PageTarget, pages_server: StaticServer, nursery: trio.Nursery
) -> AsyncIterator[Host]:
    """Handlers of a host whose relay reaches the checkout page."""
    async with open_host(page, pages_server.url(CHECKOUT), nursery) as host:
        yield host


async def test_typing_into_a_password_field_asks_the_person(host: Host) -> None:
    """Typing into a password field asks first, naming the field by its label and never
    by its value: a no types nothing, a yes types."""
    snapshot = str((await host.tool("capture_snapshot"))["content"])
    password = field(parse(snapshot), "Password").get("id")
    host.person.allow = False
    refused = await host.tool("type", id=password, text="opensesame")
    assert refused["consent"] == {"required": True, "granted": False}
    assert await host.evaluate("document.getElementById('password').value") == "hunter2"
    (question,) = host.person.asked
    assert question["reason"] == "it types into a password field"
    assert "Password" in question["element"]
    assert leaks("\n".join(texts_of(question))) == []
    assert leaks(str(refused["content"])) == []
    host.person.allow = True
    done = await host.tool("type", id=password, text="opensesame")
    assert done["is_error"] is False, done["content"]
    assert done["consent"] == {"required": True, "granted": True}
    assert await host.evaluate("document.getElementById('password').value") == "opensesame"
    assert "opensesame" not in str(done["content"])


async def test_typing_a_password_is_asked_even_with_ask_before_submitting_off(
    host: Host,
) -> None:
    """The side panel's "ask before submitting" setting waives submit questions only: a
    password is still asked about (kind ``secret``), and a no still types nothing."""
    snapshot = str((await host.tool("capture_snapshot"))["content"])
    password = field(parse(snapshot), "Password").get("id")
    host.person.allow = False
    refused = await host.request(
        "tool",
        session="panel-agent",
        tab=TAB,
        name="type",
        args={"id": password, "text": "opensesame"},
        ask_before_submit=False,
    )
    assert refused["consent"] == {"required": True, "granted": False}
    assert [q["what"] for q in host.person.asked] == ["secret"]
    assert await host.evaluate("document.getElementById('password').value") == "hunter2"


async def test_typing_into_card_fields_asks_and_plain_fields_do_not(host: Host) -> None:
    """A card's number and security code ask before anything is typed, its expiry month
    before it is chosen; a delivery note is typed without a question."""
    snapshot = parse(str((await host.tool("capture_snapshot"))["content"]))
    host.person.allow = False
    for label, dom_id in (("Card number", "number"), ("Security code", "security")):
        refused = await host.tool("type", id=field(snapshot, label).get("id"), text="1111")
        assert refused["consent"] == {"required": True, "granted": False}, label
        assert await host.evaluate(f"document.getElementById('{dom_id}').value") != "1111"
    month = await host.tool("select", id=field(snapshot, "Expiry month").get("id"), value="06")
    assert month["consent"] == {"required": True, "granted": False}
    assert await host.evaluate("document.getElementById('month').value") == "11"
    assert [q["reason"] for q in host.person.asked] == [
        "it types into a card number field",
        "it types into a card security code field",
        "it chooses in a card expiry date field",
    ]
    note = await host.tool("type", id=field(snapshot, "Delivery note").get("id"), text="Porch")
    assert note["is_error"] is False, note
    assert note["consent"] == {"required": False, "granted": False}
    assert len(host.person.asked) == 3


async def test_a_character_pressed_in_a_focused_password_field_asks(host: Host) -> None:
    """``press`` of a character while a password field has the focus asks; Tab, which
    only moves the focus, does not."""
    await host.evaluate("document.getElementById('password').focus()")
    host.person.allow = False
    refused = await host.tool("press", key="x")
    assert refused["consent"] == {"required": True, "granted": False}
    assert await host.evaluate("document.getElementById('password').value") == "hunter2"
    assert host.person.asked[-1]["reason"] == "it types into a password field"
    moved = await host.tool("press", key="Tab")
    assert moved["is_error"] is False, moved
    assert moved["consent"] == {"required": False, "granted": False}
    assert len(host.person.asked) == 1


async def test_the_inspector_masks_secret_fields(host: Host) -> None:
    """The side panel's inspector shows the same masked values the agent sees."""
    shown = await host.request("snapshot", tab=TAB)
    assert "•••• 4242" in shown["xml"]
    # Every text of the reply; its numbers are the host's own (a timing of 1737.2 ms
    # is no leaked code).
    assert leaks("\n".join(texts_of(shown))) == []
    parse(shown["xml"])
