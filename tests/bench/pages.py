"""Benchmark: every corpus page, our XML against raw HTML, innerText and Playwright.

``python -m tests.bench.pages [GLOB]`` loads every single page and every flow step
from ``file://`` in one headless Chromium (ours) and the same pages in Playwright's
Chromium (same binary, same flags), and prints one row per page:

* tokens (o200k_base) of the raw HTML (``documentElement.outerHTML``), of the visible
  text (innerText: the floor for any lossless view), of our XML, and of Playwright's
  ai-mode aria snapshot;
* the fidelity oracle's visible-text and interactive recall (`tests.support.oracle`);
* pipeline ms (median of 5 runs of ``compact`` on one captured model), and end to end
  ms for us (capture + compact, page loaded, warm browser) and for Playwright (its ai
  snapshot of the same page), each the median of 5 taken in the same run.

Then medians per page kind, where our tokens go (`token_breakdown`: text, ids, tags,
attributes, region wrappers, whitespace) over the corpus and on the five pages with
the most tokens per visible-text token, and a summary. Each page's XML is parsed by
lxml; a parse failure (or any other failure) is a loud row, never a silent skip.
"""

from __future__ import annotations

import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

import trio

from pycdp_bridge import PageTarget, capture, launch_browser
from tests.bench import (
    CorpusPage,
    PlaywrightWorker,
    corpus_pages,
    median,
    open_playwright,
    table,
)
from tests.support.oracle import judge
from trimtab.pipeline import PARTS, TokenBreakdown, compact, count_tokens, token_breakdown
from trimtab.tab import SnapshotMemory, SnapshotOptions

RUNS = 5
TEXT_TARGET = 0.995
PAGE_TIMEOUT = 120.0

_HTML_JS = "document.documentElement.outerHTML"


async def measure_page(
    page: PageTarget, playwright: PlaywrightWorker, item: CorpusPage
) -> dict[str, Any]:
    """All figures of one page (raises on failure; the caller makes it a loud row)."""
    await page.navigate(item.url, timeout=60)
    html = str(await page.evaluate(_HTML_JS))
    # Measured as the product runs: the capture options of a tab session, and the
    # end-to-end time of a first snapshot (capture, pipeline, XML, token count).
    options = SnapshotOptions()
    model = await capture(page, ax=options.ax, rects=options.rects)
    compaction = compact(model)
    fidelity = await judge(page, model, compaction)

    pipeline_ms = median(compact(model).stats.pipeline_ms for _ in range(RUNS))
    ours_ms: list[float] = []
    for _ in range(RUNS):
        started = time.perf_counter()
        await SnapshotMemory(page, options).snapshot()
        ours_ms.append((time.perf_counter() - started) * 1000)
    # Leave our tab idle while Playwright measures (its timers would compete for CPU).
    await page.navigate("about:blank")

    await playwright.goto(item.url)
    pw_runs = [await playwright.snapshot() for _ in range(RUNS)]
    await playwright.goto("about:blank")
    pw_text = pw_runs[0][0]

    text = fidelity.text
    interactive = fidelity.interactive
    row: dict[str, Any] = {
        "id": item.id,
        "kind": item.kind,
        "css": item.css,
        "elements": compaction.stats.elements_in,
        "controls": compaction.stats.controls,
        "html_tokens": count_tokens(html),
        "text_tokens": count_tokens(fidelity.truth.inner_text),
        "xml_tokens": compaction.stats.tokens,
        "xml": compaction.xml,  # for its breakdown, made after the page's time limit
        "pw_tokens": count_tokens(pw_text),
        "xml_error": fidelity.xml_error,
        "text_recall": text.ratio,
        "text_words": text.total,
        "text_glued": text.glued,
        "missing_words": [[m.word, m.count, m.reason] for m in text.missing],
        "interactive_recall": interactive.ratio,
        "interactive_total": interactive.total,
        "interactive_inside": interactive.inside_control,
        "missing_elements": [
            {"role": m.role, "tag": m.tag, "name": m.name, "reason": m.reason}
            for m in interactive.missing
        ],
        "pipeline_ms": pipeline_ms,
        "stage_ms": dict(compaction.stats.stage_ms),
        "ours_e2e_ms": median(ours_ms),
        "pw_e2e_ms": median(ms for _, ms in pw_runs),
        "summary": fidelity.summary(),
    }
    return row


