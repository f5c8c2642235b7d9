"""The envelope without a browser: a yes acts for one live call only, and every question
that did not get its answer is withdrawn."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from trimtab.envelope import Answer, Question, SidePanel, act_with_consent

TIMEOUT = 50.0
_QUESTION = Question(client="a client", session="s", tab=7, what="submit", tool="click")


@attrs.define
class _Panel:
    """The extension's end of the native port: records asks and withdraws, in order."""

    messages: list[Mapping[str, Any]] = attrs.field(factory=list)
    asked: trio.Event = attrs.field(factory=trio.Event)

    async def send(self, message: Mapping[str, Any]) -> None:
        self.messages.append(message)
        if message["type"] == "ask":
            self.asked.set()


_DELAYS = st.one_of(st.none(), st.floats(min_value=0.0, max_value=80.0))


@settings(max_examples=300)
@given(
    answer=st.sampled_from([True, False]),
    answer_after=_DELAYS,
    cancel_after=_DELAYS,
)
def test_a_yes_acts_only_for_the_live_call_that_asked(
    answer: bool, answer_after: float | None, cancel_after: float | None
) -> None:
    """Whenever the person answers (or never does) and whenever the call ends, the call
    acts exactly when a yes reached it while it was waiting; otherwise its question is
    withdrawn once, and an answer after that does nothing."""

    async def scenario() -> None:
        panel = _Panel()
        side_panel = SidePanel(panel.send, timeout=TIMEOUT)
        acted: list[bool] = []
        delivered: list[bool] = []

        async def run(granted: bool) -> str:
            acted.append(granted)
            return "needs consent" if not granted else "done"

        def needs(result: str) -> Question | None:
            return _QUESTION if result == "needs consent" else None

        async def person() -> None:
            await panel.asked.wait()
            if answer_after is None:
                return
            await trio.sleep(answer_after)
            ask_id = panel.messages[0]["ask"]
            delivered.append(side_panel.answer(ask_id, allow=answer))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(person)
            with trio.CancelScope() as call:
                if cancel_after is not None:
                    call.deadline = trio.current_time() + cancel_after
                await act_with_consent(run, needs, side_panel.ask)
            await trio.sleep(100)  # a late answer, if any, arrives
        kinds = [m["type"] for m in panel.messages]
        ends = [TIMEOUT] + ([] if cancel_after is None else [cancel_after])
        assert side_panel.open_questions == 0
        if acted == [False, True]:
            # Acting needs a yes that the panel was told reached a waiting call.
            assert answer
            assert delivered == [True]
            assert kinds == ["ask"]
        else:
            assert acted == [False]
        if answer_after is not None and answer_after < min(ends):
            assert delivered == [True]
            assert kinds == ["ask"]
            if cancel_after is None or cancel_after > answer_after:
                assert acted == ([False, True] if answer else [False])
        elif answer_after is None or answer_after > min(ends):
            assert kinds == ["ask", "withdraw"]
            assert delivered in ([], [False])

    trio.run(scenario, clock=trio.testing.MockClock(autojump_threshold=0))


async def test_nobody_to_ask_is_a_refusal_with_the_reason() -> None:
    """When the extension says no without asking (no side panel open), the refusal names
    why, and the question is not withdrawn since it was answered."""
    panel = _Panel()
    side_panel = SidePanel(panel.send, timeout=TIMEOUT)

    async def send(message: Mapping[str, Any]) -> None:
        await panel.send(message)
        if message["type"] == "ask":
            side_panel.answer(message["ask"], allow=False, why="no side panel is open")

    side_panel.send = send
    answer = await side_panel.ask(_QUESTION)
    assert answer == Answer.unaskable("no side panel is open")
    assert answer.refusal() == "the person could not be asked: no side panel is open"
    assert [m["type"] for m in panel.messages] == ["ask"]


def test_a_wait_outside_its_bounds_is_refused() -> None:
    """A question's wait of zero or past an hour is refused, naming the value."""
    for timeout in (0.0, -1.0, 4000.0):
        with pytest.raises(ValueError, match=repr(timeout)):
            SidePanel(_Panel().send, timeout=timeout)


@pytest.mark.parametrize(("what", "asked"), [("submit", False), ("secret", True), ("tab", True)])
async def test_the_ask_before_submit_setting_waives_only_submit_questions(
    what: str, asked: bool
) -> None:
    """With "ask before submitting" off, a submit runs without a question, but typing into
    a secret field (and any other kind) is still asked, and a no still refuses it."""
    questions: list[Question] = []

    async def ask(question: Question) -> Answer:
        questions.append(question)
        return Answer.no()

    async def run(granted: bool) -> str:
        return "done" if granted else "needs consent"

    question = attrs.evolve(_QUESTION, what=what)
    decided = await act_with_consent(
        run, lambda r: question if r == "needs consent" else None, ask, ask_before_submit=False
    )
    assert [q.what for q in questions] == ([what] if asked else [])
    assert decided.result == ("needs consent" if asked else "done")
