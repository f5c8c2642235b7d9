"""`fill`: many fields of a checkout in one call, each verified, one answer, nothing
submitted; bad arguments and a field gone stale halfway stop it with a clear answer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import trio

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.handlers_host import SESSION, TAB, Host, open_host

pytestmark = pytest.mark.browser


@pytest.fixture
async def host(
    page: PageTarget, pages_server: StaticServer, nursery: trio.Nursery
) -> AsyncIterator[Host]:
    """Handlers of a host whose relay reaches the checkout."""
    async with open_host(page, pages_server.url("fill-checkout.html"), nursery) as host:
        yield host


def id_of(content: str, label: str) -> str:
    """The id of the control a snapshot labels `label`: on the line after the label's
    own line (a field), or on the line that ends with it (a checkbox or radio)."""
    lines = content.splitlines()
    for index, line in enumerate(lines):
        if line.strip() == label and index + 1 < len(lines):
            return lines[index + 1].split('id="', 1)[1].split('"', 1)[0]
        if line.endswith(f"/> {label}"):
            return line.split('id="', 1)[1].split('"', 1)[0]
    raise AssertionError(f"no control labelled {label!r} in:\n{content}")


async def checkout_ids(host: Host) -> dict[str, str]:
    content = str((await host.tool("capture_snapshot"))["content"])
    labels = (
        "Email",
        "Full name",
        "Phone",
        "Street address",
        "Country",
        "State",
        "Delivery date",
        "Delivery window",
        "Express ($12)",
        "This order is a gift",
        "Email me news and offers",
        "Gift message",
    )
    return {label: id_of(content, label) for label in labels}


async def form_state(host: Host) -> dict[str, Any]:
    """What the checkout's fields hold, read from the page itself."""
    found: dict[str, Any] = await host.evaluate(
        """(() => {
          const f = document.getElementById('checkout');
          return {email: f.email.value, name: f.name.value, phone: f.phone.value,
            address: f.address.value, date: f.date.value, window: f.window.value,
            ship: f.ship.value, gift: f.gift.checked, news: f.news.checked,
            note: document.getElementById('note').innerText.trim(),
            country: f.country.value, path: location.pathname};
        })()"""
    )
    return found


async def test_ten_fields_of_every_kind_are_filled_in_one_call(host: Host) -> None:
    """One fill sets text, email, tel, textarea, date, select, radio, two checkboxes
    (one on, one off) and an editable area: the page holds every value, one diff
    answers, nobody is asked and nothing is submitted."""
    ids = await checkout_ids(host)
    fields = [
        {"id": ids["Email"], "value": "ann@example.com"},
        {"id": ids["Full name"], "value": "Ann Lee"},
        {"id": ids["Phone"], "value": "+1 555 0100"},
        {"id": ids["Street address"], "value": "12 Pine Rd\nApt 3"},
        {"id": ids["Delivery date"], "value": "2026-12-24"},
        {"id": ids["Delivery window"], "value": "Morning (8\u201312)"},
        {"id": ids["Express ($12)"], "value": True},
        {"id": ids["This order is a gift"], "value": True},
        {"id": ids["Email me news and offers"], "value": False},
        {"id": ids["Gift message"], "value": "Happy holidays!"},
    ]
    done = await host.tool("fill", fields=fields)
    assert done["is_error"] is False, done["content"]
    # One answer: the diff, or the baseline when that is the shorter of the two.
    assert done["kind"] in ("diff", "baseline")
    assert done["consent"] == {"required": False, "granted": False}
    assert done["submitted"] is False
    assert host.person.asked == []
    assert await form_state(host) == {
        "email": "ann@example.com",
        "name": "Ann Lee",
        "phone": "+1 555 0100",
        "address": "12 Pine Rd\nApt 3",
        "date": "2026-12-24",
        "window": "am",
        "ship": "express",
        "gift": True,
        "news": False,
        "note": "Happy holidays!",
        "country": "US",
        "path": "/fill-checkout.html",
    }
    content = str(done["content"])
    assert "ann@example.com" in content
    assert "Happy holidays!" in content


async def test_a_field_gone_stale_halfway_stops_and_names_what_was_set(host: Host) -> None:
    """Choosing Canada redraws the region field: the old region id stops the call
    there, the answer names the field set before it, and the fields after it are not
    set; the country's change handler was asked about first, as select would, with the
    country's id for the side panel to highlight."""
    ids = await checkout_ids(host)
    fields = [
        {"id": ids["Country"], "value": "Canada"},
        {"id": ids["State"], "value": "Ontario"},
        {"id": ids["Full name"], "value": "Ann Lee"},
    ]
    stopped = await host.tool("fill", fields=fields)
    assert stopped["is_error"] is True
    content = str(stopped["content"])
    assert f"fill stopped at {ids['State']}" in content
    assert f"set before it: {ids['Country']}" in content
    assert "nothing was tried again" in content
    (question,) = host.person.asked
    assert question["what"] == "submit"
    assert question["tool"] == "fill"
    assert question["eid"] == ids["Country"]
    state = await form_state(host)
    assert state["country"] == "CA"
    assert state["name"] == ""
    assert state["path"] == "/fill-checkout.html"


