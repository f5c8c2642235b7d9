"""The person's grants for a routine, without a browser: what a routine can be granted
(`grantable`), the grants file bound to the routine's digest (`RoutineGrants`), the
recorded submit a "don't ask again" mark holds for (`SubmitForm`), a run's granted
sites (`SitePolicy.grant`) and what a mark's yes lets the request guard send."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import attrs
import pytest
import trio

from trimtab.envelope import Answer, Question, RequestJudge, SentRequest, SitePolicy
from trimtab.pipeline import Control
from trimtab.routines import (
    PageSeen,
    Recording,
    Routine,
    RoutineError,
    RoutineGrants,
    Step,
    SubmitForm,
    Target,
    grantable,
    parse_routine,
    routine_digest,
    routine_of,
)
from trimtab.sites import site_of

SHOP = "https://shop.example/routines/checkout.html"
DONE = "https://shop.example/routines/done.html"
PAY = "https://pay.example/form.html"
PLACE = SubmitForm.predicted(DONE, "get")


def routine(**changes: object) -> Routine:
    """A routine that types a name on the shop, pays in a frame of pay.example and
    submits the shop's order form (its submit recorded)."""
    name = Target("textbox", "Name", region="form")
    place = Target("button", "Place order", region="form")
    steps = (
        Step("type", SHOP, SHOP, target=name, args={"text": "Ada"}),
        Step("click", SHOP, SHOP, target=Target("button", "Pay"), frames=("https://pay.example",)),
        Step("click", SHOP, DONE, target=place, submits=PLACE),
    )
    made = Routine("Order", steps, start=SHOP, task="Order for Ada")
    return attrs.evolve(made, **changes)


def test_a_submit_matches_only_its_method_page_and_post_query() -> None:
    """A recorded submit matches the same method to the same page (a segment with a
    digit is any); a POST's query must be the same, a GET's is the form's fields."""
    posted = SubmitForm.predicted("https://shop.example/orders/123/pay?step=confirm", "post")
    assert posted == SubmitForm("https://shop.example/orders/*/pay?step=confirm", "POST")
    assert posted.site == "https://shop.example"
    assert posted.matches("POST", "https://shop.example/orders/456/pay?step=confirm")
    assert not posted.matches("POST", "https://shop.example/orders/456/pay?step=cancel")
    assert not posted.matches("GET", "https://shop.example/orders/456/pay?step=confirm")
    assert not posted.matches("POST", "https://shop.example/orders/456/refund?step=confirm")
    assert not posted.matches("POST", "https://evil.example/orders/456/pay?step=confirm")
    assert PLACE.matches("GET", DONE + "?name=Ada&total=48.00")
    assert not PLACE.matches("GET", "https://shop.example/routines/receipt.html?name=Ada")


def test_what_a_routine_can_be_granted() -> None:
    """Its sites are those of its start page, each step's pages and the frames of other
    sites it acted in; its submit marks are the steps whose submit was recorded."""
    can = grantable(routine())
    assert can.sites == ("https://pay.example", "https://shop.example")
    assert dict(can.submits) == {2: PLACE}


def test_a_routine_file_keeps_frames_and_submits() -> None:
    """A step's frames and recorded submit are written and read back; a submit with a
    method that is none, or an action that is no page, names the step."""
    made = routine()
    assert parse_routine(json.loads(json.dumps(made.to_json()))) == made
    data = made.to_json()
    steps = data["steps"]
    assert isinstance(steps, list)
    assert steps[2]["submits"] == {"action": DONE, "method": "GET"}
    assert steps[1]["frames"] == ["https://pay.example"]
    steps[2]["submits"] = {"action": DONE, "method": "PUT"}
    with pytest.raises(RoutineError, match=r"step 3 \(click\): submits: field 'method' = 'PUT'"):
        parse_routine(data)
    steps[2]["submits"] = {"action": "javascript:alert(1)", "method": "GET"}
    with pytest.raises(RoutineError, match=r"step 3 .*'action' = 'javascript:alert.* no page"):
        parse_routine(data)


def test_the_digest_changes_with_any_change_to_the_file() -> None:
    """The name, start page, a parameter's default or any step changes the digest; the
    same routine read back from its file does not."""
    made = routine()
    same = parse_routine(json.loads(json.dumps(made.to_json(), indent=3)))
    assert routine_digest(same) == routine_digest(made)
    other_step = attrs.evolve(made.steps[0], args={"text": "Bob"})
    changed = [
        attrs.evolve(made, name="Order again"),
        attrs.evolve(made, start="https://shop.example/routines/shop.html"),
        attrs.evolve(made, task="Order for Bob"),
        attrs.evolve(made, steps=(other_step, *made.steps[1:])),
        attrs.evolve(made, steps=made.steps[:2]),
    ]
    assert len({routine_digest(r) for r in [made, *changed]}) == 6


