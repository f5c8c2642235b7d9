"""The side-panel agent end to end: real extension, real host, a scripted LLM on 127.0.0.1.

The scripted model plays a three-step task (follow a link, fill a field, read the
result) through whatever tools the host offers, reads the result twice so that the
call tracker answers the second read from its cache, and answers with what it read.
It speaks the Anthropic Messages API or the OpenAI Chat Completions API.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from tests.support import StaticServer
from tests.support.e2e import ExtensionBrowser, ExtensionContext, launch_with_extension

pytestmark = pytest.mark.browser

PAGES = Path(__file__).parent / "pages"
API_KEY = "sk-test-not-a-real-key"
CORS = (
    "Access-Control-Allow-Origin: *\r\n"
    "Access-Control-Allow-Headers: *\r\n"
    "Access-Control-Allow-Methods: POST, OPTIONS\r\n"
)


@attrs.define
class ScriptedModel:
    """A fake LLM that drives the agent through the task, step by step."""

    provider: str
    # "forecast": follow a link, fill a field, read the result; "order": submit a form;
    # "dialog": a click that asks to confirm, answered yes; "aisle": a long page, a
    # link to another page of the site, then a link of the site's nav (compaction).
    task: str = "forecast"
    port: int = 0
    requests: list[tuple[dict[str, str], dict[str, Any]]] = attrs.field(factory=list)
    responses: list[dict[str, Any]] = attrs.field(factory=list)

    @property
    def base_url(self) -> str:
        origin = f"http://127.0.0.1:{self.port}"
        return origin if self.provider == "anthropic" else origin + "/v1"

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        results = self.tool_results(body["messages"])
        tools = {self._name(t): t for t in body["tools"]}
        said = self.person_said(body["messages"])
        if len(said) > 1 and said[-1][0] == len(body["messages"]) - 1:
            # A follow-up in the same conversation: answered from what is there.
            return self._text(f"You asked: {said[-1][1]} ({len(results)} results so far)")
        if self.task == "aisle":
            return self._aisle(results, tools)
        read = _pick(tools, ("capture_snapshot", "snapshot", "read_page", "get_page"))
        # Like a model, read ids from everything seen so far, newest first: a
        # baseline collapses regions the model already has ("unchanged").
        seen = "\n".join(reversed(results))
        # Each step's arguments come from the tool results, so they are built only
        # when that step comes.
        script: list[tuple[str, Any]] = [
            (read, lambda: {}),
            ("click", lambda: {"_id": _find_id(seen, r"<a\b[^>]*>[^<]*forecast form", "a")}),
            (read, lambda: {}),
            (
                "type",
                lambda: {"_id": _find_id(seen, r"<input\b[^>]*", "input"), "_text": "Lisbon"},
            ),
            (read, lambda: {}),
            (read, lambda: {}),  # the same read again: the tracker answers it from its cache
        ]
        if self.task == "order":
            script = [
                (read, lambda: {}),
                (
                    "click",
                    lambda: {"_id": _find_id(seen, r'<button\b[^>]*type="submit"[^>]*>Order', "b")},
                ),
            ]
        elif self.task == "dialog":
            script = [
                (read, lambda: {}),
                ("click", lambda: {"_id": _find_id(seen, r"<button\b[^>]*>Delete draft", "b")}),
                ("answer_dialog", lambda: {"accept": True}),
            ]
        step = len(results)
        if step >= len(script):
            if self.task == "order":
                return self._text("Done.")
            if self.task == "dialog":
                return self._text("Deleted." if "Draft deleted." in seen else "Not deleted.")
            found = re.search(r"Forecast for Lisbon: [^<\n]*", seen)
            return self._text(found.group(0) if found else "I could not read the forecast.")
        name, make_args = script[step]
        args = make_args()
        tool = _pick(tools, (name,)) if name in ("click", "type") else name
        return self._call(step, tool, _fill_args(tools[tool], args))

    def _aisle(self, results: list[str], tools: dict[str, Any]) -> dict[str, Any]:
        """Open a product from a long aisle page, then the site's Dairy link, which
        after a compaction is only behind a collapsed nav: `find` gives its id."""
        seen = "\n".join(reversed(results))
        step = len(results)
        if step == 0:
            return self._call(step, "capture_snapshot", {})
        if step == 1:
            link = _find_id(seen, r"<a\b[^>]*>Apples, loose", "a")
            return self._call(step, "click", _fill_args(tools["click"], {"_id": link}))
        dairy = re.search(r'<a id="([^"]+)"[^>]*>Dairy</a>', seen)
        if dairy is None and "/dairy" not in seen:
            return self._call(step, "find", {"text": "Dairy"})
        opened = re.search(r'<page url="([^"]*/dairy)"', seen)
        if opened is None:
            assert dairy is not None, seen[:2000]
            return self._call(step, "click", _fill_args(tools["click"], {"_id": dairy.group(1)}))
        return self._text(f"Opened {opened.group(1)}")

    def person_said(self, messages: list[dict[str, Any]]) -> list[tuple[int, str]]:
        """The person's messages (not tool results), with their index."""
        said = []
        for i, m in enumerate(messages):
            if m["role"] != "user":
                continue
            content = m["content"]
            if isinstance(content, str):
                said.append((i, content))
            else:
                said.extend((i, b["text"]) for b in content if b.get("type") == "text")
        return said

    def _name(self, tool: dict[str, Any]) -> str:
        return str(tool["name"] if self.provider == "anthropic" else tool["function"]["name"])

    def tool_results(self, messages: list[dict[str, Any]]) -> list[str]:
        if self.provider == "anthropic":
            return [
                str(block["content"])
                for m in messages
                if m["role"] == "user" and isinstance(m["content"], list)
                for block in m["content"]
                if block.get("type") == "tool_result"
            ]
        return [str(m["content"]) for m in messages if m["role"] == "tool"]

    def _call(self, step: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
        if self.provider == "anthropic":
            return {
                "id": f"msg_{step}",
                "type": "message",
                "role": "assistant",
                "model": "scripted",
                "content": [{"type": "tool_use", "id": f"tu_{step}", "name": name, "input": args}],
                "stop_reason": "tool_use",
                "usage": {
                    "input_tokens": 100 + step,
                    "cache_read_input_tokens": 1000 * step,
                    "cache_creation_input_tokens": 50 + step,
                    "output_tokens": 10,
                },
            }
        return {
            "id": f"chatcmpl-{step}",
            "object": "chat.completion",
            "model": "scripted",
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": f"call_{step}",
                                "type": "function",
                                "function": {"name": name, "arguments": json.dumps(args)},
                            }
                        ],
                    },
                    "finish_reason": "tool_calls",
                }
            ],
            "usage": {
                "prompt_tokens": 1100 + step,
                "completion_tokens": 10,
                "prompt_tokens_details": {"cached_tokens": 1024 * step},
            },
        }

    def _text(self, text: str) -> dict[str, Any]:
        if self.provider == "anthropic":
            return {
                "id": "msg_end",
                "type": "message",
                "role": "assistant",
                "model": "scripted",
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "usage": {
                    "input_tokens": 200,
                    "cache_read_input_tokens": 3000,
                    "cache_creation_input_tokens": 90,
                    "output_tokens": 12,
                },
            }
        return {
            "id": "chatcmpl-end",
            "object": "chat.completion",
            "model": "scripted",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": 3200,
                "completion_tokens": 12,
                "prompt_tokens_details": {"cached_tokens": 3072},
            },
        }


