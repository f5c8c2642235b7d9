"""Which frame, and so which site, an element of the page is in.

The envelope decides what acting on a site needs (acting inside a frame of another
site is acting on that site); it learns where an element is from here: the URL of
the document that holds it (for a frame its embedder wrote, such as ``about:blank``,
the embedder's), as the latest snapshot captured it.
"""

from __future__ import annotations

import attrs

from ..pipeline import Control, site_of_url
from ..tab import Tab

__all__ = ["ElementFrame", "element_frame", "frame_of_control"]


@attrs.frozen
class ElementFrame:
    """Where an element is: its document's URL and site, and whether that site is
    another than the page's (the top document's)."""

    url: str
    site: str
    cross_site: bool


def frame_of_control(control: Control, page_url: str) -> ElementFrame:
    """Where the element `control` names is, on the page at `page_url`."""
    url = control.frame_url or page_url
    site = site_of_url(url)
    return ElementFrame(url, site, site != site_of_url(page_url))


def element_frame(tab: Tab, eid: str) -> ElementFrame | None:
    """Where the element `eid` of the tab's latest snapshot is; None when that snapshot
    gave no element this id (a located element's `Located.control` says it too)."""
    latest = tab.latest
    if latest is None or eid not in latest.controls:
        return None
    return frame_of_control(latest.controls[eid], latest.url)
