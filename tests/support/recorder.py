"""A test web site on 127.0.0.1 that remembers what it was sent.

It serves the fixture pages of ``tests/pages`` for GET, answers every method on
``/api/...`` (with CORS, so that another origin's page may send there too) and keeps
each such request in `Recorder.log`: the server's own record of what reached it,
which is how a test shows that a refused request never left the browser.
``/api/redirect`` redirects (307) to ``/api/after``; ``/endless-body`` answers with
headers and a first part of a body that never ends. Downloads, as sites serve them:
``/export/NAME`` is the fixture file NAME as an attachment, ``/api/export`` answers a
form's POST with one, and ``/broken-export`` drops the connection midway (and answers
the browser's attempt to resume it with 404).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import attrs
import trio

from tests.support.http import read_head, respond_file

__all__ = ["Recorded", "Recorder", "serve_recorder"]

# What /endless-body sends before it waits: more than the browser buffers for a body
# that nobody reads, so the response can only finish if the page reads it.
_FIRST_PART = 8 * 1024 * 1024
_CORS = (
    "Access-Control-Allow-Origin: *\r\n"
    "Access-Control-Allow-Methods: GET, POST, PUT, PATCH, DELETE\r\n"
    "Access-Control-Allow-Headers: *\r\n"
)


@attrs.frozen
class Recorded:
    """One request that reached ``/api/...``."""

    method: str
    host: str  # the Host header: which site the browser sent it to
    path: str
    body: str


@attrs.define(eq=False)
class Recorder:
    """Where the server listens, and what reached its ``/api/...``."""

    root: Path
    port: int = 0
    log: list[Recorded] = attrs.field(factory=list)
    arrived: trio.Event = attrs.field(factory=trio.Event)
    broken: bool = False  # /broken-export was asked for once

    def url(self, host: str, path: str) -> str:
        return f"http://{host}:{self.port}/{path.lstrip('/')}"

    def sent(self, path: str) -> list[Recorded]:
        """The requests that reached `path` (without its query)."""
        return [r for r in self.log if r.path.split("?")[0] == path]

    async def wait_for(self, path: str) -> Recorded:
        """The first request that reaches `path`, waiting for it."""
        while True:
            found = self.sent(path)
            if found:
                return found[0]
            await self.arrived.wait()

    async def handle(self, stream: trio.SocketStream) -> None:
        async with stream:
            try:
                head, body = await _read_request(stream)
            except (trio.BrokenResourceError, ValueError):
                return
            lines = head.decode("latin-1").split("\r\n")
            method, target, *_ = [*lines[0].split(), "", ""]
            headers = {
                name.strip().lower(): value.strip()
                for name, _, value in (line.partition(":") for line in lines[1:] if line)
            }
            path = target.split("?")[0]
            if path.startswith("/api/"):
                if method != "OPTIONS":
                    self.log.append(
                        Recorded(method, headers.get("host", ""), target, body.decode("utf-8"))
                    )
                    self.arrived.set()
                    self.arrived = trio.Event()
                if path == "/api/export":
                    data = (self.root / "downloads-report.csv").read_bytes()
                    await _send(stream, "200 OK", "text/csv", data, _attachment(path))
                    return
                if path == "/api/redirect":
                    # A 307 sends the same request (method and body) on to /api/after.
                    moved = f"{_CORS}Location: /api/after\r\n"
                    await _send(stream, "307 Temporary Redirect", "text/plain", b"", moved)
                    return
                reply = b'{"ok": true}'
                await _send(stream, "200 OK", "application/json", reply, _CORS)
            elif path.startswith("/export/"):
                status, content_type, data = respond_file(
                    self.root, head.replace(b"/export/", b"/", 1)
                )
                await _send(stream, status, content_type, data, _attachment(path))
            elif path == "/broken-export":
                if self.broken:
                    await _send(stream, "404 Not Found", "text/plain", b"gone", "")
                    return
                self.broken = True
                header = (
                    "HTTP/1.1 200 OK\r\nContent-Type: application/zip\r\n"
                    f"{_attachment('/orders-2026.zip')}Content-Length: {_FIRST_PART}\r\n\r\n"
                ).encode()
                with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                    await stream.send_all(header + b"z" * 4096)
            elif path == "/endless-body":
                header = (
                    "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                    f"Content-Length: {_FIRST_PART * 16}\r\n{_CORS}\r\n"
                ).encode()
                with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                    await stream.send_all(header + b"x" * _FIRST_PART)
                    await trio.sleep_forever()
            else:
                status, content_type, data = respond_file(self.root, head)
                await _send(stream, status, content_type, data, "")


def _attachment(path: str) -> str:
    """The header that makes the browser save the response as the file the path names."""
    name = path.rsplit("/", 1)[-1]
    name = "downloads-report.csv" if name == "export" else name
    return f'Content-Disposition: attachment; filename="{name}"\r\n'


async def _send(
    stream: trio.SocketStream, status: str, content_type: str, body: bytes, extra: str
) -> None:
    header = (
        f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n{extra}"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    with contextlib.suppress(trio.BrokenResourceError):
        await stream.send_all(header + body)


async def _read_request(stream: trio.SocketStream) -> tuple[bytes, bytes]:
    head, _, body = (await read_head(stream)).partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip() or 0)
    while len(body) < length:
        chunk = await stream.receive_some(4096)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n", body


async def serve_recorder(
    root: Path, *, task_status: trio.TaskStatus[Recorder] = trio.TASK_STATUS_IGNORED
) -> None:
    """Serve until cancelled; start with ``nursery.start``."""
    recorder = Recorder(root.resolve())
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    recorder.port = listeners[0].socket.getsockname()[1]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.serve_listeners, recorder.handle, listeners)
        task_status.started(recorder)
