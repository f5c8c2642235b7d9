"""``--only mcp``: what ``trimtab mcp`` adds to a call, on corpus pages.

The same calls, in the same run, on the same shared tabs of one browser with the real
extension and host: through the link directly (`trimtab.link.connect`, as the
command line does) and through a real ``trimtab mcp`` subprocess driven by the
``mcp`` SDK's client. Same tool, same arguments, the same page state for both: each
round changes the page, then each path in turn (alternating which goes first) takes
a snapshot, the same snapshot again, and a click. Target: at most 10 ms more at the
median.

Snapshots: before each measured one the page changes (an attribute set over a
separate CDP session, not measured), so the tracker cannot answer from its cache.
Clicks: on a button the bench adds to the page, whose handler only counts.

A click takes 0.3-5 s of the page's own time (it waits until the page settles), and
on a shared machine that time varies by hundreds of ms from one click to the next,
so the difference of two end-to-end medians is mostly that noise. The host says how
long it spent on each call (``host_ms`` of the link's reply, passed on in the MCP
result's meta); end to end minus that is the time outside the host (the path's
messages, JSON and processes), and its paired difference is the MCP layer's own
cost. Both figures are reported; the target is checked on the second.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, Final

import trio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import Implementation

from tests.bench import CORPUS, corpus_pages, median, table
from tests.bench._linked import LinkedBrowser, linked_browser
from tests.support.e2e import ExtensionBrowser
from trimtab.link import LinkClient, connect

__all__ = ["run"]

ROUNDS: Final = 5
DEFAULT_PAGES: Final = 8
CALLS: Final = ("snapshot", "click", "cached")
TARGET_MS: Final = 10.0
CALL_TIMEOUT: Final = 120.0
_BUTTON_JS: Final = (
    "(() => { if (!document.getElementById('trimtab-bench')) {"
    " const b = document.createElement('button'); b.id = 'trimtab-bench';"
    " b.textContent = 'Trimtab bench button'; b.style.cssText ="
    " 'position:fixed;top:0;left:0;z-index:2147483647';"
    " b.onclick = () => { b.dataset.n = String(Number(b.dataset.n || 0) + 1); };"
    " document.body.prepend(b); } return true; })()"
)


async def _evaluate(ext: ExtensionBrowser, session: str, expression: str) -> None:
    await ext.browser.send(
        "Runtime.evaluate", {"expression": expression, "returnByValue": True}, session_id=session
    )


def _button(xml: str) -> str:
    for line in xml.splitlines():
        if "Trimtab bench button" in line and 'id="' in line:
            return line.split('id="')[1].split('"')[0]
    raise AssertionError("the bench button is not in the snapshot")


Call = Callable[[], Awaitable[tuple[str, bool, float]]]


async def _timed(call: Call) -> tuple[float, float, str]:
    """End-to-end milliseconds, the host's own milliseconds, and the call's text."""
    started = time.perf_counter()
    with trio.fail_after(CALL_TIMEOUT):
        text, is_error, host_ms = await call()
    elapsed = (time.perf_counter() - started) * 1000
    if is_error:
        raise AssertionError(f"the call failed: {text[:300]}")
    return elapsed, host_ms, text


Times = dict[str, dict[str, dict[str, list[float]]]]


async def _measure(linked: LinkedBrowser, pages: list[Any]) -> Times:
    """``times[path][call]["total" | "host"]``: the milliseconds of each measured call."""
    times: Times = {
        path: {call: {"total": [], "host": []} for call in CALLS} for path in ("link", "mcp")
    }
    ext, server = linked.ext, linked.server
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "trimtab", "mcp"], env=linked.env
    )
    async with (
        connect(linked.socket, linked.secret, {"name": "bench-link"}) as link,
        Client(params, client_info=Implementation(name="bench-mcp", version="1")) as client,
    ):

        async def by_link(tab: int, name: str, args: dict[str, Any]) -> tuple[str, bool, float]:
            reply = await _link_call(link, tab, name, args)
            return str(reply["content"]), bool(reply["is_error"]), float(reply["host_ms"])

        async def by_mcp(tab: int, name: str, args: dict[str, Any]) -> tuple[str, bool, float]:
            result = await client.call_tool(name, {"tab": tab, **args})
            text = "".join(getattr(part, "text", "") for part in result.content)
            host_ms = float((result.meta or {}).get("trimtab", {}).get("host_ms", "nan"))
            return text, bool(result.is_error), host_ms

        paths = {"link": by_link, "mcp": by_mcp}
        for page in pages:
            target, tab = await ext.open_tab(server.url(str(page.path.relative_to(CORPUS))))
            await ext.wait_loaded(tab)
            attached = await ext.browser.send(
                "Target.attachToTarget", {"targetId": target, "flatten": True}
            )
            session = str(attached["sessionId"])
            await _evaluate(ext, session, _BUTTON_JS)
            await ext.worker.evaluate(f"trimtab.agents.share({tab}).then(() => true)")
            buttons = {}
            for name, path in paths.items():  # first looks: baselines, not measured
                _ms, _host, xml = await _timed(partial(path, tab, "capture_snapshot", {}))
                buttons[name] = _button(xml)
            for n in range(ROUNDS):
                # Alternate which path goes first, so neither always meets a busier page.
                order = list(paths.items()) if n % 2 == 0 else list(paths.items())[::-1]
                for name, path in order:
                    await _evaluate(
                        ext, session, f"document.body.dataset.trimtabBench = '{name}{n}'"
                    )
                    # The snapshot, then the same read again (the tracker answers it
                    # without touching the page: the path's own cost with a real
                    # page's XML), then a click on the same button.
                    for call, tool, args in (
                        ("snapshot", "capture_snapshot", {}),
                        ("cached", "capture_snapshot", {}),
                        ("click", "click", {"id": buttons[name]}),
                    ):
                        total, host, _ = await _timed(partial(path, tab, tool, args))
                        times[name][call]["total"].append(total)
                        times[name][call]["host"].append(host)
            await ext.browser.send("Target.closeTarget", {"targetId": target})
    return times


async def _link_call(link: LinkClient, tab: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return await link.request("tool", tab=tab, name=name, args=args)


async def _run(pattern: str | None) -> dict[str, Any]:
    pages = corpus_pages(pattern)
    if pattern is None:
        pages = [p for p in pages if p.flow is None][:DEFAULT_PAGES]
    async with linked_browser("mcp") as linked:
        times = await _measure(linked, pages)
    return {"pages": [p.id for p in pages], "rounds": ROUNDS, "ms": times}


def _paired(mcp: list[float], link: list[float]) -> list[float]:
    """MCP minus link, call by call (the same page and round, one after the other)."""
    return [m - k for m, k in zip(mcp, link, strict=True)]


def _quartiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return ordered[len(ordered) // 4], ordered[(3 * len(ordered)) // 4]


def run(pattern: str | None, out: Callable[[str], None]) -> dict[str, Any]:
    result = trio.run(_run, pattern)
    times = result["ms"]
    rows = []
    figures: dict[str, Any] = {}
    for call in CALLS:
        link, mcp = times["link"][call], times["mcp"][call]
        outside = {
            path: _paired(times[path][call]["total"], times[path][call]["host"])
            for path in ("link", "mcp")
        }
        total_extra = _paired(mcp["total"], link["total"])
        layer_extra = _paired(outside["mcp"], outside["link"])
        low, high = _quartiles(total_extra)
        figures[call] = {
            "link_ms": median(link["total"]),
            "mcp_ms": median(mcp["total"]),
            "paired_extra_ms": median(total_extra),
            "paired_extra_quartiles_ms": [low, high],
            "link_host_ms": median(link["host"]),
            "mcp_host_ms": median(mcp["host"]),
            "link_outside_host_ms": median(outside["link"]),
            "mcp_outside_host_ms": median(outside["mcp"]),
            "layer_extra_ms": median(layer_extra),
        }
        f = figures[call]
        ok = "yes" if f["layer_extra_ms"] <= TARGET_MS else "NO"
        rows.append(
            (
                call,
                f"{f['link_ms']:.1f}",
                f"{f['mcp_ms']:.1f}",
                f"{f['paired_extra_ms']:+.1f} [{low:+.0f}, {high:+.0f}]",
                f"{f['link_host_ms']:.1f} / {f['mcp_host_ms']:.1f}",
                f"{f['link_outside_host_ms']:.1f} / {f['mcp_outside_host_ms']:.1f}",
                f"{f['layer_extra_ms']:+.1f}",
                ok,
            )
        )
    out(
        table(
            (
                "call",
                "link ms",
                "mcp ms",
                "paired extra [quartiles]",
                "in host link / mcp",
                "outside host link / mcp",
                "mcp layer extra",
                "<= 10 ms",
            ),
            rows,
        )
    )
    out(
        f"SUMMARY mcp: on {len(result['pages'])} corpus pages x {ROUNDS} rounds, trimtab mcp "
        f"adds {figures['snapshot']['layer_extra_ms']:+.1f} ms to a snapshot, "
        f"{figures['click']['layer_extra_ms']:+.1f} ms to a click and "
        f"{figures['cached']['layer_extra_ms']:+.1f} ms to a read the tracker answers "
        f"(time outside the host, median of paired differences; target <= {TARGET_MS:g} ms); "
        f"end to end the medians are snapshot {figures['snapshot']['link_ms']:.0f} -> "
        f"{figures['snapshot']['mcp_ms']:.0f} ms, click {figures['click']['link_ms']:.0f} -> "
        f"{figures['click']['mcp_ms']:.0f} ms"
    )
    out(
        "  end-to-end differences carry the page's own jitter (see the quartiles); the time "
        "outside the host is the same call minus what the host reports it spent"
    )
    result["figures"] = figures
    return result
