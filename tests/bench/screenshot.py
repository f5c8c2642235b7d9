"""``--only screenshot``: issue 27's `screenshot` against Playwright's ``page.screenshot``.

On `PAGES` single pages of the corpus (``--pages GLOB`` picks others), each in turn:

* **direct**: the tool (`run_tool(tab, "screenshot", {})`: layout metrics, the capture
  in a screencast so a hidden tab renders, the image checked) over the pipe to a
  Chromium we launch, against Playwright's ``page.screenshot(type="jpeg",
  quality=80)`` of the same page in its own Chromium (same binary, same flags, see
  `PlaywrightWorker`), its viewport set to our image's size, in `ROUNDS` rounds that
  alternate which side goes first; a page's ratio is the median of its rounds'.
* **relay**: the same tool through the link of a browser with the real extension and
  host (the host asks the extension, which runs ``chrome.debugger``), the image
  carried base64 in the reply; a change to the page before each call keeps the call
  tracker from answering. Against Playwright likewise, at that tab's size.
* **tokens**: each image's input tokens by the providers' formulas, as the side
  panel counts them (``extension/shared/cost.js`` ``imageTokens``, run by node).

Target: at most 1.2x Playwright at the median, both ways. The section ends with one
line ``SUMMARY screenshot_direct_vs_playwright=X screenshot_relay_vs_playwright=Y
image_tokens_median=T`` (T: Anthropic's formula).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

import trio

from pycdp_bridge import PageTarget, launch_browser
from tests.bench import (
    REPO,
    CorpusPage,
    PlaywrightWorker,
    corpus_pages,
    median,
    open_playwright,
    table,
)
from tests.bench._linked import linked_browser
from trimtab.link import LinkClient, connect
from trimtab.tab import Tab
from trimtab.tools import run_tool
from trimtab.tools._pixels import JPEG_QUALITY

__all__ = ["run"]

ROUNDS: Final = 7
PAGES: Final = 8
TARGET: Final = 1.2
PAGE_TIMEOUT: Final = 120.0
REFERENCE: Final = f'page.screenshot(type="jpeg", quality={JPEG_QUALITY})'


async def _reference(playwright: PlaywrightWorker, size: tuple[int, int]) -> float:
    """One Playwright screenshot at our image's size; its milliseconds, timed on its
    thread (as `PlaywrightWorker.snapshot` does)."""

    def take(page: Any) -> float:
        if page.viewport_size != {"width": size[0], "height": size[1]}:
            page.set_viewport_size({"width": size[0], "height": size[1]})
        started = time.perf_counter()
        page.screenshot(type="jpeg", quality=JPEG_QUALITY)
        return (time.perf_counter() - started) * 1000

    return await playwright.run(take)


async def _nothing() -> None:
    return None


async def _rounds(
    ours: Callable[[], Awaitable[tuple[int, int]]],
    playwright: PlaywrightWorker,
    before: Callable[[], Awaitable[None]] = _nothing,
) -> dict[str, Any]:
    """Warm both sides, then `ROUNDS` alternating rounds; the figures of one page.
    `before` runs untimed before each of ours."""
    await before()
    size = await ours()
    await _reference(playwright, size)
    mine: list[float] = []
    theirs: list[float] = []

    async def timed_ours() -> None:
        await before()
        started = time.perf_counter()
        with trio.fail_after(PAGE_TIMEOUT):
            await ours()
        mine.append((time.perf_counter() - started) * 1000)

    async def timed_theirs() -> None:
        theirs.append(await _reference(playwright, size))

    for n in range(ROUNDS):
        for side in (timed_ours, timed_theirs) if n % 2 == 0 else (timed_theirs, timed_ours):
            await side()
    return {
        "ms": median(mine),
        "pw_ms": median(theirs),
        "ratio": median([a / b for a, b in zip(mine, theirs, strict=True)]),
        "size": size,
    }


async def _direct(items: list[CorpusPage], playwright: PlaywrightWorker) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    async with launch_browser() as browser:
        page = await browser.new_page()
        for item in items:
            await page.navigate(item.url, timeout=60)
            await playwright.goto(item.url)
            tab = Tab.open(page)

            async def ours(tab: Tab = tab) -> tuple[int, int]:
                result = await run_tool(tab, "screenshot", {})
                if result.is_error or result.image is None:
                    raise RuntimeError(result.content[:300])
                return result.image.width, result.image.height

            rows.append({"id": item.id, **await _rounds(ours, playwright)})
    return rows


async def _relay(items: list[CorpusPage], playwright: PlaywrightWorker) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    async with (
        linked_browser("screenshot") as linked,
        connect(linked.socket, linked.secret, {"name": "bench-screenshot"}) as link,
    ):
        ext, server = linked.ext, linked.server
        for item in items:
            url = server.url(str(item.path.relative_to(linked.server.root)))
            target, tab = await ext.open_tab(url)
            await ext.wait_loaded(tab)
            attached = await ext.browser.send(
                "Target.attachToTarget", {"targetId": target, "flatten": True}
            )
            page = PageTarget(ext.browser, target, str(attached["sessionId"]))
            await ext.worker.evaluate(f"trimtab.agents.share({tab}).then(() => true)")
            await playwright.goto(item.url)

            host_ms: list[float] = []

            async def change(
                page: PageTarget = page,
                calls: list[int] = [],  # noqa: B006 (one list per page: the calls made)
            ) -> None:
                # A change, so the host's call tracker cannot answer from its cache.
                calls.append(len(calls))
                await page.evaluate(f"document.body.dataset.trimtabShot = '{len(calls)}'")

            async def ours(
                link: LinkClient = link, tab: int = tab, host_ms: list[float] = host_ms
            ) -> tuple[int, int]:
                reply = await link.request("tool", tab=tab, name="screenshot", args={})
                if reply["is_error"] or reply["cached"] or "image" not in reply:
                    raise RuntimeError(str(reply["content"])[:300])
                host_ms.append(float(reply["host_ms"]))
                return int(reply["image"]["width"]), int(reply["image"]["height"])

            figures = await _rounds(ours, playwright, change)
            rows.append({"id": item.id, **figures, "host_ms": median(host_ms)})
            await ext.browser.send("Target.closeTarget", {"targetId": target})
    return rows


def _tokens(sizes: list[tuple[int, int]]) -> list[dict[str, int]]:
    """Each size's image tokens by the side panel's own formulas (node runs cost.js)."""
    script = (
        "import { imageTokens } from './extension/shared/cost.js';"
        f"const sizes = {json.dumps(sizes)};"
        "console.log(JSON.stringify(sizes.map(([w, h]) => ({"
        "anthropic: imageTokens('anthropic', w, h), openai: imageTokens('openai', w, h)}))));"
    )
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    tokens: list[dict[str, int]] = json.loads(done.stdout)
    return tokens


async def _measure(items: list[CorpusPage]) -> dict[str, list[dict[str, Any]]]:
    async with open_playwright() as playwright:
        direct = await _direct(items, playwright)
        relay = await _relay(items, playwright)
    return {"direct": direct, "relay": relay}


def run(pattern: str | None = None, out: Callable[[str], None] = print) -> dict[str, Any]:
    """Measure the screenshot targets of issue 27 on corpus pages; print, return."""
    items = [i for i in corpus_pages(pattern) if i.flow is None]
    if pattern is None:
        # Spread over the corpus rather than its first few of one kind.
        step = max(1, len(items) // PAGES)
        items = items[::step][:PAGES]
    measured = trio.run(_measure, items)
    direct, relay = measured["direct"], measured["relay"]
    sizes = [tuple(r["size"]) for r in (*direct, *relay)]
    tokens = _tokens([list(s) for s in sizes])  # type: ignore[misc]
    for row, counted in zip((*direct, *relay), tokens, strict=True):
        row["tokens"] = counted
    out(f"\nScreenshot (viewport, JPEG q{JPEG_QUALITY}): ms = median of {ROUNDS}; reference"
        f" Playwright {REFERENCE} at the same size, same run")  # fmt: skip
    for name, rows in (("direct", direct), ("relay", relay)):
        out(
            table(
                ["page", f"{name} ms", "pw ms", "ratio", "size", "anthropic tok", "openai tok"],
                [
                    [
                        r["id"].replace("pages/", ""), r["ms"], r["pw_ms"], r["ratio"],
                        f"{r['size'][0]}x{r['size'][1]}", r["tokens"]["anthropic"],
                        r["tokens"]["openai"],
                    ]
                    for r in rows
                ],
            )
        )  # fmt: skip
    summary = {
        "direct_ratio": median([r["ratio"] for r in direct]),
        "relay_ratio": median([r["ratio"] for r in relay]),
        "tokens_median": median([t["anthropic"] for t in tokens]),
        "openai_tokens_median": median([t["openai"] for t in tokens]),
        "direct_ms": median([r["ms"] for r in direct]),
        "relay_ms": median([r["ms"] for r in relay]),
        "relay_host_ms": median([r["host_ms"] for r in relay]),
        "pw_ms": median([r["pw_ms"] for r in (*direct, *relay)]),
    }
    out(
        f"SUMMARY screenshot_direct_vs_playwright={summary['direct_ratio']:.2f}"
        f" screenshot_relay_vs_playwright={summary['relay_ratio']:.2f}"
        f" image_tokens_median={summary['tokens_median']:.0f}"
    )
    out(
        f"  medians over {len(direct)} pages: direct {summary['direct_ms']:.1f} ms, relay"
        f" {summary['relay_ms']:.1f} ms (in the host {summary['relay_host_ms']:.1f} ms),"
        f" Playwright {summary['pw_ms']:.1f} ms; tokens per shot"
        f" {summary['tokens_median']:.0f} (Anthropic), {summary['openai_tokens_median']:.0f}"
        f" (OpenAI); target <= {TARGET}x"
    )
    return {"direct": direct, "relay": relay, "summary": summary}
