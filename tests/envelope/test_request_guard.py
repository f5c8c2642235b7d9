"""The request guard: what an action makes the page send to its own site that can change
something is held and asked about before it leaves the browser; a no fails it (the
site never sees it), a yes sends it once; reads and other sites' telemetry go on."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
import trio

from pycdp_bridge import PageTarget
from tests.support.handlers_host import SESSION, TAB, Host, open_host
from tests.support.link_host import open_link_host
from tests.support.recorder import Recorder
from tests.support.xmltree import listed_id
from trimtab.envelope import SidePanel
from trimtab.native import SidePanelDoor
from trimtab.sites import site_of

pytestmark = pytest.mark.browser

SHOP = "shop.test"
TRACKER = "tracker.test"


@pytest.fixture
async def host(page: PageTarget, site: Recorder, nursery: trio.Nursery) -> AsyncIterator[Host]:
    """Handlers of a host on the shop's account page."""
    async with open_host(page, site.url(SHOP, "guard-shop.html"), nursery) as host:
        yield host


def eid(content: str, tag: str, text: str) -> str:
    """The id of the first `<tag>` whose markup, or the text right before or after it
    (its label), has `text`."""
    for match in re.finditer(rf'([^<>]*)<{tag} id="([^"]+)"[^>]*>([^<]*)', content):
        if text in match.group(0):
            return match.group(2)
    if (listed := listed_id(content, tag, text)) is not None:
        return listed
    raise AssertionError(f"no <{tag}> with {text!r} in:\n{content}")


async def snapshot(host: Host) -> str:
    return str((await host.tool("capture_snapshot"))["content"])


async def status(host: Host) -> str:
    return str(await host.evaluate("document.getElementById('status').textContent"))


def request_questions(host: Host) -> list[dict[str, Any]]:
    return [dict(q) for q in host.person.asked if q["what"] == "request"]


async def test_a_refused_purchase_never_reaches_the_site(host: Host, site: Recorder) -> None:
    """A click whose script POSTs to the shop is held and asked about, naming the
    element, the method and the site in Trimtab's words; a no fails the request (the
    page sees it fail, the site's log has no POST) and the answer says so."""
    buy = eid(await snapshot(host), "button", "1-Click buy")
    host.person.allow = False
    answer = await host.tool("click", id=buy)
    (question,) = request_questions(host)
    assert question["tool"] == "click"
    assert "1-Click buy" in question["element"]
    assert question["reason"] == (
        f"Clicking it sends a POST request to http://{SHOP}, where it may change something"
    )
    assert question["request"] == {
        "method": "POST",
        "url": site.url(SHOP, "api/buy"),
        "site": f"http://{SHOP}",
    }
    assert site.sent("/api/buy") == []
    assert await status(host) == "The purchase failed (TypeError)"
    assert answer["is_error"] is False
    assert f"POST {site.url(SHOP, 'api/buy')} was held: not sent" in answer["content"]
    assert "the person refused" in answer["content"]
    assert answer["held"] == [
        {"method": "POST", "url": site.url(SHOP, "api/buy"), "sent": False, "form": False}
    ]


async def test_a_yes_sends_the_purchase_once(host: Host, site: Recorder) -> None:
    """A yes sends the held POST once: the site gets it, the page sees it succeed, and
    the next click asks again."""
    buy = eid(await snapshot(host), "button", "1-Click buy")
    answer = await host.tool("click", id=buy)
    assert [r.body for r in site.sent("/api/buy")] == ["sku=lantern"]
    assert await status(host) == "The purchase went through"
    assert "was held: sent once, with the person's yes" in answer["content"]
    assert answer["held"][0]["sent"] is True
    await host.tool("click", id=buy)
    assert len(request_questions(host)) == 2
    assert len(site.sent("/api/buy")) == 2


