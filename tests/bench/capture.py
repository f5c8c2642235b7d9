"""Benchmark: capture of the largest corpus page, per CDP call and in total.

Run ``python -m tests.bench.capture [PATH]`` from the repository root; PATH is an HTML
file (default: the corpus page with the most elements, from its MANIFEST.json). It
prints medians over 5 runs of: each CDP call of the capture run alone, the default
capture (``DOM.getDocument`` + ``DOMSnapshot`` + AX tree, concurrently), the capture
without the AX tree and without the snapshot, and the size of the model.

``python -m tests.bench.capture --versus [GLOB]`` instead times the first snapshot of
every corpus page and flow step as the product takes it (a new `SnapshotMemory`'s
snapshot: capture, pipeline, XML; warm browser, direct transport) against Playwright's
ai-mode aria snapshot of the same page in the same run, medians of 5 each, with the
capture's calls broken down, and prints the ratios (issue 14's first target; ``--only
speed`` of ``python -m tests.bench`` reports all of its targets).
"""

from __future__ import annotations

import json
import pickle
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import trio

from pycdp_bridge import PageModel, PageTarget, capture, launch_browser, protocol
from pycdp_bridge._capture import SNAPSHOT_STYLES
from tests.bench import CORPUS, PlaywrightWorker, corpus_pages, open_playwright, table
from trimtab.tab import SnapshotMemory, SnapshotOptions

RUNS = 5


def largest_corpus_page() -> Path:
    manifest = json.loads((CORPUS / "MANIFEST.json").read_text())
    item = max(manifest["items"], key=lambda i: i.get("stats", {}).get("elements", 0))
    return CORPUS / str(item["path"])


async def median_seconds(call: Callable[[], Awaitable[Any]]) -> float:
    samples = []
    for _ in range(RUNS):
        started = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


async def bench(path: Path) -> dict[str, Any]:
    """Print the capture figures of one page and return them (milliseconds, sizes)."""
    figures: dict[str, Any] = {"page": str(path)}
    async with launch_browser() as browser:
        page: PageTarget = await browser.new_page(path.resolve().as_uri(), timeout=60)
        print(f"page: {path}")
        alone = {
            "DOM.getDocument": lambda: page.execute(protocol.dom_get_document()),
            "DOMSnapshot.captureSnapshot": lambda: page.execute(
                protocol.dom_snapshot_capture_snapshot(SNAPSHOT_STYLES)
            ),
            "Accessibility.getFullAXTree": lambda: page.execute(
                protocol.accessibility_get_full_ax_tree()
            ),
            "Page.getLayoutMetrics": lambda: page.execute(protocol.page_get_layout_metrics()),
        }
        print(f"\nmedian of {RUNS} runs, each call alone:")
        for name, call in alone.items():
            figures[f"{name}_ms"] = await median_seconds(call) * 1000
            print(f"  {name:32s} {figures[f'{name}_ms']:8.1f} ms")
        variants: dict[str, Callable[[], Awaitable[PageModel]]] = {
            "capture (default)": lambda: capture(page),
            "capture(ax='interactive')": lambda: capture(page, ax="interactive"),
            "capture(ax=False)": lambda: capture(page, ax=False),
            "capture(dom_snapshot=False)": lambda: capture(page, dom_snapshot=False),
            # What a tab session (the product) asks for.
            "capture(ax=False, rects=False)": lambda: capture(page, ax=False, rects=False),
        }
        print(f"\nmedian of {RUNS} runs, whole capture (calls run concurrently):")
        for name, run in variants.items():
            models: list[PageModel] = []

            async def once(
                run: Callable[[], Awaitable[PageModel]] = run, models: list[PageModel] = models
            ) -> None:
                models.append(await run())

            total = await median_seconds(once)
            parts = {
                key: statistics.median(m.timings.get(key, 0.0) for m in models)
                for key in models[0].timings
            }
            shown = ", ".join(f"{k} {v * 1000:.0f}" for k, v in parts.items() if k != "total")
            figures[f"{name}_ms"] = total * 1000
            print(f"  {name:30s} {total * 1000:8.1f} ms  ({shown} ms)")
        model = await capture(page)
        figures.update(
            nodes=len(model.nodes),
            elements=model.element_count(),
            with_boxes=sum(1 for n in model.nodes if n.bounds is not None),
            with_ax=sum(1 for n in model.nodes if n.ax is not None),
            pickled_mb=len(pickle.dumps(model)) / 1e6,
        )
        print(
            f"\nmodel: {figures['nodes']} nodes, {figures['elements']} elements, "
            f"{figures['with_boxes']} with boxes, {figures['with_ax']} with AX info, "
            f"~{figures['pickled_mb']:.2f} MB pickled"
        )
    return figures


