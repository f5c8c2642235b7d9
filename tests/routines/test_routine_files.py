"""Routines as values and files, without a browser: what a session's calls become
(`routine_of`), the file format (`parse_routine`) and the folder (`RoutineStore`)."""

from __future__ import annotations

import json
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trimtab.pipeline import Control
from trimtab.routines import (
    REPLAYED_TOOLS,
    ROUTINE_VERSION,
    PageSeen,
    Recording,
    Routine,
    RoutineError,
    RoutineStore,
    Step,
    Target,
    parse_routine,
    routine_of,
    url_matches,
    url_pattern,
)

SHOP = "http://127.0.0.1:8000/shop.html"
CART = "http://127.0.0.1:8000/cart.html"


def shop_page(url: str = SHOP) -> PageSeen:
    """A page with a quantity, a password, an "Add to cart" and a "Checkout" link."""
    controls = {
        "qty": Control("qty", 0, 0, 0, "spinbutton", "Quantity", "main"),
        "pw": Control("pw", 1, 1, 0, "textbox", "Password", "main", secret_kind="password"),
        "add": Control("add", 2, 2, 0, "button", "Add to cart", "main"),
        "out": Control("out", 3, 3, 0, "link", "Checkout", "nav"),
    }
    xml = "\n".join(f'<x id="{eid}">{c.name}</x>' for eid, c in controls.items())
    return PageSeen(url, controls, xml)


def record(calls: list[tuple[str, Mapping[str, Any], bool, str]]) -> Recording:
    """A recording of session "s": (tool, args, ok, URL after) each, on the shop page."""
    recording = Recording()
    for tool, args, ok, after in calls:
        acted = tool not in ("capture_snapshot", "find", "expand", "read", "screenshot")
        recording.note("s", (tool, args), shop_page(), after, ok=ok, acted=acted)
    return recording


def test_a_routine_keeps_actions_and_the_last_reads_and_leaves_detours_out() -> None:
    """Snapshots, failed calls, reads before the last action and a value typed again
    at once are left out; the reads after the last action are the result."""
    recording = record(
        [
            ("capture_snapshot", {}, True, SHOP),
            ("type", {"id": "qty", "text": "3"}, True, SHOP),
            ("type", {"id": "qty", "text": "2"}, True, SHOP),
            ("find", {"text": "cart"}, True, SHOP),
            ("click", {"id": "gone"}, False, SHOP),
            ("click", {"id": "add"}, True, SHOP),
            ("click", {"id": "out"}, True, CART),
            ("expand", {"region": "main"}, True, CART),
        ]
    )
    routine = routine_of(recording.of("s"), "Cart", "order 2 mugs")
    assert [(s.tool, s.result) for s in routine.steps] == [
        ("type", False),
        ("click", False),
        ("click", False),
        ("expand", True),
    ]
    assert routine.start == SHOP
    assert routine.steps[2].after == url_pattern(CART)
    assert [(p.name, p.default) for p in routine.parameters] == [("quantity", "2")]


def test_a_secret_is_a_parameter_and_never_in_the_file() -> None:
    """A value typed into a password field becomes a secret parameter with no default,
    and leaves the task's words too when they hold it; other values are kept when the
    task does not name them."""
    recording = record(
        [
            ("type", {"id": "pw", "text": "hunter2"}, True, SHOP),
            ("type", {"id": "qty", "text": "7"}, True, SHOP),
        ]
    )
    routine = routine_of(recording.of("s"), "Sign in", "sign in with hunter2")
    text = json.dumps(routine.to_json())
    assert "hunter2" not in text
    assert routine.task == "sign in with (secret)"
    assert [(p.name, p.kind, p.default) for p in routine.parameters] == [
        ("password", "secret", None)
    ]
    assert routine.steps[1].args == {"text": "7"}


def test_parameters_can_be_renamed_and_a_value_used_twice_is_one() -> None:
    """The person's names replace the found ones; the same value typed into the same
    field twice (not in a row) is one parameter."""
    recording = record(
        [
            ("type", {"id": "qty", "text": "2"}, True, SHOP),
            ("click", {"id": "add"}, True, SHOP),
            ("type", {"id": "qty", "text": "2"}, True, SHOP),
        ]
    )
    routine = routine_of(recording.of("s"), "Twice", "add 2, twice", {"quantity": "count"})
    assert [p.name for p in routine.parameters] == ["count"]
    assert routine.steps[0].args == routine.steps[2].args == {"text": {"param": "count"}}


def test_a_page_left_with_back_at_once_is_a_detour() -> None:
    """Going to a page and straight back is left out; a click that stayed on its
    page did something there and is kept."""
    recording = record(
        [
            ("click", {"id": "out"}, True, CART),
            ("back", {}, True, SHOP),
            ("click", {"id": "add"}, True, SHOP),
        ]
    )
    routine = routine_of(recording.of("s"), "Add", "")
    assert [(s.tool, s.target.name if s.target else "") for s in routine.steps] == [
        ("click", "Add to cart")
    ]


