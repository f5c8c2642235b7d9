"""The consent of the host's ``tool`` request: nothing that submits is done without the
person's yes, asked during the call, and a yes acts for that one live call only."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import trio

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.handlers_host import SESSION, TAB, Host, open_host
from trimtab.tab import PageRevisions
from trimtab.wire import RequestError

pytestmark = pytest.mark.browser


@pytest.fixture
async def host(
    page: PageTarget, pages_server: StaticServer, nursery: trio.Nursery
) -> AsyncIterator[Host]:
    """Handlers of a host whose relay reaches the consent test shop."""
    async with open_host(page, pages_server.url("consent-shop.html"), nursery) as host:
        yield host


async def call(
    host: Host, name: str, args: dict[str, object], **extra: object
) -> dict[str, object]:
    return await host.request("tool", session=SESSION, tab=TAB, name=name, args=args, **extra)


async def open_the_confirm(host: Host) -> None:
    """The shop's "Empty the basket?" confirm, opened by the page's own timer."""
    await host.evaluate("setTimeout(() => document.getElementById('ask').click(), 0)")
    while host.page.open_dialog is None:
        await trio.sleep(0.02)


def buy_button(content: str) -> str:
    return content.split('type="submit">Buy now')[0].rsplit('<button id="', 1)[1].split('"')[0]


async def test_a_submit_acts_only_on_the_persons_yes_within_the_call(host: Host) -> None:
    """A submit asks the person during the call: a no does nothing and says so, a yes
    submits, and the yes is spent with its call (the next submit asks again)."""
    buy = buy_button(str((await host.tool("capture_snapshot"))["content"]))
    host.person.allow = False
    refused = await call(host, "click", {"id": buy})
    assert refused["consent"] == {"required": True, "granted": False}
    assert refused["is_error"] is True
    assert "the person refused" in str(refused["content"])
    assert await host.evaluate("location.pathname") == "/consent-shop.html"
    (question,) = host.person.asked
    assert question["what"] == "submit"
    assert question["tool"] == "click"
    assert question["tab"] == TAB
    assert question["client"] == "Trimtab agent"
    assert "submits a form" in question["reason"]
    assert "Buy now" in question["element"]
    assert question["eid"] == buy
    assert host.person.withdrawn == []
    host.person.allow = True
    done = await call(host, "click", {"id": buy})
    assert done["is_error"] is False, done["content"]
    assert done["consent"] == {"required": True, "granted": True}
    assert done["submitted"] is True
    assert done["unasked_submit"] is False
    assert "/tools-done.html" in str(await host.evaluate("location.pathname"))
    assert "/tools-done.html?" in str(done["url"])
    assert len(host.person.asked) == 2


async def test_a_cancelled_call_withdraws_its_question_and_a_late_yes_does_nothing(
    host: Host,
) -> None:
    """When the call that asked is cancelled, its question is withdrawn at once and the
    person's later yes finds no call to act for: nothing is submitted."""
    buy = buy_button(str((await host.tool("capture_snapshot"))["content"]))
    host.person.allow = None  # the person is slow
    with trio.move_on_after(30) as waited:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(call, host, "click", {"id": buy})
            await host.person.question.wait()
            nursery.cancel_scope.cancel()  # the client gave up on the call
    assert not waited.cancelled_caught
    (question,) = host.person.asked
    (withdrawn,) = host.person.withdrawn
    assert withdrawn["ask"] == question["ask"]
    assert host.person.panel is not None
    assert host.person.panel.answer(question["ask"], allow=True) is False
    await trio.sleep(0.5)
    assert await host.evaluate("location.pathname") == "/consent-shop.html"


async def test_nobody_answering_ends_the_call_with_a_plain_result(host: Host) -> None:
    """A question nobody answers within the wait is withdrawn, and the call's result says
    that nobody answered and where the person answers; nothing is done."""
    buy = buy_button(str((await host.tool("capture_snapshot"))["content"]))
    host.person.allow = None
    unanswered = await call(host, "click", {"id": buy})
    assert unanswered["is_error"] is True
    assert unanswered["consent"] == {"required": True, "granted": False}
    assert "nobody answered in the browser within 5 s" in str(unanswered["content"])
    assert "side panel" in str(unanswered["content"])
    assert [w["why"] for w in host.person.withdrawn] == ["nobody answered within 5 s"]
    assert await host.evaluate("location.pathname") == "/consent-shop.html"


