"""Benchmark: region dedup and trimming across the pages of one site.

``python -m tests.bench.flows [GLOB]`` walks each flow of the corpus (its steps in
navigation order, in one tab) and captures every step once. That one captured model
goes through three `TabSession`s that each see the steps in order, so the three
modes differ only in their options, never in what the page did between captures:

* (a) no dedup, no trimming: every step a full baseline (the reference),
* (b) dedup only: regions equal to the previous baseline's collapse,
* (c) dedup and trimming (the default).

Playwright's ai-mode aria snapshot of every step is taken in the same run. It prints
tokens per step and per flow, and the ratio (c)/(a) next to the issue's targets.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import trio
from lxml import etree

from pycdp_bridge import capture, launch_browser
from tests.bench import CorpusPage, PlaywrightWorker, corpus_flows, open_playwright, table
from trimtab import SnapshotOptions, TabSession
from trimtab.pipeline import count_tokens

# Capture as the product does (a tab session's options), so the figures are its figures.
PRODUCT = SnapshotOptions()

#: The issue's targets for (c)/(a): total tokens with dedup and trimming over without.
TARGETS = {"flows/books-toscrape": 0.65, "flows/whatwg-site": 0.85}
MODES = {
    "full": SnapshotOptions(dedup=False, trim=False),
    "dedup": SnapshotOptions(dedup=True, trim=False),
    "dedup_trim": SnapshotOptions(dedup=True, trim=True),
}


async def _measure(
    flows: dict[str, list[CorpusPage]], out: Callable[[str], None]
) -> dict[str, Any]:
    results: dict[str, Any] = {}
    async with launch_browser() as browser, open_playwright() as playwright:
        for flow, steps in flows.items():
            page = await browser.new_page()
            sessions = {mode: TabSession(page, options) for mode, options in MODES.items()}
            rows: list[dict[str, Any]] = []
            for step in steps:
                await page.navigate(step.url, timeout=60)
                model = await capture(page, ax=PRODUCT.ax, rects=PRODUCT.rects)
                row: dict[str, Any] = {"step": step.id.rsplit("/", 1)[-1]}
                for mode, session in sessions.items():
                    snap = session.render(model)
                    row[mode] = snap.tokens
                    row[f"{mode}_kind"] = snap.kind
                    row[f"{mode}_collapsed"] = list(snap.regions_collapsed)
                    row[f"{mode}_trimmed"] = list(snap.regions_trimmed)
                    try:
                        etree.fromstring(snap.xml.encode("utf-8"))
                    except etree.XMLSyntaxError as exc:
                        row[f"{mode}_xml_error"] = str(exc)
                        out(f"!! {step.id} ({mode}): XML DOES NOT PARSE: {exc}")
                await playwright.goto(step.url)
                text, _ = await playwright.snapshot()
                row["pw"] = count_tokens(text)
                rows.append(row)
            await page.close()
            totals = {mode: sum(r[mode] for r in rows) for mode in (*MODES, "pw")}
            results[flow] = {
                "steps": rows,
                "totals": totals,
                "ratio_dedup": totals["dedup"] / totals["full"],
                "ratio_dedup_trim": totals["dedup_trim"] / totals["full"],
                "target": TARGETS.get(flow),
            }
    return results


def report(results: dict[str, Any], out: Callable[[str], None]) -> None:
    """Print tokens per step and per flow, with the ratio against the targets."""
    for flow, data in results.items():
        out(f"\nFlow {flow}: tokens per step (o200k_base)")
        out(
            table(
                [
                    "step",
                    "(a) full",
                    "(b) dedup",
                    "(c) dedup+trim",
                    "pw ai",
                    "collapsed",
                    "trimmed",
                ],
                [
                    [
                        r["step"],
                        r["full"],
                        r["dedup"],
                        r["dedup_trim"],
                        r["pw"],
                        ",".join(r["dedup_trim_collapsed"]) or "-",
                        ",".join(r["dedup_trim_trimmed"]) or "-",
                    ]
                    for r in data["steps"]
                ],
            )
        )
    out("\nFlows: totals over all steps")
    rows = []
    for flow, data in results.items():
        totals, target = data["totals"], data["target"]
        verdict = (
            "-"
            if target is None
            else (f"<= {target:.2f} {'MET' if data['ratio_dedup_trim'] <= target else 'MISSED'}")
        )
        rows.append(
            [
                flow,
                len(data["steps"]),
                totals["full"],
                totals["dedup"],
                totals["dedup_trim"],
                totals["pw"],
                data["ratio_dedup"],
                data["ratio_dedup_trim"],
                verdict,
            ]
        )
    out(
        table(
            [
                "flow",
                "steps",
                "(a) full",
                "(b) dedup",
                "(c) dedup+trim",
                "pw ai",
                "(b)/(a)",
                "(c)/(a)",
                "target (c)/(a)",
            ],
            rows,
        )
    )
    parts = [
        f"{flow.removeprefix('flows/')} (c)/(a) {data['ratio_dedup_trim']:.2f}"
        + (f" (target <= {data['target']:.2f})" if data["target"] is not None else "")
        for flow, data in results.items()
    ]
    out("SUMMARY flows: " + "; ".join(parts))


def run(pattern: str | None = None, out: Callable[[str], None] = print) -> dict[str, Any]:
    """Measure every flow (or those matching ``pattern``); print and return the figures."""
    flows = corpus_flows(pattern)
    if not flows:
        out(f"flows: no corpus flow matches {pattern!r}")
        return {}
    out(f"flows: {len(flows)} flows; reference {PlaywrightWorker.API}")
    results: dict[str, Any] = trio.run(_measure, flows, out)
    report(results, out)
    return results


if __name__ == "__main__":
    run(sys.argv[1] if len(sys.argv) > 1 else None)
