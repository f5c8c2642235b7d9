"""``--only concurrency``: many outside agents at once, each on its own tab.

One browser with the real extension and host; 1, 2, 4 and 8 outside clients, each a
real ``trimtab mcp`` process driven by the ``mcp`` SDK's client, each on its own tab
of a fixture page (``tests/pages/handlers-shop.html``, each tab served from its own
loopback address, 127.0.0.N, so each is its own site and renderer, as tabs of
different sites are). All clients of a level start together and each makes the same
mix of 50 calls: snapshots, clicks, types and reads (``read``, ``find``). Then one
more run of 8 clients where one tab holds a page that never stops loading (an image
whose response never comes), and one of a single client whose calls all run while
another client's click waits on a frozen page (``agents-frozen.html``: its script
keeps its renderer busy until the run is over), which the suite's tests prove ends
no call late by order alone; here is how fast.

Per level: calls per second, p50 and p95 call latency (as the client sees it) and
their ratio to one client alone in the same run, the p50 of the host's own share of
a call (``host_ms``: the rest is the ``trimtab mcp`` process and the link), wrong
answers and errors. The p50 is compared kind by kind (snapshot, click, type, read,
find), and the ratio given is the largest of the five: half the mix are actions, which
wait about 300 ms for the page to settle, and half are answered in 10 to 25 ms, so the
p50 of all calls together sits on the edge between the two and jumps from one to the
other with a single call (50 calls put it on the last fast one, 100 on the first slow
one), whatever the load. Each tab's page carries a marker text of its own (set over
CDP after it loads, not by a client): an answer is wrong when it shows another tab's
marker or another tab's address, or when a client's first snapshot lacks its own
marker. Target: at 8 clients p50 at most 3x one client's (every kind of call), no
wrong answer, no error.

A second table says where the CPU went at each level: how many of the machine's cores
were busy, and each kind of process's milliseconds of CPU per call (`_process_kind`);
then what one call of each kind costs, made by one client `KIND_CALLS` times in a row.
Once the cores are busy, a short call waits for the others' work, whatever its own.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import statistics
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Final

import attrs
import trio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import Implementation

from tests.bench import table
from tests.bench._cpu import busy_ms, cpu_by_kind
from tests.bench._linked import LinkedBrowser, linked_browser
from tests.support.http import read_head, respond_file

__all__ = ["run"]

LEVELS: Final = (1, 2, 4, 8)
CALLS: Final = 50
# Calls of each kind in a row, one client, for the CPU each kind costs.
KIND_CALLS: Final = 10
TARGET_P50: Final = 3.0
CALL_TIMEOUT: Final = 120.0
PAGES: Final = Path(__file__).resolve().parent.parent / "pages"
PAGE: Final = "handlers-shop.html"
# The page that never stops loading: the same page with an image whose response never
# comes, so its load never ends (the tab's spinner turns for ever).
NEVER: Final = "never-loads/" + PAGE
# The page whose script loops until told to stop: between its busy slices it asks
# ``/still-frozen`` whether to go on (see `Freeze`).
FROZEN: Final = "agents-frozen.html"
# The ten calls each client repeats five times: what an agent does on a shop page.
MIX: Final = (
    "capture_snapshot",
    "click",
    "type",
    "read",
    "find",
    "click",
    "type",
    "capture_snapshot",
    "read",
    "click",
)
# The kinds of call, each compared with its own kind at one client.
KINDS: Final = tuple(sorted(set(MIX)))
# The processes of a run, by what they are (`_process_kind`), in the CPU table.
PROCESSES: Final = (
    "browser",
    "extension",
    "pages",
    "other Chromium",
    "host",
    "trimtab mcp",
    "bench",
)
_MARK_JS: Final = (
    "(() => { let p = document.getElementById('bench-marker');"
    " if (!p) { p = document.createElement('p'); p.id = 'bench-marker';"
    " document.body.prepend(p); } p.textContent = MARKER; return true; })()"
)


@attrs.frozen
class Site:
    """One tab's server: its loopback address and port."""

    host: str
    port: int

    def url(self, path: str) -> str:
        return f"http://{self.host}:{self.port}/{path}"


@attrs.define
class Freeze:
    """Whether the frozen page's script goes on (``/still-frozen`` answers 200 while
    it does), and how often it asked."""

    held: bool = True
    asked: int = 0


