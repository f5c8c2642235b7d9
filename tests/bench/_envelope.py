"""The speed bench's ``envelope`` part: what one action pays for the envelope.

The headline action figure (``first``) clicks through the bare tool, with no request
guard, as the command line does. An agent's click goes through the host, which runs
it under the call's request guard (CDP's Fetch), the downloads hold, a trailing
window after it, and through the extension a gate (a browser rule keeping tabs that
open meanwhile from loading another site). This part clicks the same bench button
(`ENVELOPE_CLICKS` times on each of `ENVELOPE_PAGES` pages) three ways, and scrolls the
page (an action after which no trailing window stays) two ways, and traces each
action's commands (`pycdp_bridge.traced_commands`; through the relay, the host's
own trace, ``trimtab.calls`` at DEBUG in its log):

* **bare**: ``run_tool`` with no guard, over the pipe (the headline's click);
* **guarded**: ``run_tool`` with a guard as the host makes one for a click (its judge
  lets everything go: the page sends nothing), over the pipe;
* **relay**: the click through the link, the host and the extension's relay.

Before each guarded and relayed action the previous click's trailing window has ended
(`TRAILING_SECONDS`), as when a model takes seconds between two actions. Each action's
envelope commands (`ENVELOPE_COMMANDS`) are counted and timed: those on the answer's
path run one after the other, so their sum is what they add to it; those the host
sends in the background (`pycdp_bridge.off_the_path`) are counted apart, as far as
they were answered before the call's trace ended (a gate's lift after the answer is
not in it).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Final

import trio

from pycdp_bridge import PageTarget, SentCommand, launch_browser, tally, traced_commands
from tests.bench import CORPUS, CorpusPage, median
from tests.bench._linked import linked_browser
from trimtab.link import connect
from trimtab.tab import (
    TRAILING_SECONDS,
    Downloads,
    Guarding,
    PausedRequest,
    Ruling,
    Tab,
    Trailing,
    trailing_windows,
)
from trimtab.tools import _actions, run_tool

__all__ = ["BUTTON_JS", "ENVELOPE_COMMANDS", "envelope_lines", "measure_envelope"]

ENVELOPE_PAGES: Final = 3
ENVELOPE_CLICKS: Final = 5
# The commands the envelope sends for an action, over the pipe or through the relay
# (``tab_gate``: the extension's gate, a request of the relay rather than CDP).
ENVELOPE_COMMANDS: Final = frozenset(
    {
        "Fetch.enable",
        "Fetch.disable",
        "Fetch.continueRequest",
        "Fetch.failRequest",
        "Browser.setDownloadBehavior",
        "tab_gate",
        "tab_pass",
        # The action's input waiting for a gate set in the background (no command).
        "wait: gate",
    }
)
# A command every click sends several times, whose round trip shows what a relayed
# command costs against the pipe.
_PROBE: Final = "Runtime.evaluate"
_TIMEOUT: Final = 120.0
# The button the speed bench clicks (its handler changes its text), added to any page.
BUTTON_JS: Final = (
    "(() => { if (!document.getElementById('trimtab-bench')) {"
    " const b = document.createElement('button'); b.id = 'trimtab-bench';"
    " b.textContent = 'Trimtab bench button'; b.style.cssText ="
    " 'position:fixed;top:0;left:0;z-index:2147483647';"
    " b.onclick = () => { b.dataset.n = String(Number(b.dataset.n || 0) + 1);"
    " b.textContent = 'Trimtab bench button ' + b.dataset.n; };"
    " document.body.prepend(b); } return true; })()"
)

# Per click: {"ms": answer, "settle_ms": ..., "commands": {method: [count, ms]}}.
Click = dict[str, Any]


def _button(xml: str) -> str:
    for line in xml.splitlines():
        if "Trimtab bench button" in line and 'id="' in line:
            return line.split('id="')[1].split('"')[0]
    raise AssertionError("the bench button is not in the snapshot")


def _stages(
    started: float, ended: float, settles: list[tuple[float, float]], sent: list[SentCommand]
) -> dict[str, float]:
    """Where a direct click's time went, beside its settle: the round trips before its
    input (finding the element, checking what would take the click, the guard), and
    those after the settle with the host's own work (the pipeline, the diff)."""
    inputs = [c.sent for c in sent if c.method == "Input.dispatchMouseEvent"]
    first_input = min(inputs, default=started)
    settled = max((b for _, b in settles), default=ended)
    return {
        "before_input_ms": (first_input - started) * 1000,
        "before_input_commands": sum(1 for c in sent if c.sent < first_input),
        "after_settle_ms": (ended - settled) * 1000,
        "after_settle_commands": sum(1 for c in sent if c.sent >= settled),
        "after_settle_waiting_ms": _waiting([c for c in sent if c.sent >= settled]) * 1000,
    }


