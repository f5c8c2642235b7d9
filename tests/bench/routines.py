"""``--only routines``: a task done once, then run again as a routine without the model.

Each task of the tasks bench (``tests/bench/tasks.py``, on the corpus) and a shop of
our own (``tests/pages/routines/``: quantities, a row among equals, a password, an
order the person is asked about) is done once as an outside agent through the link
of a browser with the real extension and host, step by step as the tasks bench's
scripted model does it (each element id found in what the agent was sent). The
session is saved as a routine (``routine_save``), then run (``routine_run``) from a
new connection, twice: on the same pages, and on **perturbed** pages, changed as
sites change (the corpus: a cookie banner above everything and every id the page does
not refer to renamed; the shop: also its rows reordered, one more row, its buttons'
words in capitals, and its order button renamed "Buy now", which no replay finds by
what the recording says). The person, in the side panel, says yes to every
question, so a replay asks what the first run asked.

Per task: model calls and the model's input tokens (with no prompt cache: the fixed
prefix and every answer so far, on every call) of the first run, against the
replays' (none while no step needs help), whether each run ended as the first did
(its answer found again), and the time of each. The first run has no model latency
here (the script decides at once), so ``replay_vs_first_time`` compares the tools'
own time only; with a real model's seconds per call the replay's share is smaller.
A run that needs help at a step on the same pages ends there, the step counted as
``replay_model_calls``. On perturbed pages a step the task has a heal for (`HEALS`: what
a model does there, scripted as the first run is) is done by that script through the
link, its model calls and input tokens counted as the run's, and the run goes on with
``keep_healed`` (``healed_steps`` counts them); then the perturbed pages are run once
more ("kept, again"): the kept step replays without a model.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

import attrs
import trio

from pycdp_bridge import TargetClosedError
from tests.bench import has_corpus, median, table
from tests.bench.tasks import (
    FIXTURES,
    LOCAL_ONLY,
    TASKS,
    Step,
    Task,
    answer_http,
    read_request,
    respond,
    start_url,
)
from tests.support.e2e import ExtensionBrowser, answer_question, launch_with_extension
from trimtab.link import LinkClient, LinkError, connect, list_endpoints, read_secret
from trimtab.pipeline import count_tokens

__all__ = ["run"]

_ID: Final = r'id="([^"]+)"'
SHOP: Final = Task(
    "routines-shop",
    "order in a shop: a quantity, a row among equals, a password, a submit",
    f"{FIXTURES}/routines/shop.html",
    "Order 2 headlamps for Ada; my account password is hunter2.",
    (
        Step("capture_snapshot"),
        Step("type", rf'Quantity <input {_ID} type="number"', {"text": "2"}),
        Step("click", rf"Headlamp \| 24\.00 \| <button {_ID}>Add to cart</button>"),
        Step("click", rf"<a {_ID}>Checkout</a>"),
        Step("type", rf"Name <input {_ID}", {"text": "Ada"}),
        Step("type", rf'Account password <input {_ID} type="password"', {"text": "hunter2"}),
        Step("click", rf"<button {_ID} type=\"submit\">Place order</button>"),
    ),
    r"Total: (\$[\d.]+)",
)
# What a run of a routine is given: the secrets the first run typed (never stored),
# in the order its secret parameters were found.
SECRETS: Final[Mapping[str, tuple[str, ...]]] = {
    "routines-shop": ("hunter2",),
    "irctc-login-form": ("correct horse",),
    "irctc-login-form-fill": ("correct horse",),
}
SHOP_PERTURBED: Final = "rename,reorder,row,banner,case,wording"
# What a model does for a step a perturbed page changed past finding, per task: it
# looks, finds the element by what it now says, and acts (scripted as `Task` steps).
HEALS: Final[Mapping[str, tuple[Step, ...]]] = {
    "routines-shop": (
        Step("capture_snapshot"),
        Step("find", None, {"text": "Buy now"}),
        Step("click", rf'<button {_ID} type="submit">Buy now</button>'),
    ),
}
# Steps healed in one run at most (issue 38's bound on a routine's model steps).
MAX_HEALED: Final = 10
PERTURB_SCRIPT: Final = Path(__file__).parent / "js" / "perturb-site.js"
PERTURB_PATH: Final = "/__trimtab_perturb.js"
RUN_TIMEOUT: Final = 300.0


@attrs.define
class Site:
    """The corpus (and our fixtures) on 127.0.0.1, perturbed while ``perturbed``."""

    perturbed: bool = False

    async def serve(
        self,
        *,
        fixtures: bool = False,
        task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        async def handle(stream: trio.SocketStream) -> None:
            async with stream:
                try:
                    method, target, _, body = await read_request(stream)
                    if target == PERTURB_PATH:
                        answer = (
                            "200 OK",
                            {"Content-Type": "text/javascript"},
                            PERTURB_SCRIPT.read_bytes(),
                        )
                    else:
                        answer = answer_http(method, target, body, fixtures=fixtures)
                    await respond(stream, *self._changed(*answer))
                except (EOFError, trio.BrokenResourceError, ValueError):
                    return

        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        task_status.started(listeners[0].socket.getsockname()[1])
        await trio.serve_listeners(handle, listeners)

    def _changed(
        self, status: str, headers: dict[str, str], body: bytes
    ) -> tuple[str, dict[str, str], bytes]:
        if not self.perturbed or not headers.get("Content-Type", "").startswith("text/html"):
            return status, headers, body
        script = f'<script src="{PERTURB_PATH}" defer></script>'.encode()
        at = body.lower().rfind(b"</body>")
        return status, headers, (body[:at] + script + body[at:]) if at >= 0 else body + script


@attrs.frozen
class First:
    """The task done once by the scripted agent."""

    calls: int  # model calls: one per step, and the one that answers
    tokens: int  # the model's input tokens over the run, without a prompt cache
    seconds: float
    answer: str | None


@attrs.frozen
class Replayed:
    status: str
    seconds: float
    answer: str | None
    why: str = ""
    healed: int = 0  # steps a (scripted) model did, kept in the routine
    model_calls: int = 0  # the model calls those took
    tokens: int = 0  # their input tokens, without a prompt cache


def _args(step: Step, seen: str) -> dict[str, Any]:
    """The step's arguments with its element ids found in what the agent was sent."""
    args = dict(step.args)
    if step.pattern is not None:
        found = re.search(step.pattern, seen)
        if found is None:
            raise LookupError(f"{step.tool}: no match for {step.pattern!r}")
        value = found.group(1)
        args[step.into] = int(value) if step.into == "tab" else value
    if step.fields:
        matches = [re.search(pattern, seen) for pattern, _, _ in step.fields]
        if any(m is None for m in matches):
            raise LookupError(f"fill: no match for one of {[p for p, _, _ in step.fields]}")
        args["fields"] = [
            {"id": m.group(1), "value": value}
            for m, (_, value, _) in zip(matches, step.fields, strict=True)
            if m is not None
        ]
    return args


