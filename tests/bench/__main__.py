"""``python -m tests.bench`` (``make bench``): every benchmark, one JSON file of figures.

Runs pages, flows, scaling, stability, tasks, actions, mcp, speed, injection, prefix,
screenshot, tabs, routines and concurrency (this package), then
``tests.bench.capture``
and ``tests.bench.tracker`` where they offer a ``run()``, prints their tables and
writes every figure to ``bench-results/bench-<timestamp>.json`` so runs can be
compared. Each section's SUMMARY lines (for capture and tracker, what they print)
also replace its block of the measurements page, ``tests/bench/README.md``.
``--only pages,flows`` picks sections; ``--pages GLOB`` subsets the corpus by item id
(``'pages/e*'``, ``'*books*'``), or the tasks or attacks by name (``'*ietf*'``,
``'mail-*'``); a subset's figures are not the page's, so such a run (or a speed run of
some parts, ``TRIMTAB_BENCH_SPEED``) leaves the page as it is.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import inspect
import io
import json
import math
import os
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TextIO

import trio

from tests.bench import CORPUS, CORPUS_SECTIONS, REPO, has_corpus
from tests.bench._page import PAGE, local_paths_named, write_block
from trimtab.wire import collect_less_often

OURS = (
    "pages",
    "flows",
    "scaling",
    "stability",
    "tasks",
    "actions",
    "mcp",
    "speed",
    "injection",
    "prefix",
    "screenshot",
    "tabs",
    "routines",
    "concurrency",
)
THEIRS = ("capture", "tracker")
SECTIONS = (*OURS, *THEIRS)


def sections_to_run(only: str | None, corpus_here: bool) -> tuple[list[str], str | None]:
    """The sections a run measures, in order, and the line that says which were left
    out because the page corpus is absent (None: nothing was).

    Every section by default: without the corpus, those that need it are left out
    and the rest run. Sections named with ``--only`` must all be able to run.
    """
    if only is None:
        chosen = list(SECTIONS)
    else:
        chosen = [s.strip() for s in only.split(",") if s.strip()]
        unknown = [s for s in chosen if s not in SECTIONS]
        if unknown:
            raise ValueError(f"unknown sections {unknown}; choose from {', '.join(SECTIONS)}")
    needing = [s for s in chosen if s in CORPUS_SECTIONS]
    if corpus_here or not needing:
        return [s for s in SECTIONS if s in chosen], None
    if only is not None:
        raise ValueError(
            f"the page corpus is absent (expected {CORPUS}/MANIFEST.json); "
            f"{', '.join(needing)} measure its pages"
        )
    running = [s for s in SECTIONS if s in chosen and s not in needing]
    return running, (
        f"skipped {', '.join(needing)}: the page corpus is absent (expected at {CORPUS})"
    )


def _jsonable(value: Any) -> Any:
    """NaN becomes null (JSON has no NaN); anything else unknown becomes its repr."""
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, str | int | bool):
        return value
    return repr(value)


class _Tee(io.TextIOBase):
    """Standard output that also keeps what it is given."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.kept = io.StringIO()

    def write(self, text: str) -> int:
        self.kept.write(text)
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()


def _run_theirs(name: str, kept: list[str]) -> Any:
    """Another engineer's benchmark: its ``run()``, sync or async, if it has one.

    It prints its figures instead of SUMMARY lines: those printed lines go to
    ``kept``, for its block of the measurements page.
    """
    try:
        module = importlib.import_module(f"tests.bench.{name}")
    except ModuleNotFoundError:
        print(f"{name}: tests/bench/{name}.py is absent; skipped")
        return {"skipped": "module absent"}
    run = getattr(module, "run", None)
    if run is None:
        print(f"{name}: tests/bench/{name}.py has no run(); skipped")
        return {"skipped": "no run()"}
    tee = _Tee(sys.stdout)
    with contextlib.redirect_stdout(tee):
        result = trio.run(run) if inspect.iscoroutinefunction(run) else run()
    kept.extend(line for line in tee.kept.getvalue().strip("\n").split("\n"))
    return result if result is not None else {}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench", description=__doc__)
    parser.add_argument(
        "--only", default=None, help=f"comma-separated sections of {SECTIONS} (default: all)"
    )
    parser.add_argument("--pages", metavar="GLOB", help="only corpus items whose id matches")
    args = parser.parse_args(argv)
    # Snapshots are taken here, in the bench's process: under the collector setting
    # of the processes that take them for a person (the host, the CLI).
    collect_less_often()
    try:
        chosen, skipped = sections_to_run(args.only, has_corpus())
    except ValueError as exc:
        parser.error(str(exc))
    if skipped is not None:
        print(skipped, flush=True)

    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    results: dict[str, Any] = {
        "started": stamp,
        "argv": sys.argv[1:] if argv is None else argv,
        "sections": {},
        "seconds": {},
    }
    summary: list[str] = []

    in_summary = False

    def out(line: str) -> None:
        # SUMMARY lines, and the indented detail lines right after them, are
        # repeated at the end and kept in the JSON.
        nonlocal in_summary
        print(line, flush=True)
        text = line.strip("\n")
        if text.startswith("SUMMARY"):
            in_summary = True
        elif not text.startswith("  "):
            in_summary = False
        if in_summary:
            summary.append(text)

    for section in chosen:
        print(f"\n===== {section} =====", flush=True)
        started = time.perf_counter()
        first_line = len(summary)
        if section in OURS:
            module = importlib.import_module(f"tests.bench.{section}")
            runner: Callable[..., Any] = module.run
            results["sections"][section] = runner(args.pages, out)
        else:
            printed: list[str] = []
            results["sections"][section] = _run_theirs(section, printed)
            summary.extend(printed)
        results["seconds"][section] = round(time.perf_counter() - started, 1)
        lines = summary[first_line:]
        subset = args.pages is not None or (
            section == "speed" and os.environ.get("TRIMTAB_BENCH_SPEED", "").strip()
        )
        if lines and not subset:
            load = os.getloadavg()[0]
            when = f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, load average {load:.1f}"
            named = {CORPUS: "../shared/corpus", REPO: "."}
            write_block(section, [local_paths_named(line, named) for line in lines], when)
            print(f"{section}: its block of {PAGE.relative_to(REPO)} is refreshed", flush=True)

    results["summary"] = summary
    folder = REPO / "bench-results"
    folder.mkdir(exist_ok=True)
    path = folder / f"bench-{stamp}.json"
    path.write_text(json.dumps(_jsonable(results), indent=1, ensure_ascii=False) + "\n")
    print("\n===== summary =====")
    if skipped is not None:
        print(skipped)
    for line in summary:
        print(line)
    timing = ", ".join(f"{k} {v:.0f}s" for k, v in results["seconds"].items())
    print(f"sections took: {timing}")
    print(f"figures written to {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
