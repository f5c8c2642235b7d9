"""The compaction pipeline, stage by stage, on small pages in a real headless Chromium.

Each page under ``tests/pages/pipeline-*.html`` is written for one case; every
output is parsed with lxml and the assertions are on its elements and attributes.
"""

from __future__ import annotations

import pytest
import trio
from lxml import etree

from pycdp_bridge import PageTarget, capture
from tests.support.pages import Loaded, load, load_and_compact, parse_xml
from tests.support.xmltree import folded, text_of, texts, xp
from trimtab.pipeline import compact, count_tokens

pytestmark = pytest.mark.browser

TIMEOUT = 60


# -- helpers ------------------------------------------------------------------------


def region(tree: etree._Element, name: str) -> etree._Element:
    found = xp(tree, f'//region[@name="{name}"]')
    assert len(found) == 1, f"expected one region {name!r}, found {len(found)}"
    element: etree._Element = found[0]
    return element


def controls(tree: etree._Element) -> list[etree._Element]:
    """Every element that carries an id, in document order."""
    return list(xp(tree, "//*[@id]"))


def by_label(tree: etree._Element, label: str) -> etree._Element:
    found = [e for e in tree.iter() if e.get("label") == label]
    assert len(found) == 1, f"expected one control labelled {label!r}, found {len(found)}"
    element: etree._Element = found[0]
    return element


def with_text(tree: etree._Element, tag: str, text: str) -> list[etree._Element]:
    return [e for e in tree.iter(tag) if folded("".join(texts(e))) == text]


async def compacted(page: PageTarget, name: str) -> Loaded:
    with trio.fail_after(TIMEOUT):
        return await load_and_compact(page, name)


# -- stage 1: signal filtering -------------------------------------------------------


async def test_hidden_content_is_dropped(page: PageTarget) -> None:
    """Content hidden by display:none, visibility, opacity:0, `hidden` or a zero box is absent."""
    loaded = await compacted(page, "pipeline-hidden.html")
    text = text_of(loaded.tree)
    assert "Visible heading" in text
    assert "Visible paragraph" in text
    assert "Last visible line" in text
    assert "Gone" not in text
    # The zero-size honeypot field is not offered to the agent.
    assert xp(loaded.tree, "//input") == []
    # Only the two visible buttons remain as controls.
    assert [e.tag for e in controls(loaded.tree)] == ["button", "button"]


async def test_hidden_content_is_counted_by_reason(page: PageTarget) -> None:
    """The stats count dropped elements by reason (hidden styles, zero size, aria-hidden)."""
    loaded = await compacted(page, "pipeline-hidden.html")
    dropped = loaded.compaction.stats.dropped
    assert dropped.get("visibility_hidden", 0) >= 1
    assert dropped.get("transparent", 0) >= 1
    assert dropped.get("zero_size", 0) >= 1
    assert dropped.get("aria_hidden", 0) >= 2  # the svg icon and the star glyph
    assert all(count >= 0 for count in dropped.values())


async def test_display_none_is_counted(page: PageTarget) -> None:
    """A display:none subtree and a `hidden` subtree are each counted as not rendered."""
    loaded = await compacted(page, "pipeline-hidden.html")
    assert loaded.compaction.stats.dropped.get("not_rendered", 0) >= 2


async def test_aria_hidden_icons_dropped_words_kept(page: PageTarget) -> None:
    """An aria-hidden icon disappears while its button keeps its name and visible words."""
    loaded = await compacted(page, "pipeline-hidden.html")
    close = by_label(loaded.tree, "Close dialog")
    assert close.tag == "button"
    assert len(close) == 0
    assert folded("".join(texts(close))) == ""
    favourite = with_text(loaded.tree, "button", "Favourite")
    assert len(favourite) == 1
    assert "★" not in text_of(loaded.tree)


