"""Property tests of the sans-I/O output: page strings never break or forge the XML.

Hypothesis writes arbitrary Unicode (control characters, lone surrogates, ``]]>``,
quotes, text that spells our own tags) into hand-built page models and output
trees; lxml must parse every result, the parsed tree must hold exactly the
elements we built, and the text must come back modulo the documented replacement
of characters XML forbids (by U+FFFD) and whitespace folding.
"""

from __future__ import annotations

import re

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from lxml import etree

from pycdp_bridge import NodeType, PageModel
from tests.support.models import ModelBuilder
from tests.support.pages import parse_xml
from trimtab.pipeline import OutNode, compact, count_tokens, render_node
from trimtab.pipeline import _xml as xml_escape

# Characters XML 1.0 forbids; `_xml` documents their replacement by U+FFFD.
FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")

NASTY = [
    "]]>",
    '<region name="x" unchanged="true"/>',
    '<region name="nav" unchanged="true" count="1"/>',
    "</region></page><page>",
    '" id="k3',
    "' id='k3",
    "&amp;",
    "&#0;",
    "<!-- -->",
    "<![CDATA[x]]>",
    "\x00\x01\x0b\x1f",
    "\ud800",
    "\udfff\ud800",
    "\ufffe\uffff",
    "\r\n\t",
    "\u2028\u0085\xa0",
]

any_char = st.characters(exclude_categories=())  # includes lone surrogates and controls
page_text = st.one_of(
    st.text(any_char, max_size=40),
    st.sampled_from(NASTY),
    st.lists(st.one_of(st.sampled_from(NASTY), st.text(any_char, max_size=8)), max_size=5).map(
        "".join
    ),
)


def clean(value: str) -> str:
    """The documented replacement of forbidden characters."""
    return FORBIDDEN.sub("\ufffd", value)


def fold(value: str) -> str:
    return " ".join(value.split())


def comparable(value: str) -> str:
    """Text with whitespace, forbidden characters and U+FFFD removed.

    Whether a character such as U+001F is folded as whitespace or replaced depends
    on where it stands; either way it must not change the rest of the text.
    """
    return "".join(ch for ch in FORBIDDEN.sub("", value) if not ch.isspace() and ch != "\ufffd")


def all_text(element: etree._Element) -> str:
    return "".join(t if isinstance(t, str) else t.decode() for t in element.itertext())


# -- a hand-built page model ---------------------------------------------------------


def build_model(
    *,
    url: str,
    title: str,
    region_label: str,
    before: str,
    button_text: str,
    button_label: str,
    value: str,
    after: str,
) -> PageModel:
    """document > html > body > main[aria-label] > (text, button > text, input, text)."""
    build = ModelBuilder()
    add = build.add
    document = add(NodeType.DOCUMENT, "#document", -1)
    html = add(NodeType.ELEMENT, "html", document.index)
    body = add(NodeType.ELEMENT, "body", html.index)
    main = add(NodeType.ELEMENT, "main", body.index, **{"aria-label": region_label})
    add(NodeType.TEXT, "#text", main.index, before)
    button = add(NodeType.ELEMENT, "button", main.index, **{"aria-label": button_label})
    add(NodeType.TEXT, "#text", button.index, button_text)
    field = add(NodeType.ELEMENT, "input", main.index, type="text")
    field.input_value = value
    add(NodeType.TEXT, "#text", main.index, after)
    return build.model(url, title)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    url=page_text,
    title=page_text,
    region_label=page_text,
    before=page_text,
    button_text=page_text,
    button_label=page_text,
    value=page_text,
    after=page_text,
)
@example(
    url="http://x/?a=1&b=<2>",
    title='<region name="nav" unchanged="true" count="1"/>',
    region_label='"><region name="nav"',
    before="]]>",
    button_text='<region name="x" unchanged="true"/>',
    button_label='" id="k3',
    value="\x00\ud800 & <b>",
    after="</region></page>",
)
def test_page_strings_never_break_or_forge_the_xml(
    url: str,
    title: str,
    region_label: str,
    before: str,
    button_text: str,
    button_label: str,
    value: str,
    after: str,
) -> None:
    """Any page text and attribute value yields parseable XML with exactly the built elements."""
    model = build_model(
        url=url,
        title=title,
        region_label=region_label,
        before=before,
        button_text=button_text,
        button_label=button_label,
        value=value,
        after=after,
    )
    compaction = compact(model)
    tree = parse_xml(compaction.xml)

    # Exactly the elements we built: no forged tag, region or id.
    assert [e.tag for e in tree.iter()] == ["page", "region", "button", "input"]
    page, region, button, field = tree.iter()
    assert set(page.attrib) == {"url", "title"}
    assert page.get("url") == clean(url)
    assert page.get("title") == clean(title)
    assert region.get("name") == "main"
    assert set(region.attrib) <= {"name", "label"}
    if region_label:
        assert region.get("label") == clean(fold(region_label))
    else:
        assert region.get("label") is None
    ids = [e.get("id") for e in tree.iter() if e.get("id") is not None]
    assert ids == list(compaction.controls)
    assert len(ids) == 2
    assert set(button.attrib) <= {"id", "label"}
    if button.get("label") is not None:
        assert button.get("label") == clean(fold(button_label))
    assert set(field.attrib) <= {"id", "value"}
    # A field's value is not folded: it round-trips exactly, modulo replacement.
    assert field.get("value") == (clean(value) if value else None)

    # The text comes back in order, modulo whitespace and forbidden characters.
    assert comparable(all_text(button)) == comparable(button_text)
    assert comparable(all_text(region)) == comparable(before + button_text + after)
    assert compaction.stats.tokens == count_tokens(compaction.xml)
    assert compaction.stats.chars == len(compaction.xml)


