"""How a refusal names an element, or what covers it: as an escaped tag the model
reads like the page's own (``<button id="z1c">Buy now</button>``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..pipeline import xml

if TYPE_CHECKING:
    # Only their types: ``_element`` builds them, and names them through this module.
    from ._element import ElementInfo, Located

__all__ = ["cover_description", "describe"]


def describe(element: Located, info: ElementInfo) -> str:
    """How a refusal names the element: ``<button id="z1c">Buy now</button>``, escaped."""
    return xml.element(_tag_name(info.tag), {"id": element.eid or None}, content=info.text or None)


def cover_description(facts: Mapping[str, Any], eid: str | None) -> str:
    """How a refusal names what covers an element, from ``describe-cover.js``'s facts:
    ``<div id="k2" dom-id="consent" class="modal">Accept cookies</div>``, escaped, where
    ``id`` is Trimtab's element id (if it has one) and ``dom-id`` the page's own id."""
    attributes = {
        "id": eid,
        "dom-id": str(facts.get("id") or "") or None,
        "class": str(facts.get("cls") or "") or None,
    }
    text = str(facts.get("text") or "")
    return xml.element(_tag_name(str(facts.get("tag", ""))), attributes, content=text or None)


def _tag_name(tag: str) -> str:
    # The HTML parser accepts almost any tag name (`<a"b>`): only plain names are shown.
    return tag if _PLAIN_TAG.fullmatch(tag) else "element"


_PLAIN_TAG = re.compile(r"[a-z][a-z0-9-]{0,40}")
