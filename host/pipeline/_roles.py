"""What tags and roles mean to the pipeline: noise, landmarks, interactive, implicit roles."""

from __future__ import annotations

from pycdp_bridge import Node, PageModel

# Never content a person sees (stage 1, "noise").
NOISE_TAGS = frozenset(
    {"script", "style", "noscript", "meta", "link", "template", "head", "title", "base"}
)

# Roles a person can act on. The fidelity oracle (tests/support/oracle.py) keeps its
# own list on purpose: it judges this one against the browser's accessibility tree.
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
# Every `type` HTML defines for <input>; any other value (a typo, "bogus") makes a
# text field, as the browser treats it.
INPUT_TYPES = frozenset(
    {
        "button", "checkbox", "color", "date", "datetime-local", "email", "file", "hidden",
        "image", "month", "number", "password", "radio", "range", "reset", "search",
        "submit", "tel", "text", "time", "url", "week",
    }
)  # fmt: skip
# Tags the browser makes clickable by themselves (DOMSnapshot's isClickable is true
# for them without any script): their clickability says nothing of a page script.
NATIVE_CLICKABLE_TAGS = frozenset(
    {"a", "area", "button", "input", "select", "textarea", "label", "summary", "option",
     "details", "video", "audio"}
)  # fmt: skip
DATE_INPUT_FORMATS = {
    "date": "YYYY-MM-DD",
    "time": "HH:MM",
    "datetime-local": "YYYY-MM-DDTHH:MM",
    "month": "YYYY-MM",
    "week": "YYYY-Www",
}


# Native form controls keep the role HTML gives them: the browser's AX role for
# them is finer-grained ("date", "time", "color", ...) than the pipeline needs.
_NATIVE_CONTROLS = frozenset({"input", "select", "textarea", "button"})


# Tags that imply a role the pipeline acts on; any other tag without a role
# attribute, AX data or contenteditable has none (the walk's fast path).
_ROLE_TAGS = frozenset({"a", "area", "button", "summary", "select", "textarea", "input", "option"})


def aria_role(node: Node) -> str:
    """The role a node declares or implies, lower-case ("" when none)."""
    attributes = node.attributes
    if (
        node.ax is None
        and node.name not in _ROLE_TAGS
        and "role" not in attributes
        and "contenteditable" not in attributes
    ):
        return ""
    explicit = attributes.get("role")
    if explicit:
        return explicit.split()[0].lower()
    if node.name in _NATIVE_CONTROLS:
        return implicit_role(node)
    if node.ax is not None and node.ax.role and not node.ax.ignored:
        return node.ax.role.lower()
    return implicit_role(node)


def input_type(node: Node) -> str:
    """An <input>'s type as the browser reads it: lower-case, unknown values are "text"."""
    kind = node.attributes.get("type", "text").strip().lower()
    return kind if kind in INPUT_TYPES else "text"


def implicit_role(node: Node) -> str:
    """The role HTML gives a tag without ARIA (enough of it for the pipeline's decisions)."""
    tag = node.name
    if tag == "a" or tag == "area":
        # Like the browser: an anchor with a click handler is a link without href too.
        attributes = node.attributes
        return "link" if "href" in attributes or "onclick" in attributes or node.clickable else ""
    if tag == "button" or tag == "summary":
        return "button"
    if tag == "select":
        multiple = "multiple" in node.attributes or _int(node.attributes.get("size")) > 1
        return "listbox" if multiple else "combobox"
    if tag == "textarea":
        return "textbox"
    if tag == "input":
        kind = input_type(node)
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
            "date": "textbox",
        }.get(kind, "textbox")
    if tag == "option":
        return "option"
    if node.attributes.get("contenteditable", "false").lower() in ("", "true", "plaintext-only"):
        return "textbox"
    return ""


# Sectioning elements inside which <header>/<footer> are not banner/contentinfo.
_SECTIONING = frozenset({"article", "aside", "main", "nav", "section"})
_FILLABLE_SKIP = frozenset({"submit", "button", "reset", "image", "hidden"})


def landmark_of(node: Node, model: PageModel) -> str | None:
    """The region name a node opens, or None when it is not a landmark.

    Decided from markup (the role attribute, then the tag) as the browser maps
    them, so a capture without the AX tree gets the same regions.
    """
    if node.name not in LANDMARK_BY_TAG and "role" not in node.attributes:
        return None
    role = node.attributes.get("role", "").split()
    if role:
        return LANDMARK_BY_ROLE.get(role[0].lower())
    by_tag = LANDMARK_BY_TAG.get(node.name)
    if by_tag in ("header", "footer"):
        if any(a.name in _SECTIONING for a in model.ancestors(node)):
            return None
    elif by_tag == "form" and not _is_form_region(node, model):
        return None
    return by_tag


def _is_form_region(node: Node, model: PageModel) -> bool:
    # A form is worth a region when it is named or has something to fill in; a
    # lone "Add to basket" button form is just a button.
    if node.attributes.get("aria-label") or node.attributes.get("aria-labelledby"):
        return True
    for inner in model.subtree(node)[1:]:
        if inner.name in ("select", "textarea"):
            return True
        if (
            inner.name == "input"
            and inner.attributes.get("type", "text").lower() not in _FILLABLE_SKIP
        ):
            return True
    return False


def _int(value: str | None) -> int:
    try:
        return int(value) if value is not None else 0
    except ValueError:
        return 0
