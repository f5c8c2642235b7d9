"""The link's connecting side: `connect` to a browser's endpoint (its Unix socket, or its
port on 127.0.0.1, as its info file says) and send requests; `choose_endpoint` picks
the endpoint among the live ones (in WSL, the Windows hosts' too: `_wsl`).

Used by ``trimtab mcp`` and the command line. One reader task matches replies to
requests by id (so requests may run concurrently, as MCP tool calls do) and
reassembles chunked replies; a ``closed`` message from the host (the person pressed
Stop, or the host is shutting down) fails every request with its reason.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import socket as stdlib_socket
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Final, TypeAlias

import attrs
import trio

from ..wire import (
    MAX_INCOMING_FRAME,
    MAX_OUTGOING_FRAME,
    ChunkAssembler,
    ChunkError,
    DecodedMessage,
    FrameDecoder,
    JSONObject,
    encode_frame,
    encode_json,
)
from ._paths import SECRET_FILE, Endpoint, list_endpoints
from ._transport import LinkAddress, TcpAddress
from ._wsl import WSL_LOOPBACK_HINT, wsl_state_dirs

__all__ = [
    "HOW_TO_SHARE",
    "LinkClient",
    "LinkError",
    "OnProgress",
    "choose_endpoint",
    "connect",
    "find_endpoints",
]

# The person's side, told to every outside agent that finds no tab shared: how a tab
# is shared, and where the questions are asked.
HOW_TO_SHARE: Final = (
    "To share a tab, the person opens Trimtab's side panel on it (the Trimtab button in "
    'the browser\'s toolbar) and clicks "Share this tab with agents". The side panel '
    "must stay open while you work: the person answers your questions there (another "
    "tab, submitting a form)."
)

_RECEIVE_SIZE: Final = 256 * 1024
CONNECT_TIMEOUT: Final = 10.0
_GONE: Final = (
    "the host closed the link: the browser quit or restarted, or the extension was reloaded"
)
_GONE_IN_HELLO: Final = (
    "the browser's host closed the link before answering the hello (the browser is "
    "quitting or restarting; try again in a moment)"
)
# Messages one request may have queued before its caller reads them (progress, reply).
_QUEUED_MESSAGES: Final = 16
# A cancel the host does not take within this long is dropped (the link is gone anyway).
_CANCEL_TIMEOUT: Final = 2.0

# Hears a request's ``progress`` messages: {"type": "progress", "id", "message", ...}.
OnProgress: TypeAlias = Callable[[JSONObject], Awaitable[None]]


class LinkError(Exception):
    """A request the host refused (``code`` is the protocol's), or a broken link.

    ``unsent``: the request never left this process (the link was already broken),
    so sending it again on a new link cannot make it act twice. ``facts``: what else
    the host's error said (a ``tool`` call's ``tab`` and ``call_id``).
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        unsent: bool = False,
        facts: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message
        self.unsent = unsent
        self.facts: dict[str, Any] = dict(facts or {})

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