def test_a_session_that_did_nothing_is_not_a_routine() -> None:
    """Only reads, or only failures: saving says why it cannot."""
    recording = record([("capture_snapshot", {}, True, SHOP), ("click", {"id": "x"}, False, SHOP)])
    with pytest.raises(RoutineError, match="did nothing a routine can repeat"):
        routine_of(recording.of("s"), "Empty", "")


def test_a_switch_to_a_tab_is_kept_naming_the_tab_as_a_person_sees_it() -> None:
    """A switch to a tab is a step that names the tab by its title and page, never by
    its number (another each run); after the last action its answer is read."""
    recording = Recording()
    recording.note("s", ("click", {"id": "add"}), shop_page(), SHOP, ok=True, acted=True)
    # The host answers a task tool itself: its outcome says no side effects.
    recording.note(
        "s", ("switch_tab", {"tab": 7}), shop_page(), CART, ok=True, acted=False, title="Cart"
    )
    routine = routine_of(recording.of("s"), "Two tabs", "")
    switch = routine.steps[1]
    assert (switch.tool, switch.title, switch.after, switch.args) == (
        "switch_tab",
        "Cart",
        url_pattern(CART),
        {},
    )
    assert switch.result
    assert switch.words() == f"switch to the tab 'Cart' at {url_pattern(CART)}"
    assert parse_routine(json.loads(json.dumps(routine.to_json()))) == routine


def test_a_tab_opened_by_its_address_and_closed_is_kept_closing_it_by_title() -> None:
    """A new tab is a step with its URL (its answer, the new page, read when no action
    follows); a close names the tab it closed by title and page, never its number,
    and is never the result; code run in a session still keeps it from being saved."""
    recording = Recording()
    recording.note("s", ("click", {"id": "add"}), shop_page(), SHOP, ok=True, acted=True)
    # The host answers the task tools itself: their outcomes say no side effects.
    recording.note("s", ("new_tab", {"url": CART}), shop_page(), CART, ok=True, acted=False)
    closed = PageSeen(CART, {}, "")
    recording.note("s", ("close_tab", {"tab": 9}), closed, CART, ok=True, acted=False, title="Cart")
    routine = routine_of(recording.of("s"), "Peek at the cart", "")
    opened, close = routine.steps[1:]
    assert (opened.tool, opened.args, opened.after, opened.result) == (
        "new_tab",
        {"url": CART},
        url_pattern(CART),
        True,
    )
    assert (close.tool, close.title, close.page, close.args, close.result) == (
        "close_tab",
        "Cart",
        url_pattern(CART),
        {},
        False,
    )
    assert close.words() == f"close the tab 'Cart' at {url_pattern(CART)}"
    assert parse_routine(json.loads(json.dumps(routine.to_json()))) == routine
    recording.note("s", ("evaluate", {"code": "1"}), shop_page(), SHOP, ok=True, acted=True)
    with pytest.raises(RoutineError, match="the session used evaluate"):
        routine_of(recording.of("s"), "Peek at the cart", "")


def test_a_path_segment_with_a_digit_matches_any() -> None:
    """Order numbers and dates in a path match any segment; query and fragment do not
    count; another host or depth is another page."""
    pattern = url_pattern("https://shop.test/orders/12345/invoice?x=1#top")
    assert pattern == "https://shop.test/orders/*/invoice"
    assert url_matches(pattern, "https://shop.test/orders/999/invoice?y=2")
    assert not url_matches(pattern, "https://shop.test/orders/999/receipt")
    assert not url_matches(pattern, "https://other.test/orders/999/invoice")
    assert not url_matches(pattern, "https://shop.test/orders/999/invoice/more")


# -- the file format --------------------------------------------------------------------


