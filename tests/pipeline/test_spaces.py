"""Spaces between text nodes: a run of them reads as the one space the page shows."""

from __future__ import annotations

import pytest

from pycdp_bridge import PageTarget
from tests.support.pages import load_and_compact
from tests.support.xmltree import text_of, xp

pytestmark = pytest.mark.browser

PAGE = (
    "<!doctype html><html lang='en'><body><main>"
    "<p id='p'>Find <span> | </span> Jobs<b> </b> now <a href='/a'>Upload</a>   <i> </i>"
    " <a href='/b'>Sign in</a></p>"
    "<pre id='pre'>a   b</pre>"
    "</main></body></html>"
)


async def test_spaces_of_adjacent_text_nodes_collapse_as_the_page_shows_them(
    page: PageTarget,
) -> None:
    """Text nodes that end and start with spaces read with one space between them, the
    line the page's innerText shows; preformatted text keeps every space."""
    loaded = await load_and_compact(page, PAGE)
    shown = str(await page.evaluate("document.getElementById('p').innerText"))
    [line] = [line for line in loaded.compaction.xml.split("\n") if line.startswith("Find")]
    assert "  " not in line, line
    assert text_of(loaded.tree.find(".//region")).startswith(" ".join(shown.split()))
    assert [text_of(a) for a in xp(loaded.tree, "//a")] == ["Upload", "Sign in"]
    assert "\na   b\n" in loaded.compaction.xml