async def test_ask_before_submit_off_submits_without_a_question(host: Host) -> None:
    """With the person's "ask before submitting" off, a submit runs with their standing
    consent: no question, and the reply says consent was required and granted."""
    buy = buy_button(str((await host.tool("capture_snapshot"))["content"]))
    done = await call(host, "click", {"id": buy}, ask_before_submit=False)
    assert done["consent"] == {"required": True, "granted": True}
    assert host.person.asked == []
    assert "/tools-done.html" in str(await host.evaluate("location.pathname"))


async def test_dialog_field_is_structured(host: Host) -> None:
    """The open dialog comes back as a structured field, not only as XML in the content."""
    await host.tool("capture_snapshot")
    await open_the_confirm(host)
    blocked = await call(host, "find", {"text": "basket"})
    assert blocked["dialog"] == {"type": "confirm", "message": "Empty the basket?", "default": None}
    declined = await call(host, "answer_dialog", {"accept": False})
    assert declined["dialog"] is None
    assert declined["consent"] == {"required": False, "granted": False}
    assert await host.evaluate("document.getElementById('log').textContent") == "kept"


async def test_a_dialog_that_opens_as_a_read_begins_is_the_reads_result(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dialog that opens after the host checked for one, but before the read syncs the
    page's revision, is the tool's result with its structured field, not a failed request."""
    await host.tool("capture_snapshot")
    sync = PageRevisions.sync

    async def dialog_first(self: PageRevisions) -> None:
        monkeypatch.setattr(PageRevisions, "sync", sync)
        await open_the_confirm(host)
        await sync(self)

    monkeypatch.setattr(PageRevisions, "sync", dialog_first)
    blocked = await call(host, "find", {"text": "basket"})
    assert blocked["dialog"] == {"type": "confirm", "message": "Empty the basket?", "default": None}
    assert "Empty the basket?" in str(blocked["content"])
    declined = await call(host, "answer_dialog", {"accept": False})
    assert declined["dialog"] is None
    assert await host.evaluate("document.getElementById('log').textContent") == "kept"


async def test_a_tab_closed_while_the_person_is_asked_withdraws_the_question(
    host: Host,
) -> None:
    """When the tab closes (its debugger detaches) while the person is being asked, the
    call ends with target_closed, the question is withdrawn, and a late yes does nothing."""
    buy = buy_button(str((await host.tool("capture_snapshot"))["content"]))
    host.person.allow = None
    errors: list[RequestError] = []

    async def click() -> None:
        try:
            await call(host, "click", {"id": buy})
        except RequestError as exc:
            errors.append(exc)

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(click)
            await host.person.question.wait()
            host.peer.detach("target_closed")
    (closed,) = errors
    assert closed.code == "target_closed"
    (question,) = host.person.asked
    (withdrawn,) = host.person.withdrawn
    assert withdrawn["ask"] == question["ask"]
    assert host.person.panel is not None
    assert host.person.panel.answer(question["ask"], allow=True) is False
    assert await host.evaluate("location.pathname") == "/consent-shop.html"


async def test_a_click_on_a_download_link_asks_unless_the_setting_is_off(
    page: PageTarget, pages_server: StaticServer, nursery: trio.Nursery
) -> None:
    """A click on a link with a download attribute (here on the icon inside it) asks
    what="download" before any input: a no clicks nothing; a plain link next to it does
    not ask; with "ask before submitting or downloading" off it clicks unasked."""
    async with open_host(page, pages_server.url("download-link.html"), nursery) as host:
        content = str((await host.tool("capture_snapshot"))["content"])
        save = content.split("The map of the ridge walk:")[1].split('<a id="')[1].split('"')[0]
        host.person.allow = False
        refused = await call(host, "click", {"id": save})
        assert refused["consent"] == {"required": True, "granted": False}
        assert [q["what"] for q in host.person.asked] == ["download"]
        assert await host.evaluate("document.getElementById('log').textContent") == "Clicks 0"
        read = content.split(">Read the notes<")[0].rsplit('<a id="', 1)[1].split('"')[0]
        done = await call(host, "click", {"id": read})
        assert done["consent"] == {"required": False, "granted": False}
        assert len(host.person.asked) == 1
        waived = await call(host, "click", {"id": save}, ask_before_submit=False)
        assert waived["consent"] == {"required": True, "granted": True}
        assert len(host.person.asked) == 1
        # The plain link, then the download link.
        assert await host.evaluate("document.getElementById('log').textContent") == "Clicks 2"
