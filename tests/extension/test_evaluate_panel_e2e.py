"""`evaluate` for the side panel's own agent, with the real extension and host and a
scripted model on 127.0.0.1: off unless the person turned it on; on, the question bar
shows the code whole as the agent's words, and "Always for this code" lets that exact
code run again without a question, while other code asks again."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from tests.support import StaticServer
from tests.support.agent import ENDED, serve_model, submit_message, use_model
from tests.support.e2e import ExtensionBrowser, ExtensionContext, launch_with_extension

pytestmark = pytest.mark.browser

CODE = "window.ran = (window.ran || 0) + 1;\n// the agent's note\n({ran: window.ran})"
OTHER_CODE = "window.ranB = 1"


@attrs.define
class EvaluatingModel:
    """A fake Anthropic model that calls evaluate with each of ``codes`` in turn, then
    says "Done."."""

    codes: list[str]
    provider: str = "anthropic"
    port: int = 0
    requests: list[tuple[dict[str, str], dict[str, Any]]] = attrs.field(factory=list)
    responses: list[dict[str, Any]] = attrs.field(factory=list)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def results(self) -> list[str]:
        body = self.requests[-1][1]
        return [
            str(block["content"])
            for m in body["messages"]
            if m["role"] == "user" and isinstance(m["content"], list)
            for block in m["content"]
            if block.get("type") == "tool_result"
        ]

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        step = sum(
            1
            for m in body["messages"]
            if m["role"] == "user" and isinstance(m["content"], list)
            for block in m["content"]
            if block.get("type") == "tool_result"
        )
        usage = {"input_tokens": 10, "output_tokens": 1}
        if step >= len(self.codes):
            return {
                "id": "msg_end", "type": "message", "role": "assistant", "model": "scripted",
                "content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn",
                "usage": usage,
            }  # fmt: skip
        call = {"type": "tool_use", "id": f"tu_{step}", "name": "evaluate",
                "input": {"expression": self.codes[step]}}  # fmt: skip
        return {
            "id": f"msg_{step}", "type": "message", "role": "assistant", "model": "scripted",
            "content": [call], "stop_reason": "tool_use", "usage": usage,
        }  # fmt: skip


@pytest.fixture
async def ext(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[ExtensionBrowser]:
    monkeypatch.setenv("TRIMTAB_LOG_DIR", str(tmp_path / "logs"))
    # The host Chrome starts keeps the person's lists in its own state folder: this
    # test's "Always" must not outlive it.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    async with launch_with_extension(tmp_path / "profile") as browser:
        yield browser


async def _open(
    ext: ExtensionBrowser, model: EvaluatingModel, url: str, **settings: Any
) -> tuple[ExtensionContext, ExtensionContext]:
    """The settings pointed at ``model``, ``url`` in a new tab, the panel's Agent view."""
    await use_model(ext, model, **settings)
    target, tab = await ext.open_tab(url)
    await ext.wait_loaded(tab)
    panel = await ext.open_side_panel()
    await panel.evaluate("trimtabPanel.showView('agent'); true")
    return panel, await ext.attach(target)


async def _until_ended(panel: ExtensionContext, before: int) -> list[dict[str, Any]]:
    while await panel.evaluate(ENDED) == before or await panel.evaluate(
        "trimtabPanel.state.running"
    ):
        await trio.sleep(0.1)
    steps: list[dict[str, Any]] = await panel.evaluate(
        "trimtabPanel.state.steps.map(({content, ...s}) => s)"
    )
    return steps


async def test_off_by_default_the_panel_agent_is_not_given_evaluate(
    ext: ExtensionBrowser, pages_server: StaticServer
) -> None:
    """Without the setting (the developers' group on), the model is not offered evaluate;
    called anyway, it is refused and nothing runs in the page; nobody is asked."""
    async with trio.open_nursery() as nursery:
        model: EvaluatingModel = await nursery.start(serve_model, EvaluatingModel([CODE]))
        url = pages_server.url("fill-checkout.html")
        panel, page = await _open(ext, model, url, groups=["core", "devtools"])
        await submit_message(panel, "Count the rows.")
        steps = await _until_ended(panel, 0)
        assert await panel.evaluate("document.getElementById('question').hidden") is True
        nursery.cancel_scope.cancel()
    (result,) = model.results()
    assert 'There is no tool "evaluate"' in result
    offered = {tool["name"] for tool in model.requests[0][1]["tools"]}
    assert "console" in offered
    assert "evaluate" not in offered
    assert [s["kind"] for s in steps if s["kind"] == "tool"] == ["tool"]
    assert await page.evaluate("window.ran === undefined") is True