async def _serve(host: str, freeze: Freeze, *, task_status: trio.TaskStatus[Site]) -> None:
    """tests/pages on ``host``; ``/stall`` never answers, ``/never-loads/PAGE`` is
    PAGE with an image from ``/stall``, and ``/still-frozen`` tells the frozen page
    whether to go on (`Freeze`)."""

    async def handle(stream: trio.SocketStream) -> None:
        async with stream:
            try:
                head = await read_head(stream)
            except (trio.BrokenResourceError, ValueError):
                return
            path = head.split(b" ", 2)[1].decode("latin-1") if head.count(b" ") >= 2 else "/"
            if path.startswith("/stall"):
                await trio.sleep_forever()
            never = path.startswith("/never-loads/")
            if never:
                head = head.replace(b"/never-loads/", b"/", 1)
            if path.startswith("/still-frozen"):
                freeze.asked += 1
                status = "200 OK" if freeze.held else "404 Not Found"
                content_type, body = "text/plain", b"yes" if freeze.held else b"no"
            else:
                status, content_type, body = respond_file(PAGES, head)
            if never:
                body = body.replace(b"</body>", b'<img src="/stall.png" alt=""></body>')
            header = (
                f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            ).encode()
            with contextlib.suppress(trio.BrokenResourceError):
                await stream.send_all(header + body)

    listeners = await trio.open_tcp_listeners(0, host=host)
    port = listeners[0].socket.getsockname()[1]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.serve_listeners, handle, listeners)
        task_status.started(Site(host, port))


@attrs.define
class Tab:
    """One client's tab: its browser ids, its site and its marker."""

    target: str
    id: int
    session: str
    site: Site
    marker: str = ""


@attrs.define
class Outcome:
    """What one client's run gave: each call's milliseconds, and what went wrong."""

    tab: int
    looked: bool = False  # its first snapshot (not measured) is done
    ms: list[float] = attrs.field(factory=list)
    kinds: list[str] = attrs.field(factory=list)  # each call's tool, beside its ms
    # The host's own share of each call (``host_ms`` of the answer's meta): the rest is
    # the client's process and the link.
    host_ms: list[float] = attrs.field(factory=list)
    errors: list[str] = attrs.field(factory=list)
    wrong: list[str] = attrs.field(factory=list)


def _eid(xml: str, needle: str) -> str | None:
    for line in xml.splitlines():
        if needle in line and 'id="' in line:
            return line.split('id="')[1].split('"')[0]
    return None


def _text_of(result: Any) -> str:
    return "".join(getattr(part, "text", "") for part in result.content)


def _wrongness(text: str, own: Tab, tabs: list[Tab]) -> str | None:
    """Why an answer is not of ``own``'s tab (None: nothing says it is another's)."""
    for other in tabs:
        if other is own:
            continue
        if other.marker in text:
            return f"shows tab {other.id}'s marker"
        if f"//{other.site.host}:" in text:
            return f"shows tab {other.id}'s address"
    return None


async def _client_run(
    client: Client,
    tab: Tab,
    tabs: list[Tab],
    start: trio.Event,
    outcome: Outcome,
    kind: str | None = None,
    calls: int = CALLS,
) -> None:
    """The first look (not measured), then `calls` calls once ``start`` is set: the
    mix, or calls of one `kind`."""
    with trio.fail_after(CALL_TIMEOUT):
        first = await client.call_tool("capture_snapshot", {"tab": tab.id})
    xml = _text_of(first)
    if first.is_error:
        outcome.errors.append(f"first snapshot: {xml[:200]}")
    if tab.marker not in xml:
        outcome.wrong.append("its first snapshot lacks its own marker")
    button, field = _eid(xml, "Add to bag"), _eid(xml, 'type="email"')
    # What `read` reads in full: the marker's paragraph when it has an id, else the button.
    shown = _eid(xml, tab.marker) or button
    if button is None or field is None:
        outcome.errors.append(f"the page lacks its button or field: {xml[:300]}")
    outcome.looked = True
    await start.wait()
    for n in range(calls):
        name = MIX[n % len(MIX)] if kind is None else kind
        args: dict[str, Any] = {"tab": tab.id}
        if name == "click":
            args["id"] = button
        elif name == "type":
            args.update(id=field, text=f"buyer{n}@example.test")
        elif name == "read":
            args["id"] = shown
        elif name == "find":
            args["text"] = "Add to bag"
        began = time.perf_counter()
        try:
            with trio.fail_after(CALL_TIMEOUT):
                result = await client.call_tool(name, args)
        except Exception as exc:  # a broken call is counted, never the run's end
            outcome.errors.append(f"{name}: {type(exc).__name__}: {exc}"[:300])
            continue
        outcome.ms.append((time.perf_counter() - began) * 1000)
        outcome.kinds.append(name)
        host = (result.meta or {}).get("trimtab", {}).get("host_ms")
        outcome.host_ms.append(float(host) if isinstance(host, int | float) else float("nan"))
        text = _text_of(result)
        if result.is_error:
            outcome.errors.append(f"{name}: {text[:300]}")
        why = _wrongness(text, tab, tabs)
        if why is not None:
            outcome.wrong.append(f"{name}: {why}")


