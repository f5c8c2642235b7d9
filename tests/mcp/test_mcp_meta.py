"""Every answer of ``trimtab mcp`` names its tab and its call in ``_meta.trimtab``: a
real server process and the ``mcp`` SDK's client, against a real host state and link
on a headless page (no extension), through each kind of answer: read, cached, a tool's
error, bad arguments, a site question refused, a submit refused, a tab refused."""

from __future__ import annotations

from typing import Any

import pytest
import trio
from mcp import Client

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.link_host import TAB, LinkHost, open_link_host
from tests.support.outside import call

pytestmark = pytest.mark.browser

# What `_meta.trimtab` holds on every tool answer, whatever it is.
KEYS = {"kind", "cached", "cached_from", "call_id", "host_ms", "downloads", "tab"}


def button(xml: str, label: str) -> str:
    """The id of the button labelled ``label`` in ``xml``."""
    return xml.split(f">{label}<")[0].rsplit('<button id="', 1)[1].split('"')[0]


async def refused(
    host: LinkHost, client: Client, tool: str, **arguments: Any
) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """Call ``tool`` and answer the person's question with no: the answer's text, its
    meta, and the question."""
    results: list[tuple[str, bool, dict[str, Any]]] = []
    async with trio.open_nursery() as nursery:

        async def go() -> None:
            results.append(await call(client, tool, **arguments))

        nursery.start_soon(go)
        question = await host.answer(False)
    ((text, is_error, meta),) = results
    assert is_error, text
    return text, meta, question


async def test_every_kind_of_answer_names_its_tab_and_call(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Each answer that reached the host names the tab and a call number of its own (a
    cached read its own and the one it repeats), refusals by the person or a site
    question included; one refused before it reached the host names its tab and no
    number."""
    async with (
        open_link_host(page, pages_server.url("consent-shop.html")) as host,
        host.mcp_client() as client,
    ):
        answers: dict[str, dict[str, Any]] = {}
        # Not shared yet: the person is asked for the tab, and says no.
        text, answers["tab refused"], question = await refused(
            host, client, "capture_snapshot", tab=TAB
        )
        assert question["what"] == "tab"
        assert text.startswith("forbidden: tab ")
        await host.share(TAB)

        xml, is_error, answers["read"] = await call(client, "capture_snapshot", tab=TAB)
        assert not is_error, xml
        again, _, answers["cached"] = await call(client, "capture_snapshot", tab=TAB)
        assert answers["cached"]["cached"], again
        assert answers["cached"]["cached_from"] == answers["read"]["call_id"]

        text, is_error, answers["tool error"] = await call(client, "click", tab=TAB, id="zz9")
        assert is_error, text
        # Checked by the host: a new tab goes to a web page only.
        text, is_error, answers["bad arguments"] = await call(
            client, "new_tab", tab=TAB, url="ftp://files.test/"
        )
        assert is_error
        assert "bad arguments for new_tab" in text

        # Another site (localhost is not 127.0.0.1): the person is asked, and says no.
        away = f"http://localhost:{pages_server.port}/handlers-shop.html"
        text, answers["site refused"], question = await refused(
            host, client, "navigate", tab=TAB, url=away
        )
        assert question["what"] == "site"
        assert "the person refused" in text

        text, answers["submit refused"], question = await refused(
            host, client, "click", tab=TAB, id=button(xml, "Buy now")
        )
        assert question["what"] == "submit"
        assert "Not done" in text

        numbers = []
        for kind, meta in answers.items():
            assert set(meta) == KEYS, kind
            assert meta["tab"] == TAB, kind
            assert isinstance(meta["call_id"], int), kind
            numbers.append(meta["call_id"])
        # One sequence: each answer its own number, in the order they were called.
        assert numbers == sorted(set(numbers))

        # Refused by trimtab mcp itself, before the host saw a call: no number to give.
        text, is_error, meta = await call(client, "click", tab=TAB, id="x", force=True)
        assert is_error
        assert text.startswith("click has no argument 'force'")
        assert set(meta) == KEYS
        assert (meta["tab"], meta["call_id"]) == (TAB, None)
        text, is_error, meta = await call(client, "no_such_tool", tab=str(TAB))
        assert is_error
        assert (meta["tab"], meta["call_id"]) == (TAB, None)
