"""A web app's server on 127.0.0.1 for the devtools tools: the fixture pages, and
answers that a developer meets: JSON behind an ``Authorization`` header that sets a
cookie, a sign-in that answers tokens in its JSON and headers (`SERVER_SECRETS`), a
search whose JSON links on with a token, a 404, a 50 MB text body, a binary body, and
(on another port, another origin) an API without CORS headers."""

from __future__ import annotations

import contextlib
from pathlib import Path

import attrs
import trio

from tests.support.http import read_head, respond_file

__all__ = ["BIG_BODY", "SERVER_SECRETS", "DevtoolsSite", "serve_devtools_site"]

BIG_BODY = 50 * 1024 * 1024
# The credentials the server answers with: in ``/api/session``'s JSON and headers, and
# in the URL ``/api/search``'s JSON links on to.
SERVER_SECRETS = (
    "RESP-ACCESS-SECRET-91",
    "RESP-REFRESH-SECRET-92",
    "RESP-HEADER-SECRET-93",
    "RESP-COOKIE-SECRET-94",
    "RESP-NEXT-SECRET-95",
)
_CHUNK = 1024 * 1024


@attrs.define(eq=False)
class DevtoolsSite:
    """Where the app listens, and what its API was sent (head and body, as bytes)."""

    root: Path
    port: int = 0
    received: list[bytes] = attrs.field(factory=list)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path.lstrip('/')}"

    async def handle(self, stream: trio.SocketStream) -> None:
        async with stream:
            with contextlib.suppress(trio.BrokenResourceError, ValueError):
                head = await read_head(stream)
                head, _, body = head.partition(b"\r\n\r\n")
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
                self.received.append(head + b"\r\n\r\n" + body)
                await self._answer(stream, head + b"\r\n\r\n")

    async def _answer(self, stream: trio.SocketStream, head: bytes) -> None:
        target = head.split(b" ", 2)[1].decode("latin-1") if b" " in head else "/"
        path = target.split("?")[0]
        if path == "/api/orders":
            body = b'{"items": [{"id": 7, "total": 12.5}]}'
            extra = "Set-Cookie: csrf=COOKIE-SET-SECRET; Path=/; HttpOnly\r\n"
            await _send(stream, "200 OK", "application/json", body, extra)
        elif path == "/api/session":
            body = (
                f'{{"access_token": "{SERVER_SECRETS[0]}", "token_type": "bearer", '
                f'"refresh_token": "{SERVER_SECRETS[1]}", "user": {{"name": "ada"}}}}'
            ).encode()
            extra = (
                f"X-Auth-Token: {SERVER_SECRETS[2]}\r\n"
                f"Set-Cookie: sid={SERVER_SECRETS[3]}; Path=/; HttpOnly\r\n"
                "X-Request-Id: req-7\r\n"
            )
            await _send(stream, "200 OK", "application/json", body, extra)
        elif path == "/api/search":
            following = f"/api/search?page=3&access_token={SERVER_SECRETS[4]}"
            body = f'{{"results": [1, 2], "next": "{following}"}}'.encode()
            await _send(stream, "200 OK", "application/json", body, "")
        elif path == "/api/login":
            await _send(stream, "200 OK", "application/json", b'{"ok": true}', "")
        elif path == "/api/missing":
            await _send(stream, "404 Not Found", "application/json", b'{"error": "no"}', "")
        elif path == "/big":
            header = (
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                f"Content-Length: {BIG_BODY}\r\nConnection: close\r\n\r\n"
            ).encode()
            await stream.send_all(header)
            chunk = b"x" * _CHUNK
            for _ in range(BIG_BODY // _CHUNK):
                await stream.send_all(chunk)
        elif path == "/pixel.bin":
            body = bytes(range(256)) * 16
            await _send(stream, "200 OK", "application/octet-stream", body, "")
        elif path == "/nocors":
            await _send(stream, "200 OK", "application/json", b'{"private": 1}', "")
        else:
            status, content_type, data = respond_file(self.root, head)
            await _send(stream, status, content_type, data, "")


async def _send(
    stream: trio.SocketStream, status: str, content_type: str, body: bytes, extra: str
) -> None:
    header = (
        f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n{extra}"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    await stream.send_all(header + body)


async def serve_devtools_site(
    root: Path, *, task_status: trio.TaskStatus[DevtoolsSite] = trio.TASK_STATUS_IGNORED
) -> None:
    """Serve until cancelled; start with ``nursery.start``."""
    site = DevtoolsSite(root.resolve())
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    site.port = listeners[0].socket.getsockname()[1]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.serve_listeners, site.handle, listeners)
        task_status.started(site)