async def test_delete_put_and_patch_are_held(host: Host, site: Recorder) -> None:
    """ "Delete account" (DELETE), a <select> whose change sends PUT and a "make my
    profile public" checkbox whose change sends PATCH are each held and, refused,
    never reach the site."""
    content = await snapshot(host)
    host.person.allow = False
    await host.tool("click", id=eid(content, "button", "Delete account"))
    await host.tool("select", id=eid(content, "select", "Plan"), value="Plus, 4 € a month")
    await host.tool("check", id=eid(content, "input", "Make my profile public"))
    methods = [q["request"]["method"] for q in request_questions(host)]
    assert methods == ["DELETE", "PUT", "PATCH"]
    reasons = [q["reason"].split(" sends")[0] for q in request_questions(host)]
    assert reasons == ["Clicking it", "Choosing the option", "Checking it"]
    assert site.log == []
    assert await status(host) == "The profile change failed (TypeError)"


async def test_a_form_submitted_by_a_script_is_held_before_it_leaves(
    host: Host, site: Recorder
) -> None:
    """A button outside a form whose script submits it predicts no submit; the
    submission itself is held: refused, it never reaches the site and the page stays;
    allowed, it goes once."""
    send = eid(await snapshot(host), "button", "Send the order")
    host.person.allow = False
    refused = await host.tool("click", id=send)
    (question,) = request_questions(host)
    assert question["reason"].startswith("Clicking it submits a form (POST) to ")
    assert site.sent("/api/order") == []
    assert await host.evaluate("location.pathname") == "/guard-shop.html"
    assert refused["submitted"] is False
    assert refused["held"][0]["form"] is True
    host.person.allow = True
    allowed = await host.tool("click", id=send)
    assert [r.body for r in site.sent("/api/order")] == ["quantity=1"]
    assert allowed["submitted"] is True
    assert allowed["unasked_submit"] is False


async def test_a_beacon_is_held(host: Host, site: Recorder) -> None:
    """``navigator.sendBeacon`` to the shop is held as a beacon; refused, it never
    reaches the site."""
    draft = eid(await snapshot(host), "button", "Save draft note")
    host.person.allow = False
    await host.tool("click", id=draft)
    (question,) = request_questions(host)
    assert question["reason"].startswith("Clicking it sends a beacon (POST) to ")
    assert site.sent("/api/draft") == []


async def test_reads_go_unasked_and_data_sent_to_another_site_asks_the_site_policy(
    host: Host, site: Recorder
) -> None:
    """A GET XHR to the shop is neither held nor asked about; a POST the click makes the
    page send to another site (its telemetry, or an attacker's beacon: the host cannot
    tell them apart) is the site policy's: asked once per site, and a no keeps it in the
    browser while the click itself is done."""
    content = await snapshot(host)
    host.person.allow = False
    stock = await host.tool("click", id=eid(content, "button", "Refresh stock"))
    assert "12 in stock" in stock["content"]
    assert [r.method for r in site.sent("/api/stock")] == ["GET"]
    assert host.person.asked == []
    assert stock["held"] == []
    details = await host.tool("click", id=eid(content, "button", "Show details"))
    assert not details["is_error"], details["content"]
    [question] = host.person.asked
    assert (question["what"], question["site"]) == ("site", f"http://{TRACKER}")
    assert question["reason"].startswith(f"Clicking it sends a POST request to http://{TRACKER},")
    assert [(h["method"], h["sent"]) for h in details["held"]] == [("POST", False)]
    assert site.sent("/api/collect") == []


async def test_a_predicted_submit_that_was_allowed_is_not_asked_twice(
    host: Host, site: Recorder
) -> None:
    """When the call already has the person's yes for a predicted submit (Enter in the
    order form's field), the form's own submission is sent without a second question."""
    content = await snapshot(host)
    answer = await host.tool("type", id=eid(content, "input", "Quantity"), text="2", submit=True)
    assert [q["what"] for q in host.person.asked] == ["submit"]
    assert answer["consent"] == {"required": True, "granted": True}
    assert [r.body for r in site.sent("/api/order")] == ["quantity=2"]
    assert answer["held"] == []


