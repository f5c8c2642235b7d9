"""The capture behind a snapshot: a page model of one document.

The DOM tree, DOMSnapshot and the accessibility data are separate commands, and a
navigation between them would join two pages: `capture_document` takes the capture
again when it saw the page navigate, and gives up with `PageChangedError`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pycdp_bridge import PageModel, Target
from pycdp_bridge import protocol as cdp

__all__ = ["CAPTURE_ATTEMPTS", "PageChangedError", "capture_document"]

# A capture that saw the page navigate is taken again, this many times at most.
CAPTURE_ATTEMPTS = 3


class PageChangedError(Exception):
    """The page navigated during every capture attempt; no consistent view exists yet."""

    def __init__(self, attempts: int) -> None:
        super().__init__(
            f"the page navigated while it was being captured ({attempts} attempts); "
            "take a snapshot again once it has loaded"
        )
        self.attempts = attempts


async def capture_document(
    target: Target, capture_once: Callable[[Mapping[str, Any]], Awaitable[PageModel]]
) -> PageModel:
    """A capture (`capture_once`) of one document: the capture reads the main frame's
    loader after its commands (`navigated`), and one that saw the page navigate is
    taken again; PageChangedError after `CAPTURE_ATTEMPTS` of them."""
    for _ in range(CAPTURE_ATTEMPTS):
        # Asked and answered before the capture starts (a navigation the browser
        # commits ahead of the capture's calls is seen), and handed to the capture as
        # its first frame tree, which it would otherwise ask for with its other calls.
        tree = await target.execute(cdp.page_get_frame_tree())
        before = str(tree["frameTree"]["frame"].get("loaderId", ""))
        model = await capture_once(tree)
        if not model.navigated and model.document_id == before:
            return model
    raise PageChangedError(CAPTURE_ATTEMPTS)
