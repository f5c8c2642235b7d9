"""The link's listening side, inside the host Chrome started.

`open_link` binds the endpoint (a Unix socket, 0600, in the 0700 folder of `_paths`,
or a port on 127.0.0.1: `_transport`; a TCP peer not on loopback is refused) and
serves each client that presents the secret with the host's own request loop
(`HostServer`), through one `LinkSession`: its own call-tracker session and its
own snapshot memory per tab (the ``view`` of the host's ``tool`` request), so
dedup and diffs answer what *that* client has seen. Two clients acting on one tab
take turns (``trimtab.browser``'s tab turns); clients on different tabs never wait
for each other. Each client has bounds: `MAX_CALLS_IN_FLIGHT` calls running or
waiting at once (more are answered ``busy`` at once), and at most `MAX_CLIENTS`
clients are connected at once (the next hello is refused ``busy``). A client that
leaves has its calls cancelled, those still waiting for a tab's turn included: none
of them runs after it left.

The person decides which tabs a client may touch: the extension pushes the tabs they
shared (``agents_tabs``); for any other tab the link asks them in the side panel
(``trimtab.envelope.SidePanel``, the same place and the same call as the questions
before a submit), and ``agents_stop`` ends every client's session at once (after
which no client is asked about a tab until the person shares one again), or one
client's (``"session"``: the others go on). The link tells the extension of clients
and their calls (``agents_event``: a call as it starts, ``acting``, and as it ends,
``call``) so the side panel can show every agent acting now. While a client's call
waits for the person, the link sends it ``progress`` messages, so that MCP clients
that give up after 60 s without one keep waiting.

A client may name its session in its hello (``"session": "NAME"``, the command
line's ``--session``): what that session saw (its snapshot memory per tab and its
tracker session) is kept for `PARKED_SESSION_LIFETIME` after it leaves and handed to
the next hello with the same name, so consecutive ``trimtab call``s get diffs.
"""

from __future__ import annotations

import contextlib
import hmac
import itertools
import logging
import os
import socket as stdlib_socket
import struct
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import attrs
import trio