async def test_always_runs_this_code_unasked_and_other_code_asks_again(
    ext: ExtensionBrowser, pages_server: StaticServer
) -> None:
    """With the setting on, the first evaluate shows its code whole in the question bar
    (as the agent's text, apart from Trimtab's words) with No, Once and Always for this
    code, saying Always covers only this code; Always runs it, the same code runs again
    without a question, other code asks again showing it (No runs nothing); the
    settings show the site with its code, and Remove takes it off the host's list."""
    async with trio.open_nursery() as nursery:
        model: EvaluatingModel = await nursery.start(
            serve_model, EvaluatingModel([CODE, CODE, OTHER_CODE])
        )
        url = pages_server.url("fill-checkout.html")
        panel, page = await _open(ext, model, url, allowEvaluate=True, groups=["core", "devtools"])
        await submit_message(panel, "Count the rows.")
        shown = await _question(panel, CODE)
        assert shown["codeShown"] is True
        assert "wants to run JavaScript in a tab on http://127.0.0.1" in shown["want"]
        assert "ran" not in shown["want"]
        assert shown["buttons"] == ["No", "Once", "Always for this code"]
        assert "Always: only this exact code, on this site, runs again" in shown["hint"]
        await panel.evaluate("document.getElementById('question-always').click(); true")
        # The same code runs unasked; the other code's question shows that code.
        other = await _question(panel, OTHER_CODE)
        assert other["buttons"] == ["No", "Once", "Always for this code"]
        await panel.evaluate("document.getElementById('question-deny').click(); true")
        steps = await _until_ended(panel, 0)
        # The settings list the site with its code; Remove takes it off the host's list.
        await panel.evaluate(
            "document.getElementById('settings').open = true; trimtabPanel.loadSites(); true"
        )
        listed = """[...document.querySelectorAll('#sites-evaluate li.always-code')]
            .map((li) => [li.querySelector('.site').textContent,
                          li.querySelector('pre').textContent])"""
        while await panel.evaluate(f"{listed}.length") == 0:
            await trio.sleep(0.05)
        entries = await panel.evaluate(listed)
        await panel.evaluate(
            "document.querySelector('#sites-evaluate button[data-sha256]').click(); true"
        )
        while await panel.evaluate(f"{listed}.length") != 0:
            await trio.sleep(0.05)
        stored = await ext.worker.evaluate("trimtab.host.request({type: 'evaluate_always'})")
        nursery.cancel_scope.cancel()
    assert entries == [["http://127.0.0.1", CODE]]
    assert stored == {"always": []}
    first, second, third = model.results()
    assert '<value>{"ran": 1}</value>' in first
    assert '<value>{"ran": 2}</value>' in second
    assert "the person refused" in third
    assert steps[-1]["kind"] == "done"
    assert await page.evaluate("[window.ran, window.ranB === undefined]") == [2, True]


async def _question(panel: ExtensionContext, code: str) -> dict[str, Any]:
    """The question bar once it shows an evaluate question about ``code``."""
    read = """({code: document.getElementById('question').hidden ? null
                  : document.getElementById('question-code').textContent,
                codeShown: !document.getElementById('question-code-box').hidden,
                want: document.getElementById('question-want').textContent,
                hint: document.getElementById('question-hint').textContent,
                buttons: [...document.querySelectorAll('#question-buttons button')]
                  .map((b) => b.textContent)})"""
    while True:
        shown: dict[str, Any] = await panel.evaluate(read)
        if shown["code"] == code and shown["buttons"]:
            return shown
        await trio.sleep(0.1)