def _waiting(sent: list[SentCommand]) -> float:
    """Seconds during which at least one of the commands waited for its reply."""
    spans = sorted((c.sent, c.answered) for c in sent)
    total, reach = 0.0, float("-inf")
    for begin, end in spans:
        if end > reach:
            total += end - max(begin, reach)
            reach = end
    return total


async def _allow(request: PausedRequest, element: str | None) -> Ruling:
    """The bench's judge: the page sends nothing, and what it would is let go."""
    return Ruling(send=True)


async def _trailing_over() -> None:
    """Wait until no trailing window holds a tab (the previous click's has ended)."""
    while trailing_windows():
        await trio.sleep(0.05)


async def _direct(items: list[CorpusPage]) -> dict[str, list[Click]]:
    clicks: dict[str, list[Click]] = {"bare": [], "guarded": [], "guarded_scroll": []}
    settles: list[tuple[float, float]] = []  # (began, ended), perf_counter seconds
    original = _actions.settle

    async def timed(*args: Any, **kwargs: Any) -> bool:
        started = time.perf_counter()
        try:
            return await original(*args, **kwargs)
        finally:
            settles.append((started, time.perf_counter()))

    _actions.settle = timed  # type: ignore[assignment]
    try:
        async with launch_browser() as browser, trio.open_nursery() as nursery:
            page = await browser.new_page()
            for item in items:
                await page.navigate(item.url, timeout=60)
                await page.evaluate(BUTTON_JS)
                tab = Tab.open(page)
                button = _button((await tab.snapshot()).xml)
                for n in range(ENVELOPE_CLICKS):
                    await _trailing_over()
                    for way in ("bare", "guarded", "guarded_scroll"):
                        name, args = "click", {"id": button}
                        guard = None
                        if way != "bare":
                            # As the host makes the guard: a trailing window after a
                            # click, the downloads held beside the browser's folder.
                            await _trailing_over()
                            trailing = None
                            if way == "guarded":
                                trailing = Trailing(TRAILING_SECONDS, nursery, _allow, "b", [])
                            downloads = Downloads(folder=browser.downloads)
                            guard = Guarding(_allow, trailing=trailing, downloads=downloads)
                        if way == "guarded_scroll":
                            name, args = "scroll", {"direction": ("down", "up")[n % 2]}
                        settles.clear()
                        started = time.perf_counter()
                        with trio.fail_after(_TIMEOUT), traced_commands() as sent:
                            result = await run_tool(tab, name, args, guard=guard)
                        ended = time.perf_counter()
                        if result.is_error:
                            raise RuntimeError(f"{name}: {result.content[:300]}")
                        clicks[way].append(
                            {
                                "ms": (ended - started) * 1000,
                                "settle_ms": sum(b - a for a, b in settles) * 1000,
                                "commands": tally(sent),
                                **_stages(started, ended, settles, sent),
                            }
                        )
                await _trailing_over()
            nursery.cancel_scope.cancel()
    finally:
        _actions.settle = original  # type: ignore[assignment]
    return clicks


