"""What the inspector shows beside a snapshot: the page's raw HTML and visible text tokens."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any, Final, Literal

import trio

from pycdp_bridge import CDPError, Target, call_on, evaluate
from pycdp_bridge import protocol as cdp

from ..pipeline import count_tokens
from ._scripts import applied, page_script

__all__ = ["page_token_counts"]

# outerHTML is read in slices: one relayed result must stay under the 8 MiB frame
# limit even when every character is escaped to six bytes of JSON.
_HTML_SLICE: Final = 1_000_000


async def page_token_counts(target: Target) -> dict[str, int]:
    """``raw_tokens`` (outerHTML) and ``text_tokens`` (body.innerText) of the page."""
    html = await _read_slices(target, "html")
    text = await _read_slices(target, "text")
    # Counting megabytes of HTML takes a while; keep the event loop (and the relay) free.
    raw_tokens, text_tokens = await trio.to_thread.run_sync(_count_both, html, text)
    return {"raw_tokens": raw_tokens, "text_tokens": text_tokens}


def _count_both(html: str, text: str) -> tuple[int, int]:
    return count_tokens(html), count_tokens(text)


async def _read_slices(target: Target, which: Literal["html", "text"]) -> str:
    """The page's markup (`html`) or visible text (`text`), read in slices that each
    fit in one relay message.

    A short string comes back at once; a long one stays in the page as a ``String``
    object (no global of the page is touched) and is read a slice at a time.
    """
    source = applied(page_script("trimtab.tab", "page-string.js"), which, _HTML_SLICE)
    result: Mapping[str, Any] = await evaluate(target, source, return_by_value=False)
    if "objectId" not in result:
        return str(result.get("value", ""))
    handle = str(result["objectId"])
    parts: list[str] = []
    try:
        start = 0
        while True:
            piece = await call_on(
                target,
                handle,
                page_script("trimtab.tab", "string-slice.js"),
                start,
                start + _HTML_SLICE,
            )
            text = str(piece or "")
            if not text:
                break
            parts.append(text)
            start += _HTML_SLICE
    finally:
        with contextlib.suppress(CDPError):
            await target.execute(cdp.runtime_release_object(handle))
    return "".join(parts)
