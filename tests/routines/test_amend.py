"""A routine mended where a run needed help (`heal_of`, `amend`) and edited by the person
(`edit_routine`, `RoutineStore.rewrite`), without a browser: the calls that did a step
become the steps in its place, found again by what a person sees."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trimtab.pipeline import Control
from trimtab.routines import (
    Acted,
    PageSeen,
    Parameter,
    Recording,
    Routine,
    RoutineError,
    RoutineStore,
    Step,
    Target,
    amend,
    edit_routine,
    heal_of,
    replay,
    url_pattern,
)

SHOP = "http://127.0.0.1:8000/shop.html"
DONE = "http://127.0.0.1:8000/done.html"
PLACE = Target("button", "Place order", region="main")
QUANTITY = Target("spinbutton", "Quantity", region="main")
PASSWORD = Target("textbox", "Account password", region="main")


def shop_routine() -> Routine:
    """Type the quantity and the password, place the order, read the total."""
    page = url_pattern(SHOP)
    return Routine(
        name="Order",
        task="Order 2 headlamps",
        start=SHOP,
        parameters=(
            Parameter("quantity", "text", "2", QUANTITY.words()),
            Parameter("account_password", "secret", None, PASSWORD.words()),
        ),
        steps=(
            Step("type", page, page, QUANTITY, args={"text": {"param": "quantity"}}),
            Step("type", page, page, PASSWORD, args={"text": {"param": "account_password"}}),
            Step("click", page, url_pattern(DONE), PLACE),
            Step("expand", url_pattern(DONE), args={"region": "main"}, result=True),
        ),
    )


def changed_shop(url: str = SHOP) -> PageSeen:
    """The shop as it changed: its order button says "Buy now", a PIN field, a banner."""
    controls = {
        "q": Control("q", 0, 0, 0, "spinbutton", "Quantity", "main"),
        "pw": Control("pw", 1, 1, 0, "textbox", "Account password", "main", secret_kind="password"),
        "pin": Control("pin", 2, 2, 0, "textbox", "PIN", "main", secret_kind="one-time-code"),
        "note": Control("note", 3, 3, 0, "textbox", "Note", "main"),
        "buy": Control("buy", 4, 4, 0, "button", "Buy now", "main"),
        "ok": Control("ok", 5, 5, 0, "button", "Accept cookies", "cookies"),
    }
    xml = "\n".join(f'<x id="{eid}">{c.name}</x>' for eid, c in controls.items())
    return PageSeen(url, controls, xml)


def healed(calls: list[tuple[str, Mapping[str, Any], bool, str]], session: str = "s") -> Recording:
    """What the healer did on the changed shop: (tool, args, ok, URL after) each."""
    recording = Recording()
    for tool, args, ok, after in calls:
        acted = tool not in ("capture_snapshot", "find", "expand", "read")
        recording.note(session, (tool, args), changed_shop(), after, ok=ok, acted=acted)
    return recording


VALUES = {"quantity": "3", "account_password": "hunter2"}


def test_the_calls_that_did_a_step_replace_it_and_the_looks_before_are_left_out() -> None:
    """A snapshot, a find and a failed press are left out; the press on "Buy now" takes
    the place of the "Place order" step, found by what a person sees; the steps
    around it stay, and the amendment says both in words."""
    recording = healed(
        [
            ("capture_snapshot", {}, True, SHOP),
            ("find", {"text": "Buy"}, True, SHOP),
            ("click", {"id": "gone"}, False, SHOP),
            ("click", {"id": "buy"}, True, DONE),
        ]
    )
    routine = shop_routine()
    amendment = heal_of(routine, 2, 3, recording.of("s"), VALUES)
    assert amendment.old == (routine.steps[2],)
    [step] = amendment.new
    assert (step.tool, step.target, step.page, step.after) == (
        "click",
        Target("button", "Buy now", region="main", near=""),
        url_pattern(SHOP),
        url_pattern(DONE),
    )
    assert amendment.to_json() == {
        "routine": "Order",
        "at": 3,
        "old": ["click the button 'Place order' (region main)"],
        "new": ["click the button 'Buy now' (region main)"],
        "parameters": [],
    }
    mended = amend(routine, amendment)
    assert [s.tool for s in mended.steps] == ["type", "type", "click", "expand"]
    assert mended.steps[2].target is not None
    assert mended.steps[2].target.name == "Buy now"
    assert mended.parameters == routine.parameters


def test_values_the_run_was_given_are_its_parameters_and_a_new_secret_is_never_kept() -> None:
    """The quantity and the password the run was given are typed as those parameters'
    uses; a one-time code the run was not given becomes a secret parameter with no
    default; a value the task does not name is kept as it is; no secret is in the file."""
    recording = healed(
        [
            ("type", {"id": "q", "text": "3"}, True, SHOP),
            ("type", {"id": "pw", "text": "hunter2"}, True, SHOP),
            ("type", {"id": "pin", "text": "424242"}, True, SHOP),
            ("type", {"id": "note", "text": "leave at the door"}, True, SHOP),
            ("click", {"id": "buy"}, True, DONE),
        ]
    )
    routine = shop_routine()
    amendment = heal_of(routine, 2, 3, recording.of("s"), VALUES)
    assert [s.args.get("text") for s in amendment.new] == [
        {"param": "quantity"},
        {"param": "account_password"},
        {"param": "pin"},
        "leave at the door",
        None,
    ]
    assert amendment.parameters == (
        Parameter("pin", "secret", None, "the textbox 'PIN' (region main)"),
    )
    text = json.dumps(amend(routine, amendment).to_json())
    assert "hunter2" not in text
    assert "424242" not in text
    # A secret's value in what a step sends otherwise (a URL) is refused, not kept.
    leaked = healed([("navigate", {"url": f"{SHOP}?pw=hunter2"}, True, SHOP)])
    with pytest.raises(RoutineError, match=r"the heal's step 1 \(navigate\) holds a secret"):
        heal_of(routine, 2, 3, leaked.of("s"), VALUES)


def test_no_step_is_a_heal_and_a_parameter_no_step_uses_goes() -> None:
    """The password step's field is gone and the healer only looked: the step goes,
    and so does the secret parameter no other step uses."""
    recording = healed([("capture_snapshot", {}, True, SHOP)])
    routine = shop_routine()
    amendment = heal_of(routine, 1, 2, recording.of("s"), VALUES)
    assert amendment.new == ()
    assert amendment.to_json()["new"] == []
    mended = amend(routine, amendment)
    assert [s.tool for s in mended.steps] == ["type", "click", "expand"]
    assert [p.name for p in mended.parameters] == ["quantity"]


def test_a_heal_of_the_result_keeps_its_reads_as_the_result() -> None:
    """The last step read the result: the healer's reads after its last action are the
    result in its place; reads before an action never are."""
    recording = healed(
        [
            ("expand", {"region": "nav"}, True, DONE),
            ("click", {"id": "ok"}, True, DONE),
            ("read", {"id": "note"}, True, DONE),
        ]
    )
    routine = shop_routine()
    amendment = heal_of(routine, 3, 4, recording.of("s"), VALUES)
    assert [(s.tool, s.result) for s in amendment.new] == [("click", False), ("read", True)]
    assert amendment.to_json()["new"][0] == "click the button 'Accept cookies' (region cookies)"


def test_what_a_routine_cannot_repeat_is_not_kept() -> None:
    """A heal that ran code, or steps that are not the routine's, are refused saying so."""
    routine = shop_routine()
    code = healed([("evaluate", {"code": "1"}, True, SHOP), ("click", {"id": "buy"}, True, DONE)])
    with pytest.raises(RoutineError, match="the heal of step 3 used evaluate"):
        heal_of(routine, 2, 3, code.of("s"), VALUES)
    with pytest.raises(RoutineError, match=r"steps 5 to 5 are not steps of routine 'Order'"):
        heal_of(routine, 4, 5, (), VALUES)


