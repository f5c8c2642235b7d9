"""Frames of another site: their content stands apart, under the site that wrote it.

Text inside an iframe of another site (an ad, a widget) is not the page's own
words: the builder (`_build`) puts such a frame's document in a region of its own,
``<region name="frame" site="https://ads.example">``, so the model reads whose text it
is. A frame of the same site stays merged into the page, as before. A frame is of
another site when its site differs from the site of the document around it, so a
frame of the shop inside an ad's frame is marked again as the shop's.

`site_of_url` is the one place the pipeline computes a site (scheme and registrable
domain). The host's own rule is ``trimtab.envelope``'s, which this package may not
import (its floor is below the envelope); until it is passed in, this one keeps to
the same definition with a short list of two-label public suffixes.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from pycdp_bridge import Node, PageModel

from ._tree import OutNode

__all__ = ["FRAME_REGION", "FrameMarker", "document_url", "site_of_url"]

FRAME_REGION = "frame"

# Public suffixes of two labels common enough to matter (the full list is the
# envelope's business): under them the registrable domain has three labels.
_TWO_LABEL_SUFFIXES = frozenset(
    {
        "co.uk", "org.uk", "ac.uk", "gov.uk", "me.uk", "ltd.uk", "plc.uk", "net.uk",
        "com.au", "net.au", "org.au", "edu.au", "gov.au", "co.nz", "org.nz", "co.jp",
        "ne.jp", "or.jp", "ac.jp", "co.kr", "or.kr", "com.br", "net.br", "org.br",
        "com.cn", "net.cn", "org.cn", "co.in", "net.in", "org.in", "com.mx", "com.tr",
        "co.za", "com.sg", "com.hk", "com.tw", "co.il", "com.ar", "co.id", "com.my",
        "github.io", "gitlab.io", "herokuapp.com", "appspot.com", "blogspot.com",
        "netlify.app", "vercel.app", "pages.dev", "workers.dev", "web.app",
        "firebaseapp.com", "azurewebsites.net", "cloudfront.net", "s3.amazonaws.com",
    }
)  # fmt: skip
# Documents whose content their embedder wrote: they are of its site.
_INHERITING = ("about:", "data:", "javascript:")


def site_of_url(url: str) -> str:
    """The site of a URL: its scheme and registrable domain (``https://example.co.uk``);
    an IP address or a one-label host is its own domain; the port is not part of it.
    A URL without a host (``file:``) is its scheme alone."""
    if url.startswith("blob:"):
        url = url[len("blob:") :]
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").rstrip(".")
    except ValueError:
        return url.split(":", 1)[0].lower() + ":"
    scheme = parts.scheme.lower()
    if not host:
        return f"{scheme}:"
    return f"{scheme}://{_registrable(host)}"


def _registrable(host: str) -> str:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        pass
    else:
        return host
    labels = host.split(".")
    if len(labels) <= 2:
        return host
    keep = 3 if ".".join(labels[-2:]) in _TWO_LABEL_SUFFIXES else 2
    return ".".join(labels[-keep:])


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
        site = site_of_url(document_url(self.model, node.frame))
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