async def test_noise_tags_are_gone(page: PageTarget) -> None:
    """Script, style, noscript and template content never reaches the output."""
    loaded = await compacted(page, "pipeline-hidden.html")
    for tag in ("script", "style", "noscript", "template", "head", "title", "meta"):
        assert xp(loaded.tree, f"//{tag}") == []
    text = text_of(loaded.tree)
    assert "window.loaded" not in text
    assert "margin" not in text
    assert "noscript" not in text
    assert "template" not in text
    assert loaded.compaction.stats.dropped.get("noise", 0) >= 4


async def test_opaque_modal_occludes_what_is_behind(page: PageTarget) -> None:
    """An opaque full-page modal hides the content under it; the modal's own content stays."""
    loaded = await compacted(page, "pipeline-occlusion.html")
    text = text_of(loaded.tree)
    assert "behind the modal" not in text
    dialog = region(loaded.tree, "dialog")
    assert dialog.get("label") == "Cookie consent"
    assert "We use cookies" in text_of(dialog)
    assert len(with_text(dialog, "button", "Accept cookies")) == 1
    assert [folded("".join(texts(e))) for e in controls(loaded.tree)] == ["Accept cookies"]
    assert loaded.compaction.stats.dropped.get("occluded", 0) >= 1


async def test_click_through_overlay_and_scrim_cover_nothing(page: PageTarget) -> None:
    """A pointer-events:none overlay and a semi-transparent scrim leave what is under them."""
    loaded = await compacted(page, "pipeline-overlays.html")
    text = text_of(loaded.tree)
    assert "Text under the click-through overlay" in text
    assert "Text under the scrim" in text
    names = [folded("".join(texts(e))) for e in controls(loaded.tree)]
    assert names == ["Button under the click-through overlay", "Button under the scrim"]
    assert loaded.compaction.stats.dropped.get("occluded", 0) == 0


# -- stage 2: nested clickables ------------------------------------------------------


async def test_clickable_span_folds_into_its_link(page: PageTarget) -> None:
    """A span with a click handler inside a link is the same target: only the link is a control."""
    loaded = await compacted(page, "pipeline-nested.html")
    links = with_text(loaded.tree, "a", "Open inbox")
    assert len(links) == 1
    assert links[0].get("id")
    assert list(links[0]) == []  # nothing nested inside the link
    assert len([e for e in controls(loaded.tree) if "Open inbox" in text_of(e)]) == 1


async def test_checkbox_inside_button_like_label_stays(page: PageTarget) -> None:
    """A checkbox inside a clickable label keeps its own id: a form control is acted on directly."""
    loaded = await compacted(page, "pipeline-nested.html")
    boxes = xp(loaded.tree, '//input[@type="checkbox"]')
    assert len(boxes) == 1
    assert boxes[0].get("id")
    assert "Remember me" in text_of(loaded.tree)


async def test_link_inside_clickable_card_stays(page: PageTarget) -> None:
    """A link inside a clickable card is its own control, next to the card."""
    loaded = await compacted(page, "pipeline-nested.html")
    links = with_text(loaded.tree, "a", "Read more")
    assert len(links) == 1
    assert links[0].get("id")
    card = [e for e in controls(loaded.tree) if "Card title" in text_of(e)]
    assert len(card) == 1
    assert card[0].get("id") != links[0].get("id")
    assert "Card summary" in text_of(loaded.tree)


# -- stage 3: compound inputs --------------------------------------------------------


async def test_date_input_carries_value_format_and_range(page: PageTarget) -> None:
    """A date input says its value, its format and its min/max."""
    loaded = await compacted(page, "pipeline-inputs.html")
    date = by_label(loaded.tree, "Arrival date")
    assert date.tag == "input"
    assert date.get("type") == "date"
    assert date.get("value") == "2024-03-05"
    assert date.get("format") == "YYYY-MM-DD"
    assert date.get("min") == "2024-01-01"
    assert date.get("max") == "2024-12-31"


