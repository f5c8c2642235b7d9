"""The link's listening side, inside the host Chrome started.

`open_link` binds the endpoint socket (0600, in the 0700 folder of `_paths`) and
serves each client that presents the secret with the host's own request loop
(`HostServer`), through one `LinkSession`: its own call-tracker session and its
own snapshot memory per tab (the ``view`` of the host's ``tool`` request), so
dedup and diffs answer what *that* client has seen. Two clients acting on one tab
are serialised by the tab's lock, which every view shares.

The extension decides which tabs a client may touch: it pushes the tabs the person
shared (``agents_tabs``), answers the consent question the link sends for any
other tab (``agents_ask`` → ``agents_answer``), and ``agents_stop`` ends every
client's session at once. The link tells it of clients and their calls
(``agents_event``) so the side panel can show them.
"""

from __future__ import annotations

import contextlib
import hmac
import itertools
import json
import logging
import os
import socket as stdlib_socket
import struct
import sys
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any, Final

import attrs
import trio

from ..native import HostState
from ..wire import (
    DecodedMessage,
    FrameDecoder,
    Handler,
    HostServer,
    JSONObject,
    Outbox,
    OutboxClosed,
    Request,
    RequestError,
    encode_frame,
    host_version,
)
from ._paths import (
    ENDPOINT_SUFFIX,
    INFO_SUFFIX,
    MAX_SOCKET_PATH,
    EndpointInfo,
    PermissionProblem,
    endpoint_dir,
    endpoint_name,
    ensure_private_dir,
    read_or_create_secret,
    state_dir,
)

__all__ = ["ASK_TIMEOUT", "HELLO_TIMEOUT", "Link", "LinkSession", "SharedTab", "open_link"]

log = logging.getLogger("trimtab.link")

# How long a client's request for an unshared tab waits for the person's answer.
ASK_TIMEOUT: Final = 120.0
# A client that does not say hello (with the secret) in this long is dropped.
HELLO_TIMEOUT: Final = 10.0
# A hello is small; anything larger before authentication is refused unread.
_MAX_HELLO: Final = 16 * 1024
_MAX_CLIENT_NAME: Final = 100
_RECEIVE_SIZE: Final = 64 * 1024


@attrs.frozen
class SharedTab:
    """A tab the person shared with agents, as the extension described it."""

    id: int
    title: str
    url: str

    def to_json(self) -> JSONObject:
        return {"id": self.id, "title": self.title, "url": self.url}


@attrs.define(eq=False)
class LinkSession:
    """One connected client."""

    number: int
    client: str  # from the client's hello (an MCP client's clientInfo)
    outbox: Outbox
    scope: trio.CancelScope = attrs.field(factory=trio.CancelScope)
    allowed: set[int] = attrs.field(factory=set)  # unshared tabs the person allowed
    calls: int = 0

    @property
    def key(self) -> str:
        """The tracker session and snapshot view of this client."""
        return f"link-{self.number}"


@attrs.define(eq=False)
class _Ask:
    done: trio.Event = attrs.field(factory=trio.Event)
    allow: bool = False
    why: str | None = None  # why the extension answered no without asking