def test_an_amendment_finds_its_steps_where_they_moved_and_refuses_when_they_are_gone() -> None:
    """Two heals of one run: the second is written after the first changed the number
    of steps before it, and still replaces its own step; once an edit changed that
    step, it is refused naming it."""
    routine = shop_routine()
    first = heal_of(
        routine,
        0,
        1,
        healed(
            [("click", {"id": "ok"}, True, SHOP), ("type", {"id": "q", "text": "3"}, True, SHOP)]
        ).of("s"),
        VALUES,
    )
    second = heal_of(routine, 2, 3, healed([("click", {"id": "buy"}, True, DONE)]).of("s"), VALUES)
    once = amend(routine, first)
    assert [s.tool for s in once.steps] == ["click", "type", "type", "click", "expand"]
    twice = amend(once, second)
    assert [s.target.name for s in twice.steps if s.target] == [
        "Accept cookies",
        "Quantity",
        "Account password",
        "Buy now",
    ]
    with pytest.raises(RoutineError, match=r"its step 3 as it ran \(click the button 'Place"):
        amend(twice, second)


def test_the_recording_gives_the_calls_since_a_mark() -> None:
    """Calls noted after a mark are the heal's; more than are kept is refused."""
    recording = healed([("click", {"id": "ok"}, True, SHOP)])
    mark = recording.count("s")
    recording.note("s", ("click", {"id": "buy"}), changed_shop(), DONE, ok=True, acted=True)
    assert [c.args for c in recording.since("s", mark)] == [{"id": "buy"}]
    assert recording.since("s", recording.count("s")) == ()
    assert recording.since("other", 0) == ()