async def test_unlabelled_date_and_time_inputs_are_controls(page: PageTarget) -> None:
    """Date and time inputs without an accessible name are still controls with their values."""
    html = (
        "<!doctype html><title>t</title><main><p>When:"
        ' <input type="date" value="2024-01-02"> <input type="time" value="10:30"></p></main>'
    )
    loaded = await compacted(page, html)
    date = xp(loaded.tree, '//input[@type="date"]')
    time = xp(loaded.tree, '//input[@type="time"]')
    assert len(date) == 1
    assert len(time) == 1
    assert date[0].get("value") == "2024-01-02"
    assert time[0].get("value") == "10:30"
    assert date[0].get("id")
    assert time[0].get("id")


async def test_time_number_and_range_inputs(page: PageTarget) -> None:
    """Time, number and range inputs carry their value and their bounds."""
    loaded = await compacted(page, "pipeline-inputs.html")
    time = by_label(loaded.tree, "Arrival time")
    assert (time.get("type"), time.get("value"), time.get("format")) == ("time", "14:30", "HH:MM")
    number = by_label(loaded.tree, "Guests")
    assert number.get("type") == "number"
    assert (number.get("value"), number.get("min"), number.get("max"), number.get("step")) == (
        "2",
        "1",
        "8",
        "1",
    )
    budget = by_label(loaded.tree, "Budget")
    assert budget.get("type") == "range"
    assert (budget.get("value"), budget.get("min"), budget.get("max"), budget.get("step")) == (
        "40",
        "0",
        "100",
        "5",
    )


async def test_select_lists_few_options_and_counts_many(page: PageTarget) -> None:
    """A short select lists its options; a long one gives their count and the first ones."""
    loaded = await compacted(page, "pipeline-inputs.html")
    room = by_label(loaded.tree, "Room")
    assert room.tag == "select"
    assert room.get("value") == "Double"
    assert room.get("options") == "Single|Double|Suite"
    assert room.get("first") is None
    country = by_label(loaded.tree, "Country")
    assert country.get("value") == "France"
    assert country.get("options") == "12"
    first = (country.get("first") or "").split("|")
    assert len(first) >= 1
    assert first == ["Argentina", "Belgium", "Canada", "Denmark"][: len(first)]


async def test_multi_select_lists_every_chosen_option(page: PageTarget) -> None:
    """A multi-select says it is one and lists all its selected options."""
    loaded = await compacted(page, "pipeline-inputs.html")
    extras = by_label(loaded.tree, "Extras")
    assert extras.tag == "select"
    assert extras.get("multiple") == "true"
    assert extras.get("value") == "Breakfast|Late checkout"
    assert extras.get("options") == "Breakfast|Parking|Late checkout"


async def test_checkbox_and_radio_states(page: PageTarget) -> None:
    """Checked checkboxes and radios say so; unchecked ones do not."""
    loaded = await compacted(page, "pipeline-inputs.html")
    assert by_label(loaded.tree, "Newsletter").get("checked") == "true"
    assert by_label(loaded.tree, "Terms").get("checked") is None
    assert by_label(loaded.tree, "Card").get("type") == "radio"
    assert by_label(loaded.tree, "Card").get("checked") is None
    assert by_label(loaded.tree, "Cash").get("checked") == "true"


async def test_live_state_after_user_changes(page: PageTarget) -> None:
    """Values and checked states are read live, not from the markup's initial attributes."""
    await load(page, "pipeline-inputs.html")
    await page.evaluate(
        """(() => {
          document.getElementById('news').checked = false;
          document.getElementById('terms').checked = true;
          document.getElementById('guests').value = '5';
          document.getElementById('room').value = 'Suite';
        })()"""
    )
    tree = parse_xml(compact(await capture(page)).xml)
    assert by_label(tree, "Newsletter").get("checked") is None
    assert by_label(tree, "Terms").get("checked") == "true"
    assert by_label(tree, "Guests").get("value") == "5"
    assert by_label(tree, "Room").get("value") == "Suite"


async def test_password_value_is_masked(page: PageTarget) -> None:
    """A password field says it has a value without revealing it."""
    loaded = await compacted(page, "pipeline-inputs.html")
    password = by_label(loaded.tree, "Password")
    assert password.get("type") == "password"
    value = password.get("value") or ""
    assert value
    assert set(value) == {"•"}
    assert "hunter2" not in loaded.xml
    assert "secret" not in loaded.xml


