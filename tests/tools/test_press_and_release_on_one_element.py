"""The press and the release of a click land on one element, the one the id names
(issue 25, point 2): on an inbox whose icons collapse while their hover or pressed
sprite loads, in a real headless Chromium; and an answer says when the presses went
elsewhere instead of a silent ``<unchanged/>``."""

from __future__ import annotations

import json

import pytest

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.xmltree import eid_of
from tests.tools.test_tools import act, open_tab, parse
from trimtab.driver._press import witness_note

pytestmark = pytest.mark.browser

PAGE = "press-icons.html"
NAMED = '<span id="k3x">Star</span>'


async def heard(page: PageTarget) -> list[list[str]]:
    """The presses and clicks the inbox heard, each with the icon or row it reached."""
    return list(json.loads(await page.evaluate("JSON.stringify(window.heard)")))


async def test_an_icon_that_collapses_on_its_first_hover_is_clicked_once_it_is_back(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """The star has no width until its hover sprite loads: the pointer waits for it to
    come back and presses it, not the message row behind it."""
    tab, xml = await open_tab(page, pages_server.url(PAGE))
    result = await act(tab, "click", {"id": eid_of(xml, "button", "Star")})
    parse(result.content)
    assert "Star on for message 1" in result.content
    assert "Opened" not in result.content
    assert await heard(page) == [["mousedown", "Star"], ["mouseup", "Star"], ["click", "Star"]]


async def test_an_icon_that_collapses_when_pressed_gets_the_release_too(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """The pin collapses under the pressed button while its pressed sprite loads: the
    button stays down and follows it back, so press, release and click all reach the
    pin and the row does not open."""
    tab, xml = await open_tab(page, pages_server.url(PAGE))
    result = await act(tab, "click", {"id": eid_of(xml, "button", "Pin")})
    assert "Pin on for message 2" in result.content
    assert "<note>" not in result.content
    assert await heard(page) == [["mousedown", "Pin"], ["mouseup", "Pin"], ["click", "Pin"]]


async def test_a_release_that_cannot_land_on_the_element_is_told(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """The snooze icon vanishes for good once pressed: the release lands on its row,
    whose click opens the message, and the answer says that press and release parted
    and where the click went, rather than nothing."""
    tab, xml = await open_tab(page, pages_server.url(PAGE))
    result = await act(tab, "click", {"id": eid_of(xml, "button", "Snooze")})
    parse(result.content)
    note = parse(result.content).findtext("note") or ""
    assert "the press landed on" in note
    assert "Snooze" in note
    assert "the page's click went to <li>Your parcel is on its way</li>" in note
    assert await heard(page) == [["mousedown", "Snooze"], ["mouseup", "row 3"], ["click", "row 3"]]


def test_a_target_that_heard_no_press_says_so() -> None:
    """When no press, release or click reached the element, the note says so and where
    the press went, instead of a silent answer."""
    seen = {
        "inside": {},
        "elsewhere": [
            {"type": "mousedown", "tag": "div", "id": "", "cls": "overlay", "text": ""},
            {"type": "mouseup", "tag": "div", "id": "", "cls": "overlay", "text": ""},
        ],
    }
    note = witness_note(NAMED, seen, 1)
    assert note is not None
    assert note.startswith(f"{NAMED} received no mouse event")
    assert '<div class="overlay"/>' in note


def test_presses_that_all_reached_the_element_add_no_note() -> None:
    """A click (and a double-click) whose every press, release and click reached the
    element adds nothing to the answer; one click short of a double-click is told."""
    once = {"inside": {"mousedown": 1, "mouseup": 1, "click": 1}, "elsewhere": []}
    twice = {"inside": {"mousedown": 2, "mouseup": 2, "click": 2, "dblclick": 1}}
    assert witness_note(NAMED, once, 1) is None
    assert witness_note(NAMED, twice, 2) is None
    short = witness_note(NAMED, once, 2)
    assert short is not None
    assert "1 press(es), 1 release(s) and 1 click(s) of 2" in short


async def test_a_cover_the_press_brings_up_takes_the_release_at_once_and_is_told(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A search field whose mousedown opens a full-page takeover: the field is still
    in place under it, so no re-aim can reach it; the release goes onto the takeover
    without waiting out the re-aim's time, and the answer says where it landed."""
    tab, xml = await open_tab(page, pages_server.url("press-cover-on-focus.html"))
    result = await act(tab, "click", {"id": eid_of(xml, "input", "")})
    note = parse(result.content).findtext("note") or ""
    assert "search-takeover" in note, result.content
    # Press and release parted: the browser's click goes to what holds both (<body>).
    assert await heard(page) == [["mousedown", "search"], ["mouseup", "takeover"], ["click", ""]]
