"""The door's own argument, the tab, and the catalogue's check of the others.

A call's arguments are checked against the tool's schema (``trimtab.tools``'
`check_arguments`, shared by ``trimtab mcp``, ``trimtab call`` and the link) before
the call leaves; the ``tab`` a call acts on is taken out first and read here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ..tools import ArgumentError, check_arguments, property_types

__all__ = ["TAB_PROPERTY", "ArgumentError", "check_arguments", "property_types", "tab_id"]

# The one ``tab`` property of every tool that acts in a tab, never required.
TAB_PROPERTY: Final[Mapping[str, object]] = {
    "type": "integer",
    "description": "A tab id from `tabs`; optional when one tab is shared.",
}


def tab_id(value: object) -> int:
    """A tab id: an integer, or the digits of one sent as a string (``"2085403875"``)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        return int(value.strip())
    raise ArgumentError(f"'tab' must be a tab id from `tabs`, not {value!r:.60}")
