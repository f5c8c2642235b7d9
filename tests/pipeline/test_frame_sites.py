"""Frames of another site are marked: their text stands in a ``frame`` region naming
the site, never merged into the page's own words, and the tools say which site an
element is in; a frame of the page's own site stays merged."""

from __future__ import annotations

import pytest
from lxml import etree

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from trimtab.sites import site_of
from trimtab.tab import Tab
from trimtab.tools import run_tool

pytestmark = pytest.mark.browser


def parse(xml: str) -> etree._Element:
    """Parse XML with a real parser (it must be well-formed)."""
    return etree.fromstring(xml.encode())


async def test_a_cross_site_frame_is_marked_with_its_site(
    page: PageTarget, pages_server: StaticServer, second_server: StaticServer
) -> None:
    """An ad frame of another site stands in ``<region name="frame" site="…">`` with its
    text and button inside; the same-site frame's text is merged into the page; the
    snapshot memory places the ad's button in the ad's frame, so in the ad's site."""
    tab = Tab.open(page)
    ad_origin = f"http://localhost:{second_server.port}"
    url = pages_server.url("frames-ads.html") + f"#ad={ad_origin}"
    loaded = await run_tool(tab, "navigate", {"url": url})
    assert not loaded.is_error, loaded.content
    tree = parse(loaded.content)
    (frame,) = tree.xpath("//region[@name='frame']")
    assert frame.get("site") == "http://localhost"
    assert "Claim your reward" in "".join(frame.itertext())
    (claim,) = frame.iter("button")
    main = tree.xpath("//region[@name='main']")[0]
    assert "Five stars from our customers" in (main.text or "") + "".join(
        child.tail or "" for child in main
    )
    assert "Claim your reward" not in "".join(
        [main.text or "", *(child.tail or "" for child in main)]
    )
    where = tab.memory.frame_url_of(str(claim.get("id")))
    assert where is not None
    assert where.startswith(ad_origin)
    assert str(site_of(where)) == "http://localhost"
    assert tab.memory.frame_url_of("nope") is None


async def test_acting_in_a_cross_site_frame_and_its_diff_keep_the_marker(
    page: PageTarget, pages_server: StaticServer, second_server: StaticServer
) -> None:
    """A change inside the ad frame comes back as a diff of the frame region, which
    still names the frame's site; a same-site page has no frame region at all."""
    tab = Tab.open(page)
    url = pages_server.url("frames-ads.html") + f"#ad=http://localhost:{second_server.port}"
    loaded = await run_tool(tab, "navigate", {"url": url})
    claim = parse(loaded.content).xpath("//region[@name='frame']//button")[0].get("id")
    clicked = await run_tool(tab, "click", {"id": claim})
    assert not clicked.is_error, clicked.content
    changed = parse(clicked.content).xpath("//region[@name='frame']")
    assert [region.get("site") for region in changed] == ["http://localhost"], clicked.content
    assert "Reward claimed" in "".join(changed[0].itertext())
    plain = await run_tool(tab, "navigate", {"url": pages_server.url("frames-ads.html")})
    assert 'name="frame"' not in plain.content
    assert "Five stars from our customers" in plain.content


async def test_a_frame_of_the_page_inside_a_cross_site_frame_is_marked_again(
    page: PageTarget, pages_server: StaticServer, second_server: StaticServer
) -> None:
    """A frame of the page's own site inside the ad's frame stands in a frame region of
    its own, naming the page's site: the marker always says whose text it holds."""
    tab = Tab.open(page)
    url = pages_server.url("frames-ads.html") + (
        f"#ad=http://localhost:{second_server.port}&back={pages_server.origin}"
    )
    loaded = await run_tool(tab, "navigate", {"url": url})
    assert not loaded.is_error, loaded.content
    tree = parse(loaded.content)
    (ad,) = tree.xpath("//region[@name='main']/region[@name='frame']")
    (inner,) = ad.xpath("region")
    assert (ad.get("site"), inner.get("site")) == ("http://localhost", "http://127.0.0.1")
    assert inner.get("name") == "frame-2"
    assert "Five stars from our customers" in "".join(inner.itertext())
    assert "Claim your reward" in (ad.text or "")
