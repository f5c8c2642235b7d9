"""What a person reads next to an element: the other text on its line of the page XML.

A table row, a list item and a line of a form are one line of the XML, so the text
beside a control there is what tells it from its equals ("Headlamp | 24.00 |" beside
the second "Add to cart"). A row is known by its first cell (`row_key`): a price that
changed does not make it another row.
"""

from __future__ import annotations

import html
import re
from typing import Final

__all__ = ["near_text", "near_texts", "row_key"]

_ID: Final = re.compile(r'<(\w+) id="([^"]+)"')
_TAG: Final = re.compile(r"<[^>]*>")
_MAX_NEAR: Final = 200


def near_texts(xml: str) -> dict[str, str]:
    """Each element id of the page XML → the text on its line outside the element
    itself, whitespace folded (at most `_MAX_NEAR` characters)."""
    found: dict[str, str] = {}
    for line in xml.splitlines():
        if ' id="' not in line:
            continue
        for match in _ID.finditer(line):
            tag, eid = match.groups()
            rest = line[: match.start()] + _without_element(line[match.start() :], tag)
            text = " ".join(html.unescape(_TAG.sub(" ", rest)).split())
            found[eid] = text[:_MAX_NEAR]
    return found


def near_text(xml: str, eid: str) -> str:
    """`near_texts` of one element id (its line found directly: a routine's step asks
    for a few elements of a page, not for all of them)."""
    at = xml.find(f' id="{eid}"')
    if at < 0:
        return ""
    start = xml.rfind("\n", 0, at) + 1
    end = xml.find("\n", at)
    return near_texts(xml[start : end if end >= 0 else len(xml)]).get(eid, "")


def _without_element(line: str, tag: str) -> str:
    """``line`` (which starts with an element's start tag) from after that element."""
    start_end = line.find(">")
    if start_end < 0:
        return ""
    if line[start_end - 1] == "/":
        return line[start_end + 1 :]
    close = line.find(f"</{tag}>", start_end)
    return "" if close < 0 else line[close + len(tag) + 3 :]


def row_key(near: str) -> str:
    """The part of ``near`` a row is known by: its first cell (before ``|``), folded."""
    return " ".join(near.split("|", 1)[0].split()).casefold()