def _process_kind(command: str) -> str:
    """What a process of the run is, from its command line: Chromium's browser process
    (which carries the relay's CDP through ``chrome.debugger``), the extension's
    renderer (its service worker relays every tab's CDP to the host), the pages'
    renderers, Chromium's other processes (GPU, network, utilities), the host, a
    client's ``trimtab mcp``, or this process (the clients' SDK sessions and the
    pages' servers)."""
    if "trimtab-host" in command:
        return "host"
    if "-m trimtab mcp" in command:
        return "trimtab mcp"
    if "tests.bench" in command:
        return "bench"
    if "--type=renderer" in command:
        return "extension" if "--extension-process" in command else "pages"
    if "--type=" in command:
        return "other Chromium"
    return "browser" if "chrom" in command else "other"


@attrs.define
class CpuMeter:
    """CPU spent during a run by each kind of process of the bench (`_process_kind`),
    and by the whole machine."""

    processes: dict[str, float] = attrs.field(factory=dict)
    machine: float = 0.0

    def start(self) -> None:
        self.processes = cpu_by_kind(os.getpid(), _process_kind)
        self.machine = busy_ms()

    def spent(self) -> dict[str, float]:
        """Milliseconds since `start`, by kind, and the machine's as ``machine``."""
        now = cpu_by_kind(os.getpid(), _process_kind)
        spent = {kind: ms - self.processes.get(kind, 0.0) for kind, ms in now.items()}
        spent["machine"] = busy_ms() - self.machine
        return spent


@contextlib.asynccontextmanager
async def _clients(linked: LinkedBrowser, count: int) -> AsyncIterator[list[Client]]:
    """``count`` real ``trimtab mcp`` processes behind the SDK's client."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "trimtab", "mcp"], env=linked.env
    )
    async with contextlib.AsyncExitStack() as stack:
        made = []
        for n in range(count):
            info = Implementation(name=f"bench-agent-{n}", version="1")
            made.append(await stack.enter_async_context(Client(params, client_info=info)))
        yield made


async def _reset(linked: LinkedBrowser, tab: Tab, path: str) -> None:
    """Load the tab's page afresh and give it a new marker (over CDP, not a client)."""
    ext = linked.ext
    await ext.browser.send("Page.navigate", {"url": tab.site.url(path)}, session_id=tab.session)
    with trio.fail_after(30):
        while True:
            ready = await ext.browser.send(
                "Runtime.evaluate",
                {"expression": "document.readyState", "returnByValue": True},
                session_id=tab.session,
            )
            state = ready.get("result", {}).get("value")
            # A page that never stops loading never gets past "interactive".
            if state == "complete" or (path == NEVER and state == "interactive"):
                break
            await trio.sleep(0.05)
    tab.marker = f"bench-marker-{tab.id}-{secrets.token_hex(4)}"
    expression = _MARK_JS.replace("MARKER", json.dumps(f"Tab marker {tab.marker}"))
    await ext.browser.send(
        "Runtime.evaluate",
        {"expression": expression, "returnByValue": True},
        session_id=tab.session,
    )