def test_grants_are_kept_bound_to_the_routine_and_lapse_when_it_changes(tmp_path: Path) -> None:
    """Granted sites and a mark are kept in a 0600 file and read back; once the routine
    changes its grants lapse (a run gets none) and what still applies is offered again;
    revoking, or granting nothing, drops them."""
    file = tmp_path / "routine-grants.json"
    grants = RoutineGrants.load(file)
    made = routine()
    assert (grants.state(made), grants.valid(made)) == ("none", None)
    granted = grants.grant(made, ["https://pay.example/any/page"], [2])
    assert granted is not None
    assert granted.sites == ("https://pay.example",)
    assert dict(granted.unasked) == {2: PLACE}
    assert stat.S_IMODE(file.stat().st_mode) == 0o600

    again = RoutineGrants.load(file)
    assert (again.state(made), again.valid(made)) == ("granted", granted)
    assert granted.allowed_sites() == {site_of(PAY)}

    # The step that submitted now goes elsewhere: the mark is not offered again.
    edited = attrs.evolve(
        made,
        steps=(*made.steps[:2], attrs.evolve(made.steps[2], submits=SubmitForm(PAY, "POST"))),
    )
    assert (again.state(edited), again.valid(edited)) == ("lapsed", None)
    offered = again.chosen(edited)
    assert offered is not None
    assert (offered.sites, dict(offered.unasked)) == (("https://pay.example",), {})
    assert again.grant(made, [], []) is None
    assert again.state(made) == "none"
    assert json.loads(file.read_text()) == {"version": 1, "routines": {}}


def test_a_grant_names_what_a_routine_cannot_be_granted(tmp_path: Path) -> None:
    """A site the routine does not act on, a step that recorded no submit, text that is
    no site, or a routine that changed since the person saw it is refused, naming it."""
    grants = RoutineGrants.load(tmp_path / "routine-grants.json")
    made = routine()
    with pytest.raises(RoutineError, match=r"does not act on https://bank\.example"):
        grants.grant(made, ["https://bank.example"], [])
    with pytest.raises(RoutineError, match="step 1 asked before no submit"):
        grants.grant(made, [], [0])
    with pytest.raises(RoutineError, match="is not a site"):
        grants.grant(made, ["not a site"], [])
    with pytest.raises(RoutineError, match="changed since it was shown"):
        grants.grant(made, ["https://pay.example"], [], digest=routine_digest(routine(name="X")))
    assert grants.state(made) == "none"


def test_a_grants_file_that_does_not_read_grants_nothing(tmp_path: Path) -> None:
    """A file that is no grants file, or whose entry is malformed, grants nothing."""
    file = tmp_path / "routine-grants.json"
    made = routine()
    for text in ("{", '{"version": 2, "routines": {}}', '{"version": 1, "routines": {"Order": 1}}'):
        file.write_text(text)
        assert RoutineGrants.load(file).state(made) == "none", text


def test_the_recording_keeps_the_predicted_submit_and_frames_of_other_sites() -> None:
    """A call that asked before a submit keeps the form the host predicted; an element in
    a frame of another site keeps that site, one in a frame of the page's own does not."""
    controls = {
        "pay": Control("pay", 0, 0, 1, "button", "Pay", "main", frame_url=PAY),
        "own": Control("own", 1, 1, 2, "button", "Next", "main", frame_url=SHOP + "#inner"),
        "place": Control("place", 2, 2, 0, "button", "Place order", "form"),
    }
    seen = PageSeen(SHOP, controls, "")
    recording = Recording()
    recording.note("s", ("click", {"id": "pay"}), seen, SHOP, ok=True, acted=True)
    recording.note("s", ("click", {"id": "own"}), seen, SHOP, ok=True, acted=True)
    recording.note(
        "s", ("click", {"id": "place"}), seen, DONE, ok=True, acted=True, form=(DONE, "get")
    )
    steps = routine_of(recording.of("s"), "Order").steps
    assert [(s.frames, s.submits) for s in steps] == [
        (("https://pay.example",), None),
        ((), None),
        ((), PLACE),
    ]


def test_a_run_s_granted_sites_are_its_task_s_alone() -> None:
    """Granted sites are allowed to the run's task without asking and to no other task;
    the never list still refuses one; they go when the run ends."""
    policy = SitePolicy(never=frozenset({site_of("https://bank.example")}))
    granted = frozenset({site_of(PAY), site_of("https://bank.example")})
    policy.grant("run~routine", granted)
    assert policy.verdict("run~routine", site_of(PAY)) == "allow"
    assert policy.verdict("other", site_of(PAY)) == "ask"
    assert policy.verdict("run~routine", site_of("https://bank.example")) == "refuse"
    assert not policy.started("run~routine")  # its first call still sets where it started
    policy.ungrant("run~routine")
    assert policy.verdict("run~routine", site_of(PAY)) == "ask"


@attrs.frozen
class _Sites:
    """The task's one site, https://shop.example."""

    def name(self, url: str) -> str:
        return str(site_of(url))

    def allows(self, url: str) -> bool:
        return site_of(url) == site_of(SHOP)

    async def enter(self, url: str, doing: str | None = None) -> Answer:
        del url, doing
        return Answer.no()


async def test_a_mark_s_yes_sends_only_the_recorded_submission() -> None:
    """With a mark's yes the form's submission to the recorded page goes unasked; one the
    page sent elsewhere on the site, or by another method, is asked about."""
    asked: list[Question] = []

    async def person(question: Question) -> Answer:
        asked.append(question)
        return Answer.no()

    def judge() -> RequestJudge:
        question = Question(client="Trimtab routine", session="r", tab=1, what="request")
        return RequestJudge(question, person, _Sites(), granted=True, granted_only=PLACE.matches)

    with trio.fail_after(5):
        sent = await judge()(SentRequest("GET", DONE + "?name=Ada", "Document", True, True), None)
        assert (sent.send, asked) == (True, [])
        other = "https://shop.example/routines/receipt.html?name=Ada"
        moved = await judge()(SentRequest("GET", other, "Document", True, True), None)
        assert not moved.send
        posted = await judge()(SentRequest("POST", DONE, "Document", True, True), None)
        assert not posted.send
    assert [q.request["url"] for q in asked if q.request] == [other, DONE]
