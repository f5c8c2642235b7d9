"""Swatches: the cells of a palette, told apart by their colour.

A colour picker draws its choices as empty cells that differ only in their
background, and the markup names none of them, or all of them alike
("color-picker-item"); a person sees red, orange, yellow. A control with neither
a name nor text is a swatch when it draws nothing but a fill (no text, no image)
and a cell like it beside it (same tag and classes) is filled with another colour:
one palette, several colours. It is named by what the page wrote for it (`data-value`,
`data-color`), else by its colour: the CSS name when the colour has one, else
`#rrggbb`. Image swatches (fabrics, patterns) are named by their image's file,
like other icons.
"""

from __future__ import annotations

import re

from pycdp_bridge import Node, PageModel

__all__ = ["colour_name", "swatch_name"]

# The CSS named colours (one name each: "cyan" for aqua, "gray" for grey).
_NAMED = """
    aliceblue f0f8ff antiquewhite faebd7 aquamarine 7fffd4 azure f0ffff beige f5f5dc
    bisque ffe4c4 black 000000 blanchedalmond ffebcd blue 0000ff blueviolet 8a2be2
    brown a52a2a burlywood deb887 cadetblue 5f9ea0 chartreuse 7fff00 chocolate d2691e
    coral ff7f50 cornflowerblue 6495ed cornsilk fff8dc crimson dc143c cyan 00ffff
    darkblue 00008b darkcyan 008b8b darkgoldenrod b8860b darkgray a9a9a9 darkgreen 006400
    darkkhaki bdb76b darkmagenta 8b008b darkolivegreen 556b2f darkorange ff8c00
    darkorchid 9932cc darkred 8b0000 darksalmon e9967a darkseagreen 8fbc8f
    darkslateblue 483d8b darkslategray 2f4f4f darkturquoise 00ced1 darkviolet 9400d3
    deeppink ff1493 deepskyblue 00bfff dimgray 696969 dodgerblue 1e90ff firebrick b22222
    floralwhite fffaf0 forestgreen 228b22 gainsboro dcdcdc ghostwhite f8f8ff gold ffd700
    goldenrod daa520 gray 808080 green 008000 greenyellow adff2f honeydew f0fff0
    hotpink ff69b4 indianred cd5c5c indigo 4b0082 ivory fffff0 khaki f0e68c lavender e6e6fa
    lavenderblush fff0f5 lawngreen 7cfc00 lemonchiffon fffacd lightblue add8e6
    lightcoral f08080 lightcyan e0ffff lightgoldenrodyellow fafad2 lightgray d3d3d3
    lightgreen 90ee90 lightpink ffb6c1 lightsalmon ffa07a lightseagreen 20b2aa
    lightskyblue 87cefa lightslategray 778899 lightsteelblue b0c4de lightyellow ffffe0
    lime 00ff00 limegreen 32cd32 linen faf0e6 magenta ff00ff maroon 800000
    mediumaquamarine 66cdaa mediumblue 0000cd mediumorchid ba55d3 mediumpurple 9370db
    mediumseagreen 3cb371 mediumslateblue 7b68ee mediumspringgreen 00fa9a
    mediumturquoise 48d1cc mediumvioletred c71585 midnightblue 191970 mintcream f5fffa
    mistyrose ffe4e1 moccasin ffe4b5 navajowhite ffdead navy 000080 oldlace fdf5e6
    olive 808000 olivedrab 6b8e23 orange ffa500 orangered ff4500 orchid da70d6
    palegoldenrod eee8aa palegreen 98fb98 paleturquoise afeeee palevioletred db7093
    papayawhip ffefd5 peachpuff ffdab9 peru cd853f pink ffc0cb plum dda0dd powderblue b0e0e6
    purple 800080 rebeccapurple 663399 red ff0000 rosybrown bc8f8f royalblue 4169e1
    saddlebrown 8b4513 salmon fa8072 sandybrown f4a460 seagreen 2e8b57 seashell fff5ee
    sienna a0522d silver c0c0c0 skyblue 87ceeb slateblue 6a5acd slategray 708090 snow fffafa
    springgreen 00ff7f steelblue 4682b4 tan d2b48c teal 008080 thistle d8bfd8 tomato ff6347
    turquoise 40e0d0 violet ee82ee wheat f5deb3 white ffffff whitesmoke f5f5f5 yellow ffff00
    yellowgreen 9acd32
"""
_NAME_BY_HEX = dict(zip(_NAMED.split()[1::2], _NAMED.split()[::2], strict=True))
_RGB = re.compile(r"rgba?\(\s*([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)(?:\s*[,/]\s*([\d.]+)(%?))?\s*\)")
# A fill hides at least this much alpha (the filter's opaque cover).
_OPAQUE = 0.8
# A swatch is an element and an inner one or two: a cell, a dot inside it.
_SWATCH_NODES = 4
# Wrappers looked through for the swatch's neighbours, and neighbours compared.
_PALETTE_LEVELS = 3
_NEIGHBOURS = 16
# Attributes where a page writes what a swatch stands for.
_VALUE_ATTRIBUTES = ("data-value", "data-color", "data-colour")
_MAX_CHARS = 40
# Elements that draw something else than a fill (form fields draw their own box).
_DRAWING = frozenset(
    {"img", "svg", "picture", "canvas", "video", "object", "embed", "iframe", "input", "select",
     "textarea"}
)  # fmt: skip


