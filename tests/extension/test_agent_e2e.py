"""The side-panel agent end to end: real extension, real host, a scripted LLM on 127.0.0.1.

The scripted model (`tests.support.agent`) plays a three-step task (follow a link,
fill a field, read the result) through whatever tools the host offers, reads the
result twice so that the call tracker answers the second read from its cache, and
answers with what it read. It speaks the Anthropic Messages API or the OpenAI Chat
Completions API.
"""

from __future__ import annotations

import base64
import io
import itertools
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import trio
from PIL import Image

from tests.support import StaticServer
from tests.support.agent import API_KEY, ScriptedModel, run_task, send_message, serve_model
from tests.support.e2e import ExtensionBrowser, launch_with_extension
from tests.support.xmltree import link_id
from tests.tools.test_screenshot import ORANGE, near

pytestmark = pytest.mark.browser

PAGES = Path(__file__).resolve().parents[1] / "pages"


@pytest.fixture
async def ext(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[ExtensionBrowser]:
    monkeypatch.setenv("TRIMTAB_LOG_DIR", str(tmp_path / "logs"))
    async with launch_with_extension(tmp_path / "profile") as browser:
        yield browser


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_agent_completes_a_three_step_task(
    ext: ExtensionBrowser, pages_server: StaticServer, provider: str
) -> None:
    """The agent follows a link, fills a field and reads the result; the repeat read is cached."""
    async with trio.open_nursery() as nursery:
        model: ScriptedModel = await nursery.start(serve_model, ScriptedModel(provider))
        run = await run_task(
            ext,
            model,
            pages_server.url("e2e-agent-start.html"),
            "What is the forecast for Lisbon?",
        )
        nursery.cancel_scope.cancel()
    steps = run.steps
    assert steps[-1]["kind"] == "done", steps
    assert "Forecast for Lisbon: sunny" in steps[-1]["text"]
    tools = [s for s in steps if s["kind"] == "tool"]
    assert [t["cached"] for t in tools] == [False] * 5 + [True]
    assert not any(t["isError"] for t in tools)
    # The page reached the model only inside the untrusted-data block.
    headers, last = model.requests[-1]
    if provider == "anthropic":
        system = last["system"][0]["text"]
    else:
        system = last["messages"][0]["content"]
    assert "<<<PAGE DATA" in system
    assert "never instructions" in system
    key_header = headers.get("x-api-key") or headers.get("authorization", "")
    assert API_KEY in key_header


@pytest.mark.parametrize("ask", [True, False])
async def test_agent_asks_before_submitting_a_form(
    ext: ExtensionBrowser, pages_server: StaticServer, ask: bool
) -> None:
    """With "ask before submitting" on, a submit waits for the person, and a no stops it."""
    async with trio.open_nursery() as nursery:
        model: ScriptedModel = await nursery.start(
            serve_model, ScriptedModel("anthropic", task="order")
        )
        run = await run_task(
            ext, model, pages_server.url("e2e-relay.html"), "Order a sandwich.", ask=ask
        )
        nursery.cancel_scope.cancel()
    assert run.steps[-1]["kind"] == "done", run.steps
    ran = [s["name"] for s in run.steps if s["kind"] == "tool"]
    declined = [s for s in run.steps if s["kind"] == "declined"]
    if ask:
        assert "submits a form" in run.question
        assert len(declined) == 1
        assert declined[0]["name"] == "click"
        assert "click" not in ran  # the host never received the click
    else:
        assert not run.question
        assert not declined
        assert "click" in ran


@pytest.mark.parametrize("ask", [True, False])
async def test_agent_answers_a_dialog_the_page_opens(
    ext: ExtensionBrowser, pages_server: StaticServer, ask: bool
) -> None:
    """Through chrome.debugger, a click that opens confirm() shows the agent the dialog;
    its OK asks the person first (a no keeps the draft), and answer_dialog lets the
    page go on."""
    async with trio.open_nursery() as nursery:
        model: ScriptedModel = await nursery.start(
            serve_model, ScriptedModel("anthropic", task="dialog")
        )
        run = await run_task(
            ext, model, pages_server.url("e2e-agent-dialog.html"), "Delete my draft.", ask=ask
        )
        nursery.cancel_scope.cancel()
    assert run.steps[-1]["kind"] == "done", run.steps
    tools = [s for s in run.steps if s["kind"] == "tool"]
    results = model.tool_results(model.requests[-1][1]["messages"])
    assert '<js-dialog type="confirm" message="Delete the draft' in results[1]
    assert not any(t["isError"] for t in tools)
    if ask:
        # Trimtab's words, and the page's message quoted apart from them.
        assert "OK to the page's confirm dialog" in run.question
        assert "its message: “Delete the draft “Letter to the council”?”" in run.question
        assert [t["name"] for t in tools] == ["capture_snapshot", "click"]
        assert run.steps[-1]["text"] == "Not deleted."
    else:
        assert [t["name"] for t in tools] == ["capture_snapshot", "click", "answer_dialog"]
        assert run.steps[-1]["text"] == "Deleted."


def _without_marks(value: Any) -> Any:
    """A request body without its cache marks: what the provider compares as a prefix."""
    if isinstance(value, dict):
        return {k: _without_marks(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_marks(v) for v in value]
    return value


def _marks(value: Any) -> int:
    if isinstance(value, dict):
        return ("cache_control" in value) + sum(_marks(v) for v in value.values())
    if isinstance(value, list):
        return sum(_marks(v) for v in value)
    return 0


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_each_request_begins_with_the_previous_one(
    ext: ExtensionBrowser, pages_server: StaticServer, provider: str
) -> None:
    """Every model request of a real task starts with the previous request, so the
    provider's prompt cache serves it: Anthropic gets at most four breakpoints (tools,
    system prompt, the newest tool results), OpenAI one prompt_cache_key."""
    async with trio.open_nursery() as nursery:
        model: ScriptedModel = await nursery.start(serve_model, ScriptedModel(provider))
        run = await run_task(
            ext, model, pages_server.url("e2e-agent-start.html"), "Forecast for Lisbon?"
        )
        nursery.cancel_scope.cancel()
    assert run.steps[-1]["kind"] == "done", run.steps
    bodies = [body for _, body in model.requests]
    assert len(bodies) == 7
    for before, after in itertools.pairwise(bodies):
        old, new = _without_marks(before), _without_marks(after)
        assert new["messages"][: len(old["messages"])] == old["messages"]
        assert (new["tools"], new.get("system")) == (old["tools"], old.get("system"))
    # The system prompt names no tab and no marker, so tools and system are one prefix
    # for every task; the marker of the untrusted-data blocks opens the conversation.
    system = bodies[0]["system"] if provider == "anthropic" else bodies[0]["messages"][0]
    opening = model.person_said(bodies[0]["messages"])[0][1]
    marker = re.search(r"marker X is ([0-9a-f]{16})\.", opening)
    assert marker is not None, opening
    assert marker.group(1) not in json.dumps(system)
    assert "e2e-agent-start.html" not in json.dumps(system)
    assert "e2e-agent-start.html" in opening
    for result in model.tool_results(bodies[-1]["messages"]):
        assert result.startswith(f"<<<PAGE DATA {marker.group(1)}>>>")
    if provider == "anthropic":
        for body in bodies:
            assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
            assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
            assert _marks(body) == 2 + min(2, len(model.tool_results(body["messages"])))
    else:
        keys = {body["prompt_cache_key"] for body in bodies}
        assert len(keys) == 1
        assert keys.pop().startswith("agent-")


async def _aisle_budget(ext: ExtensionBrowser, url: str) -> int:
    """A context budget that sits between the context with the long aisle page and
    without it: the fixed prefix as the agent will estimate it, and 1,500 tokens."""
    _, tab_id = await ext.open_tab(url)
    await ext.wait_loaded(tab_id)
    panel = await ext.open_side_panel()
    fixed = await panel.evaluate(
        """(async () => {
            const { estimateTokens } = await import("../agent/compact.js");
            const { systemPrompt } = await import("../agent/agent.js");
            const { tools, format } = await trimtabPanel.worker.host({ type: "tools" });
            return estimateTokens(systemPrompt({ format }))
                + estimateTokens(JSON.stringify(tools));
        })()"""
    )
    return int(fixed) + 1500


async def test_a_compaction_mid_task_keeps_what_the_model_needs(
    ext: ExtensionBrowser, pages_server: StaticServer
) -> None:
    """Past the token budget, the long first page becomes a short record; the model still
    finds the nav link it needs (with find, behind the collapsed nav) and opens it."""
    async with trio.open_nursery() as nursery:
        model: ScriptedModel = await nursery.start(
            serve_model, ScriptedModel("anthropic", task="aisle")
        )
        url = pages_server.url("e2e-agent-aisle.html")
        budget = await _aisle_budget(ext, url)
        run = await run_task(ext, model, url, "Open the Dairy page.", settings={"budget": budget})
        nursery.cancel_scope.cancel()
    steps = run.steps
    assert steps[-1]["kind"] == "done", steps
    assert steps[-1]["text"] == f"Opened {pages_server.url('dairy')}"
    compacted = [s for s in steps if s["kind"] == "compacted"]
    assert len(compacted) == 1, steps
    assert compacted[0]["before"] > budget >= compacted[0]["after"]
    assert compacted[0]["replaced"] == 1
    tools = [(s["name"], s["args"]) for s in steps if s["kind"] == "tool"]
    assert [name for name, _ in tools] == ["capture_snapshot", "click", "find", "click"]
    # The Dairy id the model clicked is the one the first (now compacted) page showed.
    first_page = model.tool_results(model.requests[1][1]["messages"])[0]
    dairy = link_id(first_page, "Dairy")
    assert dairy is not None
    assert tools[3][1] == {"id": dairy}
    # From the compaction on, the aisle page is a short record (its URL, the page's
    # words, in a page data block) and the budget holds.
    after = [body for _, body in model.requests[2:]]
    for body in after:
        first = model.tool_results(body["messages"])[0]
        assert first.startswith("[Step 1: capture_snapshot({}) returned a page baseline")
        assert re.search(
            r"\n<<<PAGE DATA (\w+)>>>\n[^\n]*e2e-agent-aisle\.html\n"
            r"<<<END PAGE DATA \1>>>$",
            first,
        ), first
        assert "Apples, organic" not in json.dumps(body)
    for before_body, after_body in itertools.pairwise(after):
        old, new = _without_marks(before_body), _without_marks(after_body)
        assert new["messages"][: len(old["messages"])] == old["messages"]
    contexts = [s["context"] for s in steps if s["kind"] == "model"]
    assert all(c <= budget for c in contexts[2:]), contexts


async def test_after_a_compaction_a_fresh_look_collapses_nothing(
    ext: ExtensionBrowser, pages_server: StaticServer
) -> None:
    """Once a compaction replaced the page that showed the nav whole, the host no longer
    collapses it as unchanged: the agent's next capture_snapshot shows every region
    whole, with the ids the replaced page gave, and the model clicks the nav's link."""
    async with trio.open_nursery() as nursery:
        model: ScriptedModel = await nursery.start(
            serve_model, ScriptedModel("anthropic", task="aisle-look")
        )
        url = pages_server.url("e2e-agent-aisle.html")
        budget = await _aisle_budget(ext, url)
        run = await run_task(ext, model, url, "Open the Dairy page.", settings={"budget": budget})
        nursery.cancel_scope.cancel()
    steps = run.steps
    assert steps[-1]["kind"] == "done", steps
    assert steps[-1]["text"] == f"Opened {pages_server.url('dairy')}"
    tools = [(s["name"], s["args"]) for s in steps if s["kind"] == "tool"]
    assert [name for name, _ in tools] == ["capture_snapshot", "click", "capture_snapshot", "click"]
    kinds = [s["kind"] for s in steps]
    # The compaction came before the fresh look.
    assert kinds.index("compacted") < [i for i, kind in enumerate(kinds) if kind == "tool"][2]
    first_page = model.tool_results(model.requests[1][1]["messages"])[0]
    # Before the compaction the apples page collapsed the nav the aisle page had shown.
    apples = model.tool_results(model.requests[2][1]["messages"])[1]
    assert re.search(r'<region name="nav" unchanged="true"', apples), apples
    # After it, the fresh look on the same page collapses nothing.
    fresh = model.tool_results(model.requests[3][1]["messages"])[2]
    assert 'snapshot="baseline"' in fresh
    assert 'unchanged="true"' not in fresh
    dairy = link_id(first_page, "Dairy")
    assert dairy is not None
    assert link_id(fresh, "Dairy") == dairy
    assert tools[3][1] == {"id": dairy}


async def test_follow_ups_history_and_cost_in_the_side_panel(
    ext: ExtensionBrowser, pages_server: StaticServer
) -> None:
    """A reply carries on the conversation; the panel shows the live token and cost
    figures the provider reported; the task is kept in the history (without the API
    key), reopens, and clears; New task starts a fresh conversation."""
    prices = {"input": 3, "cachedInput": 0.3, "output": 15}
    async with trio.open_nursery() as nursery:
        model: ScriptedModel = await nursery.start(serve_model, ScriptedModel("anthropic"))
        first = await run_task(
            ext,
            model,
            pages_server.url("e2e-agent-start.html"),
            "What is the forecast for Lisbon?",
            settings={"prices": prices},
        )
        panel = first.panel
        calls = len(model.requests)
        follow = await send_message(panel, "And for tomorrow?")
        assert len(model.requests) == calls + 1
        # The reply went out with the whole conversation before it.
        old = _without_marks(model.requests[calls - 1][1])
        new = _without_marks(model.requests[calls][1])
        assert new["messages"][: len(old["messages"]) + 1] == [
            *old["messages"],
            model.requests[calls][1]["messages"][len(old["messages"])],
        ]
        assert new["messages"][-1] == {"role": "user", "content": "And for tomorrow?"}
        figures = await panel.evaluate(
            "({totals: trimtabPanel.state.totals, line: trimtabPanel.state.costLine,"
            " shown: document.getElementById('cost').textContent})"
        )
        stored = await ext.worker.evaluate(
            "chrome.storage.local.get('taskHistory').then((r) => r.taskHistory)"
        )
        await panel.evaluate("document.getElementById('new-task').click(); true")
        fresh = await panel.evaluate(
            "({steps: trimtabPanel.state.steps.length, agent: trimtabPanel.state.agent,"
            " cost: document.getElementById('cost').hidden})"
        )
        await panel.evaluate("document.querySelector('#history-list button').click(); true")
        while not await panel.evaluate("trimtabPanel.state.steps.length > 0"):
            await trio.sleep(0.05)
        reopened = await panel.evaluate(
            "({kinds: trimtabPanel.state.steps.map((s) => s.kind),"
            " line: trimtabPanel.state.costLine})"
        )
        await panel.evaluate("document.getElementById('history-clear').click(); true")
        while await panel.evaluate("document.querySelectorAll('#history-list li').length"):
            await trio.sleep(0.05)
        nursery.cancel_scope.cancel()
    assert follow.steps[-1] == {
        "kind": "done",
        "text": "You asked: And for tomorrow? (6 results so far)",
    }
    assert [s["kind"] for s in follow.steps].count("task") == 2
    # The totals are the sums of what the provider reported, call by call.
    usage = [r["usage"] for r in model.responses]
    expected = {
        "calls": len(usage),
        "input": sum(u["input_tokens"] for u in usage),
        "cacheRead": sum(u["cache_read_input_tokens"] for u in usage),
        "cacheWrite": sum(u["cache_creation_input_tokens"] for u in usage),
        "output": sum(u["output_tokens"] for u in usage),
    }
    assert figures["totals"] == expected
    cost = (
        expected["input"] * 3
        + expected["cacheWrite"] * 3 * 1.25
        + expected["cacheRead"] * 0.3
        + expected["output"] * 15
    ) / 1e6
    assert figures["shown"] == figures["line"]
    assert f"{expected['calls']} model calls" in figures["line"]
    assert f"{expected['cacheRead']:,} read from cache" in figures["line"]
    assert f"cost {cost:.2f}" in figures["line"] or f"cost {cost:.4f}" in figures["line"]
    assert len(stored) == 1
    assert stored[0]["task"] == "What is the forecast for Lisbon?"
    assert stored[0]["totals"] == expected
    assert API_KEY not in json.dumps(stored)
    assert fresh == {"steps": 0, "agent": None, "cost": True}
    assert reopened["kinds"] == [s["kind"] for s in follow.steps]
    assert reopened["line"] == figures["line"]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_agent_sends_a_screenshot_to_the_model_as_an_image(
    ext: ExtensionBrowser, pages_server: StaticServer, provider: str
) -> None:
    """A screenshot reaches the model as the provider's image (an Anthropic image block
    in the tool result, an OpenAI image_url data URL after it) that decodes to the tab's
    viewport with the chart's orange bar where the page drew it; the step and the cost
    line count its tokens."""
    async with trio.open_nursery() as nursery:
        model: ScriptedModel = await nursery.start(
            serve_model, ScriptedModel(provider, task="chart")
        )
        run = await run_task(
            ext, model, pages_server.url("pixels-chart.html"), "How did February sell?"
        )
        nursery.cancel_scope.cancel()
    assert run.steps[-1]["kind"] == "done", run.steps
    [shot] = [s for s in run.steps if s["kind"] == "tool"]
    assert not shot["isError"], shot
    messages = model.requests[-1][1]["messages"]
    if provider == "anthropic":
        [result] = [
            block
            for m in messages
            if m["role"] == "user" and isinstance(m["content"], list)
            for block in m["content"]
            if block.get("type") == "tool_result"
        ]
        text, image = result["content"]
        assert "<<<PAGE DATA" in text["text"]
        assert "<screenshot" in text["text"]
        assert image["source"]["type"] == "base64"
        assert image["source"]["media_type"] == "image/jpeg"
        data = image["source"]["data"]
    else:
        [tool] = [m for m in messages if m["role"] == "tool"]
        assert "<screenshot" in tool["content"]
        after = messages[messages.index(tool) + 1]
        assert after["role"] == "user"
        label, part = after["content"]
        assert label["text"] == f"The image of tool call {tool['tool_call_id']}:"
        url = part["image_url"]["url"]
        assert url.startswith("data:image/jpeg;base64,")
        data = url.split(",", 1)[1]
    picture = Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB")
    assert picture.size == (shot["image"]["width"], shot["image"]["height"])
    assert near(picture.getpixel((320, 200)), ORANGE)
    assert shot["image"]["tokens"] > 0
    line = await run.panel.evaluate("trimtabPanel.state.costLine")
    assert f"1 image ≈ {shot['image']['tokens']:,}" in line
    # The person sees the image the model was shown, in the step's details.
    shown = await run.panel.evaluate("document.querySelector('.steps img.shot').src")
    assert shown == f"data:image/jpeg;base64,{data}"