from ...browser import (
    HostState,
    ToolCall,
    budget_of,
    check_tab_id,
    groups_of,
    shown_tab,
    tabs_listing,
)
from ...envelope import Answer, Ask, Question, SidePanel
from ...wire import (
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
from .._paths import EndpointInfo
from .._transport import LinkAddress, loopback_refusal
from ._events import call_event
from ._routines import routine_handlers
from ._untrusted import new_marker, page_data

__all__ = [
    "HELLO_TIMEOUT",
    "HOST_EXIT",
    "MAX_CALLS_IN_FLIGHT",
    "MAX_CLIENTS",
    "PARKED_SESSION_LIFETIME",
    "PROGRESS_INTERVAL",
    "Link",
    "LinkSession",
    "SharedTab",
]

log = logging.getLogger("trimtab.link")

# Why every client's session ends when the host goes away (Chrome closed its pipe).
HOST_EXIT: Final = (
    "the browser's host is shutting down: the browser quit, or the Trimtab extension was "
    "reloaded, updated or reinstalled"
)
# While a call waits for the person, the client hears from the host this often.
PROGRESS_INTERVAL: Final = 10.0
# How long a named session's memory outlives its connection.
PARKED_SESSION_LIFETIME: Final = 600.0
_MAX_SESSION_NAME: Final = 64
# A client that does not say hello (with the secret) in this long is dropped.
HELLO_TIMEOUT: Final = 10.0
# Calls one client may have running or waiting at once. A tab runs one call at a time
# and a call waits at most TRIMTAB_TAB_WAIT (10 s) for its turn, so calls beyond the
# few tabs an agent uses only queue; agents send a handful of tool calls at once (a
# read of each of their tabs). 16 leaves room for two calls on each of 8 tabs and
# keeps what one runaway client can queue in the host (16 requests of at most 1 MiB)
# small; more is a loop gone wrong, told so at once instead of queued.
MAX_CALLS_IN_FLIGHT: Final = 16
# Clients connected at once. Each is an agent process the person started (a coding
# agent, a `trimtab call`); each keeps its own snapshot memory of every tab it reads.
# 64 is far above what one person runs and keeps the host's memory bounded when a
# script opens connections in a loop.
MAX_CLIENTS: Final = 64
# A hello is small; anything larger before authentication is refused unread.
_MAX_HELLO: Final = 16 * 1024
_MAX_CLIENT_NAME: Final = 100
# Error replies whose message may quote the page: a dialog's message, what a page
# script threw, the browser's words about the page.
_QUOTES_THE_PAGE: Final = frozenset({"dialog_open", "cdp_error"})
_RECEIVE_SIZE: Final = 64 * 1024
# A host Chrome just started (the browser's worker woke, or the browser restarted)
# knows the shared tabs once the extension lists them, which it does as soon as it is
# connected: a client's first call waits this long for that list rather than being
# refused a tab the person shared.
SHARES_WAIT: Final = 5.0


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
    name: str | None = None  # the session's own name (``--session``), kept across connections
    scope: trio.CancelScope = attrs.field(factory=trio.CancelScope)
    allowed: set[int] = attrs.field(factory=set)  # unshared tabs the person allowed
    calls: int = 0
    in_flight: int = 0  # tool calls running or waiting for their tab's turn now
    told_where_to_answer: bool = False
    # The marker of this connection's untrusted blocks: every page string it is sent
    # is inside one (`page_data`), so no page can pose as Trimtab or the person.
    marker: str = attrs.field(factory=new_marker)

    @property
    def key(self) -> str:
        """The tracker session and snapshot view of this client."""
        return f"link-{self.number}" if self.name is None else f"link-named-{self.name}"


@attrs.define(eq=False)
class Link:
    """The running link: its sessions, the shared tabs, and how it asks the person."""

    state: HostState
    panel: SidePanel  # where the person is asked, for every client
    extension: Outbox  # the native port, for agents_event
    info: EndpointInfo
    secret: str
    address: LinkAddress | None  # None: the link could not be opened (`problem` says why)
    problem: str | None = None
    shared: dict[int, SharedTab] = attrs.field(factory=dict)
    sessions: dict[int, LinkSession] = attrs.field(factory=dict)
    # Set by the person's Stop; until they share a tab again nobody is asked for one.
    stopped: bool = False
    # Set by the extension's first list of shared tabs (``agents_tabs``).
    shares_known: trio.Event = attrs.field(factory=trio.Event)
    _numbers: itertools.count[int] = attrs.field(factory=lambda: itertools.count(1))
    # Named sessions that left: what cancels their forgetting when one comes back.
    _parked: dict[str, trio.CancelScope] = attrs.field(factory=dict)
    _nursery: trio.Nursery | None = None

    @property
    def socket_path(self) -> Path | None:
        """The Unix socket clients connect to (None on TCP, or when the link is closed)."""
        return self.address if isinstance(self.address, Path) else None

    # -- the extension's side ---------------------------------------------------

    def handlers(self) -> dict[str, Handler]:
        """Request types the extension sends about external agents."""
        return {
            "agents_tabs": self.handle_agents_tabs,
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
        self.shares_known.set()
        if shared:
            self.stopped = False
        return {"shared": len(shared), "clients": len(self.sessions)}

    async def handle_agents_stop(self, request: Request) -> JSONObject:
        number = request.get("session", int, default=None)
        if number is not None:
            return {"stopped": await self.stop_one(number, request)}
        reason = request.get("reason", str, default="the person stopped external agents")
        stopped = len(self.sessions)
        self.stopped = True
        # What the clients' last actions set off is held no longer: it is failed.
        self.state.set_off.end(when=lambda key: key.startswith("link-"))
        await self.stop_all(reason)
        return {"stopped": stopped}

    async def stop_one(self, number: int, request: Request) -> int:
        """End client ``number``'s session as `stop_all` ends each (its calls cancelled,
        their questions withdrawn); the other clients go on and the shared tabs stay
        shared. 0 when no such client is connected (it left already)."""
        session = self.sessions.get(number)
        if session is None:
            return 0
        reason = request.get(
            "reason", str, default="the person stopped this agent in Trimtab's side panel"
        )
        key = session.key
        self.state.set_off.end(when=lambda each: each == key)
        await self.end_session(session, reason, "stopped")
        return 1

    async def stop_all(self, reason: str, code: str = "stopped") -> None:
        """End every client's session; each gets a ``closed`` message saying why
        (``stopped``: the person's Stop; ``host_exit``: the host is going away). Calls
        in flight are cancelled, so their questions are withdrawn."""
        for session in list(self.sessions.values()):
            await self.end_session(session, reason, code)

    async def host_exiting(self) -> None:
        """End every session as the host goes away (``host_exit``, `HOST_EXIT`)."""
        await self.stop_all(HOST_EXIT, "host_exit")

    @staticmethod
    async def end_session(session: LinkSession, reason: str, code: str) -> None:
        """Tell a client why its session ends (``closed``), then end it: its calls are
        cancelled, their questions withdrawn."""
        with contextlib.suppress(OutboxClosed, ValueError):
            with trio.move_on_after(1):
                closed = {"type": "closed", "code": code, "reason": reason}
                await session.outbox.send_message(closed)
        session.scope.cancel()

    async def tell_extension(self, message: JSONObject) -> None:
        """Send the extension an ``agents_event`` (``message``'s fields), if it listens."""
        with contextlib.suppress(OutboxClosed, ValueError):
            await self.extension.send_message({"type": "agents_event", **message})

    # -- a client's side ------------------------------------------------------------

    def session_handlers(self, session: LinkSession) -> dict[str, Handler]:
        async def tabs(request: Request) -> JSONObject:
            del request
            await self.wait_for_shares()
            listed = [tab.to_json() for tab in self.shared.values()]
            for tab in sorted(session.allowed - self.shared.keys()):
                # A tab the person allowed for this client, with what the browser says of it.
                title, url = await self.state.tab_facts(tab)
                listed.append({"id": tab, "title": title, "url": url, "allowed": True})
            task = self.state.task_tabs(session.key)
            for entry in task if task is not None else ():
                if entry.opener is not None and entry.tab not in self.shared:
                    # Opened from one of its tabs while it acted: shared with it alone.
                    title, url = await self.state.tab_facts(entry.tab)
                    listed.append(
                        {"id": entry.tab, "title": title, "url": url, "opener": entry.opener}
                    )
            # A script reads the JSON: its URLs show credentials as the listing does.
            listed = [{**tab, **shown_tab(str(tab["title"]), str(tab["url"]))} for tab in listed]
            # Titles and URLs are the pages' words: a model reads them in a block.
            content = page_data(tabs_listing(listed), session.marker)
            return {"tabs": listed, "stopped": self.stopped, "content": content}

        async def tools(request: Request) -> JSONObject:
            return self.state.catalogue(groups_of(request))

        async def tool(request: Request) -> JSONObject:
            if session.in_flight >= MAX_CALLS_IN_FLIGHT:
                raise RequestError(
                    "busy",
                    f"too many calls in flight: this client already has {session.in_flight} "
                    f"calls running or waiting for their tab (at most {MAX_CALLS_IN_FLIGHT} "
                    "per client); wait for their answers before sending more",
                )
            session.in_flight += 1
            try:
                return await run_tool(request)
            finally:
                session.in_flight -= 1

        async def run_tool(request: Request) -> JSONObject:
            started = trio.current_time()
            tab = check_tab_id(request.get("tab", int), "tool field 'tab'")
            name = request.get("name", str)
            args = request.get("args", dict, default={})
            # Arguments that do not fit the tool's schema are refused before anything
            # (the person is not asked about a call that cannot run), in Trimtab's words.
            self.state.toolbox.check_arguments(name, args)
            # What outside agents did stays in the host's log, in order.
            log.info("link client %d: %s on tab %d", session.number, name, tab)
            session.calls += 1
            ask = self.asking(session, request)
            # Numbered before anything, so that a call refused before it ran (a tab the
            # person did not share, the page gone) names itself as every answer does.
            number = self.state.tracker.new_call_id()
            call = ToolCall(
                session=session.key,
                tab=tab,
                name=name,
                args=args,
                client=session.client,
                view=session.key,
                budget=budget_of(request),
                id=number,
            )
            # As this client saw them, before an action leaves the page (a submit).
            elements = self.state.elements_of(call)

            async def ended(acted: int, error: str | None) -> None:
                event = call_event(
                    session.number, session.client, acted, name, args, elements, error=error
                )
                await self.tell_extension({**event, "call": number})

            # The side panel shows the call as acting from now until its `call` event.
            await self.tell_extension(
                {
                    "event": "acting",
                    "session": session.number,
                    "client": session.client,
                    "tab": tab,
                    "tool": name,
                    "call": number,
                }
            )
            try:
                await self.check_access(session, tab, ask)
                outcome = await self.state.call_tool(
                    call,
                    ask,
                    # After the call answered, the person is asked without the call's
                    # progress messages (its request is over).
                    later=self.panel.ask,
                )
            except RequestError as exc:
                task = self.state.task_tabs(session.key)
                acted = task.resolve(tab) if task is not None else tab
                await ended(acted, exc.message)
                message = exc.message
                if exc.code in _QUOTES_THE_PAGE:
                    message = page_data(exc.message, session.marker)
                facts = {"tab": acted, "call_id": number}
                raise RequestError(exc.code, message, facts=facts) from exc
            except BaseException as exc:
                # Cancelled (the client gave up or left, the person's Stop), or a bug:
                # the panel hears that it ended all the same.
                why = "cancelled" if isinstance(exc, trio.Cancelled) else "failed"
                with trio.CancelScope(shield=True), trio.move_on_after(1):
                    await ended(tab, why)
                raise
            await ended(
                tab if outcome.tab is None else outcome.tab,
                outcome.content if outcome.is_error else None,
            )
            reply = outcome.to_json()
            reply["content"] = outcome.for_model(lambda text: page_data(text, session.marker))
            # The host's own share of the call, so a client can tell it from the
            # time its messages took (the MCP bench subtracts it).
            reply["host_ms"] = round((trio.current_time() - started) * 1000, 2)
            return reply

        async def hello(request: Request) -> JSONObject:
            del request
            raise RequestError("bad_request", "this connection has already said hello")

        return {
            "tabs": tabs,
            "tools": tools,
            "tool": tool,
            "hello": hello,
            **routine_handlers(self, session),
        }

    async def wait_for_shares(self) -> None:
        """Wait, at most `SHARES_WAIT`, for the extension's first list of shared tabs."""
        with trio.move_on_after(SHARES_WAIT):
            await self.shares_known.wait()

    async def check_access(self, session: LinkSession, tab: int, ask: Ask) -> None:
        if tab not in self.shared:
            await self.wait_for_shares()
        if tab in self.shared or tab in session.allowed:
            return
        if self.state.in_task(session.key, tab):
            return  # opened from one of its tabs while it acted: shared with it alone
        if self.stopped:
            raise RequestError(
                "forbidden",
                f"tab {tab} is not shared: the person stopped outside agents; they must share "
                "a tab again from Trimtab's side panel",
            )
        answer = await ask(
            Question(client=session.client, session=session.key, tab=tab, what="tab")
        )
        if not answer.allow:
            refusal = "the person refused access to it" if answer.answered else answer.refusal()
            raise RequestError(
                "forbidden",
                f"tab {tab} is not shared with agents and {refusal}; ask the person to share "
                "it from Trimtab's side panel",
            )
        session.allowed.add(tab)

    def asking(self, session: LinkSession, request: Request) -> Ask:
        """The side panel's `ask`, telling the client while it waits (``progress``)."""

        async def ask(question: Question) -> Answer:
            where = (
                "waiting for the person to answer in the browser"
                if session.told_where_to_answer
                else "waiting for the person to answer in the Trimtab side panel in the "
                "browser (open it from the toolbar if it is closed)"
            )
            session.told_where_to_answer = True
            async with trio.open_nursery() as nursery:

                async def tell() -> None:
                    waited = 0.0
                    while True:
                        with contextlib.suppress(OutboxClosed, ValueError):
                            await session.outbox.send_message(
                                {
                                    "type": "progress",
                                    "id": request.id,
                                    "message": where,
                                    "waited": waited,
                                    "timeout": self.panel.timeout,
                                }
                            )
                        await trio.sleep(PROGRESS_INTERVAL)
                        waited += PROGRESS_INTERVAL

                nursery.start_soon(tell)
                answer = await self.panel.ask(question)
                nursery.cancel_scope.cancel()
            return answer

        return ask

    # -- serving ---------------------------------------------------------------------

    async def serve(
        self,
        listener: trio.SocketListener,
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        async with trio.open_nursery() as nursery:
            # The first listener's nursery outlives the others (a socket made again
            # after its file was deleted is served beside it).
            if self._nursery is None:
                self._nursery = nursery
            task_status.started()
            while True:
                stream = await listener.accept()
                nursery.start_soon(self._serve_client, stream)

    def _ended_with_the_extension(self, session: LinkSession, handler: Handler) -> Handler:
        """``handler``, except that a request that fails because the extension's pipe
        broke under it gets no answer of its own: the session ends as at the host's exit
        (``closed``, `HOST_EXIT`), which the host is about to reach, so that the client
        says what broke as for every other request in flight then, instead of reading an
        internal error."""

        async def handle(request: Request) -> Mapping[str, Any]:
            try:
                return await handler(request)
            except RequestError:
                raise
            except Exception:
                if not self.extension.closed:
                    raise
                log.info("link client %d: the extension went away during a request", session.number)
                await self.end_session(session, HOST_EXIT, "host_exit")
                await trio.lowlevel.checkpoint()  # the session's scope is cancelled: ends here
                raise

        return handle

    async def _serve_client(self, stream: trio.SocketStream) -> None:
        async with stream:
            try:
                session = await self._handshake(stream)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OutboxClosed):
                return
            if session is None:
                return
            log.info("link client %d connected: %s", session.number, session.client)
            try:
                await self.tell_extension(
                    {"event": "connected", "session": session.number, "client": session.client}
                )
                with session.scope:
                    handlers = {
                        kind: self._ended_with_the_extension(session, handler)
                        for kind, handler in self.session_handlers(session).items()
                    }
                    server = HostServer(outbox=session.outbox, handlers=handlers, eof_grace=0.0)
                    await server.serve(stream)
            finally:
                del self.sessions[session.number]
                self._leave(session)
                log.info("link client %d left after %d call(s)", session.number, session.calls)
                with trio.CancelScope(shield=True):
                    await self.tell_extension(
                        {
                            "event": "disconnected",
                            "session": session.number,
                            "client": session.client,
                        }
                    )

    def _leave(self, session: LinkSession) -> None:
        """Forget what a client saw (cached results, per-tab views) once it left; a named
        session's is kept for `PARKED_SESSION_LIFETIME` in case it comes back."""
        if session.name is None or self._nursery is None:
            self._forget(session.key)
            return
        parked = trio.CancelScope()
        self._parked[session.name] = parked

        async def forget_later() -> None:
            with parked:
                await trio.sleep(PARKED_SESSION_LIFETIME)
                self._forget(session.key)
            if self._parked.get(session.name or "") is parked:
                del self._parked[session.name or ""]

        self._nursery.start_soon(forget_later)

    def _forget(self, key: str) -> None:
        self.state.tracker.clear_session(key)
        self.state.forget_view(key)

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
        code = "forbidden"
        if message is not None:
            request_id = message.get("id")
            problem = self._hello_problem(message)
            if problem is None and len(self.sessions) >= MAX_CLIENTS:
                code = "busy"
                problem = (
                    f"too many clients connected: {len(self.sessions)} (at most "
                    f"{MAX_CLIENTS} at once); close some agents (trimtab mcp processes) "
                    "and try again"
                )
        if problem is not None:
            log.warning("link client refused: %s", problem)
            await outbox.send_message(
                {
                    "type": "error",
                    "id": request_id,
                    "error": {"code": code, "message": problem},
                }
            )
            return None
        assert message is not None
        session = LinkSession(
            number=next(self._numbers),
            client=_client_name(message.get("client")),
            outbox=outbox,
            name=_session_name(message.get("session")),
        )
        if session.name is not None:
            parked = self._parked.pop(session.name, None)
            if parked is not None:
                parked.cancel()  # it came back: what it saw is its again
        # Counted from here, before the reply's wait, so that clients saying hello at
        # the same moment never pass the limit together (`_serve_client` removes it).
        self.sessions[session.number] = session
        try:
            reply = {
                "session": session.number,
                "version": host_version(),
                "endpoint": self.info.to_json(),
                "marker": session.marker,
            }
            await outbox.send_frames(
                [encode_frame({"type": "result", "id": request_id, "result": reply})]
            )
        except BaseException:
            del self.sessions[session.number]
            raise
        return session

    def _hello_problem(self, message: Mapping[str, Any]) -> str | None:
        name = message.get("session")
        if name is not None and _session_name(name) is None:
            return (
                f"the hello's session {str(name)[:80]!r} is not a name of 1 to "
                f"{_MAX_SESSION_NAME} letters, digits, '-', '_' or '.'"
            )
        if name is not None and any(s.name == name for s in self.sessions.values()):
            return f"session {name!r} is in use by another connected client"
        if message.get("type") != "hello":
            return f"the first message must be a hello, not {str(message.get('type'))[:40]!r}"
        secret = message.get("secret")
        if not isinstance(secret, str) or not secret:
            return "the hello has no secret; read it from the secret file (trimtab doctor)"
        if not hmac.compare_digest(secret.encode(), self.secret.encode()):
            return "wrong secret"
        return None


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


def _session_name(raw: object) -> str | None:
    """A hello's session name, or None when it has none (or none that is usable)."""
    if not isinstance(raw, str) or not 0 < len(raw) <= _MAX_SESSION_NAME:
        return None
    if not all(ch.isascii() and (ch.isalnum() or ch in "-_.") for ch in raw):
        return None
    return raw


def _is_tab_id(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**53


def _peer_problem(stream: trio.SocketStream) -> str | None:
    """Refuse a TCP peer that is not on loopback, and on Linux a Unix socket's peer of
    another user (the folder's mode already should)."""
    if stream.socket.family != getattr(stdlib_socket, "AF_UNIX", None):
        return loopback_refusal(stream.socket.getpeername())
    if not sys.platform.startswith("linux"):
        return None
    raw = stream.socket.getsockopt(
        stdlib_socket.SOL_SOCKET, stdlib_socket.SO_PEERCRED, struct.calcsize("3i")
    )
    _pid, uid, _gid = struct.unpack("3i", raw)
    if uid != os.getuid():
        return f"the connecting process runs as user id {uid}, not this user"
    return None