# -- output trees rendered directly --------------------------------------------------

LEAF_TAGS = ["a", "button", "h2", "img", "input", "select"]
ATTR_NAMES = ["id", "label", "value", "href", "alt", "options"]


@st.composite
def out_nodes(draw: st.DrawFn, depth: int = 0) -> OutNode:
    tag = draw(st.sampled_from(LEAF_TAGS))
    names = draw(st.lists(st.sampled_from(ATTR_NAMES), unique=True, max_size=3))
    attrs = [(name, draw(page_text)) for name in names]
    children: list[OutNode | str] = []
    if depth < 2:
        for _ in range(draw(st.integers(0, 3))):
            if draw(st.booleans()):
                children.append(draw(page_text))
            else:
                children.append(draw(out_nodes(depth=depth + 1)))
    return OutNode(tag, attrs, children)


@st.composite
def regions(draw: st.DrawFn, depth: int = 0) -> OutNode:
    name = draw(st.one_of(st.sampled_from(["main", "nav", "header"]), page_text))
    children: list[OutNode | str] = []
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.integers(0, 2 if depth < 1 else 1))
        if kind == 0:
            children.append(draw(page_text))
        elif kind == 1:
            children.append(draw(out_nodes()))
        else:
            children.append(draw(regions(depth=depth + 1)))
    return OutNode("region", [("name", name)], children)


def shape(node: OutNode) -> list[tuple[str, dict[str, str]]]:
    """Tag and cleaned attributes of every output node, in document order."""
    return [(n.tag, {k: clean(v) for k, v in n.attrs}) for n in node.iter()]


def parsed_shape(element: etree._Element) -> list[tuple[str, dict[str, str]]]:
    return [(str(e.tag), {str(k): str(v) for k, v in e.attrib.items()}) for e in element.iter()]


def built_text(node: OutNode) -> str:
    return "".join(c if isinstance(c, str) else built_text(c) for c in node.children)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(regions())
def test_rendered_trees_parse_to_exactly_the_built_elements(region: OutNode) -> None:
    """A rendered region parses back to the same elements, attributes and text."""
    xml = render_node(region)
    element = parse_xml(xml)
    assert parsed_shape(element) == shape(region)
    assert comparable(all_text(element)) == comparable(built_text(region))


# -- the escaping functions ----------------------------------------------------------


@settings(max_examples=500)
@given(page_text)
def test_attribute_escaping_round_trips_exactly(value: str) -> None:
    """`attr()` of any string is one attribute value that parses back to the cleaned string."""
    element = parse_xml(f'<x a="{xml_escape.attr(value)}" b="end"/>')
    assert element.get("a") == clean(value)
    assert element.get("b") == "end"
    assert len(element.attrib) == 2


@settings(max_examples=500)
@given(page_text.filter(lambda s: "\r" not in s))
def test_text_escaping_round_trips(value: str) -> None:
    """`text()` of any string (no CR) is element content that parses back to the cleaned string."""
    element = parse_xml(f"<x>{xml_escape.text(value)}<y/></x>")
    assert len(element) == 1
    assert element.text == (clean(value) or None)


def test_text_escaping_keeps_carriage_returns() -> None:
    """A carriage return in element content survives the parser as a carriage return."""
    escaped = xml_escape.text("a\rb")
    element = parse_xml(f"<x>{escaped}</x>")
    assert element.text == "a\rb"
