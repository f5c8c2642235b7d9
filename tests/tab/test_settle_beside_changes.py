"""Settling on the action's effect: a page that keeps changing elsewhere answers once
the part the action touched is quiet, and says what kept changing.
(How fast is measured by the bench, ``python -m tests.bench --only actions``.)"""

from __future__ import annotations

import pytest

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.xmltree import eid_of
from tests.tools.test_tools import act, open_tab, parse

pytestmark = pytest.mark.browser

UNSETTLED = "did not settle"


async def test_click_beside_a_ticker_answers_with_its_effect(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """On a page whose prices change every 100 ms, a click's effect (at once, or 150 ms
    later) is in the answer, with no "did not settle" note and a note naming the ticker."""
    tab, xml = await open_tab(page, pages_server.url("settle-ticker.html"))
    assert UNSETTLED not in xml
    added = await act(tab, "click", {"id": eid_of(xml, "button", "Add to watchlist")})
    assert "ACME added" in added.content
    assert UNSETTLED not in added.content
    assert 'span id="dax"' in added.content  # the note says what kept changing
    parse(added.content)
    details = await act(tab, "click", {"id": eid_of(xml, "button", "Show details")})
    assert "trades on the NASDAQ" in details.content
    assert UNSETTLED not in details.content


async def test_dialog_opened_by_a_click_is_waited_for(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A dialog the click opens counts as its effect: text filled into it after it
    appeared is in the answer, though the ticker never stops."""
    tab, xml = await open_tab(page, pages_server.url("settle-ticker.html"))
    result = await act(tab, "click", {"id": eid_of(xml, "button", "Remove ACME")})
    assert "Remove ACME from your watchlist?" in result.content
    assert UNSETTLED not in result.content


async def test_a_dialog_open_before_the_wait_began_is_still_waited_for(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A dialog the click's own handler opens is on the page before the wait for the
    click's effect begins (as when the host is slow to start waiting, on a loaded
    machine): text filled into it later still counts, so the answer has its last text."""
    tab, xml = await open_tab(page, pages_server.url("settle-ticker.html"))
    result = await act(tab, "click", {"id": eid_of(xml, "button", "Remove BOLT")})
    assert "Remove BOLT from your watchlist?" in result.content
    assert UNSETTLED not in result.content


async def test_reload_of_a_ticker_page_settles(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Loading a page that never stops changing answers without a "did not settle" note."""
    tab, _ = await open_tab(page, pages_server.url("settle-ticker.html"))
    reloaded = await act(tab, "reload", {})
    assert reloaded.kind == "baseline"
    assert UNSETTLED not in reloaded.content
    # Its regions may stand collapsed as unchanged since the first load.
    assert tab.latest is not None
    assert any("Live prices" in region.xml for region in tab.latest.regions)
