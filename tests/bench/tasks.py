"""Benchmark: what a whole task costs in input tokens, through the real side-panel agent.

``python -m tests.bench --only tasks`` replays scripted tasks on corpus pages and
flows through the real extension and host in headless Chromium, against a scripted
model on 127.0.0.1 that speaks the Anthropic Messages API or OpenAI Chat
Completions, decides each call from the tool results it was sent, and logs every
request body. Each task runs three times:

* **anthropic**: the agent as it is, Anthropic-shaped (cache breakpoints, default
  context budget);
* **openai**: the same, OpenAI-shaped (stable prefix, ``prompt_cache_key``);
* **today**: the agent with no budget, counted as the loop before caching was
  (every request paid in full), the reference for the 0.35x target;
* **tight**: Anthropic-shaped with a budget of 8,000 tokens, so that compaction
  runs mid-task: its compactions, its longest context and whether the task still
  ends with the same answer (a compaction rewrites the cache once, so it may cost
  more than it saves on a short task).

For each it prints model calls, prompt tokens per call (o200k_base, counted on the
logged bodies), the longest context, and the **billed-equivalent input tokens** by
Anthropic's rules: tokens after the last breakpoint at 1x, cache writes at 1.25x,
cache reads at 0.1x, a read being the longest prefix that an earlier request
marked with a breakpoint. The same scripted model also reports those figures as
its usage, so the side panel shows them as a provider would.

**Playwright MCP replay**: the same steps on the same pages with Playwright, the
way Playwright MCP answers them: every action (and every look) returns
``page.aria_snapshot(mode="ai")`` of the page after it, all results stay in the
conversation, the same fixed prefix (system prompt and tools) and the same
breakpoints (tools, system, the two newest tool results). Our ``find`` and
``read`` have no Playwright MCP counterpart (its model reads the snapshot it
has), so they cost it no call.

Nothing leaves 127.0.0.1: the corpus is served by this module, Chromium resolves
no other name (``--host-resolver-rules``), and Playwright aborts other requests.

The steps are what an agent does: it clicks links and buttons wherever they are on
the page (below the first screen too, as tests/tools/test_tools.py's
test_click_far_below_the_first_screen checks), and calls ``find`` where a long page
hides what it looks for among hundreds of lines. Each task has 8 to 10 tool steps,
as the issue asks.

**Where the tokens go**: for each run the billed figure is split by what the cache
charged it for: the fixed prefix (tools and system prompt), the person's message,
the model's own calls, and the tool results by tool, for us and the replay alike.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import json
import mimetypes
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, unquote, urlsplit

import attrs
import trio

from tests.bench import CORPUS, REPO, PlaywrightWorker, open_playwright, table
from tests.support import TEST_PAGES
from tests.support.agent import serve_model, use_model
from tests.support.e2e import ExtensionBrowser, answer_question, launch_with_extension
from trimtab.pipeline import count_tokens

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

#: The agent's default context budget (extension/agent/compact.js DEFAULT_BUDGET).
BUDGET = 40_000
#: A budget small enough that the tasks compact mid-way.
TIGHT_BUDGET = 8_000
#: The issue's targets: billed-equivalent input per task over the two references.
TARGET_PLAYWRIGHT = 0.15
TARGET_TODAY = 0.35
#: Chromium resolves no host name but 127.0.0.1: nothing a page links to is fetched.
LOCAL_ONLY = "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"
TASK_TIMEOUT = 300.0
#: Where the bench serves our own fixture pages (tests/pages), beside the corpus.
FIXTURES = "trimtab-pages"
#: A task's start URL names the provider's origin (a second port) by this mark.
PROVIDER = "{provider}"

# -- the tasks ------------------------------------------------------------------------


@attrs.frozen
class Step:
    """One call of the scripted model, and the same step as Playwright takes it.

    ``pattern`` finds the target element in what the model was sent (newest result
    first); its first group is the element id. ``pw`` is the Playwright locator of
    the same element, or None for a step Playwright MCP has no call for.
    """

    tool: str
    pattern: str | None = None
    args: Mapping[str, Any] = attrs.field(factory=dict)
    pw: Callable[[Page], Locator] | None = None
    into: str = "id"  # the argument the pattern's group fills ("url" for navigate)
    # What the model does when the pattern is not in what it has (a compaction
    # replaced the page that showed it): find it by this text first.
    fallback: str | None = None
    # `fill`'s fields: each a pattern (its group is the field's id), the value, and
    # the Playwright locator of the same field (Playwright MCP's browser_fill_form).
    fields: tuple[tuple[str, str | bool, Callable[[Page], Locator]], ...] = ()
    # The region a fill step's model expands when a field is not in what it has.
    expand: str | None = None
    # A step of one side only: "ours" (Playwright MCP needs no call for it) or
    # "playwright" (a call only Playwright MCP needs: selecting the tab a pop-up
    # opened, which it does not follow).
    only: str | None = None
    # For a tab step in the replay: the index of the page to select (Playwright MCP's
    # browser_tab_select), in the order the pages opened.
    pw_tab: int | None = None


@attrs.frozen
class Task:
    name: str
    kind: str
    start: str  # path under the corpus
    prompt: str
    steps: tuple[Step, ...]
    answer: str  # a regex over what the model was sent; group 1 is the answer
    # The region to expand when the answer is behind an unchanged-region marker.
    answer_region: str = "main"

    @property
    def model_steps(self) -> tuple[Step, ...]:
        """The steps our scripted model takes (all but the replay's own)."""
        return tuple(step for step in self.steps if step.only != "playwright")


def _css(selector: str) -> Callable[[Page], Locator]:
    return lambda page: page.locator(selector).first


def _link(name: str) -> Callable[[Page], Locator]:
    return lambda page: page.get_by_role("link", name=name, exact=True).first


_ID = r'id="([^"]+)"'


def _book(title: str, shown: str | None = None) -> Step:
    """Click a book's title link in the recently viewed list (`shown`: its text when cut)."""
    text = shown or title
    return Step("click", rf"<a {_ID}>{re.escape(text)}</a>", pw=_link(text), fallback=title)


_CATEGORY = rf'<select {_ID} value="[^"]*" options="10"'


def _search(category: str, query: str) -> tuple[Step, Step]:
    """Pick a category in craigslist's search form, then type the query and press Enter."""
    return (
        Step("select", _CATEGORY, {"value": category}, _css("#catAbb")),
        Step(
            "type",
            # The field right before the category menu (after "back" it holds the
            # last query, so its placeholder is not shown).
            rf'<input {_ID}[^>]*/> <select [^>]*options="10"',
            {"text": query, "submit": True},
            _css("#query"),
        ),
    )


def _result_tab(n: int, pw_tab: int) -> Step:
    """Switch to the tab a result link opened behind (its note names the tab)."""
    return Step(
        "switch_tab",
        rf"new tab behind, tab (\d+), at [^;<]*tabs-result\.html\?n={n}",
        into="tab",
        pw_tab=pw_tab,
    )


_USER = rf"User ID :\s*\|\s*<input {_ID}"
_PASSWORD = rf'<input {_ID} type="password"'
_OTP = rf'<input {_ID} type="checkbox" label="Please select OTP'
_CAPTCHA = rf"Captcha \| <input {_ID}"
_QUERY = rf'<input {_ID}[^>]*/> <select [^>]*options="10"'


def _search_filled(category: str, query: str) -> tuple[Step, Step]:
    """craigslist's search as a model with `fill` does it: category and query in one
    call, then Enter (fill submits nothing)."""
    return (
        Step(
            "fill",
            fields=(
                (_CATEGORY, category, _css("#catAbb")),
                (_QUERY, query, _css("#query")),
            ),
            expand="form",
        ),
        Step("press", args={"key": "Enter"}, pw=_css("#query")),
    )


TASKS: tuple[Task, ...] = (
    Task(
        "irctc-login-form",
        "fill and submit a form",
        "pages/irctc-eticket-2017/index.html",
        "Log in with user traveller42, password 'correct horse', captcha X7K2Q; "
        "request an OTP, then change your mind; tell me what the site received.",
        (
            Step("capture_snapshot"),
            # The form sits among a hundred links: the model looks it up.
            Step("find", args={"region": "form"}),
            Step(
                "type",
                rf"User ID :\s*\|\s*<input {_ID}",
                {"text": "traveller42"},
                _css("#usernameId"),
            ),
            Step(
                "type",
                rf'<input {_ID} type="password"',
                {"text": "correct horse"},
                _css("input.loginPassword"),
            ),
            Step(
                "check",
                rf'<input {_ID} type="checkbox" label="Please select OTP',
                {"on": True},
                _css("#otpId"),
            ),
            Step(
                "check",
                rf'<input {_ID} type="checkbox" label="Please select OTP',
                {"on": False},
                _css("#otpId"),
            ),
            Step(
                "type", rf"Captcha \| <input {_ID}", {"text": "X7K2Q"}, _css("input.loginCaptcha")
            ),
            Step("click", rf'<button {_ID} type="submit">Login</button>', pw=_css("#loginbutton")),
        ),
        r"(The server received: [^\n<]*)",
    ),
    Task(
        "books-toscrape-links",
        "follow links across a site's pages and read an answer",
        "flows/books-toscrape/07-dirty-little-secrets/",
        "Walk back through the recently viewed books, one page at a time, to A Light in "
        "the Attic; then go back one page and tell me the price of the book there.",
        # A title link a page shows under an <unchanged> marker keeps the id it had
        # on the page before, which the model still has.
        (
            Step("capture_snapshot"),
            _book("The Requiem Red"),
            _book("Sapiens", "Sapiens: A Brief History ..."),
            _book("Sharp Objects"),
            _book("Soumission"),
            _book("Tipping the Velvet"),
            _book("A Light in the Attic", "A Light in the ..."),
            Step("back"),
        ),
        r"<h1>Tipping the Velvet</h1>\n(£[\d.]+)",
    ),
    Task(
        "craigslist-search",
        "search within a long page and act on what it found",
        "pages/craigslist-ahmedabad-2017/index.html",
        "Find the housing section, search housing for a 2bhk flat in Satellite, then go "
        "back and search for sale for a scooter, then jobs for a driver; tell me what "
        "the last search sent.",
        (
            Step("capture_snapshot"),
            Step("find", args={"text": "housing"}),
            *_search("housing", "2bhk flat Satellite"),
            Step("back"),
            *_search("for sale", "scooter"),
            Step("back"),
            *_search("jobs", "driver"),
        ),
        r"(The server received: [^\n<]*)",
    ),
    Task(
        "ietf-draft-search",
        "search within a long page and act on what it found",
        "pages/ietf-draft/index.html",
        "In this draft, go to the response codes, CORS and bearer token sections, then "
        "tell me where its RFC6750 reference links to.",
        (
            Step("capture_snapshot"),
            Step("find", args={"text": "Response codes"}),
            Step("click", rf"<a {_ID}>5</a>\. Response codes", pw=_css('a[href="#section-5"]')),
            Step("find", args={"text": "CORS headers"}),
            Step("click", rf"<a {_ID}>7</a>\. CORS headers", pw=_css('a[href="#section-7"]')),
            Step("find", args={"text": "Bearer tokens"}),
            Step("click", rf"<a {_ID}>9</a>\. Bearer tokens", pw=_css('a[href="#section-9"]')),
            Step("find", args={"text": "RFC6750"}),
            Step("read", rf"<a {_ID}>RFC6750</a>"),
        ),
        r"(https?://127\.0\.0\.1:\d+/pages/ietf-draft/rfc6750)",
    ),
    # The two form tasks again, as a model with `fill` does them (issue 27's measure).
    Task(
        "irctc-login-form-fill",
        "fill and submit a form, with fill",
        "pages/irctc-eticket-2017/index.html",
        "Log in with user traveller42, password 'correct horse', captcha X7K2Q; "
        "request an OTP, then change your mind; tell me what the site received.",
        (
            Step("capture_snapshot"),
            Step("find", args={"region": "form"}),
            Step(
                "fill",
                fields=(
                    (_USER, "traveller42", _css("#usernameId")),
                    (_PASSWORD, "correct horse", _css("input.loginPassword")),
                    (_OTP, True, _css("#otpId")),
                ),
            ),
            Step(
                "fill",
                fields=(
                    (_OTP, False, _css("#otpId")),
                    (_CAPTCHA, "X7K2Q", _css("input.loginCaptcha")),
                ),
            ),
            Step("click", rf'<button {_ID} type="submit">Login</button>', pw=_css("#loginbutton")),
        ),
        r"(The server received: [^\n<]*)",
    ),
    Task(
        "craigslist-search-fill",
        "search within a long page and act on what it found, with fill",
        "pages/craigslist-ahmedabad-2017/index.html",
        "Find the housing section, search housing for a 2bhk flat in Satellite, then go "
        "back and search for sale for a scooter, then jobs for a driver; tell me what "
        "the last search sent.",
        (
            Step("capture_snapshot"),
            Step("find", args={"text": "housing"}),
            *_search_filled("housing", "2bhk flat Satellite"),
            Step("back"),
            *_search_filled("for sale", "scooter"),
            Step("back"),
            *_search_filled("jobs", "driver"),
        ),
        r"(The server received: [^\n<]*)",
    ),
    # A task across tabs (issue 26): our own fixture pages, as shops build them.
    Task(
        "tabs-sign-in",
        "sign in through a provider's pop-up on another origin",
        f"{FIXTURES}/tabs-account.html#provider={PROVIDER}",
        "Sign in with Provider as Ada Lovelace, then tell me what the shop says.",
        (
            Step("capture_snapshot"),
            Step(
                "click",
                rf"<button {_ID}[^>]*>Sign in with Provider",
                pw=_css("#signin"),
            ),
            # Ours follows the pop-up into its answer; Playwright MCP stays in the shop.
            Step("switch_tab", only="playwright", pw_tab=1),
            Step("type", rf"Your name <input {_ID}", {"text": "Ada Lovelace"}, _css("#name")),
            # The pop-up answers its opener and closes itself: both answer in the shop.
            Step("click", rf"<button {_ID}[^>]*>Continue", pw=_css("button[type=submit]")),
        ),
        r"(Signed in as [^.<\n]+)\.",
    ),
    Task(
        "tabs-two-results",
        "read two results that open in new tabs, then come back to the list",
        f"{FIXTURES}/tabs-results.html",
        "Open the Ridge 2 and Cairn 3 tents from these results, read each, come back "
        "to the list, and tell me the Cairn 3 tent's price.",
        (
            Step("capture_snapshot"),
            Step("click", rf"<a {_ID}>Ridge 2 tent</a>", pw=_link("Ridge 2 tent")),
            Step("click", rf"<a {_ID}>Cairn 3 tent</a>", pw=_link("Cairn 3 tent")),
            _result_tab(1, pw_tab=1),
            _result_tab(2, pw_tab=2),
            Step("switch_tab", r"\(you are in tab (\d+)\)", into="tab", pw_tab=0),
        ),
        r"<h1>Cairn 3 tent</h1>\n(Price £\d+)",
    ),
)

# -- the corpus on 127.0.0.1 --------------------------------------------------------------

_RECEIVED = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Received</title></head>
<body><main><h1>Form received</h1><p>The server received: {fields}</p></main></body></html>
"""


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def answer_http(
    method: str, target: str, body: bytes, *, fixtures: bool = False
) -> tuple[str, dict[str, str], bytes]:
    """Corpus files (a folder answers with its index.html), our fixture pages under
    `FIXTURES` (``fixtures``: at the root, as the provider's own site), and a page of
    our own that echoes what a form sent anywhere else."""
    split = urlsplit(target)
    path = unquote(split.path)
    root = TEST_PAGES if fixtures else CORPUS
    if path.startswith(f"/{FIXTURES}/"):
        root, path = TEST_PAGES, path.removeprefix(f"/{FIXTURES}")
    file = (root / path.lstrip("/")).resolve()
    if method == "GET" and file.is_relative_to(root.resolve()):
        if file.is_dir() and not path.endswith("/"):
            return "301 Moved Permanently", {"Location": path + "/"}, b""
        if file.is_dir():
            file = file / "index.html"
        if file.is_file():
            kind = "text/html; charset=utf-8" if file.suffix == ".html" else _mime(file)
            return "200 OK", {"Content-Type": kind}, file.read_bytes()
    sent = split.query if method == "GET" else body.decode("utf-8", "replace")
    pairs = parse_qsl(sent, keep_blank_values=True)
    if method == "GET" and not pairs:
        return "404 Not Found", {"Content-Type": "text/plain"}, b"not found"
    fields = ", ".join(f"{k}={v}" for k, v in pairs) or "nothing"
    page = _RECEIVED.format(fields=_escape(fields))
    return "200 OK", {"Content-Type": "text/html; charset=utf-8"}, page.encode()


def _mime(file: Path) -> str:
    return mimetypes.guess_type(file.name)[0] or "application/octet-stream"


async def read_request(stream: trio.SocketStream) -> tuple[str, str, dict[str, str], bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = await stream.receive_some(65536)
        if not chunk:
            raise EOFError("the client closed before a whole request head")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, target = lines[0].split()[:2]
    headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = await stream.receive_some(65536)
        if not chunk:
            break
        body += chunk
    return method, target, headers, body


async def respond(
    stream: trio.SocketStream, status: str, headers: Mapping[str, str], body: bytes
) -> None:
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    framing = f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    await stream.send_all(f"HTTP/1.1 {status}\r\n{head}{framing}".encode() + body)


async def serve_corpus(
    *, fixtures: bool = False, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED
) -> None:
    """Serve the corpus on 127.0.0.1 (port 0) until cancelled (``fixtures``: our
    fixture pages at the root instead, the provider's origin of a pop-up task)."""

    async def handle(stream: trio.SocketStream) -> None:
        async with stream:
            try:
                method, target, _, body = await read_request(stream)
                await respond(stream, *answer_http(method, target, body, fixtures=fixtures))
            except (EOFError, trio.BrokenResourceError, ValueError):
                return

    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    task_status.started(listeners[0].socket.getsockname()[1])
    await trio.serve_listeners(handle, listeners)


# -- token accounting ------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _tokens(text: str) -> int:
    return count_tokens(text)


Segment = tuple[str, bool]  # text, whether a cache breakpoint ends it


def anthropic_segments(body: Mapping[str, Any]) -> list[Segment]:
    """A Messages body as the blocks the cache sees, in order: tools, system, messages."""
    segments: list[Segment] = []
    for tool in body.get("tools", []):
        plain = {k: v for k, v in tool.items() if k != "cache_control"}
        segments.append((json.dumps(plain, sort_keys=True), "cache_control" in tool))
    system = body.get("system", "")
    if isinstance(system, str):
        segments.append((system, False))
    else:
        segments.extend((block["text"], "cache_control" in block) for block in system)
    for message in body["messages"]:
        content = message["content"]
        if isinstance(content, str):
            segments.append((f"{message['role']}: {content}", False))
            continue
        for block in content:
            plain = {k: v for k, v in block.items() if k != "cache_control"}
            text = plain.pop("text", None) or plain.pop("content", None)
            label = json.dumps(plain, sort_keys=True)
            segments.append((f"{message['role']} {label}: {text or ''}", "cache_control" in block))
    return segments


def anthropic_parts(body: Mapping[str, Any]) -> list[str]:
    """What each of `anthropic_segments`' blocks is: ``prefix`` (tools, system),
    ``task`` (the person's words), ``calls`` (the model's turns) or the tool a result
    answers."""
    parts = ["prefix"] * len(body.get("tools", []))
    system = body.get("system", "")
    parts += ["prefix"] * (1 if isinstance(system, str) else len(system))
    names: dict[str, str] = {}
    for message in body["messages"]:
        content = message["content"]
        if isinstance(content, str):
            parts.append("task" if message["role"] == "user" else "calls")
            continue
        for block in content:
            if block.get("type") == "tool_use":
                names[str(block["id"])] = str(block["name"])
            if block.get("type") == "tool_result":
                parts.append(names.get(str(block["tool_use_id"]), "other results"))
            else:
                parts.append("task" if message["role"] == "user" else "calls")
    return parts


def charged(segments: Sequence[Segment], billed: Billed) -> list[float]:
    """What each block of one request cost: its tokens in the cache's read zone at
    0.1x, in the written zone at 1.25x, after the last breakpoint at 1x."""
    zones = ((billed.read, 0.1), (billed.read + billed.write, 1.25), (billed.total, 1.0))
    costs: list[float] = []
    start = 0
    for text, _ in segments:
        end = start + _tokens(text)
        cost, low = 0.0, 0
        for high, rate in zones:
            cost += max(0, min(end, high) - max(start, low)) * rate
            low = high
        costs.append(cost)
        start = end
    return costs


def where(requests: Sequence[tuple[Sequence[Segment], Sequence[str], Billed]]) -> dict[str, float]:
    """Billed-equivalent tokens of a run's requests by what they paid for."""
    totals: dict[str, float] = {}
    for segments, parts, billed in requests:
        for part, cost in zip(parts, charged(segments, billed), strict=True):
            totals[part] = totals.get(part, 0.0) + cost
    return totals


def openai_segments(body: Mapping[str, Any]) -> list[Segment]:
    """A Chat Completions body in the order OpenAI's prefix cache reads it."""
    segments: list[Segment] = [
        (json.dumps(tool, sort_keys=True), False) for tool in body.get("tools", [])
    ]
    segments.extend((json.dumps(m, sort_keys=True), False) for m in body["messages"])
    return segments


@attrs.frozen
class Billed:
    """One request as the cache saw it."""

    total: int
    read: int
    write: int
    uncached: int

    @property
    def billed(self) -> float:
        """Anthropic's rule: uncached 1x, cache writes 1.25x, cache reads 0.1x."""
        return self.uncached + 1.25 * self.write + 0.1 * self.read


@attrs.define
class PromptCache:
    """A provider's prompt cache over one conversation's requests.

    ``anthropic``: a read is the longest prefix that an earlier request ended at one
    of its breakpoints; the rest up to this request's last breakpoint is written.
    ``openai``: the longest prefix of any earlier request is read (in 128-token
    steps from 1,024 on, as OpenAI documents); nothing is billed for writing.
    """

    marked: set[str] = attrs.field(factory=set)
    seen: set[str] = attrs.field(factory=set)

    @staticmethod
    def _chain(segments: Sequence[Segment]) -> tuple[list[str], list[int]]:
        hashes: list[str] = []
        cumulative: list[int] = []
        digest, total = "", 0
        for text, _ in segments:
            digest = hashlib.sha256((digest + "\0" + text).encode()).hexdigest()
            total += _tokens(text)
            hashes.append(digest)
            cumulative.append(total)
        return hashes, cumulative

    def anthropic(self, segments: Sequence[Segment]) -> Billed:
        hashes, cumulative = self._chain(segments)
        total = cumulative[-1] if cumulative else 0
        marks = [i for i, (_, mark) in enumerate(segments) if mark]
        last = marks[-1] if marks else -1
        hits = [i for i in range(last + 1) if hashes[i] in self.marked]
        read = cumulative[hits[-1]] if hits else 0
        upto = cumulative[last] if last >= 0 else 0
        write = max(0, upto - read)
        self.marked.update(hashes[i] for i in marks)
        return Billed(total, read, write, total - max(upto, read))

    def openai(self, segments: Sequence[Segment]) -> Billed:
        hashes, cumulative = self._chain(segments)
        total = cumulative[-1] if cumulative else 0
        hits = [i for i, h in enumerate(hashes) if h in self.seen]
        prefix = cumulative[hits[-1]] if hits else 0
        read = 0 if prefix < 1024 else prefix - prefix % 128
        self.seen.update(hashes)
        return Billed(total, read, 0, total - read)


# -- the scripted model ------------------------------------------------------------------


@attrs.define
class BenchModel:
    """A scripted model for one task run: it plays the task's steps, finding each
    target id in the tool results it was sent, and answers as the provider would,
    with usage from `PromptCache`."""

    task: Task
    provider: str  # "anthropic" or "openai"
    port: int = 0
    # What `serve_model` logs: each request's headers and body, and each answer.
    requests: list[tuple[dict[str, str], dict[str, Any]]] = attrs.field(factory=list)
    responses: list[dict[str, Any]] = attrs.field(factory=list)
    billed: list[Billed] = attrs.field(factory=list)
    cache: PromptCache = attrs.field(factory=PromptCache)
    failure: str = ""
    # Calls the script did not plan (a find or an expand after a compaction), so the
    # step a request is at is the number of results less these.
    extra: int = 0
    helped: set[int] = attrs.field(factory=set)

    @property
    def base_url(self) -> str:
        origin = f"http://127.0.0.1:{self.port}"
        return origin if self.provider == "anthropic" else origin + "/v1"

    @property
    def bodies(self) -> list[dict[str, Any]]:
        """Every request body the model was sent, in order."""
        return [body for _, body in self.requests]

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

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        if self.provider == "anthropic":
            usage = self.cache.anthropic(anthropic_segments(body))
        else:
            usage = self.cache.openai(openai_segments(body))
        self.billed.append(usage)
        results = self.tool_results(body["messages"])
        seen = "\n".join(reversed(results))
        index = len(results) - self.extra
        calls = len(results)
        if index < len(self.task.model_steps):
            step = self.task.model_steps[index]
            args = dict(step.args)
            if step.pattern is not None:
                found = re.search(step.pattern, seen)
                if found is None and step.fallback and index not in self.helped:
                    self.helped.add(index)
                    self.extra += 1
                    return self._reply(calls, usage, call=("find", {"text": step.fallback}))
                if found is None:
                    self.failure = f"step {index + 1} ({step.tool}): no match for {step.pattern!r}"
                    return self._reply(calls, usage, text=f"I am stuck: {self.failure}")
                args[step.into] = found.group(1)
            if step.fields:
                ids = [re.search(pattern, seen) for pattern, _, _ in step.fields]
                missing = [step.fields[i][0] for i, m in enumerate(ids) if m is None]
                if missing and step.expand and index not in self.helped:
                    self.helped.add(index)
                    self.extra += 1
                    return self._reply(calls, usage, call=("expand", {"region": step.expand}))
                if missing:
                    self.failure = f"step {index + 1} (fill): no match for {missing[0]!r}"
                    return self._reply(calls, usage, text=f"I am stuck: {self.failure}")
                args["fields"] = [
                    {"id": m.group(1), "value": value}
                    for m, (_, value, _) in zip(ids, step.fields, strict=True)
                    if m is not None
                ]
            return self._reply(calls, usage, call=(step.tool, args))
        found = re.search(self.task.answer, seen)
        if found is None and index not in self.helped:
            self.helped.add(index)
            self.extra += 1
            return self._reply(calls, usage, call=("expand", {"region": self.task.answer_region}))
        if found is None:
            self.failure = f"the answer {self.task.answer!r} is not in what the model was sent"
        text = found.group(1) if found else "I could not find the answer."
        return self._reply(calls, usage, text=text)

    def _reply(
        self,
        index: int,
        usage: Billed,
        *,
        call: tuple[str, dict[str, Any]] | None = None,
        text: str = "",
    ) -> dict[str, Any]:
        output = 20 + _tokens(text)
        if self.provider == "anthropic":
            content: list[dict[str, Any]] = (
                [{"type": "tool_use", "id": f"tu_{index}", "name": call[0], "input": call[1]}]
                if call
                else [{"type": "text", "text": text}]
            )
            return {
                "id": f"msg_{index}",
                "type": "message",
                "role": "assistant",
                "model": "scripted",
                "content": content,
                "stop_reason": "tool_use" if call else "end_turn",
                "usage": {
                    "input_tokens": usage.uncached,
                    "cache_read_input_tokens": usage.read,
                    "cache_creation_input_tokens": usage.write,
                    "output_tokens": output,
                },
            }
        message: dict[str, Any] = {"role": "assistant", "content": None if call else text}
        if call:
            message["tool_calls"] = [
                {
                    "id": f"call_{index}",
                    "type": "function",
                    "function": {"name": call[0], "arguments": json.dumps(call[1])},
                }
            ]
        return {
            "id": f"chatcmpl-{index}",
            "object": "chat.completion",
            "model": "scripted",
            "choices": [
                {"index": 0, "message": message, "finish_reason": "tool_calls" if call else "stop"}
            ],
            "usage": {
                "prompt_tokens": usage.total,
                "completion_tokens": output,
                "prompt_tokens_details": {"cached_tokens": usage.read},
            },
        }


# -- one run through the real extension ------------------------------------------------------


@attrs.frozen
class Run:
    """One task through the side panel: what the model was sent and what it answered."""

    provider: str
    budget: int
    answer: str
    ok: bool
    steps: list[dict[str, Any]]
    bodies: list[dict[str, Any]]
    billed: list[Billed]
    panel_cost: str
    # The questions the side panel showed the person (all answered yes), in its words.
    questions: tuple[str, ...] = ()

    @property
    def calls(self) -> int:
        return len(self.bodies)

    @property
    def contexts(self) -> list[int]:
        return [b.total for b in self.billed]

    @property
    def billed_total(self) -> float:
        return sum(b.billed for b in self.billed)

    @property
    def uncached_total(self) -> int:
        return sum(b.total for b in self.billed)

    @property
    def where(self) -> dict[str, float]:
        """Billed tokens by what they paid for (Anthropic-shaped runs)."""
        return where(
            [
                (anthropic_segments(body), anthropic_parts(body), billed)
                for body, billed in zip(self.bodies, self.billed, strict=True)
            ]
        )

    @property
    def compactions(self) -> int:
        return sum(1 for s in self.steps if s["kind"] == "compacted")


async def _run_agent(
    ext: ExtensionBrowser, model: BenchModel, url: str, prompt: str, budget: int
) -> Run:
    await use_model(ext, model, askBeforeSubmit=False, budget=budget)
    _, tab_id = await ext.open_tab(url)
    await ext.wait_loaded(tab_id)
    panel = await ext.open_side_panel()
    await panel.evaluate(
        f"""trimtabPanel.showView('agent');
        document.getElementById('task').value = {json.dumps(prompt)};
        document.getElementById('task-form').requestSubmit(); true"""
    )
    ended = "trimtabPanel.state.steps.some((s) => s.kind === 'done' || s.kind === 'error')"
    questions: list[str] = []
    while not await panel.evaluate(ended) or await panel.evaluate("trimtabPanel.state.running"):
        # The person who gave the password in the task lets the agent type it: every
        # question the panel shows is answered yes (submits are not asked).
        if (asked := await answer_question(panel, allow=True)) is not None:
            questions.append(asked)
        await trio.sleep(0.2)
    steps = await panel.evaluate("trimtabPanel.state.steps.map(({content, ...s}) => s)")
    cost = await panel.evaluate("trimtabPanel.state.costLine")
    last = steps[-1]
    return Run(
        provider=model.provider,
        budget=budget,
        answer=str(last.get("text") or last.get("message") or ""),
        ok=last["kind"] == "done" and not model.failure,
        steps=steps,
        bodies=list(model.bodies),
        billed=list(model.billed),
        panel_cost=str(cost),
        questions=tuple(questions),
    )


def start_url(task: Task, ports: tuple[int, int]) -> str:
    """Where the task starts: the corpus's (or our fixtures') server, with the provider
    on the second port (another origin) where the start names it."""
    corpus, provider = ports
    start = task.start.replace(PROVIDER, f"http://127.0.0.1:{provider}")
    return f"http://127.0.0.1:{corpus}/{start}"


async def run_task(task: Task, ports: tuple[int, int], provider: str, budget: int) -> Run:
    """One task in a fresh browser with the extension, against a fresh scripted model."""
    with tempfile.TemporaryDirectory(prefix="trimtab-bench-") as folder:
        with trio.fail_after(TASK_TIMEOUT):
            async with (
                launch_with_extension(Path(folder) / "profile", extra_args=(LOCAL_ONLY,)) as ext,
                trio.open_nursery() as nursery,
            ):
                model: BenchModel = await nursery.start(serve_model, BenchModel(task, provider))
                run = await _run_agent(ext, model, start_url(task, ports), task.prompt, budget)
                nursery.cancel_scope.cancel()
    if model.failure:
        run = attrs.evolve(run, answer=f"{run.answer} ({model.failure})")
    return run


# -- the Playwright MCP replay ------------------------------------------------------------


def wait_until_loaded(page: Page) -> None:
    """Wait until the page's document is complete, restored from the cache or not.

    The reference browser runs on our flags, so the back-forward cache is on. A page
    restored from it fires ``pageshow`` but no ``load``, and Playwright, which waits
    for its ``load`` event, waits for it in vain: in ``go_back(wait_until="load")``
    and in ``wait_for_load_state("load")`` after any later action on that page. A
    restored document is already complete; a freshly loaded one becomes complete
    right before its ``load``.
    """
    page.wait_for_function("document.readyState === 'complete'", polling=50, timeout=60_000)


def history_step(page: Page, direction: str) -> None:
    """Go back or forward in Playwright: wait for the commit, then for a complete page."""
    if direction == "back":
        page.go_back(wait_until="commit", timeout=60_000)
    elif direction == "forward":
        page.go_forward(wait_until="commit", timeout=60_000)
    else:
        raise ValueError(f"history step {direction!r} is neither 'back' nor 'forward'")
    wait_until_loaded(page)


async def playwright_replay(
    playwright: PlaywrightWorker, task: Task, ports: tuple[int, int], ours: Run
) -> dict[str, Any]:
    """The task's steps in Playwright, each answered with the ai-mode aria snapshot
    of the page after it, billed with our fixed prefix and the same breakpoints.

    Across tabs, as Playwright MCP answers: a tab a click opens stays behind (the
    current tab does not change), every answer lists the open tabs once there are two,
    ``browser_tab_select`` makes a tab current and answers with its snapshot, and when
    the current tab closes (a pop-up that was done) the one before it is current."""
    origins = tuple(f"http://127.0.0.1:{port}" for port in ports)

    def local_only(page: Page) -> None:
        page.context.unroute_all()
        page.context.route(
            "**/*",
            lambda route: (
                route.continue_() if route.request.url.startswith(origins) else route.abort()
            ),
        )

    await playwright.run(local_only)
    await playwright.goto(start_url(task, ports))
    results: list[tuple[str, str]] = []  # (the call as JSON, the snapshot)
    current: list[Page] = []  # Playwright MCP's current tab, once it is not the first
    for step in task.steps:
        if step.tool in ("find", "read") or step.only == "ours":
            continue

        def act(first: Page, step: Step = step) -> str:
            if step.pw_tab is not None:
                current[:] = [_task_pages(first)[step.pw_tab]]
                current[0].bring_to_front()
                wait_until_loaded(current[0])
                return _mcp_answer(current[0])
            page = current[0] if current and not current[0].is_closed() else first
            if step.tool in ("back", "forward"):
                history_step(page, step.tool)
            elif step.tool == "navigate" and step.pw is not None:
                page.goto(step.pw(page).evaluate("link => link.href"), wait_until="load")
            elif step.fields:
                for _, value, locate in step.fields:
                    field = locate(page)
                    if isinstance(value, bool):
                        field.set_checked(value)
                    elif field.evaluate("e => e.localName") == "select":
                        field.select_option(label=value)
                    else:
                        field.fill(value)
                wait_until_loaded(page)
            elif step.pw is not None:
                target = step.pw(page)
                if step.tool == "type":
                    target.fill(str(step.args["text"]))
                    if step.args.get("submit"):
                        target.press("Enter")
                elif step.tool == "check":
                    target.set_checked(bool(step.args.get("on", True)))
                elif step.tool == "select":
                    target.select_option(label=str(step.args["value"]))
                elif step.tool == "press":
                    target.press(str(step.args["key"]))
                else:
                    target.click()
                if page.is_closed():
                    # It closed itself: the tab before it in the list is current.
                    current[:] = [_task_pages(first)[-1]]
                    page = current[0]
                wait_until_loaded(page)
            return _mcp_answer(page)

        snapshot = await playwright.run(act)
        name = "browser_tab_select" if step.pw_tab is not None else f"browser_{step.tool}"
        call = json.dumps({"name": name, "input": {"ref": "e123"}})
        results.append((call, snapshot))
    # The same fixed prefix as ours: the tools and system prompt of our first request.
    first = ours.bodies[0]
    fixed = [s for s in anthropic_segments(first)[: len(first["tools"]) + 1]]
    cache = PromptCache()
    billed: list[Billed] = []
    requests: list[tuple[list[Segment], list[str], Billed]] = []
    for calls in range(len(results) + 1):
        segments = [*fixed, (f"user: {task.prompt}", False)]
        parts = ["prefix"] * len(fixed) + ["task"]
        for i, (call, snapshot) in enumerate(results[:calls]):
            newest = i >= calls - 2
            segments.append((f"assistant {call}", False))
            segments.append((f"user tool_result: {snapshot}", newest))
            parts += ["calls", "snapshots"]
        billed.append(cache.anthropic(segments))
        requests.append((segments, parts, billed[-1]))
    return {
        "where": where(requests),
        "calls": len(billed),
        "prompt_tokens": [b.total for b in billed],
        "longest": max(b.total for b in billed),
        "billed": sum(b.billed for b in billed),
        "snapshot_tokens": [_tokens(s) for _, s in results],
    }


def _task_pages(page: Page) -> list[Page]:
    """The task's pages, in the order they opened: the first one the replay started in
    (the browser's own first tab is not one of them), then those opened since."""
    pages = [p for p in page.context.pages if not p.is_closed()]
    first = next((p for p in pages if p.url != "about:blank"), page)
    return pages[pages.index(first) :] if first in pages else pages


def _mcp_answer(page: Page) -> str:
    """What Playwright MCP answers of the current page: the open tabs once there are
    two (index, title, URL; the current one marked), then the page's snapshot."""
    pages = _task_pages(page)
    if len(pages) < 2:
        return page.aria_snapshot(mode="ai")
    lines = ["### Open tabs"]
    for index, other in enumerate(pages, 1):
        mark = " (current)" if other == page else ""
        lines.append(f"- {index}:{mark} [{other.title()}] ({other.url})")
    return "\n".join([*lines, "", "### Current tab", page.aria_snapshot(mode="ai")])


# -- the section ------------------------------------------------------------------------------


def _without_marks(body: Mapping[str, Any], key: str) -> str:
    """One part of a body as JSON without its cache marks, to compare across tasks."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "cache_control"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return json.dumps(strip(body[key]), sort_keys=True)


def _prefix_tokens(body: Mapping[str, Any]) -> int:
    """Tokens of the tools and the system prompt, as the cache counts them."""
    segments = anthropic_segments(body)[: len(body["tools"]) + len(body["system"])]
    return sum(_tokens(text) for text, _ in segments)


def _fixed_prefix(body: Mapping[str, Any]) -> dict[str, int]:
    """Tokens of the fixed prefix: the system prompt (FORMAT.md inside it) and tools."""
    system = body["system"][0]["text"]
    format_md = (REPO / "host" / "FORMAT.md").read_text(encoding="utf-8")
    tools = [{k: v for k, v in t.items() if k != "cache_control"} for t in body["tools"]]
    return {
        "system": _tokens(system),
        "format_md": _tokens(format_md),
        "system_without_format": _tokens(system.replace(format_md.strip(), "")),
        "tools": _tokens(json.dumps(tools)),
        "tool_count": len(tools),
    }


async def _measure(out: Callable[[str], None], pattern: str | None) -> dict[str, Any]:
    tasks = [t for t in TASKS if pattern is None or fnmatch.fnmatch(t.name, pattern)]
    results: dict[str, Any] = {}
    first_prefix = ""
    async with trio.open_nursery() as nursery:
        ports: tuple[int, int] = (
            await nursery.start(serve_corpus),
            await nursery.start(functools.partial(serve_corpus, fixtures=True)),  # pop-ups
        )
        async with open_playwright() as playwright:
            for task in tasks:
                steps = len(task.model_steps)
                out(f"\n{task.name} ({task.kind}; {task.start}; {steps} tool steps)")
                runs = {
                    "anthropic": await run_task(task, ports, "anthropic", BUDGET),
                    "openai": await run_task(task, ports, "openai", BUDGET),
                    "today": await run_task(task, ports, "anthropic", 10**9),
                    "tight": await run_task(task, ports, "anthropic", TIGHT_BUDGET),
                }
                pw = await playwright_replay(playwright, task, ports, runs["anthropic"])
                results[task.name] = _report(task, runs, pw, out)
                if "prefix" not in results:
                    results["prefix"] = _fixed_prefix(runs["anthropic"].bodies[0])
                    first_prefix = _without_marks(runs["anthropic"].bodies[0], "system")
                elif _without_marks(runs["anthropic"].bodies[0], "system") != first_prefix:
                    out("  !! the system prompt differs from the first task's: no shared prefix")
        nursery.cancel_scope.cancel()
    prefix = results.get("prefix")
    if prefix:
        out(
            f"\nfixed prefix (o200k): system prompt {prefix['system']:,} tokens (FORMAT.md "
            f"{prefix['format_md']:,}, the rest {prefix['system_without_format']:,}), "
            f"{prefix['tool_count']} tool specs {prefix['tools']:,}"
        )
    named = {k: v for k, v in results.items() if k != "prefix"}
    # Every question a benign run showed; those about a request the page sent after an
    # action or one carrying typed text would be false ones (the tasks do no harm).
    asked = [
        q
        for r in named.values()
        for f in r.values()
        if isinstance(f, dict)
        for q in f.get("questions", ())
    ]
    guard = [q for q in asked if "After " in q or "text the agent typed" in q]
    out(
        f"SUMMARY tasks questions: {len(asked)} asked in the benign runs, "
        f"{len(guard)} of them by the request guard after an action or about typed text"
    )
    for question in guard:
        out("  asked: " + " | ".join(question.split("\n")[:2])[:160])
    out("SUMMARY tasks: billed-equivalent input tokens per task (Anthropic's cache rules)")
    rows = []
    for name, r in named.items():
        rows.append(
            [
                name,
                r["anthropic"]["calls"],
                r["anthropic"]["longest"],
                round(r["anthropic"]["billed"]),
                round(r["playwright"]["billed"]),
                round(r["today"]["billed"]),
                f"{r['vs_playwright']:.3f}{'' if r['vs_playwright'] <= TARGET_PLAYWRIGHT else '!'}",
                f"{r['vs_playwright_warm']:.3f}",
                f"{r['vs_today']:.3f}{'' if r['vs_today'] <= TARGET_TODAY else '!'}",
                "yes" if r["same_result"] else "NO",
                "yes" if r["within_budget"] else "NO",
            ]
        )
    for line in table(
        [
            "task",
            "calls",
            "longest",
            "ours",
            "playwright",
            "today",
            f"/pw (<={TARGET_PLAYWRIGHT})",
            "/pw warm",
            f"/today (<={TARGET_TODAY})",
            "same",
            "budget",
        ],
        rows,
    ).split("\n"):
        out("  " + line)
    return results


def _report(
    task: Task, runs: dict[str, Run], pw: dict[str, Any], out: Callable[[str], None]
) -> dict[str, Any]:
    ours, today = runs["anthropic"], runs["today"]
    figures: dict[str, Any] = {}
    for name, run in runs.items():
        figures[name] = {
            "calls": run.calls,
            "prompt_tokens": run.contexts,
            "longest": max(run.contexts),
            "billed": run.uncached_total if name == "today" else run.billed_total,
            "cached_read": sum(b.read for b in run.billed),
            "cache_write": sum(b.write for b in run.billed),
            "compactions": run.compactions,
            "answer": run.answer,
            "ok": run.ok,
            "panel": run.panel_cost,
            "questions": list(run.questions),
        }
    figures["playwright"] = pw
    figures["where"] = {"ours": ours.where, "playwright": pw["where"]}
    # The tools and the system prompt are the same for every task, so after a
    # person's first task they are read from the cache (0.1x) instead of written
    # (1.25x): "warm" is the task's figure then, for us and for the replay alike.
    prefix = _prefix_tokens(ours.bodies[0])
    figures["prefix_tokens"] = prefix
    figures["anthropic"]["billed_warm"] = figures["anthropic"]["billed"] - 1.15 * prefix
    pw["billed_warm"] = pw["billed"] - 1.15 * prefix
    figures["vs_playwright_warm"] = figures["anthropic"]["billed_warm"] / pw["billed_warm"]
    figures["vs_playwright"] = figures["anthropic"]["billed"] / pw["billed"]
    figures["vs_today"] = figures["anthropic"]["billed"] / figures["today"]["billed"]
    figures["same_result"] = all(r.ok and r.answer == today.answer for r in runs.values())
    figures["within_budget"] = all(
        max(r.contexts) <= r.budget for r in runs.values() if r.budget == BUDGET
    )
    tight = runs["tight"]
    # After its first compaction, the tight run's contexts: the budget holds unless
    # the newest page alone (with the fixed prefix) is larger.
    compacted_at = next(
        (i for i, s in enumerate(_model_steps(tight.steps)) if s["compacted"]), None
    )
    figures["tight"]["contexts_after_compaction"] = (
        tight.contexts[compacted_at:] if compacted_at is not None else []
    )
    rows = []
    for name in ("anthropic", "openai", "today", "tight"):
        f = figures[name]
        rows.append(
            [
                name,
                f["calls"],
                f["longest"],
                f["cached_read"],
                f["cache_write"],
                round(f["billed"]),
                f["compactions"],
                "ok" if f["ok"] else "FAILED",
            ]
        )
    rows.append(["playwright", pw["calls"], pw["longest"], "", "", round(pw["billed"]), "", ""])
    headers = ["run", "calls", "longest", "read", "written", "billed", "compactions", "result"]
    for line in table(headers, rows).split("\n"):
        out("  " + line)
    out(f"  prompt tokens per call (anthropic): {figures['anthropic']['prompt_tokens']}")
    out(f"  prompt tokens per call (openai):    {figures['openai']['prompt_tokens']}")
    out(f"  prompt tokens per call (playwright): {pw['prompt_tokens']}")
    out(
        f"  tight budget ({TIGHT_BUDGET:,}): {tight.compactions} compaction(s), contexts from the "
        f"first one on {figures['tight']['contexts_after_compaction']}"
    )
    for who, split in figures["where"].items():
        total = sum(split.values())
        shares = ", ".join(
            f"{part} {cost:,.0f} ({cost / total:.0%})"
            for part, cost in sorted(split.items(), key=lambda kv: -kv[1])
        )
        out(f"  where {who} went ({total:,.0f} billed): {shares}")
    out(f"  answer: {ours.answer!r}; the panel showed: {ours.panel_cost}")
    out(
        f"  ratios: {figures['vs_playwright']:.3f}x the Playwright MCP replay "
        f"({figures['vs_playwright_warm']:.3f}x with the fixed prefix already cached: "
        f"{figures['anthropic']['billed_warm']:,.0f} against {pw['billed_warm']:,.0f}), "
        f"{figures['vs_today']:.3f}x today's loop; openai run cached "
        f"{figures['openai']['cached_read']:,} of "
        f"{sum(runs['openai'].contexts):,} prompt tokens"
    )
    return figures


def _model_steps(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per model call: whether a compaction came right before it."""
    calls: list[dict[str, Any]] = []
    compacted = False
    for step in steps:
        if step["kind"] == "compacted":
            compacted = True
        elif step["kind"] == "model":
            calls.append({"compacted": compacted})
            compacted = False
    return calls


def run(pattern: str | None, out: Callable[[str], None]) -> dict[str, Any]:
    """The section's entry point for ``python -m tests.bench --only tasks``."""
    return trio.run(_measure, out, pattern)