def _pick(tools: dict[str, Any], wanted: tuple[str, ...]) -> str:
    for name in wanted:
        if name in tools:
            return name
    raise AssertionError(f"the host offers none of {wanted}: {sorted(tools)}")


def _find_id(xml: str, element: str, what: str) -> str:
    found = re.search(element, xml, re.IGNORECASE)
    ident = re.search(r'\bid="([^"]+)"', found.group(0)) if found else None
    if ident is None:
        raise AssertionError(f"no {what} with an id in the page XML:\n{xml[:2000]}")
    return ident.group(1)


def _fill_args(tool: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    """Map the script's `_id`/`_text` onto the tool's own parameter names."""
    schema = tool.get("input_schema") or tool.get("function", {}).get("parameters", {})
    props = schema.get("properties", {})
    out = {k: v for k, v in args.items() if not k.startswith("_")}
    if "_id" in args:
        out[next(p for p in ("id", "eid", "element") if p in props)] = args["_id"]
    if "_text" in args:
        out[next(p for p in ("text", "value") if p in props)] = args["_text"]
    return out


async def serve_model(
    model: ScriptedModel, *, task_status: trio.TaskStatus[ScriptedModel] = trio.TASK_STATUS_IGNORED
) -> None:
    """Serve the scripted model on 127.0.0.1 (port 0) until cancelled."""

    async def handle(stream: trio.SocketStream) -> None:
        async with stream:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = await stream.receive_some(65536)
                if not chunk:
                    return
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method = lines[0].split()[0]
            headers = {k.lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
            if method == "OPTIONS":
                await stream.send_all(f"HTTP/1.1 204 No Content\r\n{CORS}\r\n".encode())
                return
            length = int(headers.get("content-length", "0"))
            while len(body) < length:
                body += await stream.receive_some(65536)
            request = json.loads(body)
            model.requests.append((headers, request))
            answer = model.answer(request)
            model.responses.append(answer)
            payload = json.dumps(answer).encode()
            await stream.send_all(
                (
                    f"HTTP/1.1 200 OK\r\n{CORS}Content-Type: application/json\r\n"
                    f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
                ).encode()
                + payload
            )

    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    model.port = listeners[0].socket.getsockname()[1]
    task_status.started(model)
    await trio.serve_listeners(handle, listeners)


@pytest.fixture
async def ext(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[ExtensionBrowser]:
    monkeypatch.setenv("TRIMTAB_LOG_DIR", str(tmp_path / "logs"))
    async with launch_with_extension(tmp_path / "profile") as browser:
        yield browser


@attrs.frozen
class TaskRun:
    """What the side panel showed for one task, and the person's one question."""

    steps: list[dict[str, Any]]
    question: str
    panel: ExtensionContext


async def run_task(
    ext: ExtensionBrowser,
    model: ScriptedModel,
    url: str,
    task: str,
    *,
    ask: bool = True,
    settings: dict[str, Any] | None = None,
) -> TaskRun:
    """Start a task in the real side panel on a new tab; answer "no" to any question."""
    saved = {
        "provider": "anthropic" if model.provider == "anthropic" else "compatible",
        "baseUrl": model.base_url,
        "model": "scripted",
        "apiKey": API_KEY,
        "askBeforeSubmit": ask,
        **(settings or {}),
    }
    await ext.worker.evaluate(f"chrome.storage.local.set({{settings: {json.dumps(saved)}}})")
    _, tab_id = await ext.open_tab(url)
    await ext.wait_loaded(tab_id)
    panel = await ext.open_side_panel()
    await panel.evaluate("trimtabPanel.showView('agent'); true")
    return await send_message(panel, task)


async def send_message(panel: ExtensionContext, text: str) -> TaskRun:
    """Type ``text`` in the panel's task box, submit it, and wait until the agent ends."""
    ended = "trimtabPanel.state.steps.filter((s) => s.kind === 'done' || s.kind === 'error').length"
    before = await panel.evaluate(ended)
    await panel.evaluate(
        f"""document.getElementById('task').value = {json.dumps(text)};
        document.getElementById('task-form').requestSubmit(); true"""
    )
    question = ""
    while await panel.evaluate(ended) == before or await panel.evaluate(
        "trimtabPanel.state.running"
    ):
        if await panel.evaluate("!document.getElementById('confirm').hidden"):
            question = await panel.evaluate("document.getElementById('confirm-text').textContent")
            await panel.evaluate("document.getElementById('confirm-no').click(); true")
        await trio.sleep(0.1)
    steps = await panel.evaluate("trimtabPanel.state.steps.map(({content, ...s}) => s)")
    return TaskRun(steps, question, panel)


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
        assert "OK to the page's question" in run.question
        assert "Letter to the council" in run.question
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


async def test_a_compaction_mid_task_keeps_what_the_model_needs(
    ext: ExtensionBrowser, pages_server: StaticServer
) -> None:
    """Past the token budget, the long first page becomes one line; the model still
    finds the nav link it needs (with find, behind the collapsed nav) and opens it."""
    async with trio.open_nursery() as nursery:
        model: ScriptedModel = await nursery.start(
            serve_model, ScriptedModel("anthropic", task="aisle")
        )
        url = pages_server.url("e2e-agent-aisle.html")
        _, tab_id = await ext.open_tab(url)
        await ext.wait_loaded(tab_id)
        panel = await ext.open_side_panel()
        # The fixed prefix as the agent will estimate it, so the budget sits
        # between the context with the long aisle page and without it.
        fixed = await panel.evaluate(
            """(async () => {
                const { estimateTokens } = await import("./lib/compact.js");
                const { systemPrompt } = await import("./agent.js");
                const { tools, format } = await trimtabPanel.worker.host({ type: "tools" });
                return estimateTokens(systemPrompt({ format }))
                    + estimateTokens(JSON.stringify(tools));
            })()"""
        )
        budget = fixed + 1500
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
    dairy = re.search(r'<a id="([^"]+)"[^>]*>Dairy</a>', first_page)
    assert dairy is not None
    assert tools[3][1] == {"id": dairy.group(1)}
    # From the compaction on, the aisle page is one line and the budget holds.
    after = [body for _, body in model.requests[2:]]
    for body in after:
        first = model.tool_results(body["messages"])[0]
        assert first.startswith("[Step 1: capture_snapshot({}) on ")
        assert "Apples, organic" not in json.dumps(body)
    for before_body, after_body in itertools.pairwise(after):
        old, new = _without_marks(before_body), _without_marks(after_body)
        assert new["messages"][: len(old["messages"])] == old["messages"]
    contexts = [s["context"] for s in steps if s["kind"] == "model"]
    assert all(c <= budget for c in contexts[2:]), contexts


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
