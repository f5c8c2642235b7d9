"""The host's message loop: frames in, concurrent request handlers, frames out.

``HostServer.serve`` reads frames from a byte stream (stdin in production), runs each
request in its own task, and writes every reply through an ``Outbox``: one lock, one
frame at a time, so frames never interleave mid-way. Requests start in arrival order:
what a handler does before its first await happens before the next request is read.
Messages that answer the host's own CDP commands (``cdp_result``, ``cdp_event``,
``cdp_detached``) are not requests; they go, in arrival order, to the relay hook the
server was given.

Handlers are plain async callables registered by request ``type``. They report a
request they cannot take by raising ``RequestError(code, message)``; any other
exception is a bug, logged with its traceback and answered with ``internal``.

``cancel`` is built in: ``{"type": "cancel", "request": <id>}`` cancels that request
of the same connection while it runs (its handler is cancelled the trio way, so
whatever it holds is released and whatever it asked is withdrawn) and answers it with
the error ``cancelled``. A client that gave up on a call says so this way.
"""

from __future__ import annotations

import builtins
import importlib.metadata
import inspect
import logging
import math
import typing
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, TypeAlias

import attrs
import trio

from ._framing import (
    DEFAULT_CHUNK_THRESHOLD,
    DecodedMessage,
    ErrorCode,
    FrameDecoder,
    FrameDecoderStatistics,
    FrameError,
    JSONObject,
    RequestId,
    encode_frame,
    encode_reply_frames,
    request_id_of,
)
from ._groups import unwrap_group

__all__ = [
    "DEFAULT_EOF_GRACE",
    "ERROR_CODES",
    "RELAY_MESSAGE_TYPES",
    "Handler",
    "HostServer",
    "HostStatistics",
    "Outbox",
    "OutboxClosed",
    "OutboxStatistics",
    "RelayHook",
    "Request",
    "RequestError",
    "host_version",
]

log = logging.getLogger("trimtab.host")

ERROR_CODES: Final[frozenset[str]] = frozenset(typing.get_args(ErrorCode))
# What the extension relays unasked: CDP, what chrome.downloads reports, and tabs
# coming and going.
RELAY_MESSAGE_TYPES: Final = frozenset(
    {
        "cdp_result",
        "cdp_event",
        "cdp_detached",
        "download",
        "download_held",
        "tab_opened",
        "tab_closed",
        "tab_left",
        "tab_gated",
    }
)
# After stdin closes Chrome is gone or going; finishing a request that is almost done
# is polite (its reply may still be read), waiting on a stuck one is not.
DEFAULT_EOF_GRACE: Final = 5.0
_RECEIVE_SIZE: Final = 256 * 1024


def host_version() -> str:
    """The installed trimtab version, reported by ``ping``."""
    try:
        return importlib.metadata.version("trimtab")
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


class RequestError(Exception):
    """Raised by a handler to answer its request with an ``error`` reply of ``code``."""

    def __init__(
        self, code: ErrorCode, message: str, *, facts: Mapping[str, Any] | None = None
    ) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"unknown error code {code!r}; expected one of {sorted(ERROR_CODES)}")
        if facts is not None and {"code", "message"} & facts.keys():
            raise ValueError(f"error facts {sorted(facts)} may not replace its code or message")
        super().__init__(code, message)
        self.code: ErrorCode = code
        self.message = message
        # What else the reply's ``error`` says, for programs (a link call's tab and
        # number): JSON values.
        self.facts: JSONObject = dict(facts or {})

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


@attrs.frozen
class Request:
    """One request as a handler sees it; ``fields`` is the whole message as received."""

    type: str
    id: RequestId
    fields: JSONObject

    def get(
        self,
        name: str,
        kind: builtins.type[Any] | tuple[builtins.type[Any], ...],
        *,
        default: Any = ...,
    ) -> Any:
        """Field ``name`` checked against ``kind``; a missing or wrong field is ``bad_request``."""
        if name not in self.fields:
            if default is not ...:
                return default
            raise RequestError("bad_request", f"{self.type} request lacks field {name!r}")
        value = self.fields[name]
        # bool is an int subclass, but true is never a number a request means.
        if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _kinds(kind)):
            raise RequestError(
                "bad_request",
                f"{self.type} field {name!r} has the wrong type: {type(value).__name__}",
            )
        return value