def run() -> dict[str, Any]:
    """The capture figures of the largest corpus page (for `python -m tests.bench`)."""
    return trio.run(bench, largest_corpus_page())


async def versus_playwright(pattern: str | None = None) -> dict[str, Any]:
    """Print, per corpus page, our first snapshot against Playwright's, and the summary."""
    items = corpus_pages(pattern)
    rows: list[dict[str, Any]] = []
    options = SnapshotOptions()
    async with launch_browser() as browser, open_playwright() as playwright:
        print(f"reference: {playwright.label}, same Chromium binary and flags as ours")
        page = await browser.new_page()
        for item in items:
            await page.navigate(item.url, timeout=60)
            await SnapshotMemory(page, options).snapshot()  # warm: caches, lazy imports
            ours: list[float] = []
            for _ in range(RUNS):
                session = SnapshotMemory(page, options)
                started = time.perf_counter()
                await session.snapshot()
                ours.append((time.perf_counter() - started) * 1000)
            # The capture's parts, from captures of their own (the session hides them).
            parts = [
                (await capture(page, ax=options.ax, rects=options.rects)).timings
                for _ in range(RUNS)
            ]
            await page.navigate("about:blank")
            await playwright.goto(item.url)
            theirs = [(await playwright.snapshot())[1] for _ in range(RUNS)]
            await playwright.goto("about:blank")
            row: dict[str, Any] = {
                "id": item.id,
                "ours_ms": statistics.median(ours),
                "pw_ms": statistics.median(theirs),
            }
            for key in ("dom_get_document", "dom_snapshot", "join", "total"):
                row[f"{key}_ms"] = statistics.median(p.get(key, 0.0) * 1000 for p in parts)
            row["ratio"] = row["ours_ms"] / row["pw_ms"]
            rows.append(row)
            print(
                f"  {item.id:40s} ours {row['ours_ms']:7.1f} ms  pw {row['pw_ms']:7.1f} ms"
                f"  {row['ratio']:.2f}x"
            )
    ratios = sorted(row["ratio"] for row in rows)
    print()
    print(
        table(
            ["page", "ours ms", "pw ms", "ratio", "getDocument", "snapshot", "join", "capture"],
            [
                [
                    r["id"], f"{r['ours_ms']:.1f}", f"{r['pw_ms']:.1f}", f"{r['ratio']:.2f}",
                    f"{r['dom_get_document_ms']:.0f}", f"{r['dom_snapshot_ms']:.0f}",
                    f"{r['join_ms']:.0f}", f"{r['total_ms']:.0f}",
                ]
                for r in rows
            ],
        )
    )  # fmt: skip
    summary = {
        "pages": len(rows),
        "median_ratio": statistics.median(ratios),
        "max_ratio": ratios[-1],
        "above_1_5x": [r["id"] for r in rows if r["ratio"] > 1.5],
        "ours_median_ms": statistics.median(r["ours_ms"] for r in rows),
        "pw_median_ms": statistics.median(r["pw_ms"] for r in rows),
    }
    print(
        f"\nfirst snapshot against {PlaywrightWorker.API}: median {summary['median_ratio']:.2f}x,"
        f" max {summary['max_ratio']:.2f}x, above 1.5x: {len(summary['above_1_5x'])}"
        f" {summary['above_1_5x']}; medians ours {summary['ours_median_ms']:.1f} ms,"
        f" Playwright {summary['pw_median_ms']:.1f} ms"
    )
    return {"rows": rows, "summary": summary}


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["--versus"]:
        trio.run(versus_playwright, args[1] if len(args) > 1 else None)
        return
    path = Path(args[0]) if args else largest_corpus_page()
    trio.run(bench, path)


if __name__ == "__main__":
    main()
