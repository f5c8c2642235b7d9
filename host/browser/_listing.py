"""The tabs an outside client may use, written for a model."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..pipeline import xml

__all__ = ["tabs_listing"]


def tabs_listing(tabs: Iterable[Mapping[str, object]]) -> str:
    """``<tabs>`` with one ``<tab id url>title</tab>`` a tab, page strings escaped."""
    lines = ["<tabs>"]
    for tab in tabs:
        attributes = {"id": str(tab["id"]), "url": str(tab["url"])}
        lines.append(xml.element("tab", attributes, content=str(tab["title"])))
    lines.append("</tabs>")
    return "\n".join(lines)
