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

__all__ = ["cover_description", "describe", "names_layer"]


def describe(element: Located, info: ElementInfo) -> str:
    """How a refusal names the element: ``<button id="z1c">Buy now</button>``, escaped."""
    # An element the driver found itself (a drop-down's list item) has no id to name.
    return xml.element(_tag_name(info.tag), {"id": element.eid or None}, content=info.text or None)


def cover_description(
    facts: Mapping[str, Any], eid: str | None, hears_keys: bool | None = None
) -> str:
    """How a refusal names what covers an element, from ``describe-cover.js``'s facts:
    ``<div id="k2" dom-id="consent" class="modal">Accept cookies</div>``, escaped, where
    ``id`` is Trimtab's element id (if it has one) and ``dom-id`` the page's own id.

    With the facts of the layer the cover belongs to, a pop-up (a picker, a menu, a
    dialog, a box laid over the page) is named in words a person uses ("an open colour
    picker", "a dialog") with its element, and with what closes it: Escape when the
    browser closes it (a popover, a <dialog>) or a script hears keys on its way
    (`hears_keys`; None when that could not be read), else a click outside."""
    hit = _element_of(facts, eid)
    layer = facts.get("layer")
    if not isinstance(layer, Mapping) or not names_layer(facts):
        return hit  # a banner, a header, a page's own layout: as it is
    said = (
        f"{_layer_kind(layer)} "
        f"{_element_of(layer, eid if layer.get('same') else None, layer.get('name'))}"
    )
    if eid and not layer.get("same"):
        said += f" at its {hit}"
    escape = hears_keys is not False or bool(layer.get("popover"))
    return said + f" ({'press Escape or ' if escape else ''}click outside it to close it)"


def names_layer(facts: Mapping[str, Any]) -> bool:
    """Whether `cover_description` names the cover's layer as a pop-up in words (and
    says what closes it)."""
    layer = facts.get("layer")
    return isinstance(layer, Mapping) and bool(_layer_kind(layer))


def _layer_kind(layer: Mapping[str, Any]) -> str:
    """What a covering layer is, in Trimtab's words only (never the page's)."""
    role = _ROLE_WORDS.get(str(layer.get("role", "")))
    if layer.get("picker"):
        return "an open colour picker"
    if role:
        return role
    if layer.get("popover") or (layer.get("floating") and not layer.get("full")):
        # A box positioned over the page, smaller than the window: a menu, a
        # popover (a fixed header or a page-wide overlay is none).
        return "an open pop-up"
    return ""


def _element_of(facts: Mapping[str, Any], eid: str | None, name: object = None) -> str:
    attributes = {
        "id": eid,
        "dom-id": str(facts.get("id") or "") or None,
        "class": str(facts.get("cls") or "") or None,
        "label": str(name or "") or None,
    }
    text = str(facts.get("text") or "")
    return xml.element(_tag_name(str(facts.get("tag", ""))), attributes, content=text or None)


# The roles of layers that open over a page, as a person calls them.
_ROLE_WORDS = {
    "dialog": "a dialog",
    "alertdialog": "a dialog",
    "menu": "an open menu",
    "menubar": "a menu",
    "listbox": "an open list",
    "tooltip": "a tooltip",
}


def _tag_name(tag: str) -> str:
    # The HTML parser accepts almost any tag name (`<a"b>`): only plain names are shown.
    return tag if _PLAIN_TAG.fullmatch(tag) else "element"


_PLAIN_TAG = re.compile(r"[a-z][a-z0-9-]{0,40}")