async def _level(
    linked: LinkedBrowser,
    tabs: list[Tab],
    count: int,
    stalled: bool = False,
    kind: str | None = None,
    calls: int = CALLS,
) -> tuple[list[Outcome], float, dict[str, float]]:
    """``count`` clients at once, the last on the never-loading page when ``stalled``,
    each making `calls` calls (the mix, or of one `kind`); their outcomes, the wall
    time of the measured calls (seconds) and the CPU spent meanwhile
    (`CpuMeter.spent`)."""
    used = tabs[:count]
    for n, tab in enumerate(used):
        await _reset(linked, tab, NEVER if stalled and n == count - 1 else PAGE)
    outcomes = [Outcome(tab.id) for tab in used]
    start = trio.Event()
    async with _clients(linked, count) as clients:
        async with trio.open_nursery() as nursery:
            for client, tab, outcome in zip(clients, used, outcomes, strict=True):
                nursery.start_soon(_client_run, client, tab, used, start, outcome, kind, calls)
            # Every client has had its first look before the clock starts.
            with trio.fail_after(CALL_TIMEOUT * 2):
                while not all(o.looked for o in outcomes):
                    await trio.sleep(0.05)
            meter = CpuMeter()
            meter.start()
            began = time.perf_counter()
            start.set()
        wall = time.perf_counter() - began
        cpu = meter.spent()  # before the clients' processes end
    return outcomes, wall, cpu


async def _kinds_alone(linked: LinkedBrowser, tab: Tab) -> dict[str, dict[str, Any]]:
    """One client making `KIND_CALLS` calls of one kind after another, kind by kind:
    each kind's figures, with the CPU it cost (``cpu_ms``)."""
    costs: dict[str, dict[str, Any]] = {}
    for kind in KINDS:
        outcomes, wall, cpu = await _level(linked, [tab], 1, kind=kind, calls=KIND_CALLS)
        costs[kind] = {**_figures(outcomes, wall), "cpu_ms": cpu}
    return costs


async def _beside_frozen(
    linked: LinkedBrowser, tabs: list[Tab], freeze: Freeze
) -> tuple[list[Outcome], float, bool]:
    """One client's 50 calls while another client's click waits on the frozen page in
    another tab: its outcome, the wall time, and whether the page stayed frozen for
    the whole run (else the figures say nothing of a frozen tab)."""
    worker_tab, frozen_tab = tabs[0], tabs[1]
    await _reset(linked, worker_tab, PAGE)
    await _reset(linked, frozen_tab, FROZEN)
    freeze.held, freeze.asked = True, 0
    outcome = Outcome(worker_tab.id)
    clicked = trio.Event()
    async with _clients(linked, 2) as (worker, freezer):
        with trio.fail_after(CALL_TIMEOUT):
            first = await freezer.call_tool("capture_snapshot", {"tab": frozen_tab.id})
        button = _eid(_text_of(first), "Freeze the page")

        async def click_frozen() -> None:
            with contextlib.suppress(Exception), trio.fail_after(CALL_TIMEOUT * 4):
                await freezer.call_tool("click", {"tab": frozen_tab.id, "id": button})
            clicked.set()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(click_frozen)
            with trio.fail_after(CALL_TIMEOUT):
                while not freeze.asked:
                    await trio.sleep(0.05)
            start = trio.Event()
            start.set()
            began = time.perf_counter()
            await _client_run(worker, worker_tab, [worker_tab, frozen_tab], start, outcome)
            wall = time.perf_counter() - began
            throughout = not clicked.is_set()
            freeze.held = False
    return [outcome], wall, throughout


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _run() -> dict[str, Any]:
    async with linked_browser("concurrency") as linked, trio.open_nursery() as nursery:
        tabs: list[Tab] = []
        freeze = Freeze()
        for n in range(max(LEVELS)):
            site: Site = await nursery.start(_serve, f"127.0.0.{10 + n}", freeze)
            target, tab_id = await linked.ext.open_tab(site.url(PAGE))
            await linked.ext.wait_loaded(tab_id)
            attached = await linked.ext.browser.send(
                "Target.attachToTarget", {"targetId": target, "flatten": True}
            )
            tabs.append(Tab(target, tab_id, str(attached["sessionId"]), site))
            await linked.ext.worker.evaluate(f"trimtab.agents.share({tab_id}).then(() => true)")
        runs: dict[str, Any] = {}
        for count in LEVELS:
            outcomes, wall, cpu = await _level(linked, tabs, count)
            runs[str(count)] = {**_figures(outcomes, wall), "cpu_ms": cpu}
        outcomes, wall, cpu = await _level(linked, tabs, max(LEVELS), stalled=True)
        runs["stalled"] = {
            "others": _figures(outcomes[:-1], wall),
            "stalled_tab": _figures(outcomes[-1:], wall),
            "cpu_ms": cpu,
        }
        outcomes, wall, throughout = await _beside_frozen(linked, tabs, freeze)
        runs["frozen"] = {**_figures(outcomes, wall), "frozen_throughout": throughout}
        runs["kinds_alone"] = await _kinds_alone(linked, tabs[0])
        nursery.cancel_scope.cancel()
    return runs


