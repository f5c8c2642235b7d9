"""Derived names for icon controls: what the page's own markup calls an icon.

A control drawn only as an icon (a star from a CSS `content: url(...)`, a trash can
in an inline SVG, a bold button with a background image) often has no accessible
name and no text, and would come out as an anonymous `<clickable/>` that nothing
tells apart from its neighbours. The page nearly always names the icon somewhere a
person never reads: an SVG `<title>`, a `title` on a wrapper, a sprite symbol's id,
an icon font's class, the image's file name, the element's own id or classes. A
palette's cell is named by its colour after the titles (see _swatches). The
first of these, in that order, that yields words is the control's derived name,
written as `icon="…"` (never as `label`: it is our reading of the markup, not a
name the page gave).

Sources are read from the control's own subtree (its icon element) and, for
`title`, from a few wrappers up; a spinner's arrow is "up" or "down" as its
classes say (it counts its neighbouring field up or down). Words are split out
of file names and class tokens ("format_italic.svg" → "format italic",
"fa-trash-can" → "trash can") and words that only say "this is an icon" or how it
is styled are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from pycdp_bridge import Node, PageModel

from ._swatches import colour_name, swatch_name

__all__ = ["icon_name", "icon_words"]

# Words that name the kind of thing, its library or its styling, not what it does.
_GENERIC_WORDS = """
    icon icons ico icn ic glyph glyphicon glyphicons fa fas far fal fad fab
    mdi bi ti ion ionicon ionicons octicon feather lucide ri la las lab lar bx bxs bxl
    material symbols symbol outlined outline round rounded sharp filled fill solid
    regular light thin svg img image images sprite sprites png gif jpg jpeg
    webp asset assets static media dist min btn button buttons js ui is has el elem
    element ctrl control wrap wrapper inner outer container box item act action actions
    tool tools toolbar tb small large lg sm md xs xl xxl px default primary secondary
    hover active focus focused visible hidden show clickable pointer cursor state
    corner all widget horizontal vertical inline block theme dark white black gray grey
    color colour transparent spacer blank pixel clear clearfix dot empty placeholder
    absolute relative fixed sticky flex grid float pull
"""
_GENERIC = frozenset(_GENERIC_WORDS.split())
# Class tokens that mark an icon and carry its name after the prefix, and the
# suffix form ("star-icon", "StarIcon").
_ICON_PREFIX = re.compile(
    r"^(?:icon|icons|ico|fa|fas|far|fal|fab|fa-solid|fa-regular|glyphicon|mdi|bi|ti|ion"
    r"|octicon|feather|lucide|ri|la|bx|bxs|uil|svg-icon|material-icons)[-_]+(.+)$",
    re.IGNORECASE,
)
_ICON_SUFFIX = re.compile(r"^(.+?)[-_]?(?:icon|Icon|ICON)$")
_URL = re.compile(r"""url\(\s*["']?([^"')]+)["']?\s*\)""")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_SEGMENTS = re.compile(r"[-_.\s@:/]+")
_VOWEL = re.compile(r"[aeiouy]")
# Letters and digits mixed, other than a size ("24px", "2x"): a hash.
_HASH = re.compile(r"^(?!\d+(?:px|dp|pt|x)$)(?=.*\d)(?=.*[a-zA-Z])\w+$")
_SHORT_WORDS = frozenset({"x", "up", "ok", "go", "tv", "qr"})
_MAX_WORDS = 3
_MAX_CHARS = 40
# Wrappers looked at for a `title` ("Move to folder" on the icon's container).
_TITLE_LEVELS = 3
# An icon is small: the scan of a control's subtree stops after this many nodes.
_SCAN_LIMIT = 60
# Class words that say which way a spinner's arrow counts.
_DIRECTIONS = {
    **dict.fromkeys(("up", "increase", "increment", "inc", "plus"), "up"),
    **dict.fromkeys(("down", "decrease", "decrement", "dec", "minus"), "down"),
}
# An arrow sits this many wrappers at most from its spinner's field.
_SPINNER_LEVELS = 3
_COUNTING_INPUTS = frozenset({"text", "number", "tel", ""})
# The SVG elements that draw one shape, as a person calls it.
_SHAPES = {
    "circle": "circle", "ellipse": "ellipse", "rect": "rectangle", "polygon": "polygon",
    "path": "shape", "line": "line", "polyline": "line",
}  # fmt: skip
# A polygon by its corners.
_POLYGONS = {3: "triangle", 4: "quadrilateral", 5: "pentagon", 6: "hexagon", 8: "octagon"}
_NUMBERS = re.compile(r"-?[\d.]+(?:e-?\d+)?")
_INLINE_FILL = re.compile(r"(?:^|;)\s*fill\s*:\s*([^;!]+)", re.IGNORECASE)
_GLYPH = re.compile(r"^(?:[^\W_]|\d{1,2})$")
_HEX_FILL = re.compile(r"^#(?:[0-9a-f]{3}|[0-9a-f]{6})$")


def icon_name(model: PageModel, node: Node, *, titles: bool = True) -> str:
    """A short name for an icon control from its markup, or "" when nothing names it;
    without `titles`, from the icon's own markup only (an icon inside a control whose
    title is the control's name)."""
    subtree = model.nodes[node.index : min(node.end, node.index + _SCAN_LIMIT)]
    for found in _titles(model, node, subtree) if titles else ():
        words = _words(found)
        if words:
            return " ".join(words)[:_MAX_CHARS].strip()
    # A shape drawn in an SVG (a board's circle, a map's region): what a person sees.
    shape = _shape_name(model, node)
    if shape:
        return shape
    # A mark or tile drawn by one image named by a single letter or digit ("7.png", an
    # "o" in a grid): the character is what a person reads, not noise.
    glyph = _glyph(subtree)
    if glyph:
        return glyph
    # A palette's cell: what the page wrote for it, or its colour, as it is.
    swatch = swatch_name(model, node)
    if swatch:
        return swatch
    for found in _marks(model, node, subtree):
        words = _words(found)
        if words:
            return " ".join(words)[:_MAX_CHARS].strip()
    return ""


