"""Benchmark: a task's tabs do not leak: the host's memory after many tabs opened and closed.

``python -m tests.bench --only tabs`` drives the side panel's ``tool`` request
in-process on a real headless Chromium (the relay is the test peer over the direct
transport, which reports each tab a page opens): an action opens a tab behind
(``window.open``), its answer names it, and ``close_tab`` closes it, `CYCLES[-1]`
times. After `CYCLES[0]` and after `CYCLES[-1]` cycles, with the collector run, it
takes the process's Python allocated blocks and resident memory. Target: after 200
tabs within 1.2x of after 20 (what a task's tabs leave behind is freed when they close).
"""

from __future__ import annotations

import gc
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import trio

from pycdp_bridge import launch_browser
from tests.support import LAUNCHED_PROFILES, TEST_PAGES
from tests.support.handlers_host import open_host
from tests.support.http import serve_static

__all__ = ["CYCLES", "run"]

CYCLES: Final = (20, 200)
TARGET: Final = 1.2


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def _measure() -> dict[str, float]:
    at: dict[str, float] = {}
    async with trio.open_nursery() as nursery:
        server = await nursery.start(serve_static, TEST_PAGES)
        async with launch_browser(extra_args=["--disable-popup-blocking"]) as browser:
            LAUNCHED_PROFILES.append(browser.user_data_dir)
            page = await browser.new_page()
            async with open_host(page, server.url("tabs-results.html"), nursery) as host:
                first = await host.tool("capture_snapshot")
                found = re.search(r'<button id="([^"]+)"[^>]*>Open an offer<', first["content"])
                assert found is not None, first["content"]
                for cycle in range(1, CYCLES[-1] + 1):
                    opened = await host.tool("click", id=found.group(1))
                    tab = re.search(r"new tab behind, tab (\d+)", opened["content"])
                    assert tab is not None, opened["content"]
                    closed = await host.tool("close_tab", tab=int(tab.group(1)))
                    assert not closed["is_error"], closed["content"]
                    # The test peer's own log of what it was sent is not the host's.
                    host.peer.sent.clear()
                    if cycle in CYCLES:
                        gc.collect()
                        at[f"{cycle}_blocks"] = float(sys.getallocatedblocks())
                        at[f"{cycle}_rss_mb"] = _rss_mb()
                at["held_tabs"] = float(host.state.statistics().tabs)
        nursery.cancel_scope.cancel()
    return at


def run(pattern: str | None = None, out: Callable[[str], None] = print) -> dict[str, Any]:
    del pattern
    at = trio.run(_measure)
    low, high = CYCLES
    blocks = at[f"{high}_blocks"] / at[f"{low}_blocks"]
    rss = at[f"{high}_rss_mb"] / at[f"{low}_rss_mb"]
    out(
        f"SUMMARY tabs: after {high} tabs opened by an action and closed, Python blocks "
        f"{blocks:.2f}x and resident memory {rss:.2f}x those after {low} "
        f"(target ≤ {TARGET}x); tabs held afterwards: {at['held_tabs']:.0f}"
    )
    out(
        f"  blocks {at[f'{low}_blocks']:,.0f} → {at[f'{high}_blocks']:,.0f}; "
        f"resident {at[f'{low}_rss_mb']:.1f} → {at[f'{high}_rss_mb']:.1f} MB"
    )
    return {**at, "blocks_ratio": blocks, "rss_ratio": rss, "target": TARGET}
