"""A small web of made-up sites on 127.0.0.1 for the injection suite, and a log of what
reached it.

One HTTP server serves every site: the browser is started with host-resolver rules
that send ``shop.test``, ``mail.test``, ``bank.test``, ``search.test``,
``forum.test``, ``ads.test`` and ``attacker.test`` (port 80) to this server and
resolve nothing else, or its browser context names the server as its proxy, which
drops a request for any other name as unresolved; so the pages can name real-looking
sites while no request ever leaves the machine. Each site is a folder of
``tests/pages/injection`` (the site's name without ``.test``); the ``Host`` header
picks it.

Every request is logged (method, site, path, query, body) before it is answered:
that log, not what the host or the model says, is how a test tells that harm was
done. Requests other than GET/HEAD are the sites' APIs and form posts: they are
answered with a small success (JSON under ``/api/``, a page elsewhere) so a page's
script sees them succeed. ``/go?to=URL`` redirects (302), for a click whose
navigation lands on another site; ``/bounce?to=URL`` does the same after a second and a
half, as a sign-in server that takes its time. Any path under ``/files/`` is sent as an attachment,
so fetching one is a download.
"""

from __future__ import annotations

import contextlib
import mimetypes
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import attrs
import trio

__all__ = ["SITES", "WEB_ROOT", "Hit", "Web", "browser_args", "serve_web"]

#: The fixture sites: each a folder of ``WEB_ROOT``.
WEB_ROOT = Path(__file__).resolve().parents[1] / "pages" / "injection"
SITES = ("shop", "mail", "bank", "search", "forum", "ads", "attacker")
MAX_HEAD = 16 * 1024
MAX_BODY = 256 * 1024
# Seconds /bounce takes before it redirects.
BOUNCE_DELAY = 1.5


@attrs.frozen
class Hit:
    """One request that reached a site."""

    method: str
    host: str  # the site's host name, without the port: ``shop.test``
    path: str
    query: str
    body: str

    @property
    def changes_state(self) -> bool:
        """A request a site may change state on (not GET, HEAD or OPTIONS)."""
        return self.method not in ("GET", "HEAD", "OPTIONS")

    def carries(self, text: str) -> bool:
        """Whether ``text`` reached the site in the URL or the body (decoded)."""
        sent = unquote(f"{self.path}?{self.query}\n{self.body}").replace("+", " ")
        return text.casefold() in sent.casefold()

    def __str__(self) -> str:
        query = f"?{self.query}" if self.query else ""
        return f"{self.method} {self.host}{self.path}{query}"[:160]


@attrs.define(eq=False)
class Web:
    """The running server: its port and every request it received, in order."""

    port: int
    hits: list[Hit] = attrs.field(factory=list)

    def since(self, mark: int) -> Sequence[Hit]:
        """The requests received after ``mark`` (a length of ``hits`` taken earlier)."""
        return self.hits[mark:]


def browser_args(port: int) -> list[str]:
    """Chromium flags that send every fixture site to the server on ``port`` and resolve
    no other name, so nothing a page links to can leave the machine."""
    rules = [f"MAP {site}.test 127.0.0.1:{port}" for site in SITES]
    rules += ["MAP * ~NOTFOUND", "EXCLUDE 127.0.0.1"]
    return [f"--host-resolver-rules={', '.join(rules)}"]


async def serve_web(
    root: Path = WEB_ROOT, *, task_status: trio.TaskStatus[Web] = trio.TASK_STATUS_IGNORED
) -> None:
    """Serve the fixture sites until cancelled; start with ``nursery.start``."""
    root = root.resolve()
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    web = Web(listeners[0].socket.getsockname()[1])

    async def handle(stream: trio.SocketStream) -> None:
        async with stream:
            try:
                hit = await _read_request(stream)
            except (trio.BrokenResourceError, ValueError, UnicodeDecodeError):
                return
            if hit is None:
                return
            web.hits.append(hit)
            if hit.path == "/bounce":
                # The redirect comes after the action that started the load is over.
                await trio.sleep(BOUNCE_DELAY)
            status, headers, body = _respond(root, hit)
            head = f"HTTP/1.1 {status}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers)
            head += f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            with contextlib.suppress(trio.BrokenResourceError):
                await stream.send_all(head.encode("latin-1") + body)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.serve_listeners, handle, listeners)
        task_status.started(web)


def _ours(url: str) -> bool:
    """Whether ``url`` names one of the fixture sites."""
    return urlsplit(url).hostname in {f"{site}.test" for site in SITES}


async def _read_request(stream: trio.SocketStream) -> Hit | None:
    data = bytearray()
    while b"\r\n\r\n" not in data:
        chunk = await stream.receive_some(4096)
        if not chunk:
            return None
        data += chunk
        if len(data) > MAX_HEAD:
            raise ValueError("request head too long")
    head, _, rest = bytes(data).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, target, _version = lines[0].split(" ", 2)
    if method == "CONNECT" or (target.startswith("http://") and not _ours(target)):
        return None  # asked as a proxy for a name the web does not have: unresolved
    headers = {
        name.strip().lower(): value.strip()
        for name, _, value in (line.partition(":") for line in lines[1:])
    }
    length = min(int(headers.get("content-length", "0") or 0), MAX_BODY)
    body = bytearray(rest)
    while len(body) < length:
        chunk = await stream.receive_some(4096)
        if not chunk:
            break
        body += chunk
    url = urlsplit(target)
    host = headers.get("host", "").rsplit(":", 1)[0].lower()
    return Hit(method, host, unquote(url.path), url.query, body[:length].decode("utf-8", "replace"))


_DONE_PAGE = (
    b"<!doctype html><meta charset=utf-8><title>Done</title>"
    b"<h1>Done</h1><p>Your request was received.</p>"
)


def _respond(root: Path, hit: Hit) -> tuple[str, list[tuple[str, str]], bytes]:
    site = hit.host.removesuffix(".test")
    if site not in SITES:
        return "404 Not Found", [("Content-Type", "text/plain")], b"no such site"
    if hit.path in ("/go", "/bounce"):
        # A same-site link that lands elsewhere: the redirect a click may follow.
        to = parse_qs(hit.query).get("to", ["/"])[0]
        return "302 Found", [("Location", to), ("Content-Type", "text/plain")], b"moved"
    if hit.changes_state or hit.path.startswith("/api/"):
        if hit.path.startswith("/api/"):
            return "200 OK", [("Content-Type", "application/json")], b'{"ok": true}'
        return "200 OK", [("Content-Type", "text/html; charset=utf-8")], _DONE_PAGE
    path = hit.path.lstrip("/") or "index.html"
    if path.startswith("files/"):
        # Any file a page offers: fetching it is the download.
        name = path.rsplit("/", 1)[-1].replace('"', "")
        headers = [
            ("Content-Type", "application/octet-stream"),
            ("Content-Disposition", f'attachment; filename="{name}"'),
        ]
        return "200 OK", headers, b"fixture file\n"
    folder = (root / site).resolve()
    file = (folder / path).resolve()
    if file.is_relative_to(folder) and file.is_file():
        kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        if kind.startswith("text/"):
            kind += "; charset=utf-8"
        return "200 OK", [("Content-Type", kind)], file.read_bytes()
    if site == "attacker":
        # The attacker takes whatever it is sent and says thanks.
        return "200 OK", [("Content-Type", "text/html; charset=utf-8")], _DONE_PAGE
    return "404 Not Found", [("Content-Type", "text/plain")], b"not found"
