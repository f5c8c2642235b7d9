"""Load a small test page into a real tab, capture it and compact it.

A page is either the file name of a fixture under ``tests/pages`` or an HTML
string; strings are written to a temporary file and loaded over ``file://``, so the
tests never need a network.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

import attrs
from lxml import etree

from pycdp_bridge import PageModel, PageTarget, capture
from trimtab.pipeline import Compaction, compact
from trimtab.tab import SnapshotOptions

# Capture as the product does (a tab session's options), so the figures are its figures.
PRODUCT = SnapshotOptions()

__all__ = ["PAGES", "Loaded", "load", "load_and_compact", "page_url", "parse_xml"]

PAGES = Path(__file__).resolve().parents[1] / "pages"
_TMP = Path(tempfile.gettempdir()) / "trimtab-test-pages"


@attrs.frozen
class Loaded:
    """One capture of a page and its compaction, with the parsed XML."""

    model: PageModel
    compaction: Compaction
    tree: etree._Element

    @property
    def xml(self) -> str:
        return self.compaction.xml


def page_url(page: str) -> str:
    """The URL of a fixture name (``pipeline-x.html``) or of an HTML string; a URL
    (a corpus page's ``file://`` or a local server's) is returned as it is."""
    if page.startswith(("file:", "http:")):
        return page
    if "<" not in page:
        path = PAGES / page
        if not path.is_file():
            raise FileNotFoundError(path)
        return path.as_uri()
    _TMP.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(page.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    path = _TMP / f"{digest}.html"
    if not path.exists():
        path.write_text(page, encoding="utf-8")
    return path.as_uri()


async def load(target: PageTarget, page: str) -> PageModel:
    """Navigate the tab to the page (a fixture name, HTML or a URL) and capture it."""
    await target.navigate(page_url(page))
    return await capture(target, ax=PRODUCT.ax, rects=PRODUCT.rects)


def parse_xml(xml: str) -> etree._Element:
    """Parse an output with a real XML parser (raises on any malformed output)."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
    return etree.fromstring(xml.encode("utf-8"), parser)


async def load_and_compact(target: PageTarget, page: str) -> Loaded:
    """Load, capture and compact a page; the XML is parsed before it is returned."""
    model = await load(target, page)
    compaction = compact(model)
    return Loaded(model, compaction, parse_xml(compaction.xml))