async def test_a_form_that_submits_through_its_own_fetch_is_asked_once(
    host: Host, site: Recorder
) -> None:
    """A form whose submit handler sends its data with fetch (no form request) is asked
    about once, as a predicted submit: the yes sends that one request, and the second
    request the page sends after it is asked about on its own."""
    subscribe = eid(await snapshot(host), "button", "Subscribe")
    answer = await host.tool("click", id=subscribe)
    assert [q["what"] for q in host.person.asked] == ["submit", "request"]
    (second,) = request_questions(host)
    assert second["request"]["method"] == "PUT"
    assert second["request"]["url"].endswith("/api/newsletter-prefs")
    assert [r.body for r in site.sent("/api/subscribe")] == ["email=ann%40example.com"]
    assert [r.method for r in site.sent("/api/newsletter-prefs")] == ["PUT"]
    assert [(h["method"], h["sent"]) for h in answer["held"]] == [("POST", True), ("PUT", True)]
    assert await status(host) == "The subscription went through"


async def test_a_click_that_takes_the_tab_to_another_site_asks_the_site_policy(
    host: Host, site: Recorder
) -> None:
    """A click on a link to a site the task has not been allowed stops at the first
    request to it, before it leaves, and asks the site question: refused, nothing
    reaches that site and the page stays where it was."""
    away = site.url(TRACKER, "api/away")
    await host.evaluate(
        f"document.body.insertAdjacentHTML('beforeend', '<a id=\"away\" href=\"{away}\">Away</a>')"
    )
    host.person.allow = False
    answer = await host.tool("click", id=eid(await snapshot(host), "a", "Away"))
    (question,) = host.person.asked
    assert question["what"] == "site"
    assert question["site"] == f"http://{TRACKER}"
    assert site.sent("/api/away") == []
    assert await host.evaluate("location.host") == f"{SHOP}:{site.port}"
    assert f"GET {away} was held: not sent: the tab may not go to http://{TRACKER}" in str(
        answer["content"]
    )


async def test_an_unread_response_body_does_not_hold_the_settle(host: Host) -> None:
    """A click whose script fetches a response and never reads its body (which then
    never finishes) is answered once the page is quiet, not at the settle limit."""
    stream = eid(await snapshot(host), "button", "Open live updates")
    answer = await host.tool("click", id=stream)
    assert "Live updates are on" in answer["content"]
    assert "did not settle" not in answer["content"]
    assert host.person.asked == []


async def test_a_question_left_unanswered_fails_the_request(host: Host, site: Recorder) -> None:
    """When nobody answers, the held request is failed (never left paused), the site
    never sees it and the question is withdrawn."""
    buy = eid(await snapshot(host), "button", "1-Click buy")
    host.person.allow = None
    answer = await host.tool("click", id=buy)
    assert site.sent("/api/buy") == []
    assert len(host.person.withdrawn) == 1
    assert "nobody answered" in answer["content"]
    assert await status(host) == "The purchase failed (TypeError)"
    assert answer["is_error"] is False
    assert request_questions(host)[0]["tab"] == TAB


async def test_an_outside_clients_click_is_held_the_same_way(
    page: PageTarget, site: Recorder
) -> None:
    """A click by an outside agent (``trimtab call`` over the link) whose script POSTs to
    the shop is held and asked about in the side panel the same way; refused, the site
    never sees it and the client is told it was held and not sent."""
    async with open_link_host(page, site.url(SHOP, "guard-shop.html")) as link:
        await link.share(TAB)
        code, out, err = await link.trimtab("snapshot")
        assert code == 0, err
        buy = eid(out, "button", "1-Click buy")
        results: list[tuple[int, str, str]] = []
        async with trio.open_nursery() as nursery:

            async def click() -> None:
                results.append(await link.trimtab("call", "click", f"id={buy}", "--json"))

            nursery.start_soon(click)
            question = await link.answer(allow=False)
        assert question["what"] == "request"
        assert question["client"] != "Trimtab agent"
        assert question["request"]["method"] == "POST"
        code, out, err = results[0]
        assert code == 0, err
        assert f"POST {site.url(SHOP, 'api/buy')} was held: not sent" in out
        assert site.sent("/api/buy") == []


