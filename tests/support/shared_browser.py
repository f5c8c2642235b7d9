"""One headless Chromium for a whole test session, a fresh browser context per test.

Launching Chromium costs a second or two per test, more under load; most tests only
need a tab of their own with its own cookies, storage and cache. `SharedChromium`
starts one Chromium on ``--remote-debugging-pipe`` and relays CDP between that pipe
and one test at a time, each connected over a Unix socket of the run's own. Every
test's trio run is separate (pytest-trio), so the relay runs its own trio loop in a
thread that outlives them.

What the relay does so a test sees a browser of its own:

- On connect it creates a browser context (``Target.createBrowserContext``, with the
  options the test's first message names: a proxy for its requests) and puts every
  ``Target.createTarget`` of that test in it, so the test's tabs, their pop-ups and its
  cookies are apart from every other test's; the browser-wide commands that default
  to the default context (downloads, permissions, cookies) act on the test's.
- It renumbers command ids, so a reply to a command of an earlier test never answers
  the current one, and ``Target.getTargets`` lists only the test's own targets.
- When the test disconnects it disposes of the context (closing its tabs) and turns
  off what the test may have switched on for the whole browser (auto-attach, target
  discovery), before the next test is accepted; if that fails, or Chromium died, it
  starts a new Chromium for the next test.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import itertools
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import attrs
import trio

from pycdp_bridge import Browser, browser_args, browser_env, find_browser
from pycdp_bridge._direct import PipeTransport

from . import LOCAL_NAMES
from .processes import LAUNCHED_PROFILES, browser_processes

__all__ = ["Shared", "SharedChromium"]

READ_CHUNK = 1 << 20
# Seconds the relay allows its own clean-up commands; past that Chromium is replaced.
CLEANUP_TIMEOUT = 10.0
# Seconds Chromium and its helpers may take to go on SIGTERM before SIGKILL.
STOP_GRACE = 3.0
# Commands that act on the default browser context unless told which: the test's.
IN_CONTEXT = frozenset(
    {
        "Target.createTarget",
        "Browser.setDownloadBehavior",
        "Browser.grantPermissions",
        "Browser.resetPermissions",
        "Browser.setPermission",
        "Storage.getCookies",
        "Storage.setCookies",
        "Storage.clearCookies",
    }
)
_REPLY_ID = re.compile(rb'^\{"id":(\d+)')
# Chromium starts a spare renderer after a navigation, for the next one to take. The
# next navigation here is in another test's browser context, which a spare of this
# context cannot serve, so it is thrown away: measured, 30 renderers for 20 contexts
# with the spare and 17 without, and about 27 CPU-ms less per context (12%).
NO_SPARE_RENDERER = "--disable-features=SpareRendererForSitePerProcess"


@attrs.define(eq=False)
class _Client:
    stream: trio.SocketStream
    context: str
    # relay id -> (the client's id, the method), for the client's commands in flight.
    pending: dict[int, tuple[int, str]] = attrs.field(factory=dict)


@attrs.define(eq=False)
class _Own:
    """A command of the relay itself, waiting for its reply."""

    done: trio.Event = attrs.field(factory=trio.Event)
    reply: dict[str, Any] | None = None


class _Chromium:
    """A Chromium process on a pipe, in a process group of its own."""

    def __init__(self, profile: Path) -> None:
        to_browser_read, self.to_browser = os.pipe()
        self.from_browser, from_browser_write = os.pipe()
        argv = [
            str(find_browser()),
            *browser_args(
                "--remote-debugging-pipe",
                LOCAL_NAMES,
                NO_SPARE_RENDERER,
                f"--user-data-dir={profile}",
                "--window-size=1280,800",
            ),
            "about:blank",
        ]
        with open(profile / "chrome.log", "ab") as log:
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=browser_env(profile),
                start_new_session=True,
                pass_fds=(3, 4),
                preexec_fn=_wire_pipe_fds(to_browser_read, from_browser_write),
            )
        os.close(to_browser_read)
        os.close(from_browser_write)

    def stop(self) -> None:
        """Stop the whole process group: SIGTERM, then SIGKILL after a grace."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, sig)
            try:
                self.process.wait(STOP_GRACE)
                if sig == signal.SIGTERM:
                    os.killpg(self.process.pid, signal.SIGKILL)  # helpers of the group
                break
            except subprocess.TimeoutExpired:
                continue
            except (ProcessLookupError, PermissionError):
                break
        self.process.wait()


def _wire_pipe_fds(browser_reads: int, browser_writes: int) -> Callable[[], None]:
    def wire() -> None:
        # Move both ends above 4 first so dup2 onto 3 cannot clobber the other one.
        reads = fcntl.fcntl(browser_reads, fcntl.F_DUPFD, 5)
        writes = fcntl.fcntl(browser_writes, fcntl.F_DUPFD, 5)
        os.dup2(reads, 3)
        os.dup2(writes, 4)

    return wire