@attrs.define(eq=False)
class LinkClient:
    """A connection to one host, after its hello was accepted."""

    stream: trio.SocketStream
    hello: JSONObject = attrs.field(factory=dict)
    closed_reason: str | None = None
    closed_code: str | None = None  # from the host's `closed` message, if it sent one
    closed: trio.Event = attrs.field(factory=trio.Event)
    _ids: itertools.count[int] = attrs.field(factory=lambda: itertools.count(1))
    _waiting: dict[int, trio.MemorySendChannel[JSONObject]] = attrs.field(factory=dict)
    _send_lock: trio.Lock = attrs.field(factory=trio.Lock)

    @property
    def session(self) -> int:
        return int(self.hello.get("session", 0))

    @property
    def marker(self) -> str:
        """The marker of this connection's untrusted blocks (``<<<PAGE DATA marker>>>``)."""
        return str(self.hello.get("marker", ""))

    async def request(
        self, kind: str, *, on_progress: OnProgress | None = None, **fields: Any
    ) -> JSONObject:
        """Send one request and return its ``result``; an ``error`` reply raises LinkError.

        ``on_progress`` hears the host's ``progress`` messages for this request (it waits
        for the person). A caller that is cancelled cancels the request in the host
        too, so whatever it asked the person is withdrawn and can no longer act.
        """
        if self.closed_reason is not None:
            raise LinkError("link_closed", self.closed_reason, unsent=True)
        request_id = next(self._ids)
        send, receive = trio.open_memory_channel[JSONObject](_QUEUED_MESSAGES)
        self._waiting[request_id] = send
        sent = False
        try:
            try:
                frame = encode_frame({"type": kind, "id": request_id, **fields})
            except ValueError as exc:
                raise LinkError("bad_request", _unsendable(kind, fields, exc)) from None
            async with self._send_lock:
                try:
                    await self.stream.send_all(frame)
                except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                    raise LinkError(
                        "link_closed", self._why("the host closed the link"), unsent=True
                    ) from exc
            sent = True
            async with receive:
                while True:
                    try:
                        reply = await receive.receive()
                    except trio.EndOfChannel:
                        raise self._gone_during(kind) from None
                    if reply.get("type") != "progress":
                        break
                    if on_progress is not None:
                        await on_progress(reply)
            sent = False
        finally:
            self._waiting.pop(request_id, None)
            if sent:
                await self._cancel(request_id)
        return _result_of(reply)

    async def _cancel(self, request_id: int) -> None:
        """Tell the host this client gave up on request ``request_id`` (best effort)."""
        with trio.CancelScope(shield=True), trio.move_on_after(_CANCEL_TIMEOUT):
            frame = encode_frame({"type": "cancel", "id": next(self._ids), "request": request_id})
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                async with self._send_lock:
                    await self.stream.send_all(frame)

    def _why(self, default: str) -> str:
        return self.closed_reason or default

    def _gone_during(self, kind: str) -> LinkError:
        """The error of a request in flight when the link closed: the person's Stop
        says so; anything else is the browser (or its host) going away."""
        reason = self._why(_GONE)
        if self.closed_code == "stopped":
            return LinkError("stopped", reason)
        what = "the call" if kind == "tool" else f"the {kind} request"
        return LinkError(
            "link_closed",
            f"the browser or its extension went away during {what} ({reason}); what it did "
            "before is not known: read the tab again once it is back",
        )

    async def _read(self, decoder: FrameDecoder) -> None:
        assembler = ChunkAssembler()
        try:
            while True:
                try:
                    data = await self.stream.receive_some(_RECEIVE_SIZE)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    data = b""
                if not data:
                    break
                for event in decoder.feed(data):
                    if not isinstance(event, DecodedMessage):
                        continue  # the host never sends bad frames; nothing to match
                    try:
                        message = assembler.feed(event.message)
                    except ChunkError:
                        continue
                    if message is None:
                        continue
                    if message.get("type") == "closed":
                        self.closed_reason = str(message.get("reason", "the host closed"))
                        self.closed_code = str(message.get("code", "link_closed"))
                        continue
                    request_id = _int_id(message.get("id"))
                    if message.get("type") == "progress":
                        waiter = self._waiting.get(request_id)
                        if waiter is not None:
                            # A reader that is behind loses a progress message, never a reply.
                            with contextlib.suppress(trio.WouldBlock):
                                waiter.send_nowait(message)
                        continue
                    waiter = self._waiting.pop(request_id, None)
                    if waiter is not None:
                        waiter.send_nowait(message)
        finally:
            if self.closed_reason is None:
                self.closed_reason = _GONE
            for waiter in self._waiting.values():
                waiter.close()
            self._waiting.clear()
            self.closed.set()


def _unsendable(kind: str, fields: Mapping[str, Any], exc: ValueError) -> str:
    """Why a request could not be framed: too large for the link, or not JSON."""
    try:
        size = len(encode_json({"type": kind, **fields}).encode("utf-8"))
    except ValueError:
        return f"the {kind} request is not JSON: {exc}"
    return (
        f"the {kind} request is {size} bytes, over the link's {MAX_OUTGOING_FRAME}-byte "
        "limit for one message; send less at a time"
    )


