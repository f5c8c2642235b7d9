"""Benchmark: capture of the largest corpus page, per CDP call and in total.

Run ``python -m tests.bench.capture [PATH]`` from the repository root; PATH is an HTML
file (default: the corpus page with the most elements, from its MANIFEST.json). It
prints medians over 5 runs of: each CDP call of the capture run alone, the default
capture (``DOM.getDocument`` + ``DOMSnapshot`` + AX tree, concurrently), the capture
without the AX tree and without the snapshot, and the size of the model.
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

RUNS = 5
CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"


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


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else largest_corpus_page()
    trio.run(bench, path)


if __name__ == "__main__":
    main()
