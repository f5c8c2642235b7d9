"""Frames of another site: their content stands apart, under the site that wrote it.

Text inside an iframe of another site (an ad, a widget) is not the page's own
words: the builder (`_build`) puts such a frame's document in a region of its own,
``<region name="frame" site="https://ads.example">``, so the model reads whose text it
is. A frame of the same site stays merged into the page, as before. A frame is of
another site when its site differs from the site of the document around it, so a
frame of the shop inside an ad's frame is marked again as the shop's.

The site is ``trimtab.sites``' `site_of`, the one definition the host uses.
"""

from __future__ import annotations

from pycdp_bridge import Node, PageModel

from ..sites import site_of
from ._tree import OutNode

__all__ = ["FRAME_REGION", "FrameMarker", "document_url", "site_name"]

FRAME_REGION = "frame"

# Documents whose content their embedder wrote: they are of its site.
_INHERITING = ("about:", "data:", "javascript:")


def site_name(url: str) -> str:
    """The site of a document at ``url`` as the XML names it (``https://example.com``)."""
    return str(site_of(url))


def document_url(model: PageModel, frame: int) -> str:
    """The URL whose site a frame's document is of: its own, or for a document its
    embedder wrote (``about:blank``, ``about:srcdoc``, ``data:``) its embedder's."""
    while True:
        current = model.frames[frame]
        url = current.url
        if (url and not url.startswith(_INHERITING)) or current.owner < 0:
            return url or model.url
        frame = model.nodes[current.owner].frame


class FrameMarker:
    """The builder's part that puts frames of another site in regions of their own."""

    model: PageModel
    region_path: list[str]
    heading_stack: list[str]
    line_open: bool
    # The site of each document the walk is in, innermost last.
    sites: list[str]

    def walk_children(self, node: Node, out: list[OutNode | str], depth: int) -> None:
        raise NotImplementedError

    def walk_document(self, node: Node, out: list[OutNode | str], depth: int) -> None:
        """A frame's document (or a shadow root): merged into the page when it is of
        the site around it, else in a ``frame`` region naming its site."""
        if node.parent < 0 or node.name != "#document":
            self.walk_children(node, out, depth)
            return
        site = site_name(document_url(self.model, node.frame))
        if site == self.sites[-1]:
            self.walk_children(node, out, depth)
            return
        region = OutNode("region", [("name", FRAME_REGION), ("site", site)], node=node.index)
        self.line_open = False
        self.sites.append(site)
        self.region_path.append(FRAME_REGION)
        self.heading_stack.append("")
        self.walk_children(node, region.children, depth)
        self.heading_stack.pop()
        self.region_path.pop()
        self.sites.pop()
        # A frame with nothing to show (a tracking pixel) is left out, as an empty
        # landmark is.
        if any(isinstance(c, OutNode) or c.strip() for c in region.children):
            out.append(region)
        self.line_open = False
