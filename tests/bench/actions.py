"""Benchmark: how long an action takes to answer, on the fixture pages.

``python -m tests.bench --only actions`` runs scripted actions (click, type, drag,
double-click, select text, reload) on the pages of ``tests/pages`` in a real headless
Chromium, each scenario several times on a freshly loaded page, and prints the median
and 90th-percentile time from the call to its answer (settling and the snapshot
included). Pages split in groups: quiet pages (target: median <= 400 ms), a page
whose prices change every 100 ms beside what is acted on (target: <= 1 s), and a page
that animates on every frame, acted on in a tab behind another one, as outside agents
act (no target of its own: a hidden page that keeps animating is rendered about once a
second, which held each mouse move and wheel turn for up to a second before).
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import trio

from pycdp_bridge import launch_browser
from pycdp_bridge import protocol as cdp
from tests.bench import median, table
from tests.support import TEST_PAGES, StaticServer, serve_static
from trimtab.tab import Tab
from trimtab.tools import granted, run_tool

ROUNDS = 3
# How long a background scenario's tab is hidden before it acts: Chromium throttles a
# hidden page's rendering once it has been hidden a moment.
HIDDEN_FOR = 1.5
QUIET_TARGET_MS = 400.0
TICKER_TARGET_MS = 1000.0

Act = Callable[[str, Mapping[str, object]], Awaitable[str]]
Scenario = Callable[[str, Act], Awaitable[None]]


def _id(xml: str, tag: str, text: str) -> str:
    """The id of the first `<tag>` whose markup or following text holds `text`."""
    for match in re.finditer(rf'<{tag} id="([^"]+)"(?:[^>]*/>|[^>]*>[^<]*</{tag}>)[^<]*', xml):
        if text in match.group(0):
            return match.group(1)
    raise LookupError(f"no <{tag}> with {text!r} in the page")


def _field_after(xml: str, label: str) -> str:
    match = re.search(re.escape(label) + r' <(?:input|textarea) id="([^"]+)"', xml)
    if match is None:
        raise LookupError(f"no field after {label!r}")
    return match.group(1)


async def _form(xml: str, act: Act) -> None:
    await act("type", {"id": _id(xml, "input", "placeholder name"), "text": "Ada Lovelace"})
    await act("type", {"id": _id(xml, "input", 'type="email"'), "text": "ada@example.org"})


async def _popup(xml: str, act: Act) -> None:
    opened = await act("click", {"id": _id(xml, "button", "OK")})
    await act("click", {"id": _id(opened, "button", "OK")})


async def _pointer(xml: str, act: Act) -> None:
    await act("double_click", {"id": _id(xml, "option", "notes.txt")})
    await act("select_text", {"id": _id(xml, "textbox", "Hello world"), "text": "world"})
    await act("drag", {"id": _id(xml, "clickable", ""), "dx": 120})
    done = xml.index("<h2>Done</h2>")
    await act("drag", {"id": _id(xml, "a", "Fix login bug"), "to": _id(xml[done:], "button", "")})


async def _focus(xml: str, act: Act) -> None:
    await act("type", {"id": _field_after(xml, "ZIP code"), "text": "94103"})
    await act("type", {"id": _field_after(xml, "Name"), "text": "Ada"})


async def _ticker(xml: str, act: Act) -> None:
    await act("click", {"id": _id(xml, "button", "Add to watchlist")})
    await act("click", {"id": _id(xml, "button", "Show details")})
    await act("type", {"id": _field_after(xml, "Symbol"), "text": "XYZ"})
    await act("press", {"key": "Tab"})
    await act("reload", {})


async def _background(xml: str, act: Act) -> None:
    deal = _id(xml, "clickable", "Two-person tent")
    await act("click", {"id": deal})
    await act("hover", {"id": _id(xml, "a", "Camping")})
    await act("scroll", {"direction": "down"})
    await act("double_click", {"id": deal})


# Page, group, scenario; the "background" group acts in a tab behind another one.
SCENARIOS: tuple[tuple[str, str, Scenario], ...] = (
    ("tools-form.html", "quiet", _form),
    ("ids-popup.html", "quiet", _popup),
    ("pointer-tools.html", "quiet", _pointer),
    ("tool-errors-focus.html", "quiet", _focus),
    ("settle-ticker.html", "ticker", _ticker),
    ("tools-background-ticker.html", "background", _background),
)


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))] if ordered else 0.0


async def _measure(out: Callable[[str], None]) -> dict[str, Any]:
    times: dict[str, list[tuple[str, str, float]]] = {"quiet": [], "ticker": [], "background": []}
    notes: list[str] = []
    async with trio.open_nursery() as nursery:
        server: StaticServer = await nursery.start(serve_static, TEST_PAGES)
        async with launch_browser() as browser:
            for page_name, group, scenario in SCENARIOS:
                for _ in range(ROUNDS):
                    page = await browser.new_page()
                    tab = Tab.open(page)
                    loaded = await run_tool(tab, "navigate", {"url": server.url(page_name)})
                    if loaded.is_error:
                        raise RuntimeError(f"{page_name}: {loaded.content}")
                    front = None
                    if group == "background":
                        front = await browser.new_page("about:blank")
                        await front.execute(cdp.page_bring_to_front())
                        await trio.sleep(HIDDEN_FOR)

                    async def act(
                        name: str,
                        args: Mapping[str, object],
                        page_name: str = page_name,
                        group: str = group,
                        tab: Tab = tab,
                    ) -> str:
                        started = time.perf_counter()
                        # The person's consent is given at once: the answer is timed.
                        with granted(True):
                            result = await run_tool(tab, name, args)
                        elapsed = (time.perf_counter() - started) * 1000
                        if result.is_error:
                            raise RuntimeError(f"{page_name} {name}: {result.content}")
                        if "did not settle" in result.content:
                            notes.append(f"{page_name} {name}: did not settle")
                        times[group].append((page_name, name, elapsed))
                        return result.content

                    await scenario(loaded.content, act)
                    await page.close()
                    if front is not None:
                        await front.close()
        nursery.cancel_scope.cancel()
    rows = []
    for page_name, _, _ in SCENARIOS:
        for name in dict.fromkeys(n for g in times.values() for p, n, _ in g if p == page_name):
            ms = [t for g in times.values() for p, n, t in g if p == page_name and n == name]
            rows.append([page_name, name, len(ms), f"{median(ms):.0f}", f"{_p90(ms):.0f}"])
    out(table(["page", "action", "n", "median ms", "p90 ms"], rows))
    figures: dict[str, Any] = {"unsettled": notes}
    for group in times:
        ms = [t for _, _, t in times[group]]
        figures[group] = {"n": len(ms), "median_ms": median(ms), "p90_ms": _p90(ms)}
    figures["quiet"]["target_ms"] = QUIET_TARGET_MS
    figures["ticker"]["target_ms"] = TICKER_TARGET_MS
    return figures


def run(pattern: str | None = None, out: Callable[[str], None] = print) -> dict[str, Any]:
    """Time the scripted actions (``pattern`` is ignored: fixture pages, not the corpus)."""
    del pattern
    figures = trio.run(_measure, out)
    quiet, ticker, background = figures["quiet"], figures["ticker"], figures["background"]
    out(
        f"SUMMARY actions: quiet pages median {quiet['median_ms']:.0f} ms, p90 "
        f"{quiet['p90_ms']:.0f} ms (target median <= {QUIET_TARGET_MS:.0f} ms); "
        f"100 ms ticker page median {ticker['median_ms']:.0f} ms, p90 {ticker['p90_ms']:.0f} ms "
        f"(target <= {TICKER_TARGET_MS:.0f} ms); {len(figures['unsettled'])} unsettled answers"
    )
    out(
        f"SUMMARY actions in a background tab that animates on every frame: median"
        f" {background['median_ms']:.0f} ms, p90 {background['p90_ms']:.0f} ms"
        f" (click, hover, scroll, double-click)"
    )
    for line in figures["unsettled"]:
        out(f"  {line}")
    return figures


if __name__ == "__main__":
    run(sys.argv[1] if len(sys.argv) > 1 else None)
