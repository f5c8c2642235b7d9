"""The page a routine's step runs on, as a pattern a later visit of that page matches.

A step keeps where it acted as a person names a page: its origin and path. The query
and the fragment are left out (a search's terms, a session's token, a scroll anchor
change from one visit to the next), and a path segment that holds a digit (an order
number, a date, an invoice id) matches any segment in its place.

A step that submitted a form keeps where the form went (`SubmitForm`): its action as
such a pattern with the action's own query kept whole (a POST goes to the action as
written), and its method. The person's "don't ask again" mark on that step holds only
for a submission that matches it (`SubmitForm.matches`).
"""

from __future__ import annotations

import re
import urllib.parse

import attrs

from ..sites import site_of

__all__ = ["SubmitForm", "url_matches", "url_pattern"]

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


@attrs.frozen
class SubmitForm:
    """Where a step's form submission went, as the host predicted it before acting:
    the action's pattern (`url_pattern`, with the action's query, if any, kept whole)
    and the method (``GET``, ``POST``; ``DIALOG`` sends nothing)."""

    action: str
    method: str

    @classmethod
    def predicted(cls, action: str, method: str) -> SubmitForm:
        """The form the host's prediction read: its action URL and its method."""
        query = urllib.parse.urlsplit(action).query
        pattern = url_pattern(action) + (f"?{query}" if query else "")
        return cls(pattern, method.upper())

    @property
    def site(self) -> str:
        """The site it submits to (``trimtab.sites``)."""
        return str(site_of(self.action))

    def matches(self, method: str, url: str) -> bool:
        """Whether a submission with ``method`` to ``url`` goes where this one went:
        the same method, the page ``action`` names, and (but for a GET, whose query is
        the form's fields) the same query."""
        if method.upper() != self.method:
            return False
        parts = urllib.parse.urlsplit(self.action)
        if not url_matches(urllib.parse.urlunsplit((*parts[:3], "", "")), url):
            return False
        return self.method == "GET" or urllib.parse.urlsplit(url).query == parts.query

    def words(self) -> str:
        """The submission in words: ``a form sent by POST to https://shop.example/pay``."""
        return f"a form sent by {self.method} to {self.action}"
