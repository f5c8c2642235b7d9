"""Reading our XML in tests: lxml XPath helpers typed for mypy."""

from __future__ import annotations

import re
from html import unescape

from lxml import etree

__all__ = [
    "control_id",
    "eid_of",
    "element_ids",
    "folded",
    "id_matching",
    "ids_shown",
    "link_id",
    "link_texts",
    "links_of",
    "listed_id",
    "listed_items",
    "listed_lines",
    "text_of",
    "texts",
    "xp",
    "xp_strings",
]

_LIST = re.compile(r"<links\b[^>]*>\n(.*?)\n</links>", re.DOTALL)
_LISTS = re.compile(r"<(links|buttons)\b[^>]*>\n(.*?)\n</\1>", re.DOTALL)


def xp(element: etree._Element, expr: str) -> list[etree._Element]:
    """The elements an XPath expression selects."""
    found = element.xpath(expr)
    assert isinstance(found, list)
    return [e for e in found if isinstance(e, etree._Element)]


def xp_strings(element: etree._Element, expr: str) -> list[str]:
    """The strings (attribute values, text) an XPath expression selects."""
    found = element.xpath(expr)
    assert isinstance(found, list)
    return [str(s) for s in found if isinstance(s, str)]


def texts(element: etree._Element) -> list[str]:
    """The text pieces under an element."""
    return [t if isinstance(t, str) else t.decode() for t in element.itertext()]


def folded(text: str) -> str:
    """Whitespace runs folded to one space, ends trimmed."""
    return " ".join(text.split())


def text_of(element: etree._Element) -> str:
    """All text under an element, whitespace folded."""
    return folded(" ".join(texts(element)))


def link_id(xml: str, text: str) -> str | None:
    """The id of the link that reads `text` in page XML, as FORMAT.md says to read it:
    `<a id="X" ...>text</a>`, or the line `X text` of a `<links>` list."""
    element = re.search(rf'<a id="([^"]+)"[^>]*>{re.escape(text)}</a>', xml)
    if element is not None:
        return element[1]
    for listed in _LIST.finditer(xml):
        for line in listed[1].split("\n"):
            eid, _, shown = line.partition(" ")
            if unescape(shown) == text:
                return eid
    return None


def ids_shown(xml: str) -> int:
    """How many element ids page XML shows: `id` attributes, and one per line of a
    `<links>` or `<buttons>` list."""
    listed = sum(match[2].count("\n") + 1 for match in _LISTS.finditer(xml))
    return xml.count(' id="') + listed


def listed_items(element: etree._Element) -> list[tuple[str, str]]:
    """The lines of a `<links>` or `<buttons>` list: (id, text folded)."""
    lines = (element.text or "").strip("\n").split("\n")
    return [(eid, folded(text)) for eid, _, text in (line.partition(" ") for line in lines)]


def links_of(element: etree._Element) -> list[tuple[str, str]]:
    """The links under an element, in document order, as (id, text): `<a>` elements
    and the lines of `<links>` lists, read as FORMAT.md says."""
    found: list[tuple[str, str]] = []
    for inner in element.iter():
        if inner.tag == "a":
            found.append((str(inner.get("id", "")), text_of(inner)))
        elif inner.tag == "links":
            found.extend(listed_items(inner))
    return found


def link_texts(element: etree._Element) -> list[str]:
    """The texts of the links under an element, in document order (see `links_of`)."""
    return [text for _, text in links_of(element)]


def element_ids(element: etree._Element) -> list[str]:
    """Every element id under an element, in document order: `id` attributes and the
    ids that start the lines of `<links>` and `<buttons>` lists."""
    found: list[str] = []
    for inner in element.iter():
        if inner.tag in ("links", "buttons"):
            found.extend(eid for eid, _ in listed_items(inner))
        elif inner.get("id") is not None:
            found.append(str(inner.get("id")))
    return found


_LISTED_BY_TAG = {"a": "links", "button": "buttons"}
#: The lists whose lines are each an element: its id, a space, its text (FORMAT.md).
LIST_TAGS = frozenset(_LISTED_BY_TAG.values())


def listed_lines(xml: str, tag: str) -> list[tuple[int, str, str]]:
    """The `tag` elements (`a` or `button`) that page XML writes as lines of a list:
    (offset of the line in `xml`, id, text as written), in document order."""
    listing = _LISTED_BY_TAG.get(tag)
    if listing is None:
        return []
    found: list[tuple[int, str, str]] = []
    for block in re.finditer(rf"<{listing}\b[^>]*>\n(.*?)\n</{listing}>", xml, re.DOTALL):
        offset = block.start(1)
        for line in block[1].split("\n"):
            eid, _, text = line.partition(" ")
            found.append((offset, eid, text))
            offset += len(line) + 1
    return found


def eid_of(xml: str, tag: str, text: str) -> str:
    """The id of the first `<tag ...>` whose markup, text or the text right after it has
    `text`, or of the first line of a `<links>`/`<buttons>` list whose text has it."""
    found = [
        (match.start(), match.group(1))
        for match in re.finditer(rf'<{tag} id="([^"]+)"(?:[^>]*/>|[^>]*>[^<]*</{tag}>)[^<]*', xml)
        if text in match.group(0)
    ]
    found += [(at, eid) for at, eid, shown in listed_lines(xml, tag) if text in shown]
    if found:
        return min(found)[1]
    raise AssertionError(f"no <{tag}> with {text!r} in:\n{xml}")


def listed_id(xml: str, tag: str, text: str) -> str | None:
    """The id of the first `tag` (`a` or `button`) written as a line of a list whose
    text has `text`; None when no line has it."""
    for _, eid, shown in listed_lines(xml, tag):
        if text in shown:
            return eid
    return None


def control_id(xml: str, tag: str, text: str) -> str:
    """The id of the `tag` element that reads `text`: ``<tag id="X" ...>text<``, a
    field right after its label (``text <tag id="X"``), or the first line of a
    `<links>`/`<buttons>` list whose text has it; AssertionError when none does."""
    found = re.search(rf'<{tag} id="([^"]+)"[^>]*>{re.escape(text)}<', xml)
    if found is None:
        found = re.search(rf'{re.escape(text)}\s*<{tag} id="([^"]+)"', xml)
    if found is not None:
        return found.group(1)
    listed = listed_id(xml, tag, text)
    assert listed is not None, f"no <{tag}> {text!r} in {xml}"
    return listed


def id_matching(xml: str, pattern: str) -> str:
    """The id of the first element whose text, or else whose markup after its id,
    matches the regular expression `pattern`; AssertionError when none does."""
    found = re.search(rf'<[^>]* id="(\w+)"[^>]*>{pattern}', xml) or re.search(
        rf'id="(\w+)"[^>]*{pattern}', xml
    )
    assert found is not None, f"{pattern!r} not in {xml[:2000]}"
    return found.group(1)