def _figures(outcomes: list[Outcome], wall: float) -> dict[str, Any]:
    ms = [m for o in outcomes for m in o.ms]
    return {
        "clients": len(outcomes),
        "calls": len(ms),
        "wall_s": wall,
        "calls_per_s": len(ms) / wall if wall > 0 else float("nan"),
        "p50_ms": _pct(ms, 0.5),
        "p50_ms_by_kind": _p50_by_kind(outcomes, "ms"),
        "host_p50_ms_by_kind": _p50_by_kind(outcomes, "host_ms"),
        "host_p50_ms": _pct([m for o in outcomes for m in o.host_ms if m == m], 0.5),
        "p95_ms": _pct(ms, 0.95),
        "mean_ms": statistics.fmean(ms) if ms else float("nan"),
        "wrong": [w for o in outcomes for w in o.wrong],
        "errors": [e for o in outcomes for e in o.errors],
    }


def _p50_by_kind(outcomes: list[Outcome], field: str) -> dict[str, float]:
    """The p50 of each kind of call's ``field`` (``ms`` or ``host_ms``; NaN: not known)."""
    return {
        kind: _pct(
            [
                m
                for o in outcomes
                for m, k in zip(getattr(o, field), o.kinds, strict=True)
                if k == kind and m == m
            ],
            0.5,
        )
        for kind in KINDS
    }


def _p50_vs(figures: dict[str, Any], one: dict[str, Any]) -> float:
    """The largest ratio, over the kinds of call, of a kind's p50 to one client's."""
    return max(
        float(p50 / one["p50_ms_by_kind"][kind])
        for kind, p50 in figures["p50_ms_by_kind"].items()
        if p50 == p50 and one["p50_ms_by_kind"][kind] > 0  # NaN: no call of the kind
    )


def _processes_ms(cpu: dict[str, float]) -> float:
    """The CPU of the run's own processes in `CpuMeter.spent`, less the machine's."""
    return sum(ms for kind, ms in cpu.items() if kind != "machine")


def _cpu_table(runs: dict[str, Any]) -> str:
    """Where the CPU went at each level and for each kind of call made alone: the cores
    the machine kept busy, and each kind of process's milliseconds per call; then the
    line that says what bounds the ratio."""
    cores = os.cpu_count() or 1
    # Each row: its label, its calls, their wall time and the CPU spent meanwhile.
    measured = [
        (
            f"{c} client{'s' if c > 1 else ''}",
            runs[str(c)]["calls"],
            runs[str(c)]["wall_s"],
            runs[str(c)]["cpu_ms"],
        )
        for c in LEVELS
    ]
    stalled = runs["stalled"]
    measured.append(
        (
            "8, one tab never loads",
            stalled["others"]["calls"] + stalled["stalled_tab"]["calls"],
            stalled["others"]["wall_s"],
            stalled["cpu_ms"],
        )
    )
    for kind, figures in runs["kinds_alone"].items():
        errors = f" ({len(figures['errors'])} errors)" if figures["errors"] else ""
        measured.append(
            (f"{kind} alone{errors}", figures["calls"], figures["wall_s"], figures["cpu_ms"])
        )
    rows = [
        (
            label,
            f"{cpu['machine'] / 1000 / wall:.2f} of {cores}",
            *(f"{cpu.get(kind, 0.0) / max(1, calls):.1f}" for kind in PROCESSES),
            f"{_processes_ms(cpu) / max(1, calls):.1f}",
        )
        for label, calls, wall, cpu in measured
    ]
    one, most = runs["1"], runs[str(max(LEVELS))]

    def total(figures: dict[str, Any]) -> float:
        return _processes_ms(figures["cpu_ms"]) / max(1, figures["calls"])

    busy = most["cpu_ms"]["machine"] / 1000 / most["wall_s"] / cores
    return (
        "CPU per call, ms, by process (the run's own processes; cores busy: the machine's):\n"
        + table(("run", "cores busy", *PROCESSES, "all"), rows)
        + f"\ncpu: at {max(LEVELS)} clients the machine's {cores} cores were {busy:.0%} busy;"
        f" a call cost {total(most):.0f} ms of CPU in all, {total(one):.0f} ms at one client,"
        f" whose calls kept {one['cpu_ms']['machine'] / 1000 / one['wall_s']:.2f} cores busy"
    )