def _shape_name(model: PageModel, node: Node) -> str:
    """A shape inside an `<svg>` named by its fill and kind ("red circle", "#3a7bd5
    triangle"), or "" when ``node`` is none or says nothing of its colour."""
    kind = _SHAPES.get(node.name)
    if kind is None or not any(a.name == "svg" for a in model.ancestors(node)):
        return ""
    if (
        kind == "rectangle"
        and node.attributes.get("width", "").strip()
        and (node.attributes.get("width", "").strip() == node.attributes.get("height", "").strip())
    ):
        kind = "square"
    if kind == "polygon":
        points = len(_NUMBERS.findall(node.attributes.get("points", ""))) // 2
        kind = _POLYGONS.get(points, kind)
    declared = _INLINE_FILL.search(node.attributes.get("style", ""))
    fill = (declared.group(1) if declared else node.attributes.get("fill", "")).strip().lower()
    if not fill or fill == "none" or fill.startswith("url("):
        return kind
    if _HEX_FILL.match(fill):
        fill = "#" + "".join(c * 2 for c in fill[1:]) if len(fill) == 4 else fill
        fill = colour_name(fill)
    return f"{fill[:20]} {kind}"


def _glyph(subtree: list[Node]) -> str:
    """The letter or digit of the one image that is all a control shows (its alt, else
    its file's name), or ""."""
    images = [inner for inner in subtree if inner.name == "img"]
    if len(images) != 1 or any(inner.text.strip() for inner in subtree):
        return ""
    image = images[0]
    for name in (image.attributes.get("alt", ""), _file_stem(image.attributes.get("src", ""))):
        if _GLYPH.match(name.strip()):
            return name.strip()
    return ""


def _titles(model: PageModel, node: Node, subtree: list[Node]) -> Iterator[str]:
    """What the icon's author called it: steps 1 and 2."""
    # 1. An SVG's own title: the icon's author named it (an `<svg>` in the control, or
    #    the control a shape of an `<svg>` around it).
    in_svg = any(a.name == "svg" for a in model.ancestors(node))
    for inner in subtree:
        if inner.name == "title" and (
            in_svg or any(a.name == "svg" for a in _up_to(model, inner, node))
        ):
            yield " ".join(model.nodes[c].text for c in inner.children)
    # 2. A title on the control or a wrapper just around it.
    level = 0
    current: Node | None = node
    while current is not None and level <= _TITLE_LEVELS and current.name not in ("body", "html"):
        title = current.attributes.get("title", "")
        if title.strip():
            yield title
            break
        current = model.parent_of(current)
        level += 1


