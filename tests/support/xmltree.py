"""Reading our XML in tests: lxml XPath helpers typed for mypy."""

from __future__ import annotations

from lxml import etree

__all__ = ["folded", "text_of", "texts", "xp", "xp_strings"]


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