# -- stage 2: text -------------------------------------------------------------------


def main_lines(loaded: Loaded) -> list[str]:
    """The main region's body as rendered lines (the pipeline writes one item per line)."""
    main = region(loaded.tree, "main")
    raw = (main.text or "") + "".join(
        etree.tostring(child, encoding="unicode", with_tail=True) for child in main
    )
    return [folded(line) for line in raw.split("\n") if line.strip()]


async def test_block_boundaries_become_line_breaks(page: PageTarget) -> None:
    """Adjacent blocks become separate lines and table cells of a row are separated on one line."""
    loaded = await compacted(page, "pipeline-text.html")
    lines = main_lines(loaded)
    assert "First block" in lines
    assert "Second block" in lines
    assert "Cell A1 | Cell B1" in lines
    assert "Cell A2 | Cell B2" in lines


async def test_adjacent_inline_text_is_joined_with_its_spaces(page: PageTarget) -> None:
    """Inline runs of one paragraph join on one line, with the spaces innerText has."""
    loaded = await compacted(page, "pipeline-text.html")
    inner_text = await page.evaluate("document.querySelector('p').innerText")
    assert folded(inner_text) == "Alpha bravo charliedelta"
    assert "Alpha bravo charliedelta" in main_lines(loaded)


async def test_adjacent_inline_text_is_one_line(page: PageTarget) -> None:
    """Text split over inline elements stays on one line, words in order."""
    loaded = await compacted(page, "pipeline-text.html")
    line = [x for x in main_lines(loaded) if x.startswith("Alpha")]
    assert len(line) == 1
    assert line[0].replace(" ", "").startswith("Alphabravocharliedelta")


async def test_headings_keep_their_level(page: PageTarget) -> None:
    """Headings become h1..h6 with their level, including role=heading with aria-level."""
    loaded = await compacted(page, "pipeline-text.html")
    found = [
        (e.tag, folded("".join(texts(e))))
        for e in loaded.tree.iter("h1", "h2", "h3", "h4", "h5", "h6")
    ]
    assert found == [
        ("h1", "Main title"),
        ("h2", "Section two"),
        ("h3", "Aria heading three"),
        ("h6", "Tiny heading"),
    ]


async def test_visible_label_is_not_repeated(page: PageTarget) -> None:
    """A field named by a visible <label> gets no label= attribute; the label text appears once."""
    loaded = await compacted(page, "pipeline-text.html")
    email = xp(loaded.tree, '//input[@type="email"]')
    assert len(email) == 1
    assert email[0].get("label") is None
    assert loaded.xml.count("Email address") == 1
    assert loaded.xml.count("Full name") == 1
    wrapped = [
        e for e in loaded.tree.iter("input") if e.get("type") is None and e.get("label") is None
    ]
    assert len(wrapped) == 1
    # A field with only an aria-label keeps it: nothing else names it.
    assert by_label(loaded.tree, "Promo code").tag == "input"


async def test_icon_button_is_named_by_aria_label(page: PageTarget) -> None:
    """An icon-only button gets its aria-label as its label."""
    html = (
        "<!doctype html><title>t</title><main>"
        '<button aria-label="Open menu"><svg width="16" height="16" aria-hidden="true">'
        '<rect width="16" height="16"/></svg></button></main>'
    )
    loaded = await compacted(page, html)
    button = by_label(loaded.tree, "Open menu")
    assert button.tag == "button"
    assert button.get("id")


# -- composed trees ------------------------------------------------------------------


async def test_shadow_dom_and_same_origin_iframe_are_included(page: PageTarget) -> None:
    """Text and controls inside an open shadow root and a same-origin iframe are in the output."""
    loaded = await compacted(page, "pipeline-composed.html")
    text = text_of(loaded.tree)
    assert "Light text" in text
    assert "Text inside the shadow root" in text
    assert "Text inside the frame" in text
    names = [folded("".join(texts(e))) for e in controls(loaded.tree)]
    assert names == ["Shadow button", "Frame button"]
    frames = {c.frame for c in loaded.compaction.controls.values()}
    assert len(frames) == 2  # the shadow button is in the main frame, the other in the iframe