async def _relay(items: list[CorpusPage]) -> dict[str, list[Click]]:
    clicks: dict[str, list[Click]] = {"relay": [], "relay_scroll": []}
    async with (
        linked_browser("envelope") as linked,
        connect(linked.socket, linked.secret, {"name": "bench-envelope"}) as link,
    ):
        ext, server = linked.ext, linked.server
        log = Path(os.environ["TRIMTAB_LOG_DIR"]) / "host.log"
        for item in items:
            target, tab = await ext.open_tab(server.url(str(item.path.relative_to(CORPUS))))
            await ext.wait_loaded(tab)
            attached = await ext.browser.send(
                "Target.attachToTarget", {"targetId": target, "flatten": True}
            )
            page = PageTarget(ext.browser, target, str(attached["sessionId"]))
            await page.evaluate(BUTTON_JS)
            await ext.worker.evaluate(f"trimtab.agents.share({tab}).then(() => true)")
            first = await link.request("tool", tab=tab, name="capture_snapshot", args={})
            button = _button(str(first["content"]))
            for n in range(ENVELOPE_CLICKS):
                for way, name, args in (
                    ("relay", "click", {"id": button}),
                    ("relay_scroll", "scroll", {"direction": ("down", "up")[n % 2]}),
                ):
                    # The host's trailing window of the previous click has ended.
                    await trio.sleep(TRAILING_SECONDS + 0.3)
                    started = time.perf_counter()
                    with trio.fail_after(_TIMEOUT):
                        reply = await link.request("tool", tab=tab, name=name, args=args)
                    if reply["is_error"]:
                        raise RuntimeError(f"{name} through the relay: {reply['content'][:300]}")
                    clicks[way].append(
                        {
                            "ms": (time.perf_counter() - started) * 1000,
                            "host_ms": float(reply["host_ms"]),
                            "call": reply["call_id"],
                        }
                    )
            await ext.browser.send("Target.closeTarget", {"targetId": target})
        traced = _host_traces(log)
    for click in (c for way in clicks.values() for c in way):
        found = traced.get(click["call"])
        if found is None:
            raise RuntimeError(f"the host logged no trace of call {click['call']} in {log}")
        click["commands"] = found["commands"]
    return clicks


def _host_traces(log: Path) -> dict[int, dict[str, Any]]:
    """The host's call traces (``trimtab.calls`` at DEBUG), by call number."""
    traces: dict[int, dict[str, Any]] = {}
    marker = " trimtab.calls: "
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        if marker in line:
            trace = json.loads(line.split(marker, 1)[1])
            traces[int(trace["call"])] = trace
    return traces


def measure_envelope(items: list[CorpusPage]) -> dict[str, Any]:
    """Click the bench button the three ways on the first `ENVELOPE_PAGES` pages."""
    chosen = items[:ENVELOPE_PAGES]
    direct = trio.run(_direct, chosen)
    # The host the extension starts inherits this: it logs each call's trace.
    level = os.environ.get("TRIMTAB_LOG_LEVEL")
    os.environ["TRIMTAB_LOG_LEVEL"] = "DEBUG"
    try:
        relayed = trio.run(_relay, chosen)
    finally:
        if level is None:
            del os.environ["TRIMTAB_LOG_LEVEL"]
        else:
            os.environ["TRIMTAB_LOG_LEVEL"] = level
    return {"pages": [i.id for i in chosen], **direct, **relayed}


def _envelope_of(click: Click, background: bool = False) -> tuple[int, float]:
    """A click's envelope commands (and waits) on the answer's path: how many, and
    their milliseconds (``background``: those it did not wait for)."""
    at = 2 if background else 0
    methods = {m: v for m, v in click["commands"].items() if m in ENVELOPE_COMMANDS}
    # A wait is time on the path, and no round trip of its own.
    trips = sum(v[at] for m, v in methods.items() if not m.startswith("wait:"))
    return int(trips), sum(v[at + 1] for v in methods.values())


def _per_method(clicks: list[Click]) -> str:
    """Median count and milliseconds per click of each envelope command on the answer's
    path, and of those sent in the background."""
    names = sorted({m for c in clicks for m in c["commands"] if m in ENVELOPE_COMMANDS})
    parts = []
    for name in names:
        counts = [c["commands"].get(name, [0, 0.0, 0, 0.0]) for c in clicks]
        on_path = median(v[0] for v in counts)
        if on_path:
            parts.append(f"{name} {on_path:g}x {median(v[1] for v in counts):.1f} ms")
        behind = median(v[2] for v in counts)
        if behind:
            parts.append(
                f"{name} {behind:g}x {median(v[3] for v in counts):.1f} ms in the background"
            )
    return ", ".join(parts) or "none"