def _int_id(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else -1


def _result_of(reply: Mapping[str, Any]) -> JSONObject:
    if reply.get("type") == "error":
        error = reply.get("error") or {}
        facts = {k: v for k, v in error.items() if k not in ("code", "message")}
        raise LinkError(
            str(error.get("code", "internal")), str(error.get("message", "")), facts=facts
        )
    result = reply.get("result")
    if not isinstance(result, dict):
        raise LinkError("bad_message", f"the host's reply has no result object: {reply!r:.200}")
    return result


async def _open(address: LinkAddress) -> trio.SocketStream:
    """A stream to the Unix socket at ``address``, or to its port on 127.0.0.1."""
    if isinstance(address, TcpAddress):
        sock = trio.socket.socket(stdlib_socket.AF_INET, stdlib_socket.SOCK_STREAM)
        target: tuple[str, int] | str = (address.host, address.port)
    else:
        unix = getattr(stdlib_socket, "AF_UNIX", None)
        if unix is None:
            raise LinkError("no_browser", f"{address} is a Unix socket: none on this platform")
        sock = trio.socket.socket(unix, stdlib_socket.SOCK_STREAM)
        target = os.fspath(address)
    try:
        await sock.connect(target)
    except OSError as exc:
        sock.close()
        raise LinkError(
            "no_browser",
            f"nothing answers at {address} ({exc.strerror or exc}): the browser quit or "
            "crashed; open the browser, or run `trimtab doctor`",
        ) from exc
    except BaseException:
        sock.close()
        raise
    return trio.SocketStream(sock)


@contextlib.asynccontextmanager
async def connect(
    address: LinkAddress,
    secret: str,
    client: Mapping[str, str] | None = None,
    *,
    session: str | None = None,
) -> AsyncIterator[LinkClient]:
    """A `LinkClient` on ``address`` (an endpoint's: a Unix socket's path or a port on
    127.0.0.1), its hello (with ``secret``) accepted.

    ``session`` names the client's view (snapshot memory, tracker session) so that
    the next connection with the same name continues it: consecutive ``trimtab
    call``s then get diffs, as one MCP session does.
    """
    with trio.fail_after(CONNECT_TIMEOUT):
        stream = await _open(address)
    async with stream:
        decoder = FrameDecoder(max_frame=MAX_INCOMING_FRAME)
        hello = {
            "type": "hello",
            "id": 0,
            "secret": secret,
            "client": dict(client or {"name": "trimtab", "version": ""}),
            **({} if session is None else {"session": session}),
        }
        reply: JSONObject | None = None
        with trio.fail_after(CONNECT_TIMEOUT):
            try:
                await stream.send_all(encode_frame(hello))
                while reply is None:
                    data = await stream.receive_some(_RECEIVE_SIZE)
                    if not data:
                        raise LinkError("link_closed", _GONE_IN_HELLO, unsent=True)
                    for event in decoder.feed(data):
                        if isinstance(event, DecodedMessage):
                            reply = event.message
                            break
            except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                raise LinkError("link_closed", _GONE_IN_HELLO, unsent=True) from exc
        link = LinkClient(stream, hello=_result_of(reply))
        async with trio.open_nursery() as nursery:
            nursery.start_soon(link._read, decoder)
            try:
                yield link
            finally:
                nursery.cancel_scope.cancel()


def find_endpoints(folder: Path | None = None) -> list[Endpoint]:
    """The endpoints in ``folder``; by default this user's (`list_endpoints`) and, in
    WSL, those of the Windows hosts (`_wsl`), live ones first."""
    if folder is not None:
        return list_endpoints(folder)
    found = list_endpoints()
    for windows in wsl_state_dirs():
        found += list_endpoints(windows, secret_file=windows / SECRET_FILE, windows=True)
    found.sort(key=lambda endpoint: not endpoint.alive)
    return found


def choose_endpoint(browser: str | None = None, folder: Path | None = None) -> Endpoint:
    """The endpoint of ``browser`` (a name from ``--list-browsers``, or its browser
    part), or the only live one when ``browser`` is None. Endpoints whose host is gone
    are never chosen; one whose host could not open it is refused with the host's
    reason."""
    found = find_endpoints(folder)
    endpoints = [endpoint for endpoint in found if endpoint.alive]
    if browser is not None:
        matching = [
            endpoint for endpoint in endpoints if browser in (endpoint.name, endpoint.info.browser)
        ]
    else:
        matching = endpoints
    usable = [endpoint for endpoint in matching if endpoint.address is not None]
    if not usable and matching:
        closed = matching[0]
        raise LinkError(
            "no_link",
            f"the host of {closed.name} ({closed.info.browser}) could not open its link: "
            f"{closed.info.problem}",
        )
    if not usable:
        wanted = f"browser {browser!r}" if browser else "browser"
        known = ", ".join(endpoint.name for endpoint in endpoints) or "none"
        message = (
            f"no running {wanted} with the Trimtab extension (endpoints: {known}); "
            "open the browser, or run `trimtab doctor`"
        )
        silent = [endpoint for endpoint in found if endpoint.windows and not endpoint.alive]
        if silent:
            message += (
                f". The Windows browser's endpoint {silent[0].name} ({silent[0].address}) "
                f"does not answer from WSL: the browser quit, or {WSL_LOOPBACK_HINT}"
            )
        raise LinkError("no_browser", message)
    if len(usable) > 1:
        names = ", ".join(endpoint.name for endpoint in usable)
        raise LinkError(
            "ambiguous", f"several browsers are running ({names}); pick one with --browser"
        )
    return usable[0]