async def test_a_redirect_of_an_allowed_request_is_not_asked_again(
    host: Host, site: Recorder
) -> None:
    """A POST the person let go that the site redirects (307) within itself goes on to
    the new address without a second question."""
    pay = eid(await snapshot(host), "button", "Pay the invoice")
    await host.tool("click", id=pay)
    assert len(request_questions(host)) == 1
    assert [r.body for r in site.sent("/api/redirect")] == ["invoice=7"]
    assert [r.body for r in site.sent("/api/after")] == ["invoice=7"]
    assert await status(host) == "The payment went through"


async def test_a_request_from_another_sites_frame_to_the_shop_is_held(
    page: PageTarget, site: Recorder, nursery: trio.Nursery
) -> None:
    """A click inside another site's frame (out of process) whose script POSTs to the
    shop is held in the frame's own session and, refused, never reaches the shop."""
    async with open_host(page, site.url(SHOP, "guard-frame.html"), nursery) as host:
        claim = eid(await snapshot(host), "button", "Claim the reward")
        # The partner's frame is out of process: reached through a session of its own.
        assert len(page.child_sessions()) == 1
        # Acting inside the partner's frame is acting on its site: the task may.
        host.state.sites.remember(SESSION, site_of(site.url(TRACKER, "")), always=False)
        host.person.allow = False
        answer = await host.tool("click", id=claim)
        (question,) = request_questions(host)
        assert question["request"]["url"] == site.url(SHOP, "api/buy")
        assert site.sent("/api/buy") == []
        assert "The claim failed" in answer["content"]


async def test_a_request_held_while_the_page_shows_a_dialog_is_still_decided(
    host: Host, site: Recorder
) -> None:
    """While the person is asked about a held DELETE the page opens an alert (its own
    timer): the no still fails the request although the page is blocked in its
    dialog, the answer shows the dialog and says what was held, and the page, once the
    dialog is answered, sees the request fail; the site never does."""
    # The test answers itself, once the dialog is up: a wait a loaded machine cannot
    # outlast, as a person's. The panel is this one from the first call on: a request
    # can be judged in the trailing window of the call before it, whose questions go
    # to that call's panel.
    panel = SidePanel(host.person.send, timeout=60)
    host.person.panel = panel
    host.door = SidePanelDoor(host.state, panel)
    cancel = eid(await snapshot(host), "button", "Cancel all orders")
    host.person.allow = None
    answers: list[dict[str, Any]] = []
    async with trio.open_nursery() as nursery:

        async def click() -> None:
            answers.append(await host.tool("click", id=cancel))

        nursery.start_soon(click)
        await host.person.question.wait()
        await host.evaluate("setTimeout(() => alert('Your orders are being cancelled'), 0)")
        while host.page.open_dialog is None:
            await trio.sleep(0.02)
        (question,) = request_questions(host)
        assert panel.answer(question["ask"], allow=False), (
            host.person.withdrawn,
            [a["content"] for a in answers],
        )
    (answer,) = answers
    assert question["request"]["method"] == "DELETE"
    assert answer["dialog"]["message"] == "Your orders are being cancelled"
    assert f"DELETE {site.url(SHOP, 'api/orders')} was held: not sent" in answer["content"]
    closed = await host.tool("answer_dialog", accept=True)
    assert "Cancelling the orders failed (TypeError)" in closed["content"]
    assert site.sent("/api/orders") == []


async def test_a_cancelled_call_fails_what_it_held_and_holds_nothing_after(
    host: Host, site: Recorder
) -> None:
    """A call cancelled while the person is being asked about its request fails the
    request (never left paused), withdraws the question, and leaves nothing held: the
    page's own requests afterwards go straight through."""
    buy = eid(await snapshot(host), "button", "1-Click buy")
    host.person.allow = None
    async with trio.open_nursery() as nursery:

        async def click() -> None:
            await host.tool("click", id=buy)

        nursery.start_soon(click)
        await host.person.question.wait()
        nursery.cancel_scope.cancel()
    assert len(host.person.withdrawn) == 1
    with trio.fail_after(10):
        while await status(host) != "The purchase failed (TypeError)":
            await trio.sleep(0.05)
    assert site.sent("/api/buy") == []
    sent = "fetch('/api/after', {method: 'POST', body: 'later'}).then((r) => r.status)"
    assert await host.evaluate(sent) == 200
    assert [r.body for r in site.sent("/api/after")] == ["later"]
