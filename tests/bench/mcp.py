"""``--only mcp``: what ``trimtab mcp`` adds to a call, on corpus pages.

The same calls, in the same run, on the same shared tabs of one browser with the real
extension and host: through the link directly (`trimtab.link.connect`, as the
command line does) and through a real ``trimtab mcp`` subprocess driven by the
``mcp`` SDK's client. The difference of the medians is the MCP layer (JSON-RPC on
stdio and the server's hop to the link). Target: at most 10 ms more at the median.

Snapshots: before each measured one the page changes (an attribute set over a
separate CDP session, not measured), so the tracker cannot answer from its cache.
Clicks: on a button the bench adds to the page, whose handler only counts.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any, Final

import trio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import Implementation

from tests.bench import CORPUS, corpus_pages, median, table
from tests.support import StaticServer, serve_static
from tests.support.e2e import ExtensionBrowser, launch_with_extension
from trimtab.link import LinkClient, connect, list_endpoints, read_secret

__all__ = ["run"]

ROUNDS: Final = 5
DEFAULT_PAGES: Final = 8
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


async def _timed(call: Callable[[], Awaitable[tuple[str, bool]]]) -> tuple[float, str]:
    started = time.perf_counter()
    with trio.fail_after(CALL_TIMEOUT):
        text, is_error = await call()
    elapsed = (time.perf_counter() - started) * 1000
    if is_error:
        raise AssertionError(f"the call failed: {text[:300]}")
    return elapsed, text


async def _measure(
    ext: ExtensionBrowser, server: StaticServer, pages: list[Any], env: dict[str, str]
) -> dict[str, dict[str, list[float]]]:
    times: dict[str, dict[str, list[float]]] = {
        path: {"snapshot": [], "cached": [], "click": []} for path in ("link", "mcp")
    }
    [endpoint] = [e for e in list_endpoints(Path(env["XDG_RUNTIME_DIR"]) / "trimtab") if e.alive]
    secret = read_secret(Path(env["XDG_STATE_HOME"]) / "trimtab" / "link-secret")
    params = StdioServerParameters(command=sys.executable, args=["-m", "trimtab", "mcp"], env=env)
    async with (
        connect(endpoint.socket, secret, {"name": "bench-link"}) as link,
        Client(params, client_info=Implementation(name="bench-mcp", version="1")) as client,
    ):

        async def by_link(tab: int, name: str, args: dict[str, Any]) -> tuple[str, bool]:
            reply = await _link_call(link, tab, name, args)
            return str(reply["content"]), bool(reply["is_error"])

        async def by_mcp(tab: int, name: str, args: dict[str, Any]) -> tuple[str, bool]:
            result = await client.call_tool(name, {"tab": tab, **args})
            text = "".join(getattr(part, "text", "") for part in result.content)
            return text, bool(result.is_error)

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
                _ms, xml = await _timed(partial(path, tab, "capture_snapshot", {}))
                buttons[name] = _button(xml)
            for n in range(ROUNDS):
                # Alternate which path goes first, so neither always meets a busier page.
                order = list(paths.items()) if n % 2 == 0 else list(paths.items())[::-1]
                for name, path in order:
                    await _evaluate(
                        ext, session, f"document.body.dataset.trimtabBench = '{name}{n}'"
                    )
                    ms, _ = await _timed(partial(path, tab, "capture_snapshot", {}))
                    times[name]["snapshot"].append(ms)
                    # The same read again: the tracker answers it without touching the
                    # page, so this is the path's own cost with a real page's XML.
                    ms, _ = await _timed(partial(path, tab, "capture_snapshot", {}))
                    times[name]["cached"].append(ms)
                    ms, _ = await _timed(partial(path, tab, "click", {"id": buttons[name]}))
                    times[name]["click"].append(ms)
            await ext.browser.send("Target.closeTarget", {"targetId": target})
    return times


async def _link_call(link: LinkClient, tab: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return await link.request("tool", tab=tab, name=name, args=args)


async def _run(pattern: str | None) -> dict[str, Any]:
    pages = corpus_pages(pattern)
    if pattern is None:
        pages = [p for p in pages if p.flow is None][:DEFAULT_PAGES]
    runtime = Path(tempfile.mkdtemp(prefix="tb-"))
    os.chmod(runtime, 0o700)
    saved = dict(os.environ)
    try:
        with tempfile.TemporaryDirectory(prefix="trimtab-bench-mcp-") as folder:
            env = {"XDG_RUNTIME_DIR": str(runtime), "XDG_STATE_HOME": str(Path(folder) / "state")}
            os.environ.update(env, TRIMTAB_LOG_DIR=str(Path(folder) / "logs"))
            async with trio.open_nursery() as nursery:
                server: StaticServer = await nursery.start(serve_static, CORPUS)
                async with launch_with_extension(Path(folder) / "profile") as ext:
                    with trio.fail_after(60):
                        while not list_endpoints(runtime / "trimtab"):
                            await trio.sleep(0.05)
                    times = await _measure(ext, server, pages, env)
                nursery.cancel_scope.cancel()
    finally:
        os.environ.clear()
        os.environ.update(saved)
        shutil.rmtree(runtime, ignore_errors=True)
    return {"pages": [p.id for p in pages], "rounds": ROUNDS, "ms": times}


def run(pattern: str | None, out: Callable[[str], None]) -> dict[str, Any]:
    result = trio.run(_run, pattern)
    times = result["ms"]
    rows = []
    figures: dict[str, Any] = {}
    for call in ("snapshot", "click", "cached"):
        link = median(times["link"][call])
        through = median(times["mcp"][call])
        # Paired: the same page and round through both paths, one after the other.
        paired = median(
            [m - k for m, k in zip(times["mcp"][call], times["link"][call], strict=True)]
        )
        figures[call] = {"link_ms": link, "mcp_ms": through, "paired_extra_ms": paired}
        ok = "yes" if paired <= TARGET_MS else "NO"
        rows.append((call, f"{link:.1f}", f"{through:.1f}", f"{paired:+.1f}", ok))
    out(table(("call", "link median ms", "mcp median ms", "paired extra ms", "<= 10 ms"), rows))
    out(
        f"SUMMARY mcp: on {len(result['pages'])} corpus pages x {ROUNDS} rounds, trimtab mcp "
        f"adds {figures['snapshot']['paired_extra_ms']:+.1f} ms to a snapshot, "
        f"{figures['click']['paired_extra_ms']:+.1f} ms to a click and "
        f"{figures['cached']['paired_extra_ms']:+.1f} ms to a read the tracker answers "
        f"(median of paired differences; target <= {TARGET_MS:g} ms)"
    )
    out(
        "  snapshots and clicks take 0.1-5 s on these pages, so their differences carry "
        "the page's own jitter; the tracker-answered read isolates the layer"
    )
    result["figures"] = figures
    return result
