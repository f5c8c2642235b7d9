"""The tabs a client may use (or a task's tabs), written for a model."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..pipeline import credentials, xml

__all__ = ["shown_tab", "tabs_listing"]


def tabs_listing(tabs: Iterable[Mapping[str, object]]) -> str:
    """``<tabs>`` with one ``<tab id url>title</tab>`` a tab, page strings escaped and
    credentials in URLs hidden; a task's tab also says which tab opened it and
    whether the agent acts in it."""
    lines = ["<tabs>"]
    for tab in tabs:
        attributes = {"id": str(tab["id"]), "url": credentials.hide_url(str(tab["url"]))}
        if tab.get("opener") is not None:
            attributes["opener"] = str(tab["opener"])
        if tab.get("current"):
            attributes["current"] = "true"
        lines.append(xml.element("tab", attributes, content=str(tab["title"])))
    lines.append("</tabs>")
    return "\n".join(lines)


def shown_tab(title: str, url: str) -> dict[str, str]:
    """A tab's title and URL as the tools show them (`tabs_listing`): the title as the
    tab strip shows it, the URL with its credentials hidden by the one rule, so a
    sign-in token in the URL a task starts on never reaches a model."""
    return {"title": title, "url": credentials.hide_url(url)}
