"""A minimal static HTTP server on 127.0.0.1 for pages that need a real origin.

Two servers on two ports are two origins, which is how the tests get a cross-origin
(and so out-of-process) iframe without leaving the machine.
"""

from __future__ import annotations

import contextlib
import mimetypes
from pathlib import Path
from urllib.parse import unquote, urlsplit

import attrs
import trio

__all__ = ["StaticServer", "respond_file", "serve_static"]

MAX_REQUEST_HEAD = 16 * 1024


@attrs.frozen
class StaticServer:
    """Where a running static server listens."""

    root: Path
    port: int
    #: The loopback address it listens on: another 127.0.0.N is another site (pages of
    #: two sites never share a renderer process).
    host: str = "127.0.0.1"
    #: The request lines served so far ("GET /a.html HTTP/1.1"), in arrival order: a
    #: test sees whether a request left the browser.
    requests: list[str] = attrs.field(factory=list, eq=False)

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.port}"

    def url(self, path: str) -> str:
        return f"{self.origin}/{path.lstrip('/')}"


async def serve_static(
    root: Path,
    *,
    host: str = "127.0.0.1",
    task_status: trio.TaskStatus[StaticServer] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve files under ``root`` on ``host`` (a loopback address) until cancelled;
    start with ``nursery.start``."""
    root = root.resolve()
    served: list[str] = []

    async def handle(stream: trio.SocketStream) -> None:
        async with stream:
            try:
                head = await read_head(stream)
            except (trio.BrokenResourceError, ValueError):
                return
            served.append(head.split(b"\r\n", 1)[0].decode("latin-1"))
            status, content_type, body = respond_file(root, head)
            header = (
                f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            ).encode()
            with contextlib.suppress(trio.BrokenResourceError):
                await stream.send_all(header + body)

    if not host.startswith("127."):
        raise ValueError(f"serve_static serves on loopback addresses only, not {host!r}")
    listeners = await trio.open_tcp_listeners(0, host=host)
    port = listeners[0].socket.getsockname()[1]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.serve_listeners, handle, listeners)
        task_status.started(StaticServer(root, port, host, served))


async def read_head(stream: trio.SocketStream) -> bytes:
    """A request's head (up to and with its blank line, or what came before EOF)."""
    data = bytearray()
    while b"\r\n\r\n" not in data:
        chunk = await stream.receive_some(4096)
        if not chunk:
            break
        data += chunk
        if len(data) > MAX_REQUEST_HEAD:
            raise ValueError(f"request head over {MAX_REQUEST_HEAD} bytes")
    return bytes(data)


def respond_file(root: Path, head: bytes) -> tuple[str, str, bytes]:
    request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = request_line.split()
    if len(parts) != 3 or parts[0] != "GET":
        return "405 Method Not Allowed", "text/plain", b"only GET"
    path = unquote(urlsplit(parts[1]).path).lstrip("/") or "index.html"
    file = (root / path).resolve()
    if not file.is_relative_to(root) or not file.is_file():
        return "404 Not Found", "text/plain", b"not found"
    content_type = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
    if content_type.startswith("text/"):
        content_type += "; charset=utf-8"
    return "200 OK", content_type, file.read_bytes()