async def _tool(link: LinkClient, tab: int, name: str, args: Mapping[str, Any]) -> str:
    reply = await link.request("tool", tab=tab, name=name, args=dict(args))
    if reply["is_error"]:
        raise RuntimeError(f"{name} failed: {str(reply['content'])[:300]}")
    return str(reply["content"])


async def _first_run(link: LinkClient, tab: int, task: Task, prefix: int) -> First:
    """The task's steps as its scripted model takes them, through the link."""
    results: list[str] = []
    tokens = 0
    started = time.perf_counter()
    for step in task.model_steps:
        seen = "\n".join(reversed(results))
        tokens += prefix + sum(count_tokens(r) for r in results)
        try:
            args = _args(step, seen)
        except LookupError:
            if step.fallback is None and step.expand is None:
                raise
            # What the tasks bench's model does when a page hid it: look it up first.
            helper = (
                ("find", {"text": step.fallback})
                if step.fallback
                else ("expand", {"region": step.expand})
            )
            results.append(await _tool(link, tab, *helper))
            args = _args(step, "\n".join(reversed(results)))
        results.append(await _tool(link, tab, step.tool, args))
    seen = "\n".join(reversed(results))
    if re.search(task.answer, seen) is None:
        results.append(await _tool(link, tab, "expand", {"region": task.answer_region}))
        seen = "\n".join(reversed(results))
    tokens += prefix + sum(count_tokens(r) for r in results)  # the call that answers
    found = re.search(task.answer, seen)
    return First(
        len(task.model_steps) + 1,
        tokens,
        time.perf_counter() - started,
        found.group(1) if found else None,
    )


