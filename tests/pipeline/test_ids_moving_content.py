"""Ids of a page whose content moves by itself: a marquee or a CSS ticker puts its
links somewhere else at every capture, and the unchanged page must still give the
same ids, naming the same elements, every time.

Two things used to depend on where the moving content happened to be: whether a link
scrolled on past its clipping box was under a cover laid over that spot (a footer),
and whether an empty link's zero-width box came back rounded out to one layout unit
(1/64 px) by the fractional transform that moves it.
"""

from __future__ import annotations

import pytest
import trio

from pycdp_bridge import PageTarget, capture
from tests.support.pages import PRODUCT, page_url
from trimtab.pipeline import Compaction, compact

pytestmark = pytest.mark.browser

TIMEOUT = 60

# The links of tests/pages/ids-ticker.html a person sees pass by, in document order.
TICKER_LINKS = [
    "More ways to pay at the counter",
    "Refund rules for cancelled trains",
    "Menu and prices on board",
    "New timetable from 1 June",
    "Concessions for senior travellers",
    "About the loyalty programme",
    "Lost and found",
    "Bicycles on trains",
    "Free wifi at stations",
    "Book a ticket",
    "Contact us",
]


def _ids(compaction: Compaction) -> list[tuple[str, str, int]]:
    """Each control's id, name and node, in document order."""
    return [(eid, c.name, c.backend_node_id) for eid, c in compaction.controls.items()]


async def _snapshot(page: PageTarget) -> Compaction:
    with trio.fail_after(TIMEOUT):
        return compact(await capture(page, ax=PRODUCT.ax, rects=PRODUCT.rects))


async def _at_phase(page: PageTarget, ms: int) -> Compaction:
    """The page with every animation paused `ms` into its run."""
    await page.evaluate(
        f"document.getAnimations().forEach(a => {{ a.pause(); a.currentTime = {ms}; }})"
    )
    return await _snapshot(page)


async def test_ticker_gives_the_same_ids_at_every_phase(page: PageTarget) -> None:
    """A feed clipped by its box and scrolling under a footer, and a ticker with empty
    links, give the same ids on the same nodes wherever their animations stand."""
    with trio.fail_after(TIMEOUT):
        await page.navigate(page_url("ids-ticker.html"))
    first = _ids(await _at_phase(page, 0))
    assert [name for _, name, _ in first] == TICKER_LINKS
    # A quarter-second apart over the 10 s cycle: the feed's last link is under the
    # footer in the first phases only, and the empty links' boxes are 0 or 1/64 px.
    for ms in range(250, 10_000, 250):
        assert _ids(await _at_phase(page, ms)) == first, f"ids moved at {ms} ms"


async def test_moving_marquees_give_the_same_ids(page: PageTarget) -> None:
    """Real marquees moving fast, one across and one up past a footer, give the same
    ids on the same nodes in every capture of the unchanged page."""
    with trio.fail_after(TIMEOUT):
        await page.navigate(page_url("ids-marquee.html"))
    first = _ids(await _snapshot(page))
    names = [name for _, name, _ in first]
    assert "Free wifi at stations" in names
    assert "" not in names, "an empty link is no control"
    for _ in range(8):
        await trio.sleep(0.1)
        assert _ids(await _snapshot(page)) == first
