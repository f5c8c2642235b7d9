"""The side panel's own agent in tests: a scripted LLM served on 127.0.0.1, and a task
started in the real side panel.

`ScriptedModel` plays a task through whatever tools the host offers, speaking the
Anthropic Messages API or the OpenAI Chat Completions API; `serve_model` serves it
(or any `ServedModel`: the tasks bench serves its own);
`run_task` sets the extension's settings to it, opens a tab and the side panel, and
`send_message` types the task and waits until the agent ends.
"""

from __future__ import annotations

import json
import re
from typing import Any, Protocol, TypeVar

import attrs
import trio

from tests.support.e2e import ExtensionBrowser, ExtensionContext, answer_question
from tests.support.xmltree import link_id

__all__ = [
    "API_KEY",
    "ENDED",
    "Refusal",
    "ScriptedModel",
    "ServedModel",
    "TaskRun",
    "open_agent",
    "run_task",
    "send_message",
    "serve_model",
    "submit_message",
    "use_model",
]

API_KEY = "sk-test-not-a-real-key"
M = TypeVar("M", bound="ServedModel")
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
    # link to another page of the site, then a link of the site's nav (compaction);
    # "aisle-look": the same, but after the compaction the model takes a fresh look
    # (capture_snapshot) where "aisle" uses find;
    # "chart": a screenshot of the viewport (what the image is, the test reads).
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
        if self.task in ("aisle", "aisle-look"):
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
        elif self.task == "chart":
            script = [("screenshot", lambda: {})]
        elif self.task == "dialog":
            script = [
                (read, lambda: {}),
                ("click", lambda: {"_id": _find_id(seen, r"<button\b[^>]*>Delete draft", "b")}),
                ("answer_dialog", lambda: {"accept": True}),
            ]
        step = len(results)
        if step >= len(script):
            if self.task in ("order", "chart"):
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
        if step == 2 and self.task == "aisle-look":
            return self._call(step, "capture_snapshot", {})
        dairy = link_id(seen, "Dairy")
        if dairy is None and "/dairy" not in seen:
            return self._call(step, "find", {"text": "Dairy"})
        opened = re.search(r'<page url="([^"]*/dairy)"', seen)
        if opened is None:
            assert dairy is not None, seen[:2000]
            return self._call(step, "click", _fill_args(tools["click"], {"_id": dairy}))
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


@attrs.frozen
class Refusal:
    """An answer that is an HTTP error (a rate limit, a refused key), not a turn."""

    status: int
    message: str
    headers: dict[str, str] = attrs.field(factory=dict)

    def body(self) -> dict[str, Any]:
        return {"type": "error", "error": {"type": "refused", "message": self.message}}


class ServedModel(Protocol):
    """What `serve_model` needs of a scripted model: its port (set once it listens),
    the log of what it was sent and answered, and the answer to one request body."""

    port: int
    requests: list[tuple[dict[str, str], dict[str, Any]]]
    responses: list[dict[str, Any]]

    def answer(self, body: dict[str, Any]) -> dict[str, Any] | Refusal: ...


async def serve_model(
    model: M, *, task_status: trio.TaskStatus[M] = trio.TASK_STATUS_IGNORED
) -> None:
    """Serve a scripted model on 127.0.0.1 (port 0), as an LLM provider's HTTP API
    that the side panel may call (CORS), until cancelled."""

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
            # A model may hold its answers back (a slow call) until its gate opens.
            gate = getattr(model, "gate", None)
            if gate is not None:
                await gate.wait()
            answer = model.answer(request)
            status, extra = "200 OK", ""
            if isinstance(answer, Refusal):
                status = f"{answer.status} Refused"
                extra = "".join(f"{k}: {v}\r\n" for k, v in answer.headers.items())
                payload = json.dumps(answer.body()).encode()
            else:
                model.responses.append(answer)
                payload = json.dumps(answer).encode()
            await stream.send_all(
                (
                    f"HTTP/1.1 {status}\r\n{CORS}{extra}Content-Type: application/json\r\n"
                    f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
                ).encode()
                + payload
            )

    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    model.port = listeners[0].socket.getsockname()[1]
    task_status.started(model)
    await trio.serve_listeners(handle, listeners)


async def use_model(ext: ExtensionBrowser, model: Any, **settings: Any) -> None:
    """Point the extension's settings at a scripted model served on 127.0.0.1 (its
    `provider` and `base_url`), with any other `settings` on top."""
    saved = {
        "provider": "anthropic" if model.provider == "anthropic" else "compatible",
        "baseUrl": model.base_url,
        "model": "scripted",
        "apiKey": API_KEY,
        **settings,
    }
    await ext.worker.evaluate(f"chrome.storage.local.set({{settings: {json.dumps(saved)}}})")


@attrs.frozen
class TaskRun:
    """What the side panel showed for one task, and the person's one question."""

    steps: list[dict[str, Any]]
    question: str
    panel: ExtensionContext


async def open_agent(
    ext: ExtensionBrowser,
    model: ServedModel,
    url: str,
    *,
    ask: bool = True,
    settings: dict[str, Any] | None = None,
) -> tuple[ExtensionContext, int]:
    """Point the settings at ``model``, open ``url`` in a new tab and the side panel's
    Agent view; return the panel and the tab's id."""
    await use_model(ext, model, askBeforeSubmit=ask, **(settings or {}))
    _, tab_id = await ext.open_tab(url)
    await ext.wait_loaded(tab_id)
    panel = await ext.open_side_panel()
    await panel.evaluate("trimtabPanel.showView('agent'); true")
    return panel, tab_id


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
    panel, _ = await open_agent(ext, model, url, ask=ask, settings=settings)
    return await send_message(panel, task)


#: How many of the panel's steps end a task.
ENDED = "trimtabPanel.state.steps.filter((s) => s.kind === 'done' || s.kind === 'error').length"


async def submit_message(panel: ExtensionContext, text: str) -> None:
    """Type ``text`` in the panel's task box and submit it, without waiting."""
    await panel.evaluate(
        f"""document.getElementById('task').value = {json.dumps(text)};
        document.getElementById('task-form').requestSubmit(); true"""
    )


async def send_message(panel: ExtensionContext, text: str) -> TaskRun:
    """Type ``text`` in the panel's task box, submit it, and wait until the agent ends."""
    before = await panel.evaluate(ENDED)
    await submit_message(panel, text)
    question = ""
    while await panel.evaluate(ENDED) == before or await panel.evaluate(
        "trimtabPanel.state.running"
    ):
        question = await answer_question(panel, allow=False) or question
        await trio.sleep(0.1)
    steps = await panel.evaluate("trimtabPanel.state.steps.map(({content, ...s}) => s)")
    return TaskRun(steps, question, panel)