def _marks(model: PageModel, node: Node, subtree: list[Node]) -> Iterator[str]:
    """What the markup around the icon says of it: steps 3 to 7."""
    # 3. A spinner's arrow: which way it counts, from its classes ("ui-spinner-up").
    direction = _spin_direction(model, node, subtree)
    if direction:
        yield direction
    # 4. An icon font's or icon set's class ("fa-trash", "icon-star", "star-icon").
    for inner in subtree:
        for token in inner.attributes.get("class", "").split():
            marked = _ICON_PREFIX.match(token) or _ICON_SUFFIX.match(token)
            if marked:
                yield marked.group(1)
    # 5. A sprite symbol: <use href="#icon-label">.
    for inner in subtree:
        if inner.name == "use":
            ref = inner.attributes.get("href") or inner.attributes.get("xlink:href", "")
            yield ref.rsplit("#", 1)[-1] if "#" in ref else _file_stem(ref)
    # 6. The image's file name: <img src>, CSS content:url(), background-image.
    for inner in subtree:
        if inner.name == "img":
            yield _file_stem(inner.attributes.get("src", ""))
        style = inner.style
        if style is not None:
            for value in (style.content, style.background_image):
                for url in _URL.findall(value):
                    yield _file_stem(url)
    # 7. The element's own id and classes, then those of the elements inside it.
    yield node.attributes.get("id", "")
    for inner in subtree:
        yield from inner.attributes.get("class", "").split()


def _spin_direction(model: PageModel, node: Node, subtree: list[Node]) -> str:
    """The way a spinner's arrow counts ("up", "down"; "" for any other control),
    from the first class word that says a direction."""
    for inner in subtree:
        for token in inner.attributes.get("class", "").split():
            for segment in _SEGMENTS.split(_CAMEL.sub("-", token)):
                direction = _DIRECTIONS.get(segment.lower())
                if direction:
                    return direction if _beside_field(model, node) else ""
    return ""


def _beside_field(model: PageModel, node: Node) -> bool:
    """A field that counts (a role=spinbutton, a text or number input) shares one of
    the control's few nearest wrappers with it."""
    current = node
    for _ in range(_SPINNER_LEVELS):
        parent = model.parent_of(current)
        if parent is None or parent.end - parent.index > _SCAN_LIMIT:
            return False
        for inner in model.nodes[parent.index + 1 : parent.end]:
            if inner.attributes.get("role", "").strip().lower() == "spinbutton" or (
                inner.name == "input"
                and inner.attributes.get("type", "text").lower() in _COUNTING_INPUTS
            ):
                return True
        current = parent
    return False


def _up_to(model: PageModel, inner: Node, top: Node) -> Iterator[Node]:
    """The ancestors of `inner` up to (not including) `top`."""
    for ancestor in model.ancestors(inner):
        if ancestor.index == top.index:
            return
        yield ancestor


def _file_stem(url: str) -> str:
    if url.startswith("data:"):
        return ""
    path = url.split("?", 1)[0].split("#", 1)[0].rstrip("/")
    name = path.rsplit("/", 1)[-1]
    return name.split(".", 1)[0].split("@", 1)[0]


def _is_word(lower: str) -> bool:
    # Minified class names are one or two letters ("gb", "fl"): only a few short
    # words are icon names; short words without vowels are kept ("rss", "pdf"),
    # longer ones are generated ("kbwvbt").
    if len(lower) < 3:
        return lower in _SHORT_WORDS
    return len(lower) <= 4 or _VOWEL.search(lower) is not None


def icon_words(raw: str) -> str:
    """The meaningful words of a file name or class token, as `icon_name` reads them."""
    return " ".join(_words(raw))[:_MAX_CHARS].strip()


def _words(raw: str) -> list[str]:
    """The meaningful words of a title, file name or class token."""
    text = " ".join(raw.split())
    if " " in text:
        # A title is already words: keep it as the page wrote it, shortened.
        return text.split()[:6] if len(text) <= _MAX_CHARS else text[:_MAX_CHARS].split()[:-1]
    segments = _SEGMENTS.split(text)
    if any(_HASH.match(segment) for segment in segments):
        return []  # a generated name ("css-1x2y3z", "a8f9c3"): none of it is a word
    words: list[str] = []
    for segment in segments:
        # Sizes and numbers ("24px", "2") and generated camelCase ("bdVaJa")
        # are no words.
        if not segment.isalpha():
            continue
        parts = _CAMEL.sub(" ", segment).split()
        if len(parts) > 1 and any(len(part) < 3 for part in parts):
            continue
        for part in parts:
            lower = part.lower()
            if lower in _GENERIC or not _is_word(lower):
                continue
            words.append(lower)
    return words[:_MAX_WORDS]
