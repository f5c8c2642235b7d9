"""The capture behind a snapshot: a page model of one document.

The DOM tree, DOMSnapshot and the accessibility data are separate commands, and a
navigation between them would join two pages: `capture_document` takes the capture
again when it saw the page navigate, and gives up with `PageChangedError`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from pycdp_bridge import PageModel

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


async def capture_document(capture_once: Callable[[], Awaitable[PageModel]]) -> PageModel:
    """A capture (`capture_once`) of one document: the capture reads the main frame's
    loader with its first commands and again after its DOM calls have answered
    (`navigated`), and one that saw the page navigate is taken again;
    PageChangedError after `CAPTURE_ATTEMPTS` of them.

    No read of its own comes first: one session's commands run in the order they are
    sent, even across a cross-process navigation (the browser sends those not yet
    answered to the new renderer, in order), so the capture's two frame trees bracket
    its DOM calls. A navigation committed before all of them gives a capture of the new
    document alone, which is the page as it is."""
    for _ in range(CAPTURE_ATTEMPTS):
        model = await capture_once()
        if not model.navigated:
            return model
    raise PageChangedError(CAPTURE_ATTEMPTS)