async def _replay(
    link: LinkClient,
    tab: int,
    task: Task,
    routine: Mapping[str, Any],
    *,
    heal: bool = False,
    prefix: int = 0,
) -> Replayed:
    """A run of the task's routine; with ``heal``, a step it stops at that the task
    has a heal for is done by that script and kept (``keep_healed``), and the run goes
    on."""
    secrets = [p["name"] for p in routine["parameters"] if p["kind"] == "secret"]
    params = dict(zip(secrets, SECRETS.get(task.name, ()), strict=True))
    started = time.perf_counter()
    with trio.fail_after(RUN_TIMEOUT):
        ran = await link.request("routine_run", tab=tab, name=task.name, params=params)
    healed = calls = tokens = 0
    script = HEALS.get(task.name) if heal else None
    while ran["status"] == "needs_help" and script is not None and healed < MAX_HEALED:
        # The model is handed the run's words (the step, why, the plan), then acts.
        results: list[str] = []
        for step in script:
            tokens += prefix + count_tokens(ran["content"]) + sum(map(count_tokens, results))
            seen = "\n".join(reversed(results))
            results.append(await _tool(link, tab, step.tool, _args(step, seen)))
        tokens += prefix + count_tokens(ran["content"]) + sum(map(count_tokens, results))
        calls += len(script) + 1  # a call per step, and the one that answers
        healed += 1
        with trio.fail_after(RUN_TIMEOUT):
            ran = await link.request(
                "routine_run", tab=tab, name=task.name, params=params,
                start_at=int(ran["at"]) + 1, keep_healed=True,
            )  # fmt: skip
    seconds = time.perf_counter() - started
    found = re.search(task.answer, "\n".join(ran["results"]))
    why = "" if ran["status"] == "done" else str(ran["content"]).split("\n")[1][:200]
    answer = found.group(1) if found else None
    return Replayed(str(ran["status"]), seconds, answer, why, healed, calls, tokens)


async def _person(ext: ExtensionBrowser) -> None:
    """The person in the side panel: yes to every question (a tab, a submit). The
    panel belongs to the tab it was opened beside, so it is opened again when a task's
    tab takes its place."""
    panel = await ext.open_side_panel()
    while True:
        try:
            await answer_question(panel, allow=True)
        except TargetClosedError:
            panel = await ext.open_side_panel()
        await trio.sleep(0.2)


async def _clear(ext: ExtensionBrowser, target: str, perturb: str = "") -> None:
    attached = await ext.browser.send(
        "Target.attachToTarget", {"targetId": target, "flatten": True}
    )
    expression = (
        "localStorage.clear(); sessionStorage.clear(); "
        f"localStorage.setItem('perturb', {json.dumps(perturb)})"
    )
    await ext.browser.send(
        "Runtime.evaluate", {"expression": expression}, session_id=str(attached["sessionId"])
    )


async def _task(
    ext: ExtensionBrowser,
    link_to: Callable[[str], Any],
    ports: tuple[int, int],
    task: Task,
    site: Site,
    prefix: int,
) -> dict[str, Any]:
    target, tab = await ext.open_tab(start_url(task, ports))
    await ext.wait_loaded(tab)
    await ext.worker.evaluate(f"trimtab.agents.share({tab}).then(() => true)")
    row: dict[str, Any] = {"task": task.name}
    async with link_to(f"{task.name}-first") as link:
        first = await _first_run(link, tab, task, prefix)
        row["first"] = attrs.asdict(first)
        try:
            saved = await link.request(
                "routine_save", name=task.name, task=task.prompt, replace=True
            )
        except LinkError as exc:
            row["not_saved"] = exc.message
            return row
    for kind, perturbed in (("replay", False), ("perturbed", True), ("again", True)):
        if kind == "again" and not row["perturbed"]["healed"]:
            break  # nothing was kept: the perturbed run says it all
        # Each run starts from the state the first did (what the page stored is gone).
        await _clear(ext, target, SHOP_PERTURBED if perturbed and task is SHOP else "")
        site.perturbed = perturbed and task is not SHOP
        async with link_to(f"{task.name}-{kind}") as link:
            replayed = await _replay(
                link, tab, task, saved["routine"], heal=kind == "perturbed", prefix=prefix
            )
        site.perturbed = False
        row[kind] = attrs.asdict(replayed) | {
            "ok": replayed.status == "done" and replayed.answer == first.answer
        }
    # The tab stays open: closing a window's last tab would close the side panel,
    # where the person answers.
    return row


