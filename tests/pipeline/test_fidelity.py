"""Fidelity on real pages, judged by the oracle: innerText's words and the AX tree's controls."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from pycdp_bridge import PageTarget, capture
from tests.support.oracle import judge
from trimtab.pipeline import compact

TEXT_TARGET = 0.995

# One page per kind, each from a different site; `make bench` measures all of them.
PAGES = [
    "pages/ebay-home-2017",  # ecommerce, 1.5k elements, a select with many options
    "pages/indeed-search-2017",  # form, complete CSS
    "pages/reddit-front-2021",  # list, complete CSS
    "pages/yahoo-home-gumbo",  # homepage, inline-block link rows ("glued" innerText)
    "pages/theverge-article",  # article
    "pages/ietf-draft",  # docs, complete CSS, long text
]

pytestmark = [pytest.mark.browser, pytest.mark.corpus]


@pytest.mark.parametrize("item", PAGES)
async def test_corpus_page_is_lossless(corpus: Path, page: PageTarget, item: str) -> None:
    """Our XML parses and holds >= 99.5% of innerText's words and every rendered AX control."""
    path = corpus / item / "index.html"
    if not path.is_file():
        pytest.skip(f"{item} is not in this corpus ({path} absent)")
    await page.navigate(path.resolve().as_uri(), timeout=45)
    model = await capture(page)
    compaction = compact(model)
    verdict = await judge(page, model, compaction)
    etree.fromstring(compaction.xml.encode("utf-8"))  # raises, naming the line, if not XML
    assert verdict.xml_error is None, f"{item}: {verdict.summary()}"
    assert verdict.text.ratio >= TEXT_TARGET, f"{item}: {verdict.summary()}"
    assert verdict.interactive.ratio == 1.0, f"{item}: {verdict.summary()}"