@attrs.define(eq=False)
class Link:
    """The running link: its sessions, the shared tabs, the consent questions."""

    state: HostState
    extension: Outbox  # the native port, for agents_ask / agents_event
    info: EndpointInfo
    secret: str
    socket_path: Path | None
    ask_timeout: float = ASK_TIMEOUT
    shared: dict[int, SharedTab] = attrs.field(factory=dict)
    sessions: dict[int, LinkSession] = attrs.field(factory=dict)
    _numbers: itertools.count[int] = attrs.field(factory=lambda: itertools.count(1))
    _asks: dict[str, _Ask] = attrs.field(factory=dict)
    _ask_numbers: itertools.count[int] = attrs.field(factory=lambda: itertools.count(1))

    # -- the extension's side ---------------------------------------------------

    def handlers(self) -> dict[str, Handler]:
        """Request types the extension sends about external agents."""
        return {
            "agents_tabs": self.handle_agents_tabs,
            "agents_answer": self.handle_agents_answer,
            "agents_stop": self.handle_agents_stop,
        }

    async def handle_agents_tabs(self, request: Request) -> JSONObject:
        raw = request.get("tabs", list)
        shared: dict[int, SharedTab] = {}
        for item in raw:
            if not isinstance(item, dict) or not _is_tab_id(item.get("id")):
                raise RequestError("bad_request", f"agents_tabs entry {item!r:.80} has no tab id")
            shared[item["id"]] = SharedTab(
                id=item["id"], title=str(item.get("title", "")), url=str(item.get("url", ""))
            )
        self.shared = shared
        return {"shared": len(shared), "clients": len(self.sessions)}

    async def handle_agents_answer(self, request: Request) -> JSONObject:
        ask_id = request.get("ask", str)
        allow = request.get("allow", bool)
        ask = self._asks.get(ask_id)
        if ask is None:
            return {"waiting": False}  # answered already, or it timed out
        ask.allow = allow
        ask.why = request.get("why", (str, type(None)), default=None)
        ask.done.set()
        return {"waiting": True}

    async def handle_agents_stop(self, request: Request) -> JSONObject:
        reason = request.get("reason", str, default="the person stopped external agents")
        stopped = len(self.sessions)
        await self.stop_all(reason)
        return {"stopped": stopped}

    async def stop_all(self, reason: str, code: str = "stopped") -> None:
        """End every client's session; each gets a ``closed`` message saying why
        (``stopped``: the person's Stop; ``host_exit``: the host is going away)."""
        for ask in self._asks.values():
            ask.allow = False
            ask.done.set()
        for session in list(self.sessions.values()):
            with contextlib.suppress(OutboxClosed, ValueError):
                with trio.move_on_after(1):
                    await session.outbox.send_message(
                        {"type": "closed", "code": code, "reason": reason}
                    )
            session.scope.cancel()

    async def _tell_extension(self, message: JSONObject) -> None:
        with contextlib.suppress(OutboxClosed, ValueError):
            await self.extension.send_message({"type": "agents_event", **message})

    # -- a client's side ------------------------------------------------------------

    def session_handlers(self, session: LinkSession) -> dict[str, Handler]:
        async def tabs(request: Request) -> JSONObject:
            del request
            listed = [tab.to_json() for tab in self.shared.values()]
            return {"tabs": listed}

        async def tools(request: Request) -> JSONObject:
            return await self.state.handle_tools(request)

        async def tool(request: Request) -> JSONObject:
            started = trio.current_time()
            tab = request.get("tab", int)
            name = request.get("name", str)
            # What outside agents did stays in the host's log, in order.
            log.info("link client %d: %s on tab %d", session.number, name, tab)
            await self._check_access(session, tab)
            fields = dict(request.fields)
            # A consent token is the host's to issue and the person's to grant: one a
            # client sends is dropped, and none is ever shown to a client.
            fields.pop("consent", None)
            fields.update(session=session.key, view=session.key)
            session.calls += 1
            try:
                reply = await self.state.handle_tool(Request("tool", request.id, fields))
                reply = await self._consent(session, tab, fields, reply)
            except RequestError as exc:
                await self._tell_extension(_call_event(session, tab, name, error=exc.message))
                raise
            await self._tell_extension(
                _call_event(
                    session, tab, name, error=reply["content"] if reply["is_error"] else None
                )
            )
            # The host's own share of the call, so a client can tell it from the
            # time its messages took (the MCP bench subtracts it).
            reply["host_ms"] = round((trio.current_time() - started) * 1000, 2)
            return reply

        async def hello(request: Request) -> JSONObject:
            del request
            raise RequestError("bad_request", "this connection has already said hello")

        return {"tabs": tabs, "tools": tools, "tool": tool, "hello": hello}

    async def _check_access(self, session: LinkSession, tab: int) -> None:
        if tab in self.shared or tab in session.allowed:
            return
        answer, why = await self._ask(session, tab, {"what": "tab"})
        if why is not None:
            raise RequestError(
                "forbidden",
                f"tab {tab} is not shared with agents and {why[:200]}; ask the person to "
                "share it from Trimtab's side panel",
            )
        if answer is None:
            raise RequestError(
                "forbidden",
                f"tab {tab} is not shared with agents and the person did not answer within "
                f"{self.ask_timeout:g} s; ask them to share it from Trimtab's side panel",
            )
        if not answer:
            raise RequestError("forbidden", f"the person refused access to tab {tab}")
        session.allowed.add(tab)

    async def _consent(
        self, session: LinkSession, tab: int, fields: JSONObject, reply: JSONObject
    ) -> JSONObject:
        """Ask before submitting, as for the side panel's agent: the host answered
        without acting; the person decides in the side panel, and a refusal (or no
        answer) is the tool's result."""
        consent = reply.get("consent")
        if not isinstance(consent, dict):
            return reply
        token = consent.pop("token", None)
        if not consent.get("required") or consent.get("granted") or not token:
            return reply
        reason = str(consent.get("reason") or "this action may submit a form")
        question = {
            "what": "submit",
            "tool": fields.get("name"),
            "reason": reason,
            "element": consent.get("element"),
        }
        answer, why = await self._ask(session, tab, question)
        if answer:
            again = dict(fields, consent=token)
            granted = await self.state.handle_tool(Request("tool", None, again))
            if isinstance(granted.get("consent"), dict):
                granted["consent"].pop("token", None)
            return granted
        if why is not None:
            outcome = f"the person could not be asked: {why[:200]}"
        else:
            answered = "did not answer in time" if answer is None else "refused"
            outcome = f"the person {answered} when asked in the browser"
        return dict(
            reply,
            content=f"Not done: {outcome} ({reason}).",
            is_error=True,
        )

    async def _ask(
        self, session: LinkSession, tab: int, question: JSONObject
    ) -> tuple[bool | None, str | None]:
        """Ask the person through the extension: their answer (None when none came in
        time), and why the extension said no without asking, if it did."""
        ask_id = f"k{next(self._ask_numbers)}"
        ask = _Ask()
        self._asks[ask_id] = ask
        try:
            try:
                await self.extension.send_message(
                    {
                        "type": "agents_ask",
                        "ask": ask_id,
                        "client": session.client,
                        "session": session.number,
                        "tab": tab,
                        **question,
                    }
                )
            except (OutboxClosed, ValueError):
                return None, "the browser could not be reached"
            with trio.move_on_after(self.ask_timeout):
                await ask.done.wait()
        finally:
            del self._asks[ask_id]
        if not ask.done.is_set():
            return None, None
        return ask.allow, ask.why

    # -- serving ---------------------------------------------------------------------

    async def serve(
        self,
        listener: trio.SocketListener,
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        async with trio.open_nursery() as nursery:
            task_status.started()
            while True:
                stream = await listener.accept()
                nursery.start_soon(self._serve_client, stream)

    async def _serve_client(self, stream: trio.SocketStream) -> None:
        async with stream:
            try:
                session = await self._handshake(stream)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OutboxClosed):
                return
            if session is None:
                return
            self.sessions[session.number] = session
            log.info("link client %d connected: %s", session.number, session.client)
            await self._tell_extension(
                {"event": "connected", "session": session.number, "client": session.client}
            )
            try:
                with session.scope:
                    server = HostServer(
                        outbox=session.outbox,
                        handlers=self.session_handlers(session),
                        eof_grace=0.0,
                    )
                    await server.serve(stream)
            finally:
                del self.sessions[session.number]
                # Nothing of the client stays behind: cached results, per-tab views.
                self.state.tracker.clear_session(session.key)
                self.state.forget_view(session.key)
                log.info("link client %d left after %d call(s)", session.number, session.calls)
                with trio.CancelScope(shield=True):
                    await self._tell_extension(
                        {
                            "event": "disconnected",
                            "session": session.number,
                            "client": session.client,
                        }
                    )

    async def _handshake(self, stream: trio.SocketStream) -> LinkSession | None:
        """Read the hello; answer it, and return the session if the secret matches."""
        outbox = Outbox(stream)
        problem = _peer_problem(stream)
        decoder = FrameDecoder(max_frame=_MAX_HELLO)
        message: JSONObject | None = None
        request_id: Any = None
        with trio.move_on_after(HELLO_TIMEOUT):
            while message is None and problem is None:
                data = await stream.receive_some(_RECEIVE_SIZE)
                if not data:
                    return None
                events = decoder.feed(data)
                if not events:
                    continue
                first = events[0]
                if not isinstance(first, DecodedMessage):
                    problem = f"the first message is not a hello: {first.message}"
                    request_id = first.request_id
                elif len(events) > 1 or decoder.statistics().buffered_bytes:
                    problem = "send nothing before the hello is answered"
                else:
                    message = first.message
        if message is None and problem is None:
            problem = f"no hello within {HELLO_TIMEOUT:g} s"
        if message is not None:
            request_id = message.get("id")
            problem = self._hello_problem(message)
        if problem is not None:
            log.warning("link client refused: %s", problem)
            await outbox.send_message(
                {
                    "type": "error",
                    "id": request_id,
                    "error": {"code": "forbidden", "message": problem},
                }
            )
            return None
        assert message is not None
        session = LinkSession(
            number=next(self._numbers), client=_client_name(message.get("client")), outbox=outbox
        )
        await outbox.send_frames(
            [
                encode_frame(
                    {
                        "type": "result",
                        "id": request_id,
                        "result": {
                            "session": session.number,
                            "version": host_version(),
                            "endpoint": self.info.to_json(),
                        },
                    }
                )
            ]
        )
        return session

    def _hello_problem(self, message: Mapping[str, Any]) -> str | None:
        if message.get("type") != "hello":
            return f"the first message must be a hello, not {str(message.get('type'))[:40]!r}"
        secret = message.get("secret")
        if not isinstance(secret, str) or not secret:
            return "the hello has no secret; read it from the secret file (trimtab doctor)"
        if not hmac.compare_digest(secret.encode(), self.secret.encode()):
            return "wrong secret"
        return None


