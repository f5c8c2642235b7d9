"""XML escaping: page text can never open a tag, close one, or start an attribute.

Every string that comes from the page goes through `text()` or `attr()`. Characters
XML 1.0 forbids (C0 controls other than tab/newline/CR, lone surrogates, U+FFFE,
U+FFFF) become U+FFFD, so a real parser accepts every document we write.

`encodable()` makes a page string safe for any encoder (lone surrogates, which UTF-8
cannot encode, become U+FFFD); the pipeline applies it where page strings enter its
results, so nothing downstream (token counts, JSON, logs, stdout) meets one.

`listed()` writes several page strings as one `|`-separated value (the options of a
select), with `|` and `\\` inside a string escaped so that the list reads back exactly.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

__all__ = ["attr", "element", "encodable", "end_tag", "listed", "start_tag", "text"]

_SURROGATE = re.compile("[\ud800-\udfff]")
_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")

# A raw CR would come back from any parser as LF (XML end-of-line handling).
_TEXT_TABLE = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "\r": "&#13;"})
# In attribute values whitespace characters other than space are normalised away
# by parsers unless written as character references.
_ATTR_TABLE = str.maketrans(
    {
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        '"': "&quot;",
        "\n": "&#10;",
        "\r": "&#13;",
        "\t": "&#9;",
    }
)


# In a list value a backslash escapes the next character: `\|` is a `|` inside an
# item, `\\` a backslash.
_LIST_TABLE = str.maketrans({"\\": "\\\\", "|": "\\|"})


def encodable(value: str) -> str:
    """`value` with every lone surrogate replaced by U+FFFD, so UTF-8 can encode it."""
    # isascii() is O(1) in CPython: most page strings never reach the search.
    if value.isascii() or not _SURROGATE.search(value):
        return value
    return _SURROGATE.sub("\ufffd", value)


def listed(items: Iterable[str]) -> str:
    """Page strings as one list value: `|` between items, `\\|` and `\\\\` inside one."""
    return "|".join(item.translate(_LIST_TABLE) for item in items)


def _clean(value: str) -> str:
    return _FORBIDDEN.sub("\ufffd", value) if _FORBIDDEN.search(value) else value


def text(value: str) -> str:
    """Escape page text for element content."""
    return _clean(value).translate(_TEXT_TABLE)


def attr(value: str) -> str:
    """Escape page text for a double-quoted attribute value."""
    return _clean(value).translate(_ATTR_TABLE)


# --- writing tags: every tag Trimtab writes outside the pipeline's renderer ------------

Attributes = Iterable[tuple[str, "str | int | float | bool | None"]] | Mapping[str, object]


def _attributes(attributes: Attributes) -> str:
    pairs = attributes.items() if isinstance(attributes, Mapping) else attributes
    out = []
    for name, value in pairs:
        if value is None or value is False:
            continue
        shown = "true" if value is True else str(value)
        out.append(f' {name}="{attr(shown)}"')
    return "".join(out)


def start_tag(name: str, attributes: Attributes = ()) -> str:
    """``<name a="v">``: attribute values escaped; None and False leave one out."""
    return f"<{name}{_attributes(attributes)}>"


def end_tag(name: str) -> str:
    """``</name>``."""
    return f"</{name}>"


def element(name: str, attributes: Attributes = (), *, content: str | None = None) -> str:
    """A whole element: ``<name a="v">content</name>`` (content escaped as text), or
    ``<name a="v"/>`` without content."""
    if content is None:
        return f"<{name}{_attributes(attributes)}/>"
    return f"{start_tag(name, attributes)}{text(content)}{end_tag(name)}"
