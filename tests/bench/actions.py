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

The widget classes of ``_widgets`` (sortable lists and grids, quoted text, keys,
drawn shapes, drop-downs over a select, slider handles, a resizable element's grip, a
covering picker) are each tried several times and judged by
the page's own state: done / tried per class.

Over every action that presses the mouse it also counts, from a recorder of its own
in the page, presses and releases whose target was not the element named (must be
0), and answers ``<unchanged/>`` whose element received no event at all (must be 0,
or explained by the answer's note).
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
import trio

from pycdp_bridge import CDPError, JavaScriptError, ObjectRef, PageTarget, call_on, launch_browser
from pycdp_bridge import protocol as cdp
from tests.bench import median, table
from tests.support import TEST_PAGES, StaticServer, serve_static
from tests.support.xmltree import eid_of
from trimtab.tab import Tab
from trimtab.tools import run_tool

from ._widgets import WIDGET_CLASSES

ROUNDS = 3
# How long a background scenario's tab is hidden before it acts: Chromium throttles a
# hidden page's rendering once it has been hidden a moment.
HIDDEN_FOR = 1.5
QUIET_TARGET_MS = 400.0
TICKER_TARGET_MS = 1000.0

# Actions that press the mouse on the element their id names.
PRESSING = frozenset({"click", "double_click", "check", "type", "drag"})
RECORDER = Path(__file__).with_name("press-recorder.js").read_text(encoding="utf-8")
RECORDER_READ = Path(__file__).with_name("press-recorder-read.js").read_text(encoding="utf-8")

Act = Callable[[str, Mapping[str, object]], Awaitable[str]]
Scenario = Callable[[str, Act], Awaitable[None]]


def _field_after(xml: str, label: str) -> str:
    match = re.search(re.escape(label) + r' <(?:input|textarea) id="([^"]+)"', xml)
    if match is None:
        raise LookupError(f"no field after {label!r}")
    return match.group(1)


async def _form(xml: str, act: Act) -> None:
    await act("type", {"id": eid_of(xml, "input", "placeholder name"), "text": "Ada Lovelace"})
    await act("type", {"id": eid_of(xml, "input", 'type="email"'), "text": "ada@example.org"})


async def _popup(xml: str, act: Act) -> None:
    opened = await act("click", {"id": eid_of(xml, "button", "OK")})
    await act("click", {"id": eid_of(opened, "button", "OK")})


async def _pointer(xml: str, act: Act) -> None:
    await act("double_click", {"id": eid_of(xml, "option", "notes.txt")})
    await act("select_text", {"id": eid_of(xml, "textbox", "Hello world"), "text": "world"})
    await act("drag", {"id": eid_of(xml, "slider", ""), "dx": 120})
    done = xml.index("<h2>Done</h2>")
    await act(
        "drag", {"id": eid_of(xml, "a", "Fix login bug"), "to": eid_of(xml[done:], "button", "")}
    )


async def _focus(xml: str, act: Act) -> None:
    await act("type", {"id": _field_after(xml, "ZIP code"), "text": "94103"})
    await act("type", {"id": _field_after(xml, "Name"), "text": "Ada"})


async def _ticker(xml: str, act: Act) -> None:
    await act("click", {"id": eid_of(xml, "button", "Add to watchlist")})
    await act("click", {"id": eid_of(xml, "button", "Show details")})
    await act("type", {"id": _field_after(xml, "Symbol"), "text": "XYZ"})
    await act("press", {"key": "Tab"})
    await act("reload", {})


async def _autocomplete(xml: str, act: Act) -> None:
    await act("hover", {"id": eid_of(xml, "option", "Rapid Valley, SD")})
    await act("click", {"id": eid_of(xml, "option", "Rapid City, SD")})


async def _icons(xml: str, act: Act) -> None:
    # The star and the pin come back under the pointer; the snooze icon does not, and
    # its row gets the release: the answer says so.
    await act("click", {"id": eid_of(xml, "button", "Star")})
    await act("click", {"id": eid_of(xml, "button", "Pin")})
    await act("click", {"id": eid_of(xml, "button", "Snooze")})


async def _sortable(xml: str, act: Act) -> None:
    # Lifting the row closes its gap: the goal moves up during the drag.
    await act(
        "drag",
        {"id": eid_of(xml, "clickable", "Moby-Dick"), "to": eid_of(xml, "clickable", "Walden")},
    )


async def _background(xml: str, act: Act) -> None:
    deal = eid_of(xml, "clickable", "Two-person tent")
    await act("click", {"id": deal})
    await act("hover", {"id": eid_of(xml, "a", "Camping")})
    await act("scroll", {"direction": "down"})
    await act("double_click", {"id": deal})


# Page, group, scenario; the "background" group acts in a tab behind another one; the
# "moving" group's elements move when the pointer arrives or presses (not timed
# against a target: a pointer that waits for an element to come back takes longer).
SCENARIOS: tuple[tuple[str, str, Scenario], ...] = (
    ("tools-form.html", "quiet", _form),
    ("ids-popup.html", "quiet", _popup),
    ("pointer-tools.html", "quiet", _pointer),
    ("tool-errors-focus.html", "quiet", _focus),
    ("settle-ticker.html", "ticker", _ticker),
    ("tools-background-ticker.html", "background", _background),
    ("press-autocomplete.html", "moving", _autocomplete),
    ("press-icons.html", "moving", _icons),
    ("press-sortable.html", "moving", _sortable),
)


@attrs.define
class PressCounts:
    """Where the pressing actions' presses went, as the bench's own recorder saw it."""

    actions: int = 0
    unrecorded: int = 0  # the page went away before the recorder was read
    misdirected: list[str] = attrs.Factory(list)  # presses (mousedown) off the element
    released_off: list[str] = attrs.Factory(list)  # releases off it (with the answer's note?)
    silent: list[str] = attrs.Factory(list)  # <unchanged/>, element heard nothing, no note
    explained: list[str] = attrs.Factory(list)  # the same, with a note that says so


async def _element(page: PageTarget, tab: Tab, eid: object) -> str | None:
    """A remote object for the element the latest snapshot gave `eid` (tab's document)."""
    latest = tab.latest
    if not isinstance(eid, str) or latest is None or eid not in latest.controls:
        return None
    control = latest.controls[eid]
    if control.frame != 0:
        return None
    resolved = await page.execute(cdp.dom_resolve_node(backend_node_id=control.backend_node_id))
    return str(resolved["object"]["objectId"])


async def _record(page: PageTarget, tab: Tab, args: Mapping[str, object]) -> str | None:
    """Start the recorder on the named element (and a drag's goal); its object id."""
    try:
        element = await _element(page, tab, args.get("id"))
        if element is None:
            return None
        goal = await _element(page, tab, args.get("to"))
        record = await call_on(
            page, element, RECORDER, ObjectRef(goal) if goal else None, return_by_value=False
        )
    except (CDPError, JavaScriptError):
        return None
    object_id = record.get("objectId")
    return None if object_id is None else str(object_id)


async def _count_presses(
    page: PageTarget, record: str | None, what: str, name: str, answer: str, counts: PressCounts
) -> None:
    """Read the recorder and count a misdirected press or a silent answer."""
    counts.actions += 1
    try:
        events = None if record is None else await call_on(page, record, RECORDER_READ)
    except (CDPError, JavaScriptError):
        events = None
    if not isinstance(events, list):
        counts.unrecorded += 1
        return
    noted = "<note>" in answer
    for kind, on_element, on_goal in events:
        if kind == "mousedown" and not on_element:
            counts.misdirected.append(f"{what}: a press off the element")
        # A drag's release lands on its goal (or on the source that follows the pointer).
        if kind == "mouseup" and not on_element and not (name == "drag" and on_goal):
            told = "told in the answer's note" if noted else "NOT told in the answer"
            counts.released_off.append(f"{what}: a release off the element, {told}")
    heard = any(on_element for _, on_element, _ in events)
    if "<unchanged/>" in answer and not heard:
        (counts.explained if noted else counts.silent).append(what)


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))] if ordered else 0.0