class SharedChromium:
    """A Chromium that outlives the tests' trio runs; `connect` gives each a `Browser`."""

    def __init__(self) -> None:
        self.profile = Path(tempfile.mkdtemp(prefix="trimtab-chrome-shared-"))
        self._socket_dir = Path(tempfile.mkdtemp(prefix="trimtab-relay-"))
        self.socket_path = self._socket_dir / "relay.sock"
        self._chromium: _Chromium | None = None
        self._ids = itertools.count(1)
        self._own: dict[int, _Own] = {}
        self._client: _Client | None = None
        self._to_browser: trio.lowlevel.FdStream | None = None
        self._send_lock: trio.Lock | None = None
        self._browser_gone = trio.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._cancel: trio.CancelScope | None = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        # A daemon, so a run that ends without its session teardown (a second Ctrl-C)
        # still exits; the atexit hook then stops Chromium's group all the same.
        self._thread = threading.Thread(
            target=self._thread_main, name="chromium-relay", daemon=True
        )
        LAUNCHED_PROFILES.append(self.profile)

    @property
    def pid(self) -> int:
        assert self._chromium is not None
        return self._chromium.process.pid

    def start(self) -> None:
        atexit.register(self._kill_now)
        self._thread.start()
        self._ready.wait()
        if self._failure is not None:
            raise RuntimeError("the shared Chromium's relay did not start") from self._failure

    def stop(self) -> None:
        """End the relay and Chromium, and wait until none of its processes is left."""
        if self._token is not None and self._cancel is not None:
            with contextlib.suppress(trio.RunFinishedError):
                trio.from_thread.run_sync(self._cancel.cancel, trio_token=self._token)
        self._thread.join()
        deadline = time.monotonic() + STOP_GRACE
        while browser_processes(self.profile) and time.monotonic() < deadline:
            time.sleep(0.02)
        shutil.rmtree(self._socket_dir, ignore_errors=True)
        shutil.rmtree(self.profile, ignore_errors=True)

    def _kill_now(self) -> None:
        chromium = self._chromium
        if chromium is not None and chromium.process.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(chromium.process.pid, signal.SIGKILL)

    @contextlib.asynccontextmanager
    async def connect(self, folder: Path, *, proxy: str | None = None) -> AsyncIterator[Browser]:
        """A `Browser` of the test's own context; ``folder`` stands for its profile
        (downloads go to ``folder/Downloads``); ``proxy`` (``http://127.0.0.1:PORT``):
        every request of the context but those to loopback goes there, names unresolved."""
        stream = await trio.open_unix_socket(str(self.socket_path))
        # The connection's first message is the context's options, before any command.
        options = {"proxyServer": proxy} if proxy else {}
        await stream.send_all(json.dumps(options).encode() + b"\0")
        transport = PipeTransport(stream, stream)
        browser = Browser(transport, pid=self.pid, user_data_dir=folder)
        async with trio.open_nursery() as nursery:
            await nursery.start(transport.run, browser._channel)
            try:
                yield browser
            finally:
                with trio.CancelScope(shield=True):
                    await stream.aclose()
                nursery.cancel_scope.cancel()

    # The relay's own thread and trio loop.

    def _thread_main(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as exc:  # reported to start() or left for stop()
            self._failure = exc
        finally:
            if self._chromium is not None:
                self._chromium.stop()
            self._ready.set()

    async def _main(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        listener = trio.socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        await listener.bind(str(self.socket_path))
        listener.listen(8)
        with trio.CancelScope() as cancel, listener:
            self._cancel = cancel
            while True:
                async with trio.open_nursery() as nursery:
                    await self._launch(nursery)
                    self._ready.set()
                    while not self._browser_gone.is_set():
                        connection, _ = await listener.accept()
                        if not await self._serve(trio.SocketStream(connection)):
                            break
                    nursery.cancel_scope.cancel()
                self._drop_chromium()

    async def _launch(self, nursery: trio.Nursery) -> None:
        self._chromium = _Chromium(self.profile)
        self._to_browser = trio.lowlevel.FdStream(self._chromium.to_browser)
        self._send_lock = trio.Lock()
        self._browser_gone = trio.Event()
        nursery.start_soon(self._read_browser, trio.lowlevel.FdStream(self._chromium.from_browser))

    def _drop_chromium(self) -> None:
        if self._chromium is not None:
            self._chromium.stop()
            self._chromium = None
        if self._to_browser is not None:
            with contextlib.suppress(OSError):
                os.close(self._to_browser.fileno())
            self._to_browser = None
        for own in self._own.values():
            own.done.set()
        self._own.clear()

    async def _to_chromium(self, message: dict[str, Any]) -> None:
        assert self._to_browser is not None
        assert self._send_lock is not None
        data = json.dumps(message, separators=(",", ":")).encode() + b"\0"
        async with self._send_lock:
            await self._to_browser.send_all(data)

    async def _command(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Run a command of the relay's own; a CDP error is raised as RuntimeError."""
        relay_id = next(self._ids)
        own = self._own[relay_id] = _Own()
        with trio.fail_after(CLEANUP_TIMEOUT):
            await self._to_chromium({"id": relay_id, "method": method, "params": params})
            await own.done.wait()
        if own.reply is None or "error" in own.reply:
            raise RuntimeError(f"{method} failed in the shared Chromium: {own.reply!r:.300}")
        result: dict[str, Any] = own.reply.get("result") or {}
        return result

    async def _serve(self, stream: trio.SocketStream) -> bool:
        """Relay one test's connection until it closes; whether Chromium is still fit
        for the next test."""
        buffer = bytearray()
        while b"\0" not in buffer:
            try:
                chunk = await stream.receive_some(READ_CHUNK)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                chunk = b""
            if not chunk:
                await stream.aclose()
                return True  # gone before its first command: nothing of it to clean up
            buffer += chunk
        hello, _, rest = bytes(buffer).partition(b"\0")
        try:
            created = await self._command("Target.createBrowserContext", json.loads(hello))
        except (RuntimeError, trio.TooSlowError, trio.BrokenResourceError, OSError):
            await stream.aclose()
            return False
        client = _Client(stream, str(created["browserContextId"]))
        self._client = client
        try:
            await self._client_to_chromium(client, bytearray(rest))
        finally:
            self._client = None
            await stream.aclose()
        try:
            dispose = {"browserContextId": client.context}
            await self._command("Target.disposeBrowserContext", dispose)
            await self._command("Target.setAutoAttach", _NO_AUTO_ATTACH)
            await self._command("Target.setDiscoverTargets", {"discover": False})
        except (RuntimeError, trio.TooSlowError, trio.BrokenResourceError, OSError):
            return False
        return True

    async def _client_to_chromium(self, client: _Client, buffer: bytearray) -> None:
        while True:
            *messages, rest = bytes(buffer).split(b"\0")
            buffer = bytearray(rest)
            for raw in messages:
                message = json.loads(raw)
                relay_id = next(self._ids)
                client.pending[relay_id] = (message["id"], message["method"])
                message["id"] = relay_id
                if message["method"] in IN_CONTEXT:
                    message.setdefault("params", {}).setdefault("browserContextId", client.context)
                try:
                    await self._to_chromium(message)
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                    return
            try:
                chunk = await client.stream.receive_some(READ_CHUNK)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return
            if not chunk:
                return
            buffer += chunk

    async def _read_browser(self, stream: trio.lowlevel.FdStream) -> None:
        buffer = bytearray()
        try:
            while True:
                try:
                    chunk = await stream.receive_some(READ_CHUNK)
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                    return
                if not chunk:
                    return
                buffer += chunk
                if b"\0" not in chunk:
                    continue
                *messages, rest = bytes(buffer).split(b"\0")
                buffer = bytearray(rest)
                for raw in messages:
                    await self._from_chromium(raw)
        finally:
            # Chromium is gone: fail the relay's own commands, end the test's connection.
            self._browser_gone.set()
            for own in self._own.values():
                own.done.set()
            self._own.clear()
            if self._client is not None:
                await self._client.stream.aclose()
            with contextlib.suppress(OSError):
                await stream.aclose()

    async def _from_chromium(self, raw: bytes) -> None:
        found = _REPLY_ID.match(raw)
        if found is None and raw.startswith(b'{"method"'):
            relay_id = None  # an event: the client's, if any is connected
        else:
            relay_id = int(found.group(1)) if found else json.loads(raw).get("id")
        client = self._client
        if relay_id is not None:
            own = self._own.pop(relay_id, None)
            if own is not None:
                own.reply = json.loads(raw)
                own.done.set()
                return
            if client is None or relay_id not in client.pending:
                return  # a reply to a test that has gone
            client_id, method = client.pending.pop(relay_id)
            if found is not None and method != "Target.getTargets":
                # Only the id changes: no need to decode a large reply (a DOM) again.
                raw = b'{"id":%d' % client_id + raw[found.end() :]
            else:
                message = json.loads(raw)
                message["id"] = client_id
                if method == "Target.getTargets" and "result" in message:
                    infos = message["result"].get("targetInfos", [])
                    message["result"]["targetInfos"] = [
                        info for info in infos if info.get("browserContextId") == client.context
                    ]
                raw = json.dumps(message, separators=(",", ":")).encode()
        if client is not None:
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await client.stream.send_all(raw + b"\0")


_NO_AUTO_ATTACH = {"autoAttach": False, "waitForDebuggerOnStart": False, "flatten": True}


# The session's Chromium (None with --fresh-browser: each test launches its own).
Shared = SharedChromium | None
