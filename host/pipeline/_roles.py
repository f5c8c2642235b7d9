"""What tags and roles mean to the pipeline: noise, landmarks, interactive, implicit roles."""

from __future__ import annotations

from pycdp_bridge import Node

# Never content a person sees (stage 1, "noise").
NOISE_TAGS = frozenset(
    {"script", "style", "noscript", "meta", "link", "template", "head", "title", "base"}
)

# Roles a person can act on. The fidelity oracle (tests/bench) uses the same list
# against the browser's own accessibility tree.
INTERACTIVE_ROLES = frozenset(
    {
        "button",
        "link",
        "textbox",
        "searchbox",
        "checkbox",
        "radio",
        "combobox",
        "listbox",
        "option",
        "slider",
        "spinbutton",
        "switch",
        "tab",
        "menuitem",
        "menuitemcheckbox",
        "menuitemradio",
        "treeitem",
        "textfield",  # older Chromium name, kept for the AX fallback
    }
)

# Form controls are acted on directly, never through an enclosing clickable.
FORM_TAGS = frozenset({"input", "select", "textarea", "label"})

# Elements that start a new line (innerText's block boundaries, roughly).
BLOCK_DISPLAYS = frozenset(
    {
        "block",
        "flex",
        "grid",
        "list-item",
        "table",
        "table-row",
        "table-caption",
        "flow-root",
        "table-row-group",
        "table-header-group",
        "table-footer-group",
    }
)
CELL_DISPLAYS = frozenset({"table-cell"})

HEADING_TAGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}

# Landmarks → region names (issue: regions, stable ids).
LANDMARK_BY_ROLE = {
    "banner": "header",
    "navigation": "nav",
    "main": "main",
    "complementary": "aside",
    "contentinfo": "footer",
    "dialog": "dialog",
    "alertdialog": "dialog",
    "search": "search",
    "form": "form",
    "alert": "alert",
    "status": "alert",
    "log": "alert",
}
LANDMARK_BY_TAG = {
    "header": "header",
    "nav": "nav",
    "main": "main",
    "aside": "aside",
    "footer": "footer",
    "dialog": "dialog",
    "search": "search",
    "form": "form",
}

# Input types that are plain text fields: the `type` attribute is left out for them.
TEXT_INPUT_TYPES = frozenset({"text", "search", "email", "tel", "url", "password", ""})
DATE_INPUT_FORMATS = {
    "date": "YYYY-MM-DD",
    "time": "HH:MM",
    "datetime-local": "YYYY-MM-DDTHH:MM",
    "month": "YYYY-MM",
    "week": "YYYY-Www",
}


def aria_role(node: Node) -> str:
    """The role a node declares or implies, lower-case ("" when none)."""
    explicit = node.attributes.get("role")
    if explicit:
        return explicit.split()[0].lower()
    if node.ax is not None and node.ax.role and not node.ax.ignored:
        return node.ax.role.lower()
    return implicit_role(node)


def implicit_role(node: Node) -> str:
    """The role HTML gives a tag without ARIA (enough of it for the pipeline's decisions)."""
    tag = node.name
    if tag == "a" or tag == "area":
        return "link" if "href" in node.attributes else ""
    if tag == "button" or tag == "summary":
        return "button"
    if tag == "select":
        multiple = "multiple" in node.attributes or _int(node.attributes.get("size")) > 1
        return "listbox" if multiple else "combobox"
    if tag == "textarea":
        return "textbox"
    if tag == "input":
        kind = node.attributes.get("type", "text").lower()
        return {
            "checkbox": "checkbox",
            "radio": "radio",
            "range": "slider",
            "number": "spinbutton",
            "search": "searchbox",
            "button": "button",
            "submit": "button",
            "reset": "button",
            "image": "button",
            "file": "button",
            "color": "button",
            "hidden": "",
        }.get(kind, "textbox")
    if tag == "option":
        return "option"
    return ""


def landmark_of(node: Node) -> str | None:
    """The region name a node opens, or None when it is not a landmark."""
    if not node.is_element:
        return None
    role = node.attributes.get("role", "").split()
    if role:
        by_role = LANDMARK_BY_ROLE.get(role[0].lower())
        if by_role is not None:
            return by_role
    if node.ax is not None and not node.ax.ignored:
        by_ax = LANDMARK_BY_ROLE.get(node.ax.role.lower())
        if by_ax is not None:
            # An unnamed <form> or <section> is not a landmark to the browser either.
            return by_ax
    by_tag = LANDMARK_BY_TAG.get(node.name)
    if by_tag == "form" and node.ax is not None and node.ax.role.lower() != "form":
        return None
    if by_tag in ("header", "footer") and node.ax is not None:
        # <header>/<footer> inside <article>/<section> are not banner/contentinfo.
        if node.ax.role.lower() not in ("banner", "contentinfo"):
            return None
    return by_tag


def _int(value: str | None) -> int:
    try:
        return int(value) if value is not None else 0
    except ValueError:
        return 0
