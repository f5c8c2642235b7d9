"""The page a routine's step runs on, as a pattern a later visit of that page matches.

A step keeps where it acted as a person names a page: its origin and path. The query
and the fragment are left out (a search's terms, a session's token, a scroll anchor
change from one visit to the next), and a path segment that holds a digit (an order
number, a date, an invoice id) matches any segment in its place.
"""

from __future__ import annotations

import re
import urllib.parse

__all__ = ["url_matches", "url_pattern"]

# One path segment in a pattern that stands for any segment.
ANY: str = "*"
_DIGIT = re.compile(r"\d")


def url_pattern(url: str) -> str:
    """The pattern of the page at ``url``: ``scheme://host[:port]/path`` with every
    path segment that holds a digit replaced by ``*`` (other schemes: the URL without
    its query and fragment)."""
    parts = urllib.parse.urlsplit(url)
    segments = [ANY if _DIGIT.search(part) else part for part in parts.path.split("/")]
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, "/".join(segments), "", ""))


def url_matches(pattern: str, url: str) -> bool:
    """Whether the page at ``url`` is the page ``pattern`` names (a segment ``*`` takes
    any one segment)."""
    expected = urllib.parse.urlsplit(pattern)
    found = urllib.parse.urlsplit(url)
    if (expected.scheme, expected.netloc) != (found.scheme, found.netloc):
        return False
    wanted, got = expected.path.split("/"), found.path.split("/")
    return len(wanted) == len(got) and all(
        want in (ANY, have) for want, have in zip(wanted, got, strict=True)
    )
