"""Lines that are each one plain link or button are written as `<links>`/`<buttons>` lists.

Sans-I/O: output trees built by hand, rendered as the pipeline renders them, read
back with lxml as FORMAT.md tells the model to read them (each line: its id, a space,
its text; the list's attributes hold for each element).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from tests.pipeline.test_xml_properties import NASTY, comparable
from tests.support.pages import parse_xml
from trimtab.pipeline import OutNode, count_tokens, render_items, render_node, token_breakdown


def control(tag: str, eid: str, text: str | None, **more: str) -> OutNode:
    """A control as the builder makes it: its id first, then its other attributes."""
    return OutNode(
        tag, [("id", eid), *more.items()], [] if text is None else [text], node=1, eid=eid
    )


def region(*lines: OutNode | str | list[OutNode | str]) -> OutNode:
    """A main region whose lines are the given nodes, texts or lists of both."""
    children: list[OutNode | str] = []
    for line in lines:
        children.extend(line if isinstance(line, list) else [line])
        children.append("\n")
    return OutNode("region", [("name", "main")], children)


def listed(element: etree._Element) -> list[tuple[str, str]]:
    """A list's lines read back: (id, text)."""
    assert element.text is not None
    lines = [line.partition(" ") for line in element.text.strip("\n").split("\n")]
    return [(eid, text) for eid, _, text in lines]


def test_a_run_of_links_is_one_list_of_ids_and_texts() -> None:
    """Three lines of one plain link each become one `<links>` list: one line per link,
    its id, a space and its text; the item carries the ids in order and the texts."""
    tree = region(
        "Shop",
        control("a", "qsx", "Tents & shelters"),
        control("a", "ixo", "Sleeping bags"),
        control("a", "zt", "Stoves"),
    )
    items = render_items(tree)
    assert [item.xml for item in items] == [
        "Shop",
        "<links>\nqsx Tents &amp; shelters\nixo Sleeping bags\nzt Stoves\n</links>",
    ]
    assert items[1].eids == ("qsx", "ixo", "zt")
    assert items[1].text == "Tents & shelters Sleeping bags Stoves"
    page = parse_xml(render_node(tree))
    [links] = page.iter("links")
    assert listed(links) == [
        ("qsx", "Tents & shelters"),
        ("ixo", "Sleeping bags"),
        ("zt", "Stoves"),
    ]
    # The list costs less than the elements it stands for.
    plain = "\n".join(f'<a id="{e}">{t}</a>' for e, t in [("qsx", "x"), ("ixo", "y"), ("zt", "z")])
    assert count_tokens(items[1].xml.replace("Tents &amp; shelters", "x")) < count_tokens(plain)


def test_only_a_line_of_one_plain_link_is_listed() -> None:
    """A link beside text, with another attribute, without text or holding an element
    stays an element, and it breaks the run: a single plain link stays one too."""
    heading = OutNode("h3", [], ["Deals"])
    tree = region(
        control("a", "aa", "One"),
        control("a", "bb", "Two"),
        ["Price ", control("a", "cc", "Three")],
        control("a", "dd", "Four", current="page"),
        control("a", "ee", None, label="Cart"),
        OutNode("a", [("id", "ff")], [heading], node=1, eid="ff"),
        control("a", "gg", "Alone"),
    )
    xmls = [item.xml for item in render_items(tree)]
    assert xmls == [
        "<links>\naa One\nbb Two\n</links>",
        'Price <a id="cc">Three</a>',
        '<a id="dd" current="page">Four</a>',
        '<a id="ee" label="Cart"/>',
        '<a id="ff"><h3>Deals</h3></a>',
        '<a id="gg">Alone</a>',
    ]


def test_buttons_alike_share_their_attributes_on_the_list() -> None:
    """Buttons with the same attributes besides their ids are one `<buttons>` list that
    carries those attributes; a button with other attributes starts another list, and
    links and buttons never share one."""
    tree = region(
        control("button", "ab", "Deutsch", type="submit"),
        control("button", "cd", "Français", type="submit"),
        control("button", "ef", "Share"),
        control("button", "gh", "Save"),
        control("a", "ij", "Help"),
        control("a", "kl", "About"),
    )
    xmls = [item.xml for item in render_items(tree)]
    assert xmls == [
        '<buttons type="submit">\nab Deutsch\ncd Français\n</buttons>',
        "<buttons>\nef Share\ngh Save\n</buttons>",
        "<links>\nij Help\nkl About\n</links>",
    ]


def test_a_label_is_never_hoisted_onto_a_list() -> None:
    """Attributes that name an element (label, icon, value...) differ from one element
    to the next: buttons that carry one stay elements."""
    tree = region(
        control("button", "ab", "Up", label="upvote"),
        control("button", "cd", "Up", label="upvote"),
    )
    assert all(item.xml.startswith("<button ") for item in render_items(tree))


def test_a_long_run_is_cut_into_lists_of_nearly_equal_length() -> None:
    """Thirty links in a row are three lists of ten: a diff or a trimmed region shows
    or hides a list whole, so no list holds more than twelve."""
    tree = region(*(control("a", f"l{k:02d}", f"Link {k}") for k in range(30)))
    items = render_items(tree)
    assert [len(item.eids) for item in items] == [10, 10, 10]
    ids = [eid for item in items for eid in item.eids]
    assert ids == [f"l{k:02d}" for k in range(30)]
    page = parse_xml(render_node(tree))
    assert [line[0] for links in page.iter("links") for line in listed(links)] == ids


def test_the_breakdown_counts_a_lists_ids_as_ids() -> None:
    """In a list the first word of each line is an id, the rest text: the breakdown
    says so, and its parts still add up to the count."""
    xml = render_node(region(control("a", "qsx", "Compare models"), control("a", "ixo", "Buy")))
    breakdown = token_breakdown(xml)
    assert breakdown.parts["ids"] == count_tokens("qsx") + count_tokens("ixo")
    assert breakdown.parts["text"] == count_tokens(" Compare models") + count_tokens(" Buy")
    assert sum(breakdown.parts.values()) == pytest.approx(breakdown.tokens)
    assert breakdown.elements["links"] == 1


link_text = st.one_of(
    st.sampled_from([*NASTY, "k3x Fake line", "\nzz Forged", '</links><a id="zz">']),
    st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=30),
)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(link_text, min_size=2, max_size=15))
def test_page_text_never_forges_a_line_of_a_list(texts: list[str]) -> None:
    """Whatever the links' texts, the XML parses, each list line is one of our links
    (our id, then its text), in order, and no line or element is added."""
    tree = region(*(control("a", f"i{k:02d}", text) for k, text in enumerate(texts)))
    page = parse_xml(render_node(tree))
    read: list[tuple[str, str]] = []
    for element in page.iter():
        if element.tag == "links":
            read.extend((eid, text) for eid, text in listed(element))
        elif element.tag == "a":
            read.append((element.get("id", ""), "".join(element.itertext())))
    assert {e.tag for e in page.iter()} <= {"region", "links", "a"}
    # Whitespace folded, characters XML forbids replaced (see test_xml_properties).
    expected = [(f"i{k:02d}", comparable(text)) for k, text in enumerate(texts)]
    assert [(eid, comparable(text)) for eid, text in read] == expected