def _kinds(kind: type[Any] | tuple[type[Any], ...]) -> tuple[type[Any], ...]:
    return kind if isinstance(kind, tuple) else (kind,)


Handler: TypeAlias = Callable[[Request], Awaitable[Mapping[str, Any]]]
RelayHook: TypeAlias = Callable[[JSONObject], Awaitable[None] | None]


class OutboxClosed(Exception):
    """The output stream is gone (the extension disconnected); nothing more can be sent."""


@attrs.frozen
class OutboxStatistics:
    frames_sent: int
    bytes_sent: int
    chunked_replies: int
    closed: bool


@attrs.define
class Outbox:
    """The only writer of the protocol stream: one frame at a time, under one lock.

    The lock is taken per frame rather than per reply so that a large chunked reply
    does not hold back a small one (or a CDP command of the relay) behind it; the
    chunks of one reply still go out in order because one task writes them.
    """

    stream: trio.abc.SendStream
    chunk_threshold: int = DEFAULT_CHUNK_THRESHOLD
    _lock: trio.Lock = attrs.field(factory=trio.Lock, init=False)
    _frames: int = attrs.field(default=0, init=False)
    _bytes: int = attrs.field(default=0, init=False)
    _chunked: int = attrs.field(default=0, init=False)
    _closed: bool = attrs.field(default=False, init=False)

    async def send_message(self, message: Mapping[str, Any]) -> None:
        """Send one message that is not a reply (e.g. a ``cdp`` command of the relay).

        Raises ValueError if it is over Chrome's 1 MiB limit, OutboxClosed if the
        extension is gone.
        """
        await self.send_frames([encode_frame(message)])

    async def send_reply(self, reply: Mapping[str, Any]) -> None:
        """Send a reply, as ``chunk`` messages if it is long (see ``encode_reply_frames``)."""
        await self.send_frames(encode_reply_frames(reply, self.chunk_threshold))

    async def send_frames(self, frames: list[bytes]) -> None:
        if len(frames) > 1:
            self._chunked += 1
        for frame in frames:
            async with self._lock:
                if self._closed:
                    raise OutboxClosed("the protocol output stream is closed")
                try:
                    await self.stream.send_all(frame)
                except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                    self._closed = True
                    raise OutboxClosed(f"the protocol output stream broke: {exc!r}") from exc
                self._frames += 1
                self._bytes += len(frame)

    @property
    def closed(self) -> bool:
        """Whether the stream is gone (a send found it broken): nothing more goes out."""
        return self._closed

    def statistics(self) -> OutboxStatistics:
        return OutboxStatistics(
            frames_sent=self._frames,
            bytes_sent=self._bytes,
            chunked_replies=self._chunked,
            closed=self._closed,
        )


@attrs.frozen
class HostStatistics:
    requests_received: int
    requests_in_flight: int
    results_sent: int
    errors_sent: int
    internal_errors: int
    relay_messages: int
    decoder: FrameDecoderStatistics
    outbox: OutboxStatistics


async def _ping(request: Request) -> JSONObject:
    return {"pong": True, "version": host_version()}


def _error_reply(
    request_id: RequestId, code: ErrorCode, message: str, facts: Mapping[str, Any] | None = None
) -> JSONObject:
    error = {"code": code, "message": message, **(facts or {})}
    return {"type": "error", "id": request_id, "error": error}


def _sole_request_error(exc: BaseException) -> RequestError | None:
    """The RequestError a handler raised, also when a nursery wrapped it in a group."""
    error = unwrap_group(exc, RequestError)
    return error if isinstance(error, RequestError) else None