def minimal(**changes: Any) -> dict[str, Any]:
    """A valid routine file's JSON with ``changes``."""
    data: dict[str, Any] = {
        "version": 1,
        "name": "Order",
        "parameters": [{"name": "qty", "default": "2"}],
        "steps": [
            {
                "tool": "type",
                "target": {"role": "spinbutton", "name": "Quantity"},
                "args": {"text": {"param": "qty"}},
            }
        ],
    }
    data.update(changes)
    return data


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"version": 2}, "version 2 is newer than this Trimtab reads (1)"),
        ({"version": "1"}, "field 'version' = '1' is not a version number"),
        ({"name": " "}, "field 'name' = ' ' is not a text"),
        ({"steps": []}, "it has no steps"),
        ({"steps": [{"tool": "evaluate"}]}, "step 1: field 'tool' = 'evaluate' is not a tool"),
        (
            {"steps": [{"tool": "type", "args": {"text": {"param": "colour"}}}]},
            "step 1 (type): argument 'text': parameter 'colour' is not declared",
        ),
        (
            {"steps": [{"tool": "click", "args": {"id": "abc"}}]},
            "step 1 (click): argument 'id' is an element: write it as a target",
        ),
        (
            {"steps": [{"tool": "click", "target": {"name": "Pay"}}]},
            "step 1 (click): target: it says neither the element's role nor its tag",
        ),
        (
            {"steps": [{"tool": "click", "target": {"role": "button", "ordinal": 3, "among": 2}}]},
            "field 'ordinal' = 3 is not below 'among' = 2",
        ),
        (
            {"parameters": [{"name": "pw", "kind": "secret", "default": "x"}]},
            "parameter 1 (pw): a secret parameter has no default",
        ),
        ({"parameters": [{"name": "a"}, {"name": "a"}]}, "parameter 'a' is declared twice"),
        ({"steps": [{"tool": "fill"}]}, "step 1 (fill): a fill step needs its fields"),
        (
            {"steps": [{"tool": "close_tab", "title": "Cart"}]},
            "step 1 (close_tab): a close_tab step needs the page of its tab ('page')",
        ),
        (
            {"steps": [{"tool": "close_tab", "page": CART, "args": {"tab": 3}}]},
            "step 1 (close_tab): a close_tab step names its tab by 'title' and 'page'",
        ),
        (
            {"steps": [{"tool": "new_tab", "args": {"address": CART}}]},
            "step 1 (new_tab): a new_tab step's one argument is its 'url'",
        ),
    ],
)
def test_a_wrong_file_is_refused_naming_the_step_and_field(
    changes: dict[str, Any], said: str
) -> None:
    """Each way a file edited by hand can be wrong is named, with the step and field."""
    with pytest.raises(RoutineError) as refused:
        parse_routine(minimal(**changes), where="order.json")
    assert said in str(refused.value)
    assert str(refused.value).startswith("order.json")


_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12)
_TARGETS = st.builds(
    lambda role, name, region, near, among, at: Target(
        role=role, name=name, region=region, near=near, ordinal=at % among, among=among
    ),
    st.sampled_from(["button", "link", "textbox"]),
    _TEXT,
    _TEXT,
    _TEXT,
    st.integers(1, 5),
    st.integers(0, 10),
)
_STEPS = (
    st.builds(
        lambda tool, target, page, result, text: Step(
            tool=tool,
            page=page,
            after=page,
            target=target,
            args={"text": text} if text is not None else {},
            result=result,
        ),
        st.sampled_from(sorted(REPLAYED_TOOLS - {"fill", "switch_tab", "new_tab", "close_tab"})),
        st.none() | _TARGETS,
        st.sampled_from(["", SHOP]),
        st.booleans(),
        st.none() | _TEXT,
    )
    | st.builds(
        lambda page, after, title, result: Step(
            tool="switch_tab", page=page, after=after, title=title, result=result
        ),
        st.sampled_from(["", SHOP]),
        st.sampled_from([SHOP, CART]),
        _TEXT,
        st.booleans(),
    )
    | st.builds(
        lambda page, title: Step(tool="close_tab", page=page, after=page, title=title),
        st.sampled_from([SHOP, CART]),
        _TEXT,
    )
    | st.builds(
        lambda page, url, result: Step(
            tool="new_tab", page=page, after=page, args={"url": url}, result=result
        ),
        st.sampled_from(["", SHOP]),
        st.sampled_from([SHOP, CART]),
        st.booleans(),
    )
)


@settings(max_examples=100)
@given(st.lists(_STEPS, min_size=1, max_size=5), _TEXT.filter(str.strip), _TEXT)
def test_a_routine_reads_back_as_it_was_written(steps: list[Step], name: str, task: str) -> None:
    """Whatever a routine holds, its file's JSON reads back as the same routine."""
    routine = Routine(name=name, steps=tuple(steps), task=task)
    data = json.loads(json.dumps(routine.to_json()))
    assert parse_routine(data) == routine
    assert data["version"] == ROUTINE_VERSION


def test_the_folder_lists_a_broken_file_beside_the_good_ones(tmp_path: Path) -> None:
    """A file that does not read is listed with its problem; saving refuses to replace
    unless asked; files are the owner's alone; delete says whether there was one."""
    store = RoutineStore(tmp_path / "routines")
    routine = parse_routine(minimal())
    path = store.save(routine)
    assert path.name == "order.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with pytest.raises(RoutineError, match="exists already"):
        store.save(routine)
    store.save(routine, replace=True)
    (store.folder / "broken.json").write_text("{not json")
    listed = {entry.file.name: entry for entry in store.list()}
    assert listed["order.json"].routine == routine
    assert "broken.json: is not JSON" in listed["broken.json"].problem
    assert store.load("ORDER") == routine
    with pytest.raises(RoutineError, match=r"there is no routine 'Weekly' \(routines: 'Order'\)"):
        store.load("Weekly")
    assert store.delete("Order")
    assert not store.delete("Order")