# -- a heal replayed on the page it was done on ---------------------------------------


@attrs.define
class StaticTab:
    """A tab that shows one page and notes every call the replay makes."""

    page: PageSeen
    acted: list[tuple[str, dict[str, object]]] = attrs.field(factory=list)

    async def act(self, tool: str, args: Mapping[str, object], at: int | None = None) -> Acted:
        del at
        self.acted.append((tool, dict(args)))
        return Acted("ok", is_error=False, refused=False, url=self.page.url)

    async def look(self, *, fresh: bool) -> PageSeen:
        del fresh
        return self.page

    async def address(self) -> str:
        return self.page.url

    async def whole_page(self) -> str:
        return ""


_ROLES = st.sampled_from(["button", "textbox", "link"])
_NAMES = st.sampled_from(["Add", "Buy now", "Name", ""])
_ROWS = st.sampled_from(["", "Headlamp", "Stove"])
_TYPED = st.sampled_from(["3", "hunter2", "Ada", "x", ""])


@st.composite
def pages_and_heals(draw: st.DrawFn) -> tuple[PageSeen, list[tuple[str, dict[str, Any]]]]:
    """A page of alike and unlike controls (some secret fields) and the calls a healer
    made on it: presses and typing, never the same field typed twice in a row."""
    size = draw(st.integers(1, 8))
    controls: dict[str, Control] = {}
    lines = []
    for i in range(size):
        role, name, row = draw(_ROLES), draw(_NAMES), draw(_ROWS)
        secret = "password" if role == "textbox" and draw(st.booleans()) else ""
        region = draw(st.sampled_from(["main", "nav"]))
        controls[f"e{i}"] = Control(f"e{i}", i, i, 0, role, name, region, secret_kind=secret)
        lines.append(f'{row + " | " if row else ""}<x id="e{i}">{name}</x>')
    page = PageSeen(SHOP, controls, "\n".join(lines))
    calls: list[tuple[str, dict[str, Any]]] = []
    for _ in range(draw(st.integers(0, 6))):
        eid = f"e{draw(st.integers(0, size - 1))}"
        if controls[eid].role != "textbox":
            calls.append(("click", {"id": eid}))
            continue
        # The healer types what the run gave for a secret field (as a person types
        # the password they were given), anything into another one.
        text = "hunter2" if controls[eid].secret_kind else draw(_TYPED)
        if calls and calls[-1] == ("type", calls[-1][1]) and calls[-1][1]["id"] == eid:
            continue
        calls.append(("type", {"id": eid, "text": text}))
    return page, calls