async def _measure(pattern: str | None) -> dict[str, Any]:
    tasks = [
        t
        for t in (*TASKS, SHOP)
        if pattern is None or re.fullmatch(pattern.replace("*", ".*"), t.name)
    ]
    if not has_corpus():
        tasks = [t for t in tasks if t.start.startswith(FIXTURES)]
    site = Site()
    rows = []
    with tempfile.TemporaryDirectory(prefix="tb-") as folder:
        runtime = Path(folder) / "run"
        runtime.mkdir(mode=0o700)
        env = {"XDG_RUNTIME_DIR": str(runtime), "XDG_STATE_HOME": str(Path(folder) / "state")}
        environ = dict(os.environ)
        os.environ.update(env, TRIMTAB_LOG_DIR=str(Path(folder) / "logs"))
        try:
            async with trio.open_nursery() as nursery:
                corpus = await nursery.start(site.serve)
                provider = await nursery.start(
                    lambda task_status: site.serve(fixtures=True, task_status=task_status)
                )
                async with launch_with_extension(
                    Path(folder) / "profile", extra_args=(LOCAL_ONLY,)
                ) as ext:
                    with trio.fail_after(60):
                        while not list_endpoints(runtime / "trimtab"):
                            await trio.sleep(0.05)
                    [endpoint] = [e for e in list_endpoints(runtime / "trimtab") if e.alive]
                    secret = read_secret(Path(env["XDG_STATE_HOME"]) / "trimtab" / "link-secret")

                    def link_to(session: str) -> Any:
                        return connect(
                            endpoint.socket, secret, {"name": "bench-routines"}, session=session
                        )

                    async with link_to("prefix") as link:
                        catalogue = await link.request("tools")
                    prefix = count_tokens(json.dumps(catalogue["tools"]) + catalogue["format"])
                    # The person answers while the browser is open, and stops before it quits.
                    async with trio.open_nursery() as answering:
                        answering.start_soon(_person, ext)
                        for task in tasks:
                            try:
                                row = await _task(
                                    ext, link_to, (corpus, provider), task, site, prefix
                                )
                            except Exception as exc:
                                # (a link error arrives inside the connection's exception group)
                                row = {"task": task.name, "failed": _reason(exc)}
                            rows.append(row)
                        answering.cancel_scope.cancel()
                nursery.cancel_scope.cancel()
        finally:
            os.environ.clear()
            os.environ.update(environ)
    return {"tasks": rows}


def _reason(exc: BaseException) -> str:
    """The innermost error's words (trio wraps a task's error in exception groups)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


def _run_cell(ran: Mapping[str, Any]) -> str:
    same = "same answer" if ran["ok"] else "NOT the same"
    healed = ran.get("healed", 0)
    model = (
        f" ({healed} step{'s' if healed > 1 else ''} healed: {ran['model_calls']} model "
        f"calls, {ran['tokens']} tokens; kept)"
        if healed
        else ""
    )
    return f"{ran['status']}{model}, {same}, {ran['seconds']:.1f}s"


def _again_cell(row: Mapping[str, Any]) -> str:
    """The perturbed pages run once more after a heal was kept: its model calls (none
    while no step needs help)."""
    again = row.get("again")
    if again is None:
        return "-"
    if again["status"] != "done":
        return _run_cell(again)
    return "0 model calls, " + _run_cell(again)


def run(pattern: str | None, out: Callable[[str], None]) -> dict[str, Any]:
    """The section's entry point for ``python -m tests.bench --only routines``."""
    result = trio.run(_measure, pattern)
    rows = result["tasks"]
    lines = []
    for row in rows:
        if "failed" in row:
            lines.append((row["task"], "-", "-", "-", "failed", "", "", row["failed"][:100]))
            continue
        first = row["first"]
        if "not_saved" in row:
            lines.append(
                (
                    row["task"],
                    first["calls"],
                    first["tokens"],
                    f"{first['seconds']:.1f}",
                    "not saved",
                    "",
                    "",
                    "",
                )
            )
            continue
        replay, perturbed = row["replay"], row["perturbed"]
        lines.append(
            (
                row["task"],
                first["calls"],
                first["tokens"],
                f"{first['seconds']:.1f}",
                _run_cell(replay),
                _run_cell(perturbed),
                _again_cell(row),
                perturbed["why"],
            )
        )
    headers = (
        "task",
        "first: model calls",
        "model input tokens",
        "s",
        "replay (no model)",
        "perturbed",
        "perturbed again, heal kept",
        "why it stopped",
    )
    for line in table(headers, lines).splitlines():
        out(line)
    replayed = [r for r in rows if "replay" in r]
    replay_ok = sum(r["replay"]["ok"] for r in replayed)
    perturbed_ok = sum(r["perturbed"]["ok"] for r in replayed)
    # A step a run hands back is one a model must do: on the same pages that is a
    # model call the replay needed; on perturbed pages, a step healed.
    needed = sum(r["replay"]["status"] == "needs_help" for r in replayed)
    # On perturbed pages: the steps a model did (kept), and those left needing one.
    healed = sum(
        r["perturbed"]["healed"] + (r["perturbed"]["status"] == "needs_help") for r in replayed
    )
    ratios = [r["replay"]["seconds"] / r["first"]["seconds"] for r in replayed if r["replay"]["ok"]]
    ratio = median(ratios) if ratios else float("nan")
    for row in rows:
        if "not_saved" in row:
            out(f"{row['task']}: not saved as a routine: {row['not_saved']}")
    out(
        f"SUMMARY routines={len(rows)} replay_ok={replay_ok} perturbed_ok={perturbed_ok} "
        f"replay_model_calls={needed} healed_steps={healed} replay_vs_first_time={ratio:.2f}"
    )
    return result