def _probe_ms(clicks: list[Click]) -> float:
    """The mean round trip of `_PROBE` over the clicks."""
    count = sum(c["commands"].get(_PROBE, [0, 0.0])[0] for c in clicks)
    ms = sum(c["commands"].get(_PROBE, [0, 0.0, 0, 0.0])[1] for c in clicks)
    return ms / count if count else float("nan")


def envelope_lines(figures: dict[str, Any]) -> tuple[list[str], dict[str, float]]:
    """The part's lines (and its summary figures): per click, medians."""
    bare, guarded, relay = figures["bare"], figures["guarded"], figures["relay"]

    def stage(key: str, clicks: list[Click]) -> float:
        return median(c[key] for c in clicks)

    without = {
        way: median(c["ms"] - c["settle_ms"] for c in figures[way]) for way in ("bare", "guarded")
    }
    summary = {
        "bare_without_settle_ms": without["bare"],
        "guarded_without_settle_ms": without["guarded"],
        "bare_before_input_ms": stage("before_input_ms", bare),
        "bare_before_input_commands": stage("before_input_commands", bare),
        "bare_after_settle_ms": stage("after_settle_ms", bare),
        "relay_host_ms": median(c["host_ms"] for c in relay),
        "direct_probe_ms": _probe_ms(guarded),
        "relay_probe_ms": _probe_ms(relay),
    }
    scrolls = {"guarded_scroll": figures["guarded_scroll"], "relay_scroll": figures["relay_scroll"]}
    for way, clicks in (("guarded", guarded), ("relay", relay), *scrolls.items()):
        for behind, label in ((False, ""), (True, "_background")):
            spent = [_envelope_of(c, behind) for c in clicks]
            summary[f"{way}_envelope{label}_commands"] = median(n for n, _ in spent)
            summary[f"{way}_envelope{label}_ms"] = median(ms for _, ms in spent)
    e = summary
    lines = [
        f"envelope: per click, median of {len(bare)} ({ENVELOPE_CLICKS} on each of"
        f" {len(figures['pages'])} pages): the answer without the settle over the pipe, bare"
        f" {without['bare']:.1f} ms, with the host's guard {without['guarded']:.1f} ms",
        f"  the bare click's stages: before its input {e['bare_before_input_commands']:g}"
        f" round trips, {e['bare_before_input_ms']:.1f} ms (with the guard"
        f" {stage('before_input_ms', guarded):.1f} ms); after the settle"
        f" {stage('after_settle_commands', bare):g} round trips waited on for"
        f" {stage('after_settle_waiting_ms', bare):.1f} ms of {e['bare_after_settle_ms']:.1f} ms"
        " (the rest is the host's own work: the pipeline, the diff)",
        f"  the guard over the pipe: {e['guarded_envelope_commands']:g} round trips on the"
        f" answer's path, {e['guarded_envelope_ms']:.1f} ms: {_per_method(guarded)}",
        f"  through the relay (the host's trace): {e['relay_envelope_commands']:g} round trips"
        f" on the answer's path, {e['relay_envelope_ms']:.1f} ms, and"
        f" {e['relay_envelope_background_commands']:g} in the background"
        f" ({e['relay_envelope_background_ms']:.1f} ms): {_per_method(relay)}; the host's"
        f" whole call {e['relay_host_ms']:.0f} ms",
        f"  a scroll (no trailing window): over the pipe {e['guarded_scroll_envelope_commands']:g}"
        f" round trips on its path, {e['guarded_scroll_envelope_ms']:.1f} ms:"
        f" {_per_method(scrolls['guarded_scroll'])}; through the relay"
        f" {e['relay_scroll_envelope_commands']:g}, {e['relay_scroll_envelope_ms']:.1f} ms:"
        f" {_per_method(scrolls['relay_scroll'])}",
        f"  one {_PROBE} round trip: {e['relay_probe_ms']:.1f} ms through the relay,"
        f" {e['direct_probe_ms']:.1f} ms over the pipe (mean)",
    ]
    return lines, summary
