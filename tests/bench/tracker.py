"""Benchmark: microseconds per call tracker check-and-record, for a hit and for a miss.

Run ``python -m tests.bench.tracker`` from the repository root. It fills a tracker
with 1 session, then with 1,000 sessions, of 50 cached calls each (the default cap),
and prints the median time of one `CallTracker.call` that is answered from cache
(hit) and of one that runs the tool and records it, evicting the oldest (miss). The
reference, measured in the same run, is one `json.dumps` of the same arguments with
sorted keys: the ratios are what to compare across machines. The bare `await run()`
of the tool is reported too, as the floor the wrapper adds to.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from collections.abc import Awaitable, Callable

import trio

from trimtab.tracker import CallTracker, ToolPolicy, fields_key

CALLS_PER_SESSION = 50
SESSION_COUNTS = (1, 1_000)
SAMPLES = 5_000
TOOLS = tuple(f"read_{index}" for index in range(5))
TABS = 8
RESULT = "<page>" + "x" * 200 + "</page>"


def make_tracker() -> CallTracker:
    return CallTracker(
        policies={tool: ToolPolicy(reads_page=True, key=fields_key("id")) for tool in TOOLS}
    )


async def tool_run() -> str:
    return RESULT


def session_name(index: int) -> str:
    return f"session-{index}"


async def fill(tracker: CallTracker, sessions: int) -> dict[str, tuple[str, str]]:
    """Make every session's call history full; returns each session's latest call."""
    latest: dict[str, tuple[str, str]] = {}
    for index in range(sessions):
        session = session_name(index)
        for call in range(CALLS_PER_SESSION):
            tool, element = TOOLS[call % len(TOOLS)], f"e{call}"
            await tracker.call(session, tool, {"id": element}, tool_run, tab=index % TABS)
            latest[session] = (tool, element)
    return latest


async def median_us(samples: list[Callable[[], Awaitable[object]]]) -> float:
    timings: list[float] = []
    for sample in samples:
        started = time.perf_counter_ns()
        await sample()
        timings.append((time.perf_counter_ns() - started) / 1_000)
    return statistics.median(timings)


async def measure(sessions: int, rng: random.Random) -> dict[str, float]:
    tracker = make_tracker()
    latest = await fill(tracker, sessions)
    picks = [rng.randrange(sessions) for _ in range(SAMPLES)]

    def miss(index: int, sample: int) -> Callable[[], Awaitable[object]]:
        session = session_name(index)
        tool, element = TOOLS[sample % len(TOOLS)], f"new{sample}"
        latest[session] = (tool, element)
        args = {"id": element}
        return lambda: tracker.call(session, tool, args, tool_run, tab=index % TABS)

    def hit(index: int) -> Callable[[], Awaitable[object]]:
        session = session_name(index)
        tool, element = latest[session]
        args = {"id": element}
        return lambda: tracker.call(session, tool, args, tool_run, tab=index % TABS)

    miss_us = await median_us([miss(index, n) for n, index in enumerate(picks)])
    before = tracker.statistics()
    hit_us = await median_us([hit(index) for index in picks])
    after = tracker.statistics()
    if after.hits - before.hits != SAMPLES:
        raise RuntimeError(f"expected {SAMPLES} hits, got {after.hits - before.hits}")
    return {"hit_us": hit_us, "miss_us": miss_us, "entries": float(after.entries)}


async def measure_all() -> dict[str, float]:
    rng = random.Random(7)

    async def dumps_args() -> str:
        return json.dumps({"id": "e42"}, sort_keys=True)

    figures: dict[str, float] = {
        "bare_run_us": await median_us([tool_run for _ in range(SAMPLES)]),
        "json_dumps_us": await median_us([dumps_args for _ in range(SAMPLES)]),
    }
    for sessions in SESSION_COUNTS:
        measured = await measure(sessions, rng)
        for name, value in measured.items():
            figures[f"{name}@{sessions}_sessions"] = value
    return figures


def run() -> dict[str, float]:
    """Measure and print the table; returns the figures, keyed e.g. `hit_us@1000_sessions`."""
    figures = trio.run(measure_all)
    reference = figures["json_dumps_us"]
    lines = [
        f"call tracker: median µs per call, {SAMPLES} samples, {CALLS_PER_SESSION} calls/session",
        f"{'sessions':>9} {'entries':>8} {'hit µs':>8} {'miss µs':>8} {'hit/ref':>8} "
        f"{'miss/ref':>8}",
    ]
    for sessions in SESSION_COUNTS:
        hit = figures[f"hit_us@{sessions}_sessions"]
        miss = figures[f"miss_us@{sessions}_sessions"]
        entries = figures[f"entries@{sessions}_sessions"]
        lines.append(
            f"{sessions:>9} {entries:>8.0f} {hit:>8.2f} {miss:>8.2f} "
            f"{hit / reference:>8.1f} {miss / reference:>8.1f}"
        )
    lines.append(
        f"reference: json.dumps of the arguments, {reference:.2f} µs; "
        f"bare `await run()` of the tool, {figures['bare_run_us']:.2f} µs"
    )
    sys.stdout.write("\n".join(lines) + "\n")
    return figures


if __name__ == "__main__":
    run()
