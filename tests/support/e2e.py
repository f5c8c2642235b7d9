"""Chromium with the real Trimtab extension loaded, for the end-to-end tests.

`launch_with_extension` starts headless Chromium (through `pycdp_bridge.launch_browser`,
so the browser's whole process group is stopped on every exit path) with the
unpacked extension from ``extension/`` and a native-messaging host registered in
the throw-away profile. The test drives the extension's own contexts over CDP: the
service worker (a ``service_worker`` target) and the side panel (a ``page`` target)
are attached with flattened sessions and observed with ``Runtime.evaluate``.

`FakeHost` stands in for the host when a test needs to play the host's side of the
relay itself: the registered "host" is then a small bridge script that copies
native-messaging bytes between Chrome and a TCP socket on 127.0.0.1 that the test
listens on.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import struct
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
import trio

from pycdp_bridge import CDPError, launch_browser
from pycdp_bridge._direct import Browser
from trimtab.install import extension_id, install

__all__ = [
    "ARTIFACTS",
    "EXTENSION_DIR",
    "PANEL_PATH",
    "RELOADABLE",
    "REPO",
    "WORKER_PATH",
    "ExtensionBrowser",
    "ExtensionContext",
    "FakeHost",
    "host_pids",
    "launch_with_extension",
    "serve_fake_host",
    "write_bridge",
]

REPO = Path(__file__).resolve().parents[2]
EXTENSION_DIR = REPO / "extension"
ARTIFACTS = REPO / "test-artifacts"
#: The service worker's and the side panel's paths in the extension (its manifest's).
WORKER_PATH = "worker/background.js"
PANEL_PATH = "panel/sidepanel.html"
# The switch that lets a test reload the extension over CDP (`Extensions.loadUnpacked`),
# as a developer's reload or an update from the store does.
RELOADABLE = "--enable-unsafe-extension-debugging"


@attrs.frozen
class ExtensionContext:
    """A flattened CDP session to one of the extension's own contexts."""

    browser: Browser
    target_id: str
    session_id: str

    async def send(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return await self.browser.send(method, params, session_id=self.session_id)

    async def wait_ready(self, url: str, condition: str = "true") -> None:
        """Wait until the context shows ``url`` fully loaded and ``condition`` holds.

        A new tab or panel starts as about:blank, so early evaluations can land in a
        context that the navigation then destroys.
        """
        check = (
            f"location.href === {json.dumps(url)} && document.readyState === 'complete'"
            f" && Boolean({condition})"
        )
        while True:
            try:
                if await self.evaluate(check):
                    return
            except CDPError:
                pass  # the context was replaced by the navigation; ask the new one
            await trio.sleep(0.05)

    async def evaluate(self, expression: str) -> Any:
        """Evaluate ``expression`` (awaiting a promise) and return its JSON value."""
        result = await self.send(
            "Runtime.evaluate",
            {"expression": expression, "awaitPromise": True, "returnByValue": True},
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            description = (details.get("exception") or {}).get("description") or details["text"]
            raise AssertionError(f"{expression[:80]!r} threw in the extension: {description}")
        return result["result"].get("value")


@attrs.define
class ExtensionBrowser:
    """A running browser with the extension loaded and its service worker attached."""

    browser: Browser
    profile: Path
    extension_id: str
    worker: ExtensionContext

    async def attach(self, target_id: str) -> ExtensionContext:
        """A flattened session to the target ``target_id``."""
        return await _attach(self.browser, target_id)

    async def reload_extension(self, timeout: float = 30.0) -> None:
        """Reload the unpacked extension, as its developer's reload or an update does:
        its pages close, its service worker and the host Chrome started for it go, and
        a new worker starts, which `worker` is then. The browser must have been
        launched with `RELOADABLE`."""
        await self._load_again(timeout)

    async def reinstall_extension(self, timeout: float = 30.0) -> None:
        """Uninstall the extension (its storage goes with it) and install it again, as a
        person who removed Trimtab and added it back; `worker` is the new one. Chrome
        lets CDP uninstall only an extension CDP loaded: reload it first."""
        await self.browser.send("Extensions.uninstall", {"id": self.extension_id})
        await self._load_again(timeout)

    async def _load_again(self, timeout: float) -> None:
        worker_url = f"chrome-extension://{self.extension_id}/{WORKER_PATH}"
        old = {
            str(info["targetId"])
            for info in (await self.browser.send("Target.getTargets"))["targetInfos"]
            if info["url"] == worker_url
        }
        await self.browser.send("Extensions.loadUnpacked", {"path": str(EXTENSION_DIR)})
        with trio.fail_after(timeout):
            self.worker = await _started_worker(self.browser, worker_url, exclude=frozenset(old))

    async def wait_for_target(
        self, kind: str, url: str, *, exclude: frozenset[str] = frozenset()
    ) -> str:
        """The id of a target of ``kind`` whose URL is ``url``, waiting until it exists."""
        return await _wait_for_target(self.browser, kind, url, exclude=exclude)

    async def open_tab(self, url: str) -> tuple[str, int]:
        """Open ``url`` in a new tab; return its CDP target id and its chrome.tabs id."""
        created = await self.browser.send("Target.createTarget", {"url": url})
        target_id = str(created["targetId"])
        tab_id = await self.worker.evaluate(
            f"""(async () => {{
                for (;;) {{
                    const all = await chrome.debugger.getTargets();
                    const t = all.find((t) => t.id === {json.dumps(target_id)});
                    if (t && t.tabId !== undefined) return t.tabId;
                    await new Promise((r) => setTimeout(r, 50));
                }}
            }})()"""
        )
        return target_id, int(tab_id)

    async def wait_loaded(self, tab_id: int) -> None:
        """Wait until chrome.tabs reports the tab's load as complete."""
        await self.worker.evaluate(
            f"""(async () => {{
                for (;;) {{
                    const t = await chrome.tabs.get({tab_id});
                    if (t.status === "complete") return true;
                    await new Promise((r) => setTimeout(r, 50));
                }}
            }})()"""
        )

    async def open_side_panel(self) -> ExtensionContext:
        """Open the real side panel with a trusted click and attach to it.

        ``chrome.sidePanel.open`` needs a user gesture: an extension tab gets a click
        listener that opens the panel for its window, and ``Input.dispatchMouseEvent``
        delivers a click the browser trusts. The helper tab is closed afterwards, so
        the page the test opened before is the window's active tab again.
        """
        panel_url = f"chrome-extension://{self.extension_id}/{PANEL_PATH}"
        helper_id = str(
            (await self.browser.send("Target.createTarget", {"url": panel_url + "?opener=1"}))[
                "targetId"
            ]
        )
        helper = await self.attach(helper_id)
        await helper.wait_ready(panel_url + "?opener=1")
        await helper.evaluate(
            """new Promise((resolve) => {
                const arm = async () => {
                    const win = await chrome.windows.getCurrent();
                    document.addEventListener("click", () => {
                        chrome.sidePanel.open({ windowId: win.id });
                    }, { once: true });
                    resolve(true);
                };
                if (document.readyState === "complete") arm();
                else addEventListener("load", arm);
            })"""
        )
        for kind in ("mousePressed", "mouseReleased"):
            await helper.send(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": 5, "y": 5, "button": "left", "clickCount": 1},
            )
        panel_id = await self.wait_for_target("page", panel_url, exclude=frozenset({helper_id}))
        await self.browser.send("Target.closeTarget", {"targetId": helper_id})
        panel = await self.attach(panel_id)
        # The panel script is a module: wait until it has run, and until the worker
        # counts its port: before that, a question is refused as "no side panel is open".
        await panel.wait_ready(panel_url, "globalThis.trimtabPanel")
        with trio.fail_after(30):
            while not await self.worker.evaluate("trimtab.panels.size"):
                await trio.sleep(0.05)
        return panel

    def host_pids(self) -> list[int]:
        return host_pids(self.browser.pid)


async def _attach(browser: Browser, target_id: str) -> ExtensionContext:
    attached = await browser.send("Target.attachToTarget", {"targetId": target_id, "flatten": True})
    return ExtensionContext(browser, target_id, attached["sessionId"])


async def _wait_for_target(
    browser: Browser, kind: str, url: str, *, exclude: frozenset[str] = frozenset()
) -> str:
    while True:
        for info in (await browser.send("Target.getTargets"))["targetInfos"]:
            if info["type"] == kind and info["url"] == url and info["targetId"] not in exclude:
                return str(info["targetId"])
        await trio.sleep(0.05)


#: Reads the side panel's open question (who, what, why, the facts, then the page's
#: quoted words as "label: “text”" lines) and presses one of its buttons in the same
#: evaluation, so the answer is for the question read; null while no question is shown.
#: ``BUTTON`` is replaced by the button's id.
_ANSWER = """(() => {
    const box = document.getElementById('question');
    if (box.hidden) return null;
    const button = document.getElementById(BUTTON);
    if (!button) return null;
    const mine = ['question-want', 'question-reason', 'question-facts']
        .map((id) => document.getElementById(id).textContent);
    const quoted = [...document.querySelectorAll('#question-quotes dt')]
        .map((dt) => `${dt.textContent}: ${dt.nextElementSibling.textContent}`);
    button.click();
    return [...mine, ...quoted].join('\\n');
})()"""


async def answer_question(panel: ExtensionContext, *, allow: bool) -> str | None:
    """Answer the question the side panel shows now, if any; return its text."""
    button = "question-allow" if allow else "question-deny"
    found = await panel.evaluate(_ANSWER.replace("BUTTON", json.dumps(button)))
    return None if found is None else str(found)


def host_pids(browser_pid: int, marker: str = "trimtab-host") -> list[int]:
    """Live processes of the browser's session whose command line contains ``marker``.

    The browser runs in its own session (its pid is the session id), and Chrome
    starts native hosts as its children, so they share it.
    """
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            stat = (proc / "stat").read_text()
            session = os.getsid(int(proc.name))
        except (OSError, ProcessLookupError):
            continue
        state = stat.rsplit(")", 1)[-1].split()[0]
        if session == browser_pid and state != "Z" and marker.encode() in cmdline:
            found.append(int(proc.name))
    return found


def kill_process(pid: int) -> None:
    """SIGKILL one process the test's browser started, tolerating that it is gone."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


@contextlib.asynccontextmanager
async def launch_with_extension(
    profile: Path,
    *,
    host_path: Path | None = None,
    startup_timeout: float = 30.0,
    extra_args: tuple[str, ...] = (),
) -> AsyncIterator[ExtensionBrowser]:
    """Chromium with the extension and the host registered in ``profile``.

    ``host_path`` replaces the real ``trimtab-host`` launcher (a `FakeHost` bridge).
    Startup (browser, service worker, its module) must finish in ``startup_timeout``.
    ``extra_args`` go to Chromium too (the task bench keeps every name unresolved
    but 127.0.0.1 with ``--host-resolver-rules``).
    """
    profile.mkdir(parents=True, exist_ok=True)
    install(user_data_dir=profile, host_path=host_path)
    ext = str(EXTENSION_DIR)
    args = [
        f"--load-extension={ext}",
        f"--disable-extensions-except={ext}",
        # The debugging infobar would shrink the viewport under the tests' feet.
        "--silent-debugger-extension-api",
        *extra_args,
    ]
    ext_id = extension_id()
    async with launch_browser(extra_args=args, user_data_dir=profile) as browser:
        worker_url = f"chrome-extension://{ext_id}/{WORKER_PATH}"
        with trio.fail_after(startup_timeout):
            worker = await _started_worker(browser, worker_url)
        yield ExtensionBrowser(browser, profile, ext_id, worker)


async def _started_worker(
    browser: Browser, worker_url: str, *, exclude: frozenset[str] = frozenset()
) -> ExtensionContext:
    """The extension's service worker (not one of ``exclude``), once its module ran."""
    worker = await _attach(
        browser, await _wait_for_target(browser, "service_worker", worker_url, exclude=exclude)
    )
    # Poll from here rather than in the worker: an evaluation that starts before the
    # worker's module has run never sees the module's globals.
    while not await worker.evaluate("typeof globalThis.trimtab === 'object'"):
        await trio.sleep(0.05)
    return worker


# --------------------------------------------------------------------------- fake host

BRIDGE_SOURCE = """\
import socket, sys, threading
sock = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
def up():
    while data := sys.stdin.buffer.read1(65536):
        sock.sendall(data)
    sock.shutdown(socket.SHUT_WR)
threading.Thread(target=up, daemon=True).start()
while data := sock.recv(65536):
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
"""


def write_bridge(folder: Path, port: int) -> Path:
    """Write an executable that bridges native messaging to 127.0.0.1:``port``."""
    script = folder / "bridge.py"
    script.write_text(BRIDGE_SOURCE, encoding="utf-8")
    launcher = folder / "bridge-host"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{script}" {port}\n', encoding="utf-8")
    launcher.chmod(0o755)
    return launcher


@attrs.define
class FakeHost:
    """The test's side of native messaging, in place of the host."""

    port: int
    connected: trio.Event = attrs.field(factory=trio.Event)
    # When set (to `RelayHub.feed`), every cdp_result/cdp_event/cdp_detached goes there.
    relay: Callable[[dict[str, Any]], None] | None = None
    _stream: trio.SocketStream | None = None
    _send_lock: trio.Lock = attrs.field(factory=trio.Lock)
    _next: int = 0
    _waiting: dict[str, trio.MemorySendChannel[dict[str, Any]]] = attrs.field(factory=dict)
    _inbox_send: trio.MemorySendChannel[dict[str, Any]] = attrs.field(init=False)
    inbox: trio.MemoryReceiveChannel[dict[str, Any]] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._inbox_send, self.inbox = trio.open_memory_channel(1000)

    async def send(self, message: Mapping[str, Any]) -> None:
        """Send one message to the extension."""
        await self.connected.wait()
        assert self._stream is not None
        payload = json.dumps(message).encode()
        async with self._send_lock:
            await self._stream.send_all(struct.pack("=I", len(payload)) + payload)

    async def command(self, message: Mapping[str, Any]) -> dict[str, Any]:
        """Send a relay command (``cdp``, ``cdp_attach``...) and return its ``cdp_result``."""
        self._next += 1
        cid = f"c{self._next}"
        send, receive = trio.open_memory_channel[dict[str, Any]](1)
        self._waiting[cid] = send
        await self.send({**message, "id": cid})
        async with receive:
            return await receive.receive()

    async def next_message(self, kind: str) -> dict[str, Any]:
        """The next unsolicited message of type ``kind`` (others before it are dropped)."""
        async for message in self.inbox:
            if message.get("type") == kind:
                return message
        raise AssertionError(f"the extension disconnected before sending {kind!r}")

    async def serve(self, stream: trio.SocketStream) -> None:
        self._stream = stream
        self.connected.set()
        buffer = b""
        while True:
            data = await stream.receive_some(65536)
            if not data:
                break
            buffer += data
            while len(buffer) >= 4:
                (size,) = struct.unpack("=I", buffer[:4])
                if len(buffer) < 4 + size:
                    break
                message = json.loads(buffer[4 : 4 + size])
                buffer = buffer[4 + size :]
                kind = message.get("type")
                if self.relay is not None and kind in {"cdp_result", "cdp_event", "cdp_detached"}:
                    self.relay(message)
                    continue
                waiter = self._waiting.pop(str(message.get("id")), None)
                if kind == "cdp_result" and waiter is not None:
                    await waiter.send(message)
                else:
                    await self._inbox_send.send(message)
        await self._inbox_send.aclose()


async def serve_fake_host(
    *, task_status: trio.TaskStatus[FakeHost] = trio.TASK_STATUS_IGNORED
) -> None:
    """Listen on 127.0.0.1 (port 0) for the bridge; serve the first connection."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    listener = listeners[0]
    host = FakeHost(port=listener.socket.getsockname()[1])
    task_status.started(host)
    async with listener:
        stream = await listener.accept()
    async with stream:
        await host.serve(stream)