# -- determinism and stats -----------------------------------------------------------


async def test_same_page_twice_gives_identical_xml(page: PageTarget) -> None:
    """Two captures of the same page compact to byte-identical XML."""
    first = await compacted(page, "pipeline-inputs.html")
    second = await compacted(page, "pipeline-inputs.html")
    assert first.xml == second.xml
    assert compact(first.model).xml == first.xml


async def test_stats_describe_the_run(page: PageTarget) -> None:
    """Stats give elements in/out, control count, chars, exact tokens and every stage's timing."""
    loaded = await compacted(page, "pipeline-inputs.html")
    stats = loaded.compaction.stats
    assert stats.elements_in == loaded.model.element_count()
    assert 0 < stats.elements_out <= stats.elements_in
    assert stats.controls == len(loaded.compaction.controls) == len(controls(loaded.tree))
    assert stats.chars == len(loaded.xml)
    assert stats.tokens == count_tokens(loaded.xml)
    assert stats.tokens > 0
    assert set(stats.stage_ms) >= {"filter", "build", "encode", "tokens"}
    assert all(ms >= 0 for ms in stats.stage_ms.values())
    assert stats.pipeline_ms >= 0
    assert stats.missing == ()
    as_dict = stats.as_dict()
    assert as_dict["tokens"] == stats.tokens
    stage_ms = as_dict["stage_ms"]
    assert isinstance(stage_ms, dict)
    assert set(stage_ms) == set(stats.stage_ms)


async def test_ids_are_unique_and_map_to_controls(page: PageTarget) -> None:
    """Every id in the XML is unique and names a control of the id map, and vice versa."""
    loaded = await compacted(page, "pipeline-inputs.html")
    ids = [e.get("id") for e in controls(loaded.tree)]
    assert len(ids) == len(set(ids))
    assert set(ids) == set(loaded.compaction.controls)
    for eid, control in loaded.compaction.controls.items():
        assert control.eid == eid
        node = loaded.model.nodes[control.node]
        assert node.backend_node_id == control.backend_node_id


# -- escaping ------------------------------------------------------------------------


async def test_markup_in_page_text_is_escaped(page: PageTarget) -> None:
    """Angle brackets, ampersands, quotes and `]]>` in page text come back as the same text."""
    loaded = await compacted(page, "pipeline-escaping.html")
    expected = await page.evaluate("document.getElementById('markup').innerText")
    lines = main_lines(loaded)
    assert folded(expected) in lines
    assert xp(loaded.tree, "//b") == []
    assert loaded.tree.get("title") == 'Escaping <&"'


async def test_page_text_cannot_forge_a_region(page: PageTarget) -> None:
    """Text that looks like a collapsed region stays text: no such element exists."""
    loaded = await compacted(page, "pipeline-escaping.html")
    assert xp(loaded.tree, '//region[@name="nav"]') == []
    assert xp(loaded.tree, "//region[@unchanged]") == []
    assert '<region name="nav" unchanged="true" count="1"/>' in text_of(loaded.tree)


async def test_control_characters_are_replaced(page: PageTarget) -> None:
    """Control characters XML forbids become U+FFFD in text and values; the rest round-trips."""
    loaded = await compacted(page, "pipeline-escaping.html")
    lines = main_lines(loaded)
    assert "bell\ufffd nul\ufffd esc\ufffd end" in lines
    field = by_label(loaded.tree, "Field")
    assert field.get("value") == "a\ufffdb<c>&\"d'"


async def test_quotes_in_attribute_values_round_trip(page: PageTarget) -> None:
    """An aria-label with quotes, `&` and angle brackets is one attribute with that exact value."""
    loaded = await compacted(page, "pipeline-escaping.html")
    button = by_label(loaded.tree, 'Say "hi" & <bye>')
    assert button.tag == "button"
    assert set(button.attrib) == {"id", "label"}
