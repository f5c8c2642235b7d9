"""The consent protocol of the host's ``tool`` request: nothing is done without consent,
and a consent token runs exactly the call it was issued for, once."""

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


async def test_consent_round_trip(host: Host) -> None:
    """A submit answers consent required and does nothing; a token for other arguments, a
    spent token and an unknown one are bad_consent; the right token submits once."""
    snapshot = await host.tool("capture_snapshot")
    content = str(snapshot["content"])
    buy = content.split('type="submit">Buy now')[0].rsplit('<button id="', 1)[1].split('"')[0]
    asked = await call(host, "click", {"id": buy})
    consent = asked["consent"]
    assert isinstance(consent, dict)
    assert consent["required"] is True
    assert consent["granted"] is False
    assert "submits a form" in consent["reason"]
    assert asked["is_error"] is True
    assert await host.evaluate("location.pathname") == "/consent-shop.html"
    with pytest.raises(RequestError) as other:
        await call(host, "click", {"id": "zz9"}, consent=consent["token"])
    assert other.value.code == "bad_consent"
    with pytest.raises(RequestError) as spent:
        # The mismatch spent it: asking again is the only way on.
        await call(host, "click", {"id": buy}, consent=consent["token"])
    assert spent.value.code == "bad_consent"
    again = await call(host, "click", {"id": buy})
    token = again["consent"]["token"]  # type: ignore[index]
    done = await call(host, "click", {"id": buy}, consent=token)
    assert done["is_error"] is False, done["content"]
    assert done["consent"] == {"required": True, "granted": True}
    assert done["submitted"] is True
    assert done["unasked_submit"] is False
    assert "/tools-done.html" in str(await host.evaluate("location.pathname"))
    with pytest.raises(RequestError) as reused:
        await call(host, "click", {"id": buy}, consent=token)
    assert reused.value.code == "bad_consent"


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