@attrs.define
class HostServer:
    """Serve requests read from a byte stream until it ends.

    ``handlers`` maps request ``type`` to its handler; ``ping`` is built in unless
    ``handlers`` overrides it. ``on_relay_message`` receives every ``cdp_result``,
    ``cdp_event``, ``cdp_detached`` and ``download`` in arrival order (sync or async; an async hook
    holds up reading while it runs, so it must not wait for further input). ``on_eof``
    runs as soon as the input ends, before the requests' grace: Chrome kills a host
    whose port it closed two seconds later, so what must be said then is said there.
    """

    outbox: Outbox
    handlers: Mapping[str, Handler] = attrs.field(factory=dict)
    on_relay_message: RelayHook | None = None
    eof_grace: float = DEFAULT_EOF_GRACE
    on_eof: Callable[[], Awaitable[None]] | None = None
    _registry: dict[str, Handler] = attrs.field(init=False)
    _decoder: FrameDecoder = attrs.field(factory=FrameDecoder, init=False)
    _scope: trio.CancelScope | None = attrs.field(default=None, init=False)
    _received: int = attrs.field(default=0, init=False)
    _in_flight: int = attrs.field(default=0, init=False)
    _results: int = attrs.field(default=0, init=False)
    _errors: int = attrs.field(default=0, init=False)
    _internal: int = attrs.field(default=0, init=False)
    _relayed: int = attrs.field(default=0, init=False)
    # The running requests that can be cancelled, by id.
    _running: dict[RequestId, trio.CancelScope] = attrs.field(factory=dict, init=False)

    def __attrs_post_init__(self) -> None:
        if not (self.eof_grace >= 0 and math.isfinite(self.eof_grace)):
            raise ValueError(f"eof_grace={self.eof_grace!r} must be a finite number >= 0")
        self._registry = {"ping": _ping, "cancel": self._cancel}
        for kind, handler in self.handlers.items():
            if kind in RELAY_MESSAGE_TYPES or kind in {"result", "error", "chunk"}:
                raise ValueError(f"{kind!r} is a protocol message type, not a request type")
            self._registry[kind] = handler

    @property
    def request_types(self) -> frozenset[str]:
        return frozenset(self._registry)

    async def serve(self, inbound: trio.abc.ReceiveStream) -> None:
        """Serve until ``inbound`` reaches EOF (or the output breaks), then return.

        At EOF, requests still running get ``eof_grace`` seconds to finish before they
        are cancelled.
        """
        if self._scope is not None:
            raise RuntimeError("HostServer.serve() can only run once")
        log.info("serving request types: %s", ", ".join(sorted(self._registry)))
        with trio.CancelScope() as self._scope:
            async with trio.open_nursery() as nursery:
                while True:
                    data = await _receive_or_eof(inbound)
                    events = self._decoder.feed(data) if data else self._decoder.feed_eof()
                    for event in events:
                        await self._dispatch(event, nursery)
                    if not data:
                        break
                log.info("input closed; %d request(s) in flight", self._in_flight)
                nursery.cancel_scope.deadline = trio.current_time() + self.eof_grace
                if self.on_eof is not None:
                    await self.on_eof()
            if nursery.cancel_scope.cancelled_caught:
                log.warning("cancelled requests still running %.1fs after EOF", self.eof_grace)
        if self._scope.cancelled_caught:
            log.warning("stopped serving: the output stream is closed")
        log.debug("done: %s", self.statistics())

    def statistics(self) -> HostStatistics:
        return HostStatistics(
            requests_received=self._received,
            requests_in_flight=self._in_flight,
            results_sent=self._results,
            errors_sent=self._errors,
            internal_errors=self._internal,
            relay_messages=self._relayed,
            decoder=self._decoder.statistics(),
            outbox=self.outbox.statistics(),
        )

    async def _dispatch(self, event: DecodedMessage | FrameError, nursery: trio.Nursery) -> None:
        if isinstance(event, FrameError):
            log.warning("bad input (%s): %s", event.code, event.message)
            nursery.start_soon(
                self._send_error, _error_reply(event.request_id, event.code, event.message)
            )
            return
        message = event.message
        kind: str = message["type"]
        if kind in RELAY_MESSAGE_TYPES:
            await self._relay(message)
            return
        self._received += 1
        valid_id, request_id = request_id_of(message)
        if not valid_id:
            text = repr(message.get("id"))
            nursery.start_soon(
                self._send_error,
                _error_reply(
                    None,
                    "bad_request",
                    f"{kind} request has an unusable id {text[:60]}: an id is a string "
                    "of at most 256 characters or an integer below 2**53",
                ),
            )
            return
        request = Request(kind, request_id, message)
        handler = self._registry.get(kind)
        if handler is None:
            log.warning("unknown request type %r (id %r)", kind, request_id)
            nursery.start_soon(
                self._send_error,
                _error_reply(request_id, "unknown_type", f"unknown request type {kind[:100]!r}"),
            )
            return
        self._in_flight += 1
        # `start`, not `start_soon`: the next request is read only once this one's
        # handler ran up to its first await (trio starts a batch of tasks in no fixed
        # order), so requests that replace state take effect in the order they came.
        await nursery.start(self._run, handler, request, name=f"request {kind} {request_id!r}")

    async def _relay(self, message: JSONObject) -> None:
        self._relayed += 1
        if self.on_relay_message is None:
            log.warning("no CDP relay is connected; dropped a %s message", message["type"])
            return
        try:
            pending = self.on_relay_message(message)
            if inspect.isawaitable(pending):
                await pending
        except Exception:
            log.exception("the CDP relay failed on a %s message", message["type"])

    async def _cancel(self, request: Request) -> JSONObject:
        target = request.get("request", (str, int))
        scope = self._running.get(target)
        if scope is None:
            return {"cancelled": False}  # answered already, or never sent
        scope.cancel()
        return {"cancelled": True}

    async def _run(
        self, handler: Handler, request: Request, *, task_status: trio.TaskStatus[None]
    ) -> None:
        started = trio.current_time()
        cancellable = request.id is not None and request.id not in self._running
        try:
            with trio.CancelScope() as scope:
                if cancellable:
                    self._running[request.id] = scope
                # No checkpoint between this and the handler's first step (see `_dispatch`).
                task_status.started()
                reply = await self._call(handler, request)
            if scope.cancelled_caught:
                log.info("%s %r cancelled by its sender", request.type, request.id)
                reply = _error_reply(
                    request.id, "cancelled", f"{request.type} was cancelled by its sender"
                )
            frames, is_error = self._encode(reply, request)
        finally:
            self._in_flight -= 1
            if cancellable:
                del self._running[request.id]
        await self._send_frames(frames, is_error=is_error)
        log.debug(
            "%s %r answered in %.1f ms",
            request.type,
            request.id,
            (trio.current_time() - started) * 1000,
        )

    async def _call(self, handler: Handler, request: Request) -> JSONObject:
        try:
            result = await handler(request)
            if not isinstance(result, Mapping):
                raise TypeError(
                    f"handler for {request.type!r} returned {type(result).__name__}, not a mapping"
                )
            return {"type": "result", "id": request.id, "result": result}
        except Exception as exc:
            request_error = _sole_request_error(exc)
            if request_error is not None:
                log.info("%s %r failed: %s", request.type, request.id, request_error)
                return _error_reply(
                    request.id, request_error.code, request_error.message, request_error.facts
                )
            return self._internal_error(request, exc)

    def _encode(self, reply: JSONObject, request: Request) -> tuple[list[bytes], bool]:
        """The reply's frames, and whether they carry an error."""
        try:
            return encode_reply_frames(reply, self.outbox.chunk_threshold), reply["type"] == "error"
        except (TypeError, ValueError, RecursionError) as exc:
            # The result held something JSON cannot carry (an object, NaN, a cycle).
            internal = self._internal_error(request, exc)
            return encode_reply_frames(internal, self.outbox.chunk_threshold), True

    def _internal_error(self, request: Request, exc: BaseException) -> JSONObject:
        self._internal += 1
        log.error("internal error in %s handler (id %r)", request.type, request.id, exc_info=exc)
        summary = f"{type(exc).__name__}: {exc}"
        if len(summary) > 500:
            summary = summary[:500] + "…"
        return _error_reply(
            request.id,
            "internal",
            f"internal error in the {request.type} handler ({summary}); "
            "the traceback is in the host log",
        )

    async def _send_error(self, reply: JSONObject) -> None:
        frames = encode_reply_frames(reply, self.outbox.chunk_threshold)
        await self._send_frames(frames, is_error=True)

    async def _send_frames(self, frames: list[bytes], *, is_error: bool) -> None:
        try:
            await self.outbox.send_frames(frames)
        except OutboxClosed:
            # Without an output the host can answer nothing more; Chrome is gone.
            log.warning("output closed while replying; shutting down")
            if self._scope is not None:
                self._scope.cancel()
            return
        if is_error:
            self._errors += 1
        else:
            self._results += 1


async def _receive_or_eof(inbound: trio.abc.ReceiveStream) -> bytes:
    """The next bytes of ``inbound``; b"" (EOF) when the peer broke the connection.

    A link client that closes with unread data in its socket resets it, and that
    must end its own session like a clean close, never the host.
    """
    try:
        return bytes(await inbound.receive_some(_RECEIVE_SIZE))
    except trio.BrokenResourceError as exc:
        log.info("input broken (%s); handled as its end", exc.__cause__ or exc)
        return b""