def _call_event(session: LinkSession, tab: int, name: str, *, error: str | None) -> JSONObject:
    return {
        "event": "call",
        "session": session.number,
        "client": session.client,
        "tab": tab,
        "tool": name,
        "error": None if error is None else error[:300],
    }


def _client_name(raw: object) -> str:
    """``name version`` from a hello's ``client`` field, bounded and printable."""
    if isinstance(raw, dict):
        name = str(raw.get("name", "")).strip()
        version = str(raw.get("version", "")).strip()
        text = f"{name} {version}".strip()
    else:
        text = ""
    text = "".join(ch for ch in text if ch.isprintable())[:_MAX_CLIENT_NAME]
    return text or "an unnamed client"


def _is_tab_id(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**53


def _peer_problem(stream: trio.SocketStream) -> str | None:
    """On Linux, refuse a peer of another user (the folder's mode already should)."""
    if not sys.platform.startswith("linux"):
        return None
    raw = stream.socket.getsockopt(
        stdlib_socket.SOL_SOCKET, stdlib_socket.SO_PEERCRED, struct.calcsize("3i")
    )
    _pid, uid, _gid = struct.unpack("3i", raw)
    if uid != os.getuid():
        return f"the connecting process runs as user id {uid}, not this user"
    return None


# --------------------------------------------------------------------------- opening


def _parent_browser() -> tuple[str, str]:
    """The browser that started this host and its profile folder, where /proc tells."""
    parent = Path(f"/proc/{os.getppid()}")
    try:
        exe = os.readlink(parent / "exe")
        args = (parent / "cmdline").read_bytes().split(b"\0")
    except OSError:
        return "browser", "default"
    profile = "default"
    for arg in args:
        text = arg.decode("utf-8", "replace")
        if text.startswith("--user-data-dir="):
            profile = os.path.abspath(text.split("=", 1)[1])
    return Path(exe).name or "browser", profile


async def _bind(path: Path) -> trio.SocketListener:
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        raise PermissionProblem(f"socket path {path} is too long for a Unix socket")
    # A socket left by a host that crashed (or by the previous host of this
    # browser, which Chrome replaced) is taken over: this host is the live one.
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    sock = trio.socket.socket(stdlib_socket.AF_UNIX, stdlib_socket.SOCK_STREAM)
    try:
        await sock.bind(os.fspath(path))
        os.chmod(path, 0o600)
        sock.listen(16)
    except BaseException:
        sock.close()
        raise
    return trio.SocketListener(sock)


def _remove_if_ours(path: Path, inode: int) -> None:
    """Remove ``path`` unless a newer host has replaced it."""
    with contextlib.suppress(OSError):
        if path.lstat().st_ino == inode:
            path.unlink()


@contextlib.asynccontextmanager
async def open_link(
    state: HostState,
    extension: Outbox,
    origin: str | None,
    *,
    folder: Path | None = None,
    secret_folder: Path | None = None,
    ask_timeout: float = ASK_TIMEOUT,
) -> AsyncIterator[Link]:
    """Listen on this browser's endpoint while the host runs.

    A link that cannot be opened (an unsafe folder, a path too long) is logged and
    left closed: the side panel's own agent must keep working regardless.
    """
    browser, profile = _parent_browser()
    name = endpoint_name(browser, profile, origin)
    info = EndpointInfo(
        name=name,
        browser=browser,
        profile=profile,
        origin=origin,
        pid=os.getpid(),
        version=host_version(),
    )
    if sys.platform == "win32":  # named pipes are not built yet (README)
        yield Link(state, extension, info, secret="", socket_path=None, ask_timeout=ask_timeout)
        return
    folder = endpoint_dir() if folder is None else folder
    try:
        secret = read_or_create_secret(state_dir() if secret_folder is None else secret_folder)
        ensure_private_dir(folder)
        socket_path = folder / (name + ENDPOINT_SUFFIX)
        listener = await _bind(socket_path)
    except (OSError, PermissionProblem) as exc:
        log.warning("the link to outside agents is not open: %s", exc)
        yield Link(state, extension, info, secret="", socket_path=None, ask_timeout=ask_timeout)
        return
    link = Link(
        state, extension, info, secret=secret, socket_path=socket_path, ask_timeout=ask_timeout
    )
    socket_inode = socket_path.lstat().st_ino
    info_path = folder / (name + INFO_SUFFIX)
    info_tmp = info_path.with_suffix(".tmp")
    fd = os.open(info_tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        json.dump(info.to_json(), file)
    os.replace(info_tmp, info_path)
    info_inode = info_path.lstat().st_ino
    log.info("link listening on %s", socket_path)
    try:
        async with listener, trio.open_nursery() as nursery:
            await nursery.start(link.serve, listener)
            try:
                yield link
            finally:
                with trio.CancelScope(shield=True):
                    await link.stop_all("the browser's host is shutting down", "host_exit")
                nursery.cancel_scope.cancel()
    finally:
        _remove_if_ours(socket_path, socket_inode)
        _remove_if_ours(info_path, info_inode)
