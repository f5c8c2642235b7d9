"""The untrusted block: where page data begins and ends in what an outside model reads.

The syntax is the side panel agent's (``extension/agent/untrusted.js``), documented
once in FORMAT.md: ``<<<PAGE DATA X>>>``, the data, ``<<<END PAGE DATA X>>>``, X a
marker drawn per link session from the OS's cryptographic generator. No page can
read the marker, and no page string can write a marker at all: inside a block,
every ``<`` that starts ``<<<`` is written ``&lt;``, so the block ends exactly once.
"""

from __future__ import annotations

import re
import secrets
from typing import Final

__all__ = ["new_marker", "page_data"]

# Any `<` followed by two more: the first `<` of every run of three, wherever it
# starts, so no three raw `<` remain side by side (`<<<<` becomes `&lt;&lt;<<`).
_OPENS_A_MARKER: Final = re.compile(r"<(?=<<)")


def new_marker() -> str:
    """A marker no page can guess: 64 random bits, as the side panel's."""
    return secrets.token_hex(8)


def page_data(text: str, marker: str) -> str:
    """``text`` as one untrusted block marked with ``marker``."""
    inside = _OPENS_A_MARKER.sub("&lt;", text)
    return f"<<<PAGE DATA {marker}>>>\n{inside}\n<<<END PAGE DATA {marker}>>>"
