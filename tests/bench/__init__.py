"""Benchmarks of Trimtab on the real-page corpus: ``python -m tests.bench`` (``make bench``).

This package holds what the benchmark modules share: where the corpus is and what it
holds, one Playwright on a thread of its own (the reference we compare against, on
the same system Chromium with the same flags), medians and plain-text tables.
"""

from __future__ import annotations

import concurrent.futures
import fnmatch
import importlib.metadata
import json
import os
import queue
import re
import statistics
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import attrs
import trio

from pycdp_bridge import browser_args, find_browser

if TYPE_CHECKING:
    from playwright.sync_api import Page

__all__ = [
    "CORPUS",
    "CORPUS_SECTIONS",
    "REPO",
    "CorpusPage",
    "PlaywrightWorker",
    "corpus_flows",
    "corpus_pages",
    "has_corpus",
    "median",
    "open_playwright",
    "require_corpus",
    "table",
]

T = TypeVar("T")

REPO = Path(__file__).resolve().parents[2]
# The corpus sits next to the repository and is never copied into it (TRIMTAB_CORPUS
# names another folder). Resolved, so a corpus reached through a symbolic link names
# its pages as the servers that serve it (from their resolved roots) do.
CORPUS = Path(os.environ.get("TRIMTAB_CORPUS") or REPO.parent / "shared" / "corpus").resolve()
#: The sections of ``python -m tests.bench`` that measure corpus pages; the others run
#: on our own fixture pages (routines runs its corpus tasks only when it is there).
CORPUS_SECTIONS = ("pages", "flows", "stability", "tasks", "mcp", "speed", "screenshot", "capture")
# The same window as `launch_browser`'s default, so both browsers lay pages out alike.
VIEWPORT = (1280, 800)
# How long Playwright's snapshot of one page may take.
SNAPSHOT_TIMEOUT_MS = 180_000


@attrs.frozen
class CorpusPage:
    """One HTML page of the corpus: a single page or one step of a flow."""

    id: str  # "pages/ebay-home-2017", "flows/books-toscrape/01-a-light-in-the-attic"
    path: Path
    kind: str  # the MANIFEST kind (a flow step has its flow's kind)
    css: str  # the MANIFEST css status
    flow: str | None = None

    @property
    def url(self) -> str:
        return self.path.resolve().as_uri()


def has_corpus() -> bool:
    """Whether the page corpus is where the bench expects it."""
    return (CORPUS / "MANIFEST.json").is_file()


def require_corpus() -> Path:
    """The corpus directory, or a clear error naming where it was expected."""
    if not has_corpus():
        raise SystemExit(f"error: the page corpus is absent (expected {CORPUS}/MANIFEST.json)")
    return CORPUS


def _manifest_items() -> list[dict[str, Any]]:
    manifest = json.loads((require_corpus() / "MANIFEST.json").read_text(encoding="utf-8"))
    items: list[dict[str, Any]] = manifest["items"]
    return items


def corpus_pages(pattern: str | None = None) -> list[CorpusPage]:
    """Every single page and every flow step, in MANIFEST order; ``pattern`` globs ids."""
    found: list[CorpusPage] = []
    for item in _manifest_items():
        if item["type"] == "page":
            found.append(
                CorpusPage(item["id"], CORPUS / item["path"], item["kind"], item["css"]["status"])
            )
        elif item["type"] == "flow":
            for step in item["pages"]:
                found.append(
                    CorpusPage(
                        f"{item['id']}/{step['name']}",
                        CORPUS / step["path"],
                        item["kind"],
                        step["css"]["status"],
                        flow=item["id"],
                    )
                )
    if pattern:
        found = [p for p in found if fnmatch.fnmatch(p.id, pattern)]
    missing = [p.id for p in found if not p.path.is_file()]
    if missing:
        raise SystemExit(f"error: corpus pages listed in MANIFEST.json are absent: {missing}")
    return found


def corpus_flows(pattern: str | None = None) -> dict[str, list[CorpusPage]]:
    """Flow id → its steps in navigation order (a flow is kept if any step matches)."""
    flows: dict[str, list[CorpusPage]] = {}
    for page in corpus_pages():
        if page.flow is not None:
            flows.setdefault(page.flow, []).append(page)
    if pattern:
        flows = {
            flow: steps
            for flow, steps in flows.items()
            if fnmatch.fnmatch(flow, pattern) or any(fnmatch.fnmatch(s.id, pattern) for s in steps)
        }
    return flows


def median(values: Iterable[float]) -> float:
    """The median, or NaN for no values (a table shows it as "-")."""
    data = [v for v in values if v == v]
    return statistics.median(data) if data else float("nan")