def swatch_name(model: PageModel, node: Node) -> str:
    """The name of a swatch (what the page wrote for it, else its colour), or ""
    when the control is not one."""
    fill = _fill(model, node)
    if fill is None or not _in_palette(model, node, fill):
        return ""
    for key in _VALUE_ATTRIBUTES:
        value = " ".join(node.attributes.get(key, "").split())
        if value:
            return value[:_MAX_CHARS]
    return colour_name(fill)


def colour_name(hex_colour: str) -> str:
    """A colour as a person names it: the CSS colour name, else `#rrggbb`."""
    return _NAME_BY_HEX.get(hex_colour.lstrip("#"), hex_colour)


def _fill(model: PageModel, node: Node) -> str | None:
    """The colour an element is filled with (`#rrggbb`: its own background or the first
    inner element's), or None when it draws more than a fill or none."""
    if node.end - node.index > _SWATCH_NODES:
        return None
    found: str | None = None
    for inner in model.nodes[node.index : node.end]:
        if inner.text.strip() or inner.name in _DRAWING:
            return None
        style = inner.style
        if style is None:
            continue
        if style.background_image != "none" or style.content.startswith("url("):
            return None
        if found is None:
            found = _hex(style.background_color)
    return found


def _hex(colour: str) -> str | None:
    match = _RGB.match(colour)
    if match is None:
        return None
    red, green, blue, alpha, percent = match.groups()
    if alpha is not None and float(alpha) / (100.0 if percent else 1.0) < _OPAQUE:
        return None
    return "#" + "".join(f"{round(float(part)):02x}" for part in (red, green, blue))


def _in_palette(model: PageModel, node: Node, fill: str) -> bool:
    """A cell like it (same tag and classes: a sibling, or a wrapper's sibling when the
    cells are wrapped one by one) is filled with another colour."""
    current = node
    for _ in range(_PALETTE_LEVELS):
        parent = model.parent_of(current)
        if parent is None:
            return False
        siblings = [model.nodes[c] for c in parent.children if c != current.index]
        if any(s.is_element for s in siblings):
            kind = (current.name, current.attributes.get("class", ""))
            alike = [s for s in siblings if (s.name, s.attributes.get("class", "")) == kind]
            return any(_fill(model, cell) not in (None, fill) for cell in alike[:_NEIGHBOURS])
        current = parent
    return False