def run(pattern: str | None, out: Callable[[str], None]) -> dict[str, Any]:
    if pattern is not None:
        out("concurrency: --pages does not apply (it runs on fixture pages); ignored")
    runs = trio.run(_run)
    one = runs["1"]
    rows = []

    def row(label: str, f: dict[str, Any]) -> tuple[object, ...]:
        return (
            label,
            f["clients"],
            f["calls"],
            f"{f['calls_per_s']:.2f}",
            f"{f['p50_ms']:.0f}",
            f"{f['p95_ms']:.0f}",
            f"{f['host_p50_ms']:.0f}",
            f"{_p50_vs(f, one):.2f}x",
            f"{f['p95_ms'] / one['p95_ms']:.2f}x",
            len(f["wrong"]),
            len(f["errors"]),
        )

    for count in LEVELS:
        rows.append(row(f"{count} client{'s' if count > 1 else ''}", runs[str(count)]))
    stalled = runs["stalled"]
    rows.append(row("8, one tab never loads: the 7 others", stalled["others"]))
    rows.append(row("8, one tab never loads: that tab", stalled["stalled_tab"]))
    frozen = runs["frozen"]
    rows.append(row("1, beside a frozen tab's click", frozen))
    out(
        table(
            (
                "run",
                "clients",
                "calls",
                "calls/s",
                "p50 ms",
                "p95 ms",
                "in host p50",
                "p50 vs one (by kind)",
                "p95 vs one",
                "wrong",
                "errors",
            ),
            rows,
        )
    )
    by_kind = [
        (
            label,
            *(f"{f['p50_ms_by_kind'][k]:.0f} / {f['host_p50_ms_by_kind'][k]:.0f}" for k in KINDS),
        )
        for label, f in [(f"{c} client{'s' if c > 1 else ''}", runs[str(c)]) for c in LEVELS]
        + [("8, one tab never loads: the 7 others", stalled["others"])]
        + [("1, beside a frozen tab's click", frozen)]
    ]
    out("p50 ms by kind of call (as the client sees it / in the host):")
    out(table(("run", *KINDS), by_kind))
    out(_cpu_table(runs))
    named = [(f"{c} clients", runs[str(c)]) for c in LEVELS]
    named += [("stalled, others", stalled["others"]), ("stalled tab", stalled["stalled_tab"])]
    named += [("beside a frozen tab", frozen)]
    for label, figures in named:
        for kind in ("wrong", "errors"):
            for line in figures[kind][:3]:
                out(f"  {label}: {kind}: {line}")
    eight = runs[str(max(LEVELS))]
    others = stalled["others"]
    out(
        f"SUMMARY concurrency frozen: beside another client's click on a page whose script "
        f"keeps its renderer busy, one client's p50 is {_p50_vs(frozen, one):.2f}x one "
        f"client's alone, p95 {frozen['p95_ms'] / one['p95_ms']:.2f}x, "
        f"wrong={len(frozen['wrong'])} errors={len(frozen['errors'])}"
        + ("" if frozen["frozen_throughout"] else " (NOT MEASURED: the page thawed during the run)")
    )
    out(
        f"SUMMARY concurrency stalled: with one of 8 tabs never done loading, the other 7 "
        f"clients' p50 is {_p50_vs(others, one):.2f}x one client's, p95 "
        f"{others['p95_ms'] / one['p95_ms']:.2f}x, wrong={len(others['wrong'])} "
        f"errors={len(others['errors'])}; that tab's own calls: p50 "
        f"{stalled['stalled_tab']['p50_ms']:.0f} ms, errors={len(stalled['stalled_tab']['errors'])}"
    )
    out(
        f"SUMMARY concurrency clients={max(LEVELS)} "
        f"p50_vs_one={_p50_vs(eight, one):.2f} "
        f"p95_vs_one={eight['p95_ms'] / one['p95_ms']:.2f} "
        f"wrong={len(eight['wrong'])} errors={len(eight['errors'])}"
    )
    return runs
