"""Benchmark: region dedup and trimming across the pages of one site.

``python -m tests.bench.flows [GLOB]`` walks each flow of the corpus (its steps in
navigation order, in one tab) and captures every step once. That one captured model
goes through three `SnapshotMemory`s that each see the steps in order, so the three
modes differ only in their options, never in what the page did between captures:

* (a) no dedup, no trimming: every step a full baseline (the reference),
* (b) dedup only: regions equal to the previous baseline's collapse,
* (c) dedup and trimming (the default).

Every (c) answer is checked against the full baselines with
``tests.support.lossless.reconstruct``: each line is there or behind a marker that
points at the previous baseline or at ``expand``. Next to the ratios it prints a
*floor*: the tokens left when every line already seen on an earlier step of the
flow costs nothing at all (any order, any step, no marker). No line-level dedup can
go below it; it says how much of a flow is repeated at all. A sweep of the block
threshold (``SnapshotOptions.block_min_lines``) shows why the default is what it is.

Playwright's ai-mode aria snapshot of every step is taken in the same run. It prints
tokens per step and per flow, and the ratio (c)/(a) next to the issue's targets.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import trio
from lxml import etree

from pycdp_bridge import PageModel, Target, capture, launch_browser
from tests.bench import CorpusPage, PlaywrightWorker, corpus_flows, open_playwright, table
from tests.support.lossless import LossError, reconstruct
from trimtab.pipeline import count_tokens
from trimtab.tab import SnapshotMemory, SnapshotOptions

# Capture as the product does (a tab session's options), so the figures are its figures.
PRODUCT = SnapshotOptions()

#: The issue's targets for (c)/(a): total tokens with dedup and trimming over without.
TARGETS = {"flows/books-toscrape": 0.65, "flows/whatwg-site": 0.85}
# Whole pages, with no token budget: these figures weigh dedup and trimming, and a
# budget would cut the long pages (wikipedia) to the same size in every mode.
MODES = {
    "full": SnapshotOptions(dedup=False, trim=False, budget=None),
    "dedup": SnapshotOptions(dedup=True, trim=False, budget=None),
    "dedup_trim": SnapshotOptions(dedup=True, trim=True, budget=None),
}
#: Block thresholds (lines) the sweep tries; the default is SnapshotOptions().block_min_lines.
THRESHOLDS = (2, 3, 4, 6, 8, 12, 1_000_000)


async def _measure(
    flows: dict[str, list[CorpusPage]], out: Callable[[str], None]
) -> dict[str, Any]:
    results: dict[str, Any] = {}
    async with launch_browser() as browser, open_playwright() as playwright:
        for flow, steps in flows.items():
            page = await browser.new_page()
            models: list[PageModel] = []
            pw_tokens: list[int] = []
            for step in steps:
                await page.navigate(step.url, timeout=60)
                models.append(await capture(page, ax=PRODUCT.ax, rects=PRODUCT.rects))
                await playwright.goto(step.url)
                text, _ = await playwright.snapshot()
                pw_tokens.append(count_tokens(text))
            # The sessions only render what was captured; they never use the tab.
            results[flow] = _figures(flow, steps, models, pw_tokens, page, out)
            await page.close()
    return results


def _figures(
    flow: str,
    steps: list[CorpusPage],
    models: list[PageModel],
    pw_tokens: list[int],
    page: Target,
    out: Callable[[str], None],
) -> dict[str, Any]:
    """Every mode, the lossless check, the floor and the threshold sweep for one flow
    (sans-I/O: the same captured models go through every session)."""
    sessions = {mode: SnapshotMemory(page, options) for mode, options in MODES.items()}
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    previous_full: str | None = None
    for step, model, pw in zip(steps, models, pw_tokens, strict=True):
        row: dict[str, Any] = {"step": step.id.rsplit("/", 1)[-1], "pw": pw}
        xml: dict[str, str] = {}
        for mode, session in sessions.items():
            snap = session.render(model)
            xml[mode] = snap.xml
            row[mode] = snap.tokens
            row[f"{mode}_kind"] = snap.kind
            row[f"{mode}_collapsed"] = list(snap.regions_collapsed)
            row[f"{mode}_trimmed"] = list(snap.regions_trimmed)
            try:
                etree.fromstring(snap.xml.encode("utf-8"))
            except etree.XMLSyntaxError as exc:
                row[f"{mode}_xml_error"] = str(exc)
                out(f"!! {step.id} ({mode}): XML DOES NOT PARSE: {exc}")
        try:
            reconstruct(
                xml["dedup_trim"], xml["full"], previous_full, sessions["dedup_trim"].expand
            )
            row["lossless"] = True
        except LossError as exc:
            row["lossless"] = False
            out(f"!! {step.id}: (c) LOSES CONTENT: {exc}")
        lines = xml["full"].split("\n")
        row["floor"] = count_tokens("\n".join(line for line in lines if line not in seen))
        seen.update(lines)
        previous_full = xml["full"]
        rows.append(row)
    totals = {mode: sum(r[mode] for r in rows) for mode in (*MODES, "pw", "floor")}
    return {
        "steps": rows,
        "totals": totals,
        "ratio_dedup": totals["dedup"] / totals["full"],
        "ratio_dedup_trim": totals["dedup_trim"] / totals["full"],
        "ratio_floor": totals["floor"] / totals["full"],
        "lossless": all(r["lossless"] for r in rows),
        "target": TARGETS.get(flow),
        "thresholds": {
            str(lines): _total_tokens(
                page, models, SnapshotOptions(block_min_lines=lines, budget=None)
            )
            for lines in THRESHOLDS
        },
    }


def _total_tokens(page: Target, models: list[PageModel], options: SnapshotOptions) -> int:
    session = SnapshotMemory(page, options)
    return sum(session.render(model).tokens for model in models)


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
                    "floor",
                    "pw ai",
                    "lossless",
                    "collapsed",
                    "trimmed",
                ],
                [
                    [
                        r["step"],
                        r["full"],
                        r["dedup"],
                        r["dedup_trim"],
                        r["floor"],
                        r["pw"],
                        "yes" if r["lossless"] else "NO",
                        ",".join(r["dedup_trim_collapsed"]) or "-",
                        ",".join(r["dedup_trim_trimmed"]) or "-",
                    ]
                    for r in data["steps"]
                ],
            )
        )
    out("\nFlows: totals over all steps (floor: every line seen on an earlier step free)")
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
                data["ratio_floor"],
                "yes" if data["lossless"] else "NO",
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
                "floor/(a)",
                "lossless",
                "target (c)/(a)",
            ],
            rows,
        )
    )
    default = SnapshotOptions().block_min_lines
    out(f"\nBlock threshold sweep: (c) total tokens per flow (default {default} lines)")
    out(
        table(
            ["flow", *(f"{n}" if n < 1_000_000 else "off" for n in THRESHOLDS)],
            [
                [flow, *(data["thresholds"][str(n)] for n in THRESHOLDS)]
                for flow, data in results.items()
            ],
        )
    )
    parts = [
        f"{flow.removeprefix('flows/')} (c)/(a) {data['ratio_dedup_trim']:.2f}"
        f" floor {data['ratio_floor']:.2f}"
        + (f" (target <= {data['target']:.2f})" if data["target"] is not None else "")
        + ("" if data["lossless"] else " LOSSY")
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