async def _measure_all(items: list[CorpusPage], out: Callable[[str], None]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    async with launch_browser() as browser, open_playwright() as playwright:
        out(f"reference: {playwright.label}, same Chromium binary and flags as ours")
        page = await browser.new_page()
        for item in items:
            try:
                with trio.fail_after(PAGE_TIMEOUT):
                    row = await measure_page(page, playwright, item)
            except Exception as exc:
                out(f"!! {item.id}: FAILED: {exc!r}")
                traceback.print_exc(file=sys.stderr)
                rows.append({"id": item.id, "kind": item.kind, "error": repr(exc)})
                # A failed page may leave the tab in any state: start a fresh one.
                page = await browser.new_page()
                continue
            # Where the tokens go is the bench's own figure, not the page's: it is not
            # counted against the page's time limit.
            row["breakdown"] = token_breakdown(row.pop("xml")).as_dict()
            if row["xml_error"]:
                out(f"!! {item.id}: XML DOES NOT PARSE: {row['xml_error']}")
            rows.append(row)
            out(
                f"   {item.id}: {row['xml_tokens']} tok, text {row['text_recall']:.2%},"
                f" interactive {row['interactive_recall']:.2%}"
            )
    return rows


def _ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def report(rows: list[dict[str, Any]], api: str, out: Callable[[str], None]) -> dict[str, Any]:
    """Print the per-page table, the medians per kind and the summary; return the figures."""
    good = [r for r in rows if "error" not in r]
    for r in good:
        r["xml_per_text"] = _ratio(r["xml_tokens"], r["text_tokens"])
        r["xml_per_pw"] = _ratio(r["xml_tokens"], r["pw_tokens"])
        r["e2e_ratio"] = _ratio(r["ours_e2e_ms"], r["pw_e2e_ms"])
    out(f"\nPages: tokens o200k_base; Playwright = {api}; ms = median of {RUNS}")
    out(
        table(
            [
                "page",
                "kind",
                "elems",
                "html",
                "text",
                "ours",
                "pw",
                "ours/text",
                "ours/pw",
                "text%",
                "inter%",
                "pipe_ms",
                "ours_ms",
                "pw_ms",
                "e2e",
            ],
            [
                [
                    _short(r["id"]),
                    r["kind"],
                    r["elements"],
                    r["html_tokens"],
                    r["text_tokens"],
                    r["xml_tokens"],
                    r["pw_tokens"],
                    r["xml_per_text"],
                    r["xml_per_pw"],
                    f"{100 * r['text_recall']:.2f}" + ("!" if r["xml_error"] else ""),
                    f"{100 * r['interactive_recall']:.2f}",
                    r["pipeline_ms"],
                    r["ours_e2e_ms"],
                    r["pw_e2e_ms"],
                    r["e2e_ratio"],
                ]
                for r in good
            ],
        )
    )
    for r in rows:
        if "error" in r:
            out(f"!! FAILED {r['id']}: {r['error']}")
        elif r["xml_error"]:
            out(f"!! XML DOES NOT PARSE {r['id']}: {r['xml_error']}")

    kinds: dict[str, dict[str, float]] = {}
    for kind in sorted({r["kind"] for r in good}):
        of = [r for r in good if r["kind"] == kind]
        kinds[kind] = {
            "pages": len(of),
            "xml_tokens": median(r["xml_tokens"] for r in of),
            "xml_per_text": median(r["xml_per_text"] for r in of),
            "xml_per_pw": median(r["xml_per_pw"] for r in of),
            "text_recall": median(r["text_recall"] for r in of),
            "interactive_recall": median(r["interactive_recall"] for r in of),
            "pipeline_ms": median(r["pipeline_ms"] for r in of),
            "e2e_ratio": median(r["e2e_ratio"] for r in of),
        }
    out("\nMedians per page kind")
    out(
        table(
            [
                "kind",
                "pages",
                "ours_tok",
                "ours/text",
                "ours/pw",
                "text%",
                "inter%",
                "pipe_ms",
                "e2e",
            ],
            [
                [
                    k,
                    int(v["pages"]),
                    v["xml_tokens"],
                    v["xml_per_text"],
                    v["xml_per_pw"],
                    f"{100 * v['text_recall']:.2f}",
                    f"{100 * v['interactive_recall']:.2f}",
                    v["pipeline_ms"],
                    v["e2e_ratio"],
                ]
                for k, v in kinds.items()
            ],
        )
    )

    worst_five = sorted(good, key=lambda r: -r["xml_per_text"])[:5]
    corpus = TokenBreakdown.total(_breakdown(r) for r in good)
    out("\nWhere our tokens go (o200k_base; a token of several kinds counts for each)")
    out(
        table(
            ["page", "ours/text", "tokens", *PARTS],
            [
                [
                    name,
                    per_text,
                    b.tokens,
                    *(f"{b.parts[p]:.0f} {100 * b.share(p):.0f}%" for p in PARTS),
                ]
                for name, per_text, b in [
                    ("corpus", float("nan"), corpus),
                    *((_short(r["id"]), r["xml_per_text"], _breakdown(r)) for r in worst_five),
                ]
            ],
        )
    )
    markup = sorted(corpus.markup.items(), key=lambda kv: -kv[1])[:6]
    out(
        "markup (tags, ids, attributes) by element: "
        + ", ".join(f"{name} {n:.0f} ({corpus.elements.get(name, 0)}x)" for name, n in markup)
    )

    low_text = [r for r in good if r["text_recall"] < TEXT_TARGET or r["xml_error"]]
    low_inter = [r for r in good if r["interactive_recall"] < 1.0]
    worst = max(good, key=lambda r: r["xml_per_pw"], default=None)
    summary = {
        "pages": len(rows),
        "max_ours_per_text": max((r["xml_per_text"] for r in good), default=float("nan")),
        "breakdown": corpus.as_dict(),
        "failed": [r["id"] for r in rows if "error" in r],
        "xml_unparsable": [r["id"] for r in good if r["xml_error"]],
        "median_ours_per_text": median(r["xml_per_text"] for r in good),
        "median_ours_per_pw": median(r["xml_per_pw"] for r in good),
        "max_ours_per_pw": worst["xml_per_pw"] if worst else float("nan"),
        "max_ours_per_pw_page": worst["id"] if worst else "",
        "median_e2e_ratio": median(r["e2e_ratio"] for r in good),
        "median_pipeline_ms": median(r["pipeline_ms"] for r in good),
        "median_text_recall": median(r["text_recall"] for r in good),
        "pages_under_text_target": {r["id"]: _reasons(r, "missing_words") for r in low_text},
        "pages_under_full_interactive": {
            r["id"]: _reasons(r, "missing_elements") for r in low_inter
        },
    }
    out(
        f"\nSUMMARY pages: {len(good)}/{len(rows)} measured;"
        f" median ours/innerText {summary['median_ours_per_text']:.2f};"
        f" median ours/Playwright {summary['median_ours_per_pw']:.2f};"
        f" max ours/Playwright {summary['max_ours_per_pw']:.2f}"
        f" ({summary['max_ours_per_pw_page']});"
        f" median e2e ours/Playwright {summary['median_e2e_ratio']:.2f};"
        f" median pipeline {summary['median_pipeline_ms']:.1f} ms"
    )
    out(f"SUMMARY pages under {TEXT_TARGET:.1%} text recall: {len(low_text)}")
    for r in low_text:
        out(f"  {r['id']} {100 * r['text_recall']:.2f}%: {_reasons(r, 'missing_words')}")
    out(f"SUMMARY pages under 100% interactive recall: {len(low_inter)}")
    for r in low_inter:
        out(
            f"  {r['id']} {100 * r['interactive_recall']:.2f}%"
            f" ({len(r['missing_elements'])} missing): {_reasons(r, 'missing_elements')}"
        )
    out(
        "SUMMARY pages tokens: "
        + ", ".join(f"{p} {100 * corpus.share(p):.0f}%" for p in PARTS)
        + f" of {corpus.tokens} on the corpus"
    )
    # The section's last line, the figures issue 41 set targets on.
    out(
        f"SUMMARY pages ours_vs_text_median={summary['median_ours_per_text']:.2f}"
        f" ours_vs_text_max={summary['max_ours_per_text']:.2f}"
        f" ours_vs_playwright_median={summary['median_ours_per_pw']:.2f}"
    )
    return {"rows": rows, "kinds": kinds, "summary": summary, "reference": api}


def _short(page_id: str) -> str:
    return page_id.replace("flows/", "").replace("pages/", "")


def _breakdown(row: dict[str, Any]) -> TokenBreakdown:
    """A row's breakdown, back from its JSON form."""
    data = row["breakdown"]
    return TokenBreakdown(
        data["tokens"], data["parts"], data["markup"], data["elements"], data["attributes"]
    )


def _reasons(row: dict[str, Any], key: str) -> str:
    """The reasons behind a page's misses, most frequent first, with their counts."""
    if row.get("xml_error"):
        return f"XML does not parse: {row['xml_error']}"
    counts: dict[str, int] = {}
    for miss in row[key]:
        reason = miss[2] if key == "missing_words" else miss["reason"]
        weight = miss[1] if key == "missing_words" else 1
        # Group by the kind of reason ("covered by <div>", "only in <option>s ...").
        counts[reason] = counts.get(reason, 0) + weight
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
    shown = "; ".join(f"{n}x {reason}" for reason, n in ranked[:4])
    return shown + (f"; +{len(ranked) - 4} other reasons" if len(ranked) > 4 else "")


def run(pattern: str | None = None, out: Callable[[str], None] = print) -> dict[str, Any]:
    """Measure every corpus page (or those whose id matches ``pattern``); print and return."""
    items = corpus_pages(pattern)
    if not items:
        out(f"pages: no corpus page matches {pattern!r}")
        return {"rows": [], "summary": {}}
    out(f"pages: {len(items)} corpus pages")
    rows = trio.run(_measure_all, items, out)
    return report(rows, PlaywrightWorker.API, out)


if __name__ == "__main__":
    run(sys.argv[1] if len(sys.argv) > 1 else None)