@settings(max_examples=200)
@given(pages_and_heals())
async def test_a_healed_step_replays_on_its_page_as_the_healer_did_it(
    drawn: tuple[PageSeen, list[tuple[str, dict[str, Any]]]],
) -> None:
    """Whatever page and calls: amending a routine with a heal and running it again on
    that page from the healed step finds every new step's element (the one the healer
    used) and types the same values, then goes on with the steps after it; no secret
    is in the file."""
    page, calls = drawn
    recording = Recording()
    for tool, args in calls:
        recording.note("s", (tool, args), page, SHOP, ok=True, acted=True)
    pattern = url_pattern(SHOP)
    routine = Routine(
        name="R",
        task="order 3 for Ada",
        start=SHOP,
        parameters=(
            Parameter("quantity", "text", "3", "the quantity"),
            Parameter("account_password", "secret", None, "the password"),
        ),
        steps=(
            Step("press", pattern, pattern, args={"key": "Tab"}),
            Step("click", pattern, pattern, Target("button", "Gone"), args={}),
            Step("press", pattern, pattern, args={"key": "Enter"}),
        ),
    )
    values = {"quantity": "3", "account_password": "hunter2"}
    mended = amend(routine, heal_of(routine, 1, 2, recording.of("s"), values))
    assert "hunter2" not in json.dumps(mended.to_json())
    tab = StaticTab(page)
    defaults = {p.name: p.default for p in mended.parameters if p.default is not None}
    run = await replay(mended, tab, {**defaults, **values}, start_at=1)
    assert run.status == "done", run.why
    assert tab.acted == [*calls, ("press", {"key": "Enter"})]


def test_the_person_renames_a_routine_and_a_parameter_and_sets_a_default(tmp_path: Path) -> None:
    """A parameter renamed is renamed in every step that uses it; a default and a
    description change; the file moves to the new name's, and a name another routine
    has is refused naming it."""
    store = RoutineStore(tmp_path)
    routine = shop_routine()
    store.save(routine)
    store.save(attrs.evolve(routine, name="Other"))
    edited = edit_routine(
        routine,
        name="Order  lamps",
        parameters={"quantity": {"name": "count", "default": "4", "about": "how many  lamps"}},
    )
    assert edited.name == "Order lamps"
    assert edited.parameters[0] == Parameter("count", "text", "4", "how many lamps")
    assert edited.steps[0].args == {"text": {"param": "count"}}
    path = store.rewrite("Order", edited)
    assert path.name == "order-lamps.json"
    assert not (tmp_path / "order.json").exists()
    assert store.load("Order lamps") == edited
    with pytest.raises(RoutineError, match=r"routine name 'Other' is taken: .*\(other\.json\)"):
        store.rewrite("Order lamps", attrs.evolve(edited, name="Other"))
    # The same file under another spelling of the name is the same routine.
    assert store.rewrite("Order lamps", attrs.evolve(edited, name="order LAMPS")).name == (
        "order-lamps.json"
    )


@pytest.mark.parametrize(
    ("name", "parameters", "said"),
    [
        (None, {"account_password": {"default": "x"}}, "'account_password' is a secret: it never"),
        (None, {"colour": {"name": "c"}}, "has no parameter 'colour' (its parameters: quantity,"),
        (None, {"quantity": {"name": "account_password"}}, "two parameters would be called 'acc"),
        (None, {"quantity": {"name": "a=b"}}, "new name 'a=b' is not a name"),
        (None, {"quantity": {"default": 3}}, "default 3 is not a text"),
        (None, {"quantity": {"size": 3}}, "'size' is not one of its fields"),
        ("  ", {}, "routine name '  ' is not a name of 1 to 100"),
        ("!!", {}, "has no letter or digit"),
    ],
)
def test_an_edit_that_does_not_fit_is_refused_naming_the_value(
    name: str | None, parameters: dict[str, dict[str, Any]], said: str
) -> None:
    """A secret's default, an unknown parameter, a name twice or not a name, a default
    that is no text, an unknown field, a blank or unfit routine name: each refused."""
    with pytest.raises(RoutineError) as refused:
        edit_routine(shop_routine(), name=name, parameters=parameters)
    assert said in str(refused.value)
