"""Benchmark: are element ids stable across snapshots and small page changes?

``python -m tests.bench.stability [GLOB]`` loads every corpus page and

* takes two snapshots of the unchanged page: their eids (and which node each names)
  must be identical; pages where they are not are counted and named;
* then changes the page with ``Runtime.evaluate`` the way pages change under an agent
  (a link inserted near the top, a list item removed, a heading renamed) and takes a
  third snapshot: of the controls that were not touched (matched across the two
  captures by ``backendNodeId``; the removed item, the new link and what is inside
  the renamed heading are left out), the share that keep their eid. Target: 95%.

Both figures are measured twice: from the page alone (`compact` of each capture,
as on another visit to the page) and with the tab's id memory (each capture compacted
with the ids issued before reserved for their nodes, as a tab's snapshots are).
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable
from typing import Any

import trio

from pycdp_bridge import PageModel, PageTarget, capture, launch_browser
from tests.bench import CorpusPage, corpus_pages, median, table
from trimtab.pipeline import Compaction, compact
from trimtab.tab import SnapshotOptions

# Capture as the product does (a tab session's options), so the figures are its figures.
PRODUCT = SnapshotOptions()

TARGET = 0.95
PAGE_TIMEOUT = 120.0
_MARK = "data-trimtab-renamed"

# The scripted changes; returns what it did. A rendered element is one with a box.
_CHANGE_JS = """
(() => {
  const rendered = (el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  };
  const done = [];
  const items = [...document.querySelectorAll("li")].filter(rendered);
  if (items.length) { items[Math.floor(items.length / 2)].remove(); done.push("removed li"); }
  const heading = [...document.querySelectorAll("h1, h2, h3, h4, h5, h6")].find(rendered);
  if (heading) {
    heading.setAttribute("MARK", "");
    const walker = document.createTreeWalker(heading, NodeFilter.SHOW_TEXT);
    let text = walker.nextNode();
    while (text && !text.data.trim()) text = walker.nextNode();
    if (text) text.data = "Renamed " + text.data; else heading.append("Renamed");
    done.push("renamed " + heading.localName);
  }
  const link = document.createElement("a");
  link.href = "#trimtab-inserted";
  link.textContent = "Inserted link";
  document.body.insertBefore(link, document.body.firstChild);
  done.push("inserted link");
  return done.join(", ");
})()
""".replace("MARK", _MARK)


def _by_backend(compaction: Compaction) -> dict[int, str]:
    return {c.backend_node_id: eid for eid, c in compaction.controls.items()}


def _reserved(compaction: Compaction) -> dict[str, int]:
    """The ids a tab issued with this snapshot, as its memory reserves them."""
    return {eid: c.backend_node_id for eid, c in compaction.controls.items() if c.frame == 0}


def _touched(model: PageModel) -> set[int]:
    """backendNodeIds inside the renamed heading (their names changed on purpose)."""
    touched: set[int] = set()
    for node in model.nodes:
        if node.is_element and _MARK in node.attributes:
            touched.update(n.backend_node_id for n in model.subtree(node))
    return touched


async def measure_page(page: PageTarget, item: CorpusPage) -> dict[str, Any]:
    """The stability figures of one page."""
    await page.navigate(item.url, timeout=60)
    first = compact(await capture(page, ax=PRODUCT.ax, rects=PRODUCT.rects))
    second_model = await capture(page, ax=PRODUCT.ax, rects=PRODUCT.rects)
    second = compact(second_model)
    one, two = _by_backend(first), _by_backend(second)
    remembered = _by_backend(compact(second_model, reserved=_reserved(first)))
    identical = list(first.controls) == list(second.controls) and one == two
    changed_unchanged = sum(1 for b, eid in two.items() if one.get(b, eid) != eid) + len(
        set(one) ^ set(two)
    )
    done = str(await page.evaluate(_CHANGE_JS))
    after_model = await capture(page, ax=PRODUCT.ax, rects=PRODUCT.rects)
    after = _by_backend(compact(after_model))
    after_remembered = _by_backend(compact(after_model, reserved=_reserved(first)))
    touched = _touched(after_model)
    matched = [b for b in two if b in after and b not in touched]
    kept = sum(1 for b in matched if two[b] == after[b])
    matched_memory = [b for b in one if b in after_remembered and b not in touched]
    kept_memory = sum(1 for b in matched_memory if one[b] == after_remembered[b])
    return {
        "id": item.id,
        "kind": item.kind,
        "controls": len(second.controls),
        "identical": identical,
        "unchanged_differences": changed_unchanged,
        "changes": done,
        "matched": len(matched),
        "kept": kept,
        "share": kept / len(matched) if matched else float("nan"),
        "identical_memory": remembered == one,
        "matched_memory": len(matched_memory),
        "kept_memory": kept_memory,
    }


async def _measure_all(items: list[CorpusPage], out: Callable[[str], None]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    async with launch_browser() as browser:
        page = await browser.new_page()
        for item in items:
            try:
                with trio.fail_after(PAGE_TIMEOUT):
                    rows.append(await measure_page(page, item))
            except Exception as exc:
                out(f"!! {item.id}: FAILED: {exc!r}")
                traceback.print_exc(file=sys.stderr)
                rows.append({"id": item.id, "kind": item.kind, "error": repr(exc)})
                page = await browser.new_page()
    return rows


def run(pattern: str | None = None, out: Callable[[str], None] = print) -> dict[str, Any]:
    """Measure eid stability on every corpus page (or those matching ``pattern``)."""
    items = corpus_pages(pattern)
    if not items:
        out(f"stability: no corpus page matches {pattern!r}")
        return {"rows": [], "summary": {}}
    out(f"stability: {len(items)} corpus pages")
    rows: list[dict[str, Any]] = trio.run(_measure_all, items, out)
    good = [r for r in rows if "error" not in r]
    out("\nStability: eids of two snapshots of the unchanged page, and after scripted changes")
    out(
        table(
            ["page", "controls", "same eids", "changes", "matched", "kept", "kept %"],
            [
                [
                    r["id"].replace("pages/", "").replace("flows/", ""),
                    r["controls"],
                    "yes" if r["identical"] else f"NO ({r['unchanged_differences']} differ)",
                    r["changes"],
                    r["matched"],
                    r["kept"],
                    f"{100 * r['share']:.1f}",
                ]
                for r in good
            ],
        )
    )
    for r in rows:
        if "error" in r:
            out(f"!! FAILED {r['id']}: {r['error']}")
    matched = sum(r["matched"] for r in good)
    kept = sum(r["kept"] for r in good)
    unstable = [r["id"] for r in good if not r["identical"]]
    below = [r["id"] for r in good if r["share"] < TARGET]
    summary = {
        "pages": len(rows),
        "pages_with_different_eids_unchanged": unstable,
        "overall_kept_share": kept / matched if matched else float("nan"),
        "median_page_kept_share": median(r["share"] for r in good),
        "pages_below_target": below,
        "target": TARGET,
    }
    out(
        f"SUMMARY stability: unchanged page gives different eids on {len(unstable)}/{len(good)}"
        f" pages{' (' + ', '.join(unstable) + ')' if unstable else ''};"
        f" after changes {kept}/{matched} untouched controls keep their eid"
        f" = {100 * summary['overall_kept_share']:.1f}% overall (target >= {TARGET:.0%}),"
        f" median page {100 * summary['median_page_kept_share']:.1f}%,"
        f" {len(below)} pages below target"
    )
    if below:
        out(
            "  below target: "
            + ", ".join(f"{r['id']} {100 * r['share']:.1f}%" for r in good if r["share"] < TARGET)
        )
    matched_memory = sum(r["matched_memory"] for r in good)
    kept_memory = sum(r["kept_memory"] for r in good)
    unstable_memory = [r["id"] for r in good if not r["identical_memory"]]
    summary["pages_with_different_eids_unchanged_memory"] = unstable_memory
    summary["overall_kept_share_memory"] = (
        kept_memory / matched_memory if matched_memory else float("nan")
    )
    out(
        f"  with the tab's id memory: unchanged page gives different eids on"
        f" {len(unstable_memory)}/{len(good)} pages; after changes {kept_memory}/"
        f"{matched_memory} untouched controls keep their eid"
        f" = {100 * summary['overall_kept_share_memory']:.1f}%"
    )
    return {"rows": rows, "summary": summary}


if __name__ == "__main__":
    run(sys.argv[1] if len(sys.argv) > 1 else None)
