"""Where a page's tokens go: the tokens of an XML snapshot by what their characters are.

`token_breakdown` splits the count `count_tokens` gives into what each token is made
of: page text, ids, tags (names and brackets), attributes other than the id, region
and page wrappers (their tags with their attributes), and whitespace (line breaks and
whitespace alone between tags); in a `<links>` or `<buttons>` list the id that starts
each line is an id (and markup of `a` or `button`). A token made of characters of
several kinds (`">` ends an id and a tag) counts for each in proportion to its bytes,
so the parts add up to the count. Sans-I/O: it reads the XML the pipeline wrote, which
holds no comment, no CDATA and no `<` or `>` outside a tag (see `_xml`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import attrs

from ._render import LISTS
from ._tokens import token_ends
from ._xml import encodable

__all__ = ["PARTS", "TokenBreakdown", "token_breakdown"]

PARTS = ("text", "ids", "tags", "attributes", "regions", "whitespace")
_TEXT, _IDS, _TAGS, _ATTRIBUTES, _REGIONS, _WHITESPACE = range(len(PARTS))
# The wrappers of a snapshot: what holds the lines, not a line's content.
_WRAPPERS = frozenset({"page", "region"})

_TAG = re.compile(r"<(/?)([^\s/>]+)((?:\s+[^\s=/>]+=\"[^\"]*\")*)\s*(/?)>")
_ATTRIBUTE = re.compile(r"\s+([^\s=/>]+)=\"[^\"]*\"")
_LINE_BREAK = re.compile(r"\n+")
_LISTED = {listing: tag for tag, listing in LISTS.items()}


@attrs.frozen
class TokenBreakdown:
    """A text's tokens by kind (`PARTS`), and the markup of each kind of element."""

    tokens: int
    parts: Mapping[str, float]  # PARTS → tokens; they add up to `tokens`
    # Element name → the tokens of its tags, id and attributes (wrappers included).
    markup: Mapping[str, float]
    elements: Mapping[str, int]  # element name → how many the text holds
    # Attribute name → its tokens, of the attributes part (not ids, not wrappers).
    attributes: Mapping[str, float]

    def share(self, part: str) -> float:
        """The fraction of the tokens that `part` takes (0 for an empty text)."""
        return self.parts[part] / self.tokens if self.tokens else 0.0

    def summary(self) -> str:
        """One line: each part's tokens and share, as `trimtab inspect --stats` prints."""
        return ", ".join(
            f"{part} {self.parts[part]:.0f} ({100 * self.share(part):.0f}%)" for part in PARTS
        )

    def as_dict(self) -> dict[str, object]:
        def rounded(values: Mapping[str, float]) -> dict[str, float]:
            ranked = sorted(values.items(), key=lambda kv: -kv[1])
            return {key: round(value, 1) for key, value in ranked}

        return {
            "tokens": self.tokens,
            "parts": {part: round(self.parts[part], 1) for part in PARTS},
            "markup": rounded(self.markup),
            "elements": dict(sorted(self.elements.items(), key=lambda kv: -kv[1])),
            "attributes": rounded(self.attributes),
        }

    @classmethod
    def total(cls, breakdowns: Iterable[TokenBreakdown]) -> TokenBreakdown:
        """The breakdown of several texts together (each counted on its own)."""
        tokens = 0
        parts = dict.fromkeys(PARTS, 0.0)
        markup: dict[str, float] = {}
        elements: dict[str, int] = {}
        attributes: dict[str, float] = {}
        for one in breakdowns:
            tokens += one.tokens
            for into, values in (
                (parts, one.parts),
                (markup, one.markup),
                (attributes, one.attributes),
            ):
                for key, value in values.items():
                    into[key] = into.get(key, 0.0) + value
            for name, count in one.elements.items():
                elements[name] = elements.get(name, 0) + count
        return cls(tokens, parts, markup, elements, attributes)


def token_breakdown(xml: str, encoding: str = "o200k_base") -> TokenBreakdown:
    """The tokens of `xml` (a snapshot, or any XML the pipeline writes) by kind."""
    xml = encodable(xml)
    runs = list(_runs(xml))
    ends = token_ends(xml, encoding)
    parts = [0.0] * len(PARTS)
    markup: dict[str, float] = {}
    attributes: dict[str, float] = {}
    # Walk the tokens and the runs of characters of one kind together, both in bytes.
    k = 0
    run_end, kind, element, attribute = runs[0] if runs else (0, _TEXT, "", "")
    start = 0
    for end in ends:
        size = end - start
        at = start
        while at < end:
            while run_end <= at:
                k += 1
                run_end, kind, element, attribute = runs[k]
            upto = min(end, run_end)
            weight = (upto - at) / size
            parts[kind] += weight
            if element:
                markup[element] = markup.get(element, 0.0) + weight
            if attribute:
                attributes[attribute] = attributes.get(attribute, 0.0) + weight
            at = upto
        start = end
    counted: dict[str, int] = {}
    for match in _TAG.finditer(xml):
        if not match.group(1):
            counted[match.group(2)] = counted.get(match.group(2), 0) + 1
    return TokenBreakdown(
        len(ends), dict(zip(PARTS, parts, strict=True)), markup, counted, attributes
    )


def _size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def _runs(xml: str) -> Iterable[tuple[int, int, str, str]]:
    """The XML as runs of characters of one kind: (end byte, kind, element, attribute),
    the element named where the run is its markup, the attribute where it is one."""
    at = 0  # in bytes
    last = 0  # in characters
    listed = ""  # inside a list: the tag of its elements (each line starts with an id)
    for match in _TAG.finditer(xml):
        for piece, kind in _text_runs(xml[last : match.start()], bool(listed)):
            at += _size(piece)
            yield at, kind, listed if kind == _IDS else "", ""
        closing, name, attrs_xml, _ = match.groups()
        if name in _LISTED:
            listed = "" if closing else _LISTED[name]
        wrapper = name in _WRAPPERS
        bracket = _REGIONS if wrapper else _TAGS
        head = 1 + len(closing) + len(name)
        at += _size(xml[match.start() : match.start() + head])
        yield at, bracket, name, ""
        for attribute in _ATTRIBUTE.finditer(attrs_xml):
            key = attribute.group(1)
            kind = _REGIONS if wrapper else _IDS if key == "id" else _ATTRIBUTES
            at += _size(attribute.group(0))
            yield at, kind, name, key if kind == _ATTRIBUTES else ""
        rest = len(match.group(0)) - head - len(attrs_xml)
        at += rest  # whitespace, `/` and `>`: ASCII
        yield at, bracket, name, ""
        last = match.end()
    for piece, kind in _text_runs(xml[last:], False):
        at += _size(piece)
        yield at, kind, "", ""


def _text_runs(text: str, listing: bool) -> Iterable[tuple[str, int]]:
    """Content between tags: line breaks, and content of whitespace alone, are
    whitespace; in a list a line's first word is an id; the rest is text."""
    if not text:
        return
    if text.isspace():
        yield text, _WHITESPACE
        return
    last = 0
    for match in _LINE_BREAK.finditer(text):
        if match.start() > last:
            yield from _line_runs(text[last : match.start()], listing)
        yield match.group(0), _WHITESPACE
        last = match.end()
    if last < len(text):
        yield from _line_runs(text[last:], listing)


def _line_runs(line: str, listing: bool) -> Iterable[tuple[str, int]]:
    space = line.find(" ") if listing else -1
    if space > 0:
        yield line[:space], _IDS
        line = line[space:]
    yield line, _TEXT