async def test_a_no_to_a_field_that_may_submit_sets_no_field(host: Host) -> None:
    """When one field's change may submit (a script handles it), the person is asked
    before any field is set, and a no leaves every field as it was."""
    ids = await checkout_ids(host)
    host.person.allow = False
    fields = [
        {"id": ids["Full name"], "value": "Ann Lee"},
        {"id": ids["Country"], "value": "Canada"},
    ]
    refused = await host.tool("fill", fields=fields)
    assert refused["is_error"] is True
    assert refused["consent"] == {"required": True, "granted": False}
    assert "the person refused" in str(refused["content"])
    state = await form_state(host)
    assert (state["name"], state["country"]) == ("", "US")


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ([{"id": "GIFT", "value": "true"}], "must be true or false; got 'true'"),
        ([{"id": "NAME", "value": 5}], "fields[0].value must be text or true/false; got 5"),
        ([{"id": "NAME", "value": True}], "must be text; got True"),
        ([{"id": "zz9", "value": "x"}], "zz9"),
        ([{"id": "NAME", "value": "a"}] * 500, "fields holds 500 entries; at most 50"),
        ([{"id": "NAME", "value": "a"}] * 2, "is named twice"),
        ([{"id": "NAME"}], "fields[0] must be {id, value}"),
        ("NAME=Ann", "fields must be a list"),
        ([], "fields is empty"),
    ],
)
async def test_bad_arguments_are_refused_before_anything_is_set(
    host: Host, fields: object, said: str
) -> None:
    """Strings where booleans belong, numbers, unknown ids, 500 fields, repeated ids
    and a list that is no list: a clear error naming the bad value, nothing set."""
    ids = await checkout_ids(host)

    def real(value: object) -> object:
        if isinstance(value, list):
            return [real(v) for v in value]
        if isinstance(value, dict):
            names = {"GIFT": ids["This order is a gift"], "NAME": ids["Full name"]}
            return {k: names.get(v, v) if k == "id" else v for k, v in value.items()}
        return value

    answer = await host.tool("fill", fields=real(fields))
    assert answer["is_error"] is True
    assert said in str(answer["content"]), answer["content"]
    state = await form_state(host)
    assert (state["name"], state["gift"]) == ("", False)


async def test_a_field_in_a_frame_of_another_site_asks_about_that_site(
    page: PageTarget, pages_server: StaticServer, second_server: StaticServer, nursery: trio.Nursery
) -> None:
    """fill acting on a field inside a frame of another site asks the site question for
    that site, as a click there would; the person's no sets no field at all."""
    url = pages_server.url("fill-frame.html") + f"#signup=http://localhost:{second_server.port}"
    async with open_host(page, url, nursery) as host:
        while await host.evaluate("!document.getElementById('signup').src"):
            await trio.sleep(0.05)
        content = str((await host.tool("capture_snapshot"))["content"])
        while "Email for the newsletter" not in content:
            await trio.sleep(0.1)
            content = str((await host.tool("capture_snapshot"))["content"])
        name = content.split("Your name", 1)[1].split('id="', 1)[1].split('"', 1)[0]
        email = content.split("Email for the newsletter", 1)[1].split('id="', 1)[1].split('"')[0]
        host.person.allow = False
        fields = [{"id": name, "value": "Ann"}, {"id": email, "value": "ann@example.com"}]
        refused = await host.tool("fill", fields=fields)
        assert refused["is_error"] is True
        (question,) = host.person.asked
        assert question["what"] == "site"
        assert question["site"] == "http://localhost"
        assert "acts inside a frame" in question["reason"]
        assert await host.evaluate("document.getElementById('name').value") == ""


async def test_a_secret_field_is_asked_about_even_with_submits_unasked(
    page: PageTarget, pages_server: StaticServer, nursery: trio.Nursery
) -> None:
    """With "ask before submitting" off, a fill that types into a password field still
    asks (what="secret"), naming it and giving its id for the side panel to highlight;
    the person's no types nothing into any field."""
    async with open_host(page, pages_server.url("secrets-checkout.html"), nursery) as host:
        content = str((await host.tool("capture_snapshot"))["content"])
        password = content.split('type="password"', 1)[0].rsplit('id="', 1)[1].split('"')[0]
        note = content.split("Leave at door 3", 1)[0].rsplit('id="', 1)[1].split('"')[0]
        host.person.allow = False
        fields = [{"id": note, "value": "Ring twice"}, {"id": password, "value": "s3cret"}]
        refused = await host.request(
            "tool",
            session=SESSION,
            tab=TAB,
            name="fill",
            args={"fields": fields},
            ask_before_submit=False,
        )
        assert refused["is_error"] is True
        (question,) = host.person.asked
        assert question["what"] == "secret"
        assert f'id="{password}"' in question["element"]
        assert question["eid"] == password
        assert "password" in question["reason"]
        values = await host.evaluate(
            "[document.getElementById('note').value, document.getElementById('password').value]"
        )
        assert values == ["Leave at door 3", "hunter2"]