def table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A plain-text table: numbers right-aligned, floats with sensible precision."""

    def cell(value: object) -> str:
        if isinstance(value, float):
            if value != value:
                return "-"
            return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"
        return str(value)

    rows = [list(row) for row in rows]
    body = [[cell(v) for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in body:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    for raw, row in zip(rows, body, strict=True):
        lines.append(
            "  ".join(
                c.rjust(w) if isinstance(v, int | float) or _NUMERIC.fullmatch(c) else c.ljust(w)
                for v, c, w in zip(raw, row, widths, strict=True)
            ).rstrip()
        )
    return "\n".join(lines)


_NUMERIC = re.compile(r"[-+]?[\d.]+[%!]?")


# -- Playwright, the reference -------------------------------------------------------

_Job = tuple[Callable[["Page"], Any], "concurrent.futures.Future[Any]"]


class PlaywrightWorker:
    """Playwright's sync API on one dedicated thread.

    The benchmarks run on trio while Playwright's API is asyncio (or greenlets on the
    thread that started it), so one thread owns Playwright and runs the jobs it is
    given. It launches the system Chromium through ``executable_path`` (Playwright
    never downloads a browser here) with the same flags as ours and a fresh profile:
    Playwright's own default switches are left out (``ignore_default_args``), since
    some of them change how the browser works (``--disable-back-forward-cache``,
    ``--disable-renderer-backgrounding``, ``--disable-features=PaintHolding,...``).
    """

    #: How the reference snapshot is taken, named in every report.
    API = "page.aria_snapshot(mode='ai')"

    def __init__(self) -> None:
        self._jobs: queue.Queue[_Job | None] = queue.Queue()
        self._ready: concurrent.futures.Future[str] = concurrent.futures.Future()
        self._thread = threading.Thread(target=self._main, name="playwright", daemon=True)
        self.version = importlib.metadata.version("playwright")

    @property
    def label(self) -> str:
        return f"Playwright {self.version} {self.API}"

    @property
    def thread_id(self) -> int | None:
        """The native id of the thread Playwright's client runs on (for its CPU time)."""
        return self._thread.native_id

    def _main(self) -> None:
        from playwright.sync_api import sync_playwright

        try:
            with (
                tempfile.TemporaryDirectory(prefix="trimtab-bench-playwright-") as profile,
                sync_playwright() as playwright,
            ):
                # Only what our launcher passes too (`launch_browser`), the pipe and
                # the profile included, which Playwright would otherwise add itself.
                args = [
                    *browser_args("--remote-debugging-pipe", f"--user-data-dir={profile}"),
                    "about:blank",
                ]
                browser = playwright.chromium.launch(
                    executable_path=str(find_browser()), ignore_default_args=True, args=args
                )
                try:
                    width, height = VIEWPORT
                    context = browser.new_context(viewport={"width": width, "height": height})
                    page = context.new_page()
                    self._ready.set_result(browser.version)
                    while (job := self._jobs.get()) is not None:
                        call, future = job
                        try:
                            future.set_result(call(page))
                        except BaseException as exc:  # handed to the trio side
                            future.set_exception(exc)
                finally:
                    browser.close()
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
            else:
                raise

    async def start(self) -> str:
        self._thread.start()
        return await trio.to_thread.run_sync(self._ready.result)

    async def run(self, call: Callable[[Page], T]) -> T:
        """Run ``call(page)`` on the Playwright thread and return its result."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._jobs.put((call, future))
        return await trio.to_thread.run_sync(future.result, abandon_on_cancel=True)

    async def goto(self, url: str) -> None:
        await self.run(lambda page: page.goto(url, wait_until="load", timeout=60_000))

    async def snapshot(self) -> tuple[str, float]:
        """One ai-mode aria snapshot and its milliseconds, timed on Playwright's thread."""

        def take(page: Page) -> tuple[str, float]:
            started = time.perf_counter()
            # A page of 50,000 elements takes Playwright longer than its default 30 s
            # on a loaded machine.
            text = page.aria_snapshot(mode="ai", timeout=SNAPSHOT_TIMEOUT_MS)
            return text, (time.perf_counter() - started) * 1000

        return await self.run(take)

    async def stop(self) -> None:
        self._jobs.put(None)
        await trio.to_thread.run_sync(self._thread.join, abandon_on_cancel=True)


@asynccontextmanager
async def open_playwright() -> AsyncIterator[PlaywrightWorker]:
    """A started `PlaywrightWorker`, stopped (its browser closed) on exit."""
    worker = PlaywrightWorker()
    try:
        await worker.start()
        yield worker
    finally:
        with trio.CancelScope(shield=True):
            await worker.stop()
