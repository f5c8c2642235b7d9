"""Outside agents at once, end to end: two clients through real ``trimtab mcp``
processes, the real extension and host. The side panel lists every agent acting now
with a Stop for each (stopping one ends its call, its question withdrawn, and the
other goes on), and a frozen page in one client's tab never delays the other's."""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio

from tests.support import StaticServer
from tests.support.frozen import frozen_site
from tests.support.outside import (
    TIMEOUT,
    Places,
    browser,
    call,
    eid_on_line,
    mcp_client,
    places,
    share,
)

pytestmark = pytest.mark.browser


__all__ = ["places"]  # the fixture


async def _acting(panel: Any) -> list[dict[str, Any]]:
    """The rows of the panel's "acting now" list as the person sees them: text and the
    Stop button's title."""
    rows = await panel.evaluate(
        """JSON.stringify([...document.querySelectorAll('#agents-acting li')].map((li) => ({
          text: li.querySelector('span').textContent,
          stop: li.querySelector('button').title,
        })))"""
    )
    found: list[dict[str, Any]] = json.loads(rows)
    return found


async def test_the_panel_stops_one_outside_agent_and_the_other_goes_on(
    places: Places, pages_server: StaticServer
) -> None:
    """The side panel lists both outside clients, the one acting now with the tab it
    acts in; its Stop for that one ends its call waiting for the person (the question
    leaves the panel, the client is told it was stopped), and the other client's calls
    still work in its shared tab."""
    async with (
        browser(places) as ext,
        mcp_client(places, "agent-a") as first,
        mcp_client(places, "agent-b") as second,
    ):
        _target, shop = await ext.open_tab(pages_server.url("consent-shop.html"))
        _target, other = await ext.open_tab(pages_server.url("handlers-shop.html"))
        for tab in (shop, other):
            await ext.wait_loaded(tab)
        # The shop is not shared: agent-a's call on it waits for the person's answer.
        await share(ext, other)
        panel = await ext.open_side_panel()
        seen, is_error, _ = await call(second, "capture_snapshot", tab=other)
        assert not is_error, seen
        results: list[tuple[str, bool, dict[str, Any]]] = []
        async with trio.open_nursery() as nursery:

            async def read_unshared() -> None:
                results.append(await call(first, "capture_snapshot", tab=shop))

            nursery.start_soon(read_unshared)
            # The question shows, and the panel lists agent-a acting in the shop's tab.
            with trio.fail_after(TIMEOUT):
                while True:
                    rows = await _acting(panel)
                    texts = [row["text"] for row in rows]
                    if "agent-a 1.0: running capture_snapshot in “Checkout”" in texts:
                        break
                    await trio.sleep(0.1)
            assert "agent-b 1.0: connected, no call now" in texts
            asked = "trimtabPanel.questions.open.length"
            with trio.fail_after(TIMEOUT):
                while await panel.evaluate(asked) != 1:
                    assert not results, results
                    await trio.sleep(0.05)
            # The person stops agent-a alone.
            await panel.evaluate(
                "document.querySelector('#agents-acting button[title=\"Stop agent-a 1.0\"]')"
                ".click(); true"
            )
            with trio.fail_after(TIMEOUT):
                while not results:
                    await trio.sleep(0.05)
        text, is_error, _ = results[0]
        assert is_error
        assert "the person stopped this agent" in text
        with trio.fail_after(TIMEOUT):
            while await panel.evaluate(asked):
                await trio.sleep(0.05)
            while any(r["text"].startswith("agent-a") for r in await _acting(panel)):
                await trio.sleep(0.05)
        # agent-b goes on: it reads and clicks in its tab; the tabs stay shared.
        clicked, is_error, _ = await call(
            second, "click", tab=other, id=eid_on_line(seen, "Add to bag")
        )
        assert not is_error, clicked
        assert "Clicks: 1" in clicked
        assert await ext.worker.evaluate("trimtab.agents.status().shared.length") == 1
        # The panel hears the click end beside its answer: no order between the two.
        with trio.fail_after(TIMEOUT):
            while [r["text"] for r in await _acting(panel)] != [
                "agent-b 1.0: connected, no call now"
            ]:
                await trio.sleep(0.05)


@pytest.mark.long
async def test_a_frozen_page_in_one_clients_tab_never_delays_the_other(
    places: Places, pages_server: StaticServer
) -> None:
    """While one client's click waits on a page whose script keeps it busy (another
    site: its own renderer), the other client's snapshot and clicks in its own tab all
    end, through the same extension and host. (How fast is the concurrency bench's.)"""
    async with (
        frozen_site() as site,
        browser(places) as ext,
        mcp_client(places, "freezer") as freezer,
        mcp_client(places, "worker") as worker,
    ):
        _target, frozen = await ext.open_tab(site.url)
        _target, shop = await ext.open_tab(pages_server.url("handlers-shop.html"))
        for tab in (frozen, shop):
            await ext.wait_loaded(tab)
            await share(ext, tab)
        page, is_error, _ = await call(worker, "capture_snapshot", tab=shop)
        assert not is_error, page
        bag = eid_on_line(page, "Add to bag")
        xml, is_error, _ = await call(freezer, "capture_snapshot", tab=frozen)
        assert not is_error, xml
        froze: list[str] = []
        async with trio.open_nursery() as calls:

            async def click_freeze() -> None:
                text, is_error, _ = await call(
                    freezer, "click", tab=frozen, id=eid_on_line(xml, "Freeze the page")
                )
                assert not is_error, text
                froze.append(text)

            calls.start_soon(click_freeze)
            await site.frozen()
            with trio.move_on_after(TIMEOUT) as waited:
                for name, args in (("capture_snapshot", {}), *(("click", {"id": bag}),) * 3):
                    text, is_error, _ = await call(worker, name, tab=shop, **args)
                    assert not is_error, text
            assert not waited.cancelled_caught, "the worker's calls waited on the frozen tab"
            assert not froze, f"the frozen click ended before the worker's calls: {froze}"
            site.release()
        assert len(froze) == 1
