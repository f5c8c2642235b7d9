"""The Agent view as a person reads it: each step in words from the host's facts (the
element's role and name), the JSON and result behind a toggle, the answer once and set
apart, and a live indicator while the model thinks. Real extension and host, a
scripted model on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import attrs
import pytest
import trio

from tests.support import StaticServer
from tests.support.agent import ENDED, ScriptedModel, open_agent, serve_model, submit_message
from tests.support.e2e import ExtensionBrowser, launch_with_extension

pytestmark = pytest.mark.browser


@attrs.define
class Slow(ScriptedModel):
    """The scripted model, whose answers wait until its gate opens."""

    gate: trio.Event = attrs.field(factory=trio.Event)


@pytest.fixture
async def ext(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[ExtensionBrowser]:
    monkeypatch.setenv("TRIMTAB_LOG_DIR", str(tmp_path / "logs"))
    async with launch_with_extension(tmp_path / "profile") as browser:
        yield browser


async def test_steps_in_words_the_answer_once_and_a_live_indicator(
    ext: ExtensionBrowser, pages_server: StaticServer
) -> None:
    """While the model's call is held, the bar shows "the model is thinking…" in view;
    then the steps read "Read the page", "Clicked “Open the forecast form” (link)",
    "Typed Lisbon into City" with the JSON and result behind "details", and the answer
    appears once, in its own box."""
    async with trio.open_nursery() as nursery:
        model = await nursery.start(serve_model, Slow("anthropic"))
        panel, _ = await open_agent(ext, model, pages_server.url("e2e-agent-start.html"))
        await submit_message(panel, "What is the forecast for Lisbon?")
        with trio.fail_after(30):
            while not model.requests:
                await trio.sleep(0.05)
        live = await panel.evaluate(
            """(() => {
                const a = document.getElementById('activity');
                const box = a.getBoundingClientRect();
                return {text: a.textContent, hidden: a.hidden, top: box.top,
                        bottom: box.bottom, height: innerHeight};
            })()"""
        )
        model.gate.set()
        with trio.fail_after(60):
            while not await panel.evaluate(ENDED) or await panel.evaluate(
                "trimtabPanel.state.running"
            ):
                await trio.sleep(0.05)
        shown = await panel.evaluate(
            """(() => {
                const says = [...document.querySelectorAll('#steps li.tool > .say')]
                    .map((s) => s.firstChild.textContent);
                const tool = document.querySelector('#steps li.tool');
                const details = tool.querySelector('details');
                return {says,
                        detailsClosed: !details.open,
                        json: details.querySelector('code').textContent,
                        result: details.querySelector('pre').textContent.slice(0, 60),
                        answers: [...document.querySelectorAll('#steps li.answer')]
                            .map((li) => li.querySelector('.answer-text').textContent),
                        everywhere: document.getElementById('steps').textContent,
                        idle: document.getElementById('activity').hidden};
            })()"""
        )
        nursery.cancel_scope.cancel()
    assert live["text"] == "the model is thinking…"
    assert live["hidden"] is False
    assert 0 <= live["top"] < live["bottom"] <= live["height"]
    assert shown["says"][:4] == [
        "Read the page",
        "Clicked “Open the forecast form” (link)",
        "Read the page",
        "Typed Lisbon into City",
    ]
    assert shown["detailsClosed"] is True
    assert shown["json"] == "capture_snapshot({})"
    assert shown["result"].startswith("<page")
    [answer] = shown["answers"]
    assert answer.startswith("Forecast for Lisbon: sunny")
    assert shown["everywhere"].count("Forecast for Lisbon: sunny, 24 degrees") == (
        1
        + sum(
            r.count("Forecast for Lisbon: sunny, 24 degrees")
            for r in model.tool_results(model.requests[-1][1]["messages"])
        )
    )
    assert shown["idle"] is True


async def test_history_entries_say_outcome_cost_and_date(
    ext: ExtensionBrowser, pages_server: StaticServer
) -> None:
    """A task answered and one stopped during its model call are listed newest first as
    "stopped" and "answered", each with its date and its cost (prices set); a stored
    task reopened says plainly that it is read-only."""
    prices = {"input": 3, "cachedInput": 0.3, "output": 15}
    async with trio.open_nursery() as nursery:
        model = await nursery.start(serve_model, Slow("anthropic"))
        model.gate.set()
        panel, _ = await open_agent(
            ext, model, pages_server.url("e2e-agent-start.html"), settings={"prices": prices}
        )
        await submit_message(panel, "What is the forecast for Lisbon?")
        with trio.fail_after(60):
            while not await panel.evaluate(ENDED) or await panel.evaluate(
                "trimtabPanel.state.running"
            ):
                await trio.sleep(0.05)
        await panel.evaluate("document.getElementById('new-task').click(); true")
        model.gate = trio.Event()
        asked = len(model.requests)
        await submit_message(panel, "Then read it again.")
        with trio.fail_after(30):
            while len(model.requests) == asked:
                await trio.sleep(0.05)
        await panel.evaluate("document.getElementById('stop').click(); true")
        with trio.fail_after(30):
            while not await panel.evaluate(ENDED) or await panel.evaluate(
                "trimtabPanel.state.running"
            ):
                await trio.sleep(0.05)
            while await panel.evaluate("document.querySelectorAll('#history-list li').length") < 2:
                await trio.sleep(0.05)
        entries = await panel.evaluate(
            """[...document.querySelectorAll('#history-list button')].map((b) => ({
                outcome: b.dataset.outcome, task: b.firstChild.textContent,
                line: b.lastChild.textContent}))"""
        )
        await panel.evaluate("document.getElementById('new-task').click(); true")
        await panel.evaluate("document.querySelectorAll('#history-list button')[1].click(); true")
        with trio.fail_after(20):
            while not await panel.evaluate("!!document.querySelector('#steps li.readonly')"):
                await trio.sleep(0.05)
        note = await panel.evaluate("document.querySelector('#steps li.readonly').textContent")
        model.gate.set()
        nursery.cancel_scope.cancel()
    assert [(e["outcome"], e["task"]) for e in entries] == [
        ("stopped", "Then read it again."),
        ("answered", "What is the forecast for Lisbon?"),
    ]
    for entry in entries:
        assert entry["line"].startswith(entry["outcome"] + " · 20"), entry
        assert "127.0.0.1" in entry["line"]
    assert " · cost 0." in entries[1]["line"]
    assert note.startswith("Read-only")


async def test_the_indicator_says_the_agent_waits_for_the_persons_answer(
    ext: ExtensionBrowser, pages_server: StaticServer
) -> None:
    """While the agent's own question is open, the bar's indicator says "waiting for
    your answer…" rather than that the tool runs; after "No" the task ends idle."""
    async with trio.open_nursery() as nursery:
        model = await nursery.start(serve_model, ScriptedModel("anthropic", task="order"))
        panel, _ = await open_agent(ext, model, pages_server.url("e2e-relay.html"))
        await submit_message(panel, "Order a sandwich.")
        with trio.fail_after(60):
            while await panel.evaluate("document.getElementById('question').hidden"):
                await trio.sleep(0.05)
            while await panel.evaluate("trimtabPanel.state.activity") != (
                "waiting for your answer…"
            ):
                await trio.sleep(0.05)
        shown = await panel.evaluate("document.getElementById('activity').textContent")
        await panel.evaluate("document.getElementById('question-deny').click(); true")
        with trio.fail_after(60):
            while not await panel.evaluate(ENDED) or await panel.evaluate(
                "trimtabPanel.state.running"
            ):
                await trio.sleep(0.05)
        idle = await panel.evaluate("document.getElementById('activity').hidden")
        nursery.cancel_scope.cancel()
    assert shown == "waiting for your answer…"
    assert idle is True