async def _measure(out: Callable[[str], None]) -> dict[str, Any]:
    times: dict[str, list[tuple[str, str, float]]] = {
        "quiet": [],
        "ticker": [],
        "background": [],
        "moving": [],
        "widgets": [],
    }
    # Widget class: [done, tried]; and why a try failed.
    widgets: dict[str, list[int]] = {}
    failures: list[str] = []
    notes: list[str] = []
    presses = PressCounts()
    async with trio.open_nursery() as nursery:
        server: StaticServer = await nursery.start(serve_static, TEST_PAGES)
        async with launch_browser() as browser:

            async def open_page(page_name: str) -> tuple[PageTarget, Tab, str]:
                page = await browser.new_page()
                tab = Tab.open(page)
                loaded = await run_tool(tab, "navigate", {"url": server.url(page_name)})
                if loaded.is_error:
                    raise RuntimeError(f"{page_name}: {loaded.content}")
                return page, tab, loaded.content

            def acting(page_name: str, group: str, tab: Tab, page: PageTarget) -> Act:
                async def act(name: str, args: Mapping[str, object]) -> str:
                    pressing = name in PRESSING
                    # Set before the timer starts: the recorder is not timed.
                    record = await _record(page, tab, args) if pressing else None
                    started = time.perf_counter()
                    # The person's consent is given at once: the answer is timed.
                    result = await run_tool(tab, name, args, consented=True)
                    elapsed = (time.perf_counter() - started) * 1000
                    if pressing:
                        what = f"{page_name} {name}"
                        await _count_presses(page, record, what, name, result.content, presses)
                    if result.is_error:
                        raise RuntimeError(f"{page_name} {name}: {result.content}")
                    if "did not settle" in result.content:
                        notes.append(f"{page_name} {name}: did not settle")
                    times[group].append((page_name, name, elapsed))
                    return result.content

                return act

            for page_name, group, scenario in SCENARIOS:
                for _ in range(ROUNDS):
                    page, tab, xml = await open_page(page_name)
                    front = None
                    if group == "background":
                        front = await browser.new_page("about:blank")
                        await front.execute(cdp.page_bring_to_front())
                        await trio.sleep(HIDDEN_FOR)
                    await scenario(xml, acting(page_name, group, tab, page))
                    await page.close()
                    if front is not None:
                        await front.close()
            for kind, page_name, widget in WIDGET_CLASSES:
                for _ in range(ROUNDS):
                    page, tab, xml = await open_page(page_name)
                    tried = widgets.setdefault(kind, [0, 0])
                    tried[1] += 1
                    try:
                        done = await widget(
                            xml, acting(page_name, "widgets", tab, page), page.evaluate
                        )
                    except (RuntimeError, LookupError) as exc:
                        failures.append(f"{kind}: {str(exc)[:160]}")
                        done = False
                    tried[0] += int(done)
                    await page.close()
        nursery.cancel_scope.cancel()
    rows = []
    for page_name, _, _ in SCENARIOS:
        for name in dict.fromkeys(n for g in times.values() for p, n, _ in g if p == page_name):
            ms = [t for g in times.values() for p, n, t in g if p == page_name and n == name]
            rows.append([page_name, name, len(ms), f"{median(ms):.0f}", f"{_p90(ms):.0f}"])
    out(table(["page", "action", "n", "median ms", "p90 ms"], rows))
    figures: dict[str, Any] = {
        "unsettled": notes,
        "widget_classes": {kind: {"done": d, "tried": t} for kind, (d, t) in widgets.items()},
        "widget_failures": failures,
        "presses": {
            "actions": presses.actions,
            "unrecorded": presses.unrecorded,
            "misdirected": presses.misdirected,
            "released_off": presses.released_off,
            "silent_unchanged": presses.silent,
            "explained_unchanged": presses.explained,
        },
    }
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
    moving = figures["moving"]
    out(
        f"SUMMARY actions on elements that move under the pointer (autocomplete, icons, a"
        " sortable list):"
        f" median {moving['median_ms']:.0f} ms, p90 {moving['p90_ms']:.0f} ms"
    )
    out(
        f"SUMMARY actions in a background tab that animates on every frame: median"
        f" {background['median_ms']:.0f} ms, p90 {background['p90_ms']:.0f} ms"
        f" (click, hover, scroll, double-click)"
    )
    for line in figures["unsettled"]:
        out(f"  {line}")
    pressed = figures["presses"]
    out(
        f"SUMMARY actions' presses: over {pressed['actions']} pressing actions "
        f"({pressed['unrecorded']} left the page before the recorder was read), "
        f"{len(pressed['misdirected'])} presses off the named element (must be 0), "
        f"{len(pressed['released_off'])} releases off it; "
        f"{len(pressed['silent_unchanged'])} <unchanged/> answers whose element heard no event "
        f"(must be 0), {len(pressed['explained_unchanged'])} more explained by a note"
    )
    for line in pressed["misdirected"] + pressed["released_off"] + pressed["silent_unchanged"]:
        out(f"  {line}")
    classes = figures["widget_classes"]
    out(
        "SUMMARY actions on widgets: "
        + "; ".join(f"{kind} {c['done']}/{c['tried']}" for kind, c in classes.items())
        + f"; {len(pressed['misdirected'])} presses off the named element (must be 0);"
        f" median action {figures['widgets']['median_ms']:.0f} ms"
    )
    for line in figures["widget_failures"]:
        out(f"  {line}")
    return figures


if __name__ == "__main__":
    run(sys.argv[1] if len(sys.argv) > 1 else None)
