"""What a tab reports beside its page: console messages and network requests.

`DevtoolsLog` follows one tab from when the host holds it (`run`, beside the page
observer): the console (``Runtime.consoleAPICalled``, uncaught exceptions, and what the
browser itself logs, ``Log.entryAdded``: CORS, failed loads) and the requests of the
Network domain's events (never Fetch: the request guard pauses requests with it during
actions, and reading must not disturb that). Memory is bounded whatever the page does:
the latest `CONSOLE_KEPT` messages and `REQUESTS_KEPT` requests are kept, each string
cut, and what fell out is counted. Each client's view of the tab has its own `LogRead`,
so "since your last call" is per client.

Response bodies are read from the browser on demand, and only bodies the browser kept
(`BODY_KEPT` bytes at most each); `secret_values` are the values of the page's password
fields, read in Trimtab's own world when a request with a body leaves, so that a
posted password is never shown.

The tab's own session only: out-of-process iframes are not followed.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import logging
from collections.abc import Iterable, Mapping
from typing import Any, Final, TypeVar

import attrs
import trio

from pycdp_bridge import (
    CDPError,
    DialogOpenError,
    Event,
    JavaScriptError,
    Target,
    TargetClosedError,
    evaluate,
)
from pycdp_bridge import protocol as cdp

from ._scripts import page_script

__all__ = [
    "BODY_KEPT",
    "CONSOLE_KEPT",
    "REQUESTS_KEPT",
    "ConsoleMessage",
    "DevtoolsLog",
    "LogRead",
    "NetworkRequest",
    "network_enable",
]

log = logging.getLogger("trimtab.devtools")

CONSOLE_KEPT: Final = 1000
"""Console messages a tab keeps; older ones are dropped and counted."""
REQUESTS_KEPT: Final = 1000
"""Requests a tab keeps; older ones are dropped and counted."""
BODY_KEPT: Final = 1_000_000
"""Bytes of one response body the browser keeps for reading; larger ones are not kept."""
_POST_DATA_INLINE: Final = 65_536
# What one message or request may hold, so that a tab's log stays within a few MB
# whatever the page sends (1,000 messages of 3 KB; 1,000 requests of 20 KB).
_TEXT_LIMIT: Final = 1000
_URL_LIMIT: Final = 1000
_FRAME_LIMIT: Final = 300
_HEADER_LIMIT: Final = 500
_HEADERS_CHARS: Final = 4000
_HEADERS_KEPT: Final = 100
_V = TypeVar("_V")
_POST_DATA_KEPT: Final = 8000
_STACK_FRAMES: Final = 5
_SECRETS_KEPT: Final = 32
_WORLD: Final = "trimtab-devtools"

_EVENTS: Final = (
    cdp.events.RUNTIME_CONSOLE_API_CALLED,
    cdp.events.RUNTIME_EXCEPTION_THROWN,
    cdp.events.LOG_ENTRY_ADDED,
    cdp.events.NETWORK_REQUEST_WILL_BE_SENT,
    cdp.events.NETWORK_REQUEST_WILL_BE_SENT_EXTRA_INFO,
    cdp.events.NETWORK_RESPONSE_RECEIVED,
    cdp.events.NETWORK_RESPONSE_RECEIVED_EXTRA_INFO,
    cdp.events.NETWORK_DATA_RECEIVED,
    cdp.events.NETWORK_LOADING_FINISHED,
    cdp.events.NETWORK_LOADING_FAILED,
)
# console.* call types as the four levels a model filters on.
_LEVELS: Final[Mapping[str, str]] = {
    "error": "error",
    "assert": "error",
    "warning": "warning",
    "debug": "debug",
    "verbose": "debug",
}


def network_enable() -> cdp.Command[cdp.Empty]:
    """``Network.enable`` as every part of the host sends it: a later enable with other
    buffer sizes would change what the browser keeps for `DevtoolsLog.response_body`."""
    return cdp.network_enable(
        max_resource_buffer_size=BODY_KEPT, max_post_data_size=_POST_DATA_INLINE
    )


def _cut(value: object, limit: int = _TEXT_LIMIT) -> str:
    text = str(value)
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more chars)"


@attrs.frozen
class ConsoleMessage:
    """One console message: its level, text (cut), where it came from, top frames."""

    seq: int
    level: str  # error | warning | info | debug
    text: str
    source: str = ""
    line: int | None = None
    stack: tuple[str, ...] = ()


@attrs.define(eq=False)
class NetworkRequest:
    """One request as the Network domain reported it so far."""

    seq: int
    request_id: str
    method: str
    url: str
    resource_type: str
    started: float
    status: int | None = None
    status_text: str = ""
    mime: str = ""
    received: int = 0  # decoded bytes of the body, from dataReceived
    encoded: int | None = None  # bytes on the wire, from loadingFinished
    duration_ms: float | None = None
    failed: str | None = None
    finished: bool = False
    request_headers: dict[str, str] = attrs.field(factory=dict)
    response_headers: dict[str, str] = attrs.field(factory=dict)
    # The raw response headers arrived (responseReceivedExtraInfo: Set-Cookie is there),
    # and whether the browser said they will (responseReceived's hasExtraInfo; None:
    # it did not say).
    response_headers_extra: bool = False
    response_headers_coming: bool | None = None
    post_data: str | None = None
    has_post_data: bool = False
    # The redirect that ended this hop (the next hop has the same request id).
    redirected: bool = False
    # The headers are those the network stack sent (cookies included), not the page's.
    request_headers_extra: bool = False


@attrs.define
class LogRead:
    """How far one client has read a tab's log: the last sequence numbers it was shown."""

    console: int = 0
    network: int = 0


@attrs.define(eq=False)
class DevtoolsLog:
    """A tab's console messages and requests, bounded, as `run` collects them."""

    target: Target
    messages: collections.deque[ConsoleMessage] = attrs.field(
        factory=lambda: collections.deque(maxlen=CONSOLE_KEPT)
    )
    requests: collections.deque[NetworkRequest] = attrs.field(
        factory=lambda: collections.deque(maxlen=REQUESTS_KEPT)
    )
    console_count: int = 0
    """Messages seen since the tab was held; ``messages`` holds the latest of them."""
    request_count: int = 0
    changes: int = 0
    """Bumped by every event taken in: a cached answer about the log is valid only
    while it stays."""
    running: bool = False
    ready: trio.Event = attrs.field(factory=trio.Event)
    _live: dict[str, NetworkRequest] = attrs.field(factory=dict)
    # Raw headers that came before their request's requestWillBeSent: the network
    # stack sends them apart from the page's events, in no promised order (the
    # response's too, when the machine is busy: its Set-Cookie was lost so).
    _early_sent: collections.OrderedDict[str, dict[str, str]] = attrs.field(
        factory=collections.OrderedDict
    )
    _early_received: collections.OrderedDict[str, dict[str, str]] = attrs.field(
        factory=collections.OrderedDict
    )
    # Requests that finished lately: the browser may send a response's raw headers
    # (responseReceivedExtraInfo, where Set-Cookie is) after its loadingFinished.
    _finished: collections.OrderedDict[str, NetworkRequest] = attrs.field(
        factory=collections.OrderedDict
    )
    _secrets: collections.OrderedDict[str, None] = attrs.field(factory=collections.OrderedDict)
    _secret_names: collections.OrderedDict[str, None] = attrs.field(factory=collections.OrderedDict)
    _main_frame: str | None = None
    _nursery: trio.Nursery | None = None
    # Held while the password fields are read: a page posting many bodies at once
    # (beacons) costs one read, not one each, and a detail waits for the read under way.
    _reading: trio.Lock = attrs.field(factory=trio.Lock)

    async def run(self) -> None:
        """Collect until the tab closes or the caller cancels.

        Events are taken in as they arrive (`Target.follow`), never through a buffer
        that could drop some unseen: each costs O(1), so a flood is counted exactly.
        """
        try:
            async with (
                self.target.listen(cdp.events.PAGE_FRAME_NAVIGATED) as navigations,
                trio.open_nursery() as nursery,
            ):
                self._nursery = nursery
                with self.target.follow(self.take, *_EVENTS):
                    for command in (cdp.runtime_enable(), cdp.log_enable(), network_enable()):
                        with contextlib.suppress(CDPError, DialogOpenError):
                            await self.target.execute(command)
                    with contextlib.suppress(CDPError, DialogOpenError, KeyError):
                        tree = await self.target.execute(cdp.page_get_frame_tree())
                        self._main_frame = str(tree["frameTree"]["frame"]["id"])
                    self.running = True
                    self.ready.set()
                    # The channel ends when the target closes.
                    async for event in navigations:
                        if event.session_id is None:
                            self._navigated(event.params)
                nursery.cancel_scope.cancel()
        finally:
            self.running = False
            self._nursery = None
            self.ready.set()

    # -- reading ------------------------------------------------------------------

    def console_since(self, seen: int) -> tuple[list[ConsoleMessage], int]:
        """The kept messages after sequence number `seen`, and how many after it were
        dropped (no longer kept)."""
        kept = [m for m in self.messages if m.seq > seen]
        first = kept[0].seq if kept else self.console_count + 1
        return kept, max(0, first - seen - 1)

    def requests_since(self, seen: int) -> tuple[list[NetworkRequest], int]:
        """The kept requests after sequence number `seen`, and how many were dropped."""
        kept = [r for r in self.requests if r.seq > seen]
        first = kept[0].seq if kept else self.request_count + 1
        return kept, max(0, first - seen - 1)

    def request(self, seq: int) -> NetworkRequest | None:
        """The kept request with sequence number `seq`."""
        for entry in self.requests:
            if entry.seq == seq:
                return entry
        return None

    def secrets(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The password values and field names seen on the page (never to be shown)."""
        return tuple(self._secrets), tuple(self._secret_names)

    async def response_body(self, entry: NetworkRequest) -> tuple[str, bool]:
        """The response body the browser kept (text, or base64 when binary) and whether
        it is base64; CDPError when it kept none."""
        reply = await self.target.execute(cdp.network_get_response_body(entry.request_id))
        return str(reply.get("body", "")), bool(reply.get("base64Encoded"))

    async def request_body(self, entry: NetworkRequest) -> str | None:
        """The request's body as text (cut), if it had one the browser still has; the
        caller checks its declared size first (the browser hands over all of it)."""
        if entry.post_data is not None or not entry.has_post_data:
            return entry.post_data
        with contextlib.suppress(CDPError):
            reply = await self.target.execute(cdp.network_get_request_post_data(entry.request_id))
            return _cut(reply.get("postData", ""), _POST_DATA_KEPT)
        return None

    async def read_secrets(self, *, unless_reading: bool = False) -> None:
        """Learn the values and names of the page's password fields now (in Trimtab's
        own world: the page's scripts cannot hide them from it); with
        ``unless_reading``, not when a read is under way already."""
        if unless_reading and self._reading.locked():
            return
        async with self._reading:
            if self._main_frame is None or self.target.closed:
                return
            with contextlib.suppress(
                CDPError, JavaScriptError, DialogOpenError, TargetClosedError, KeyError
            ):
                world = await self.target.execute(
                    cdp.page_create_isolated_world(self._main_frame, world_name=_WORLD)
                )
                found = await evaluate(
                    self.target,
                    page_script("trimtab.tab", "password-fields.js"),
                    context_id=int(world["executionContextId"]),
                )
                for item in found if isinstance(found, list) else ():
                    if isinstance(item, dict):
                        self._remember(self._secrets, item.get("value"))
                        self._remember(self._secret_names, item.get("name"))

    # -- taking events in -------------------------------------------------------------

    @staticmethod
    def _remember(into: collections.OrderedDict[str, None], value: object) -> None:
        if not isinstance(value, str) or not value:
            return
        into[value] = None
        into.move_to_end(value)
        while len(into) > _SECRETS_KEPT:
            into.popitem(last=False)

    def take(self, event: Event) -> None:
        """Take in one event: `run` has the connection call it as events arrive; it does
        no I/O, so a test can feed it events in any order."""
        self.changes += 1
        params = event.params
        method = event.method
        try:
            if method == cdp.events.RUNTIME_CONSOLE_API_CALLED:
                self._console_called(params)
            elif method == cdp.events.RUNTIME_EXCEPTION_THROWN:
                self._exception(params.get("exceptionDetails") or {})
            elif method == cdp.events.LOG_ENTRY_ADDED:
                self._log_entry(params.get("entry") or {})
            else:
                self._network(method, params)
        except Exception as exc:
            # Called as events arrive, by the connection itself: whatever the browser
            # sends that is not understood must not reach it.
            log.debug("devtools: %s not understood: %s", method, exc)

    def _navigated(self, params: Mapping[str, Any]) -> None:
        frame = params.get("frame") or {}
        if frame.get("parentId") is None and frame.get("id"):
            self._main_frame = str(frame["id"])

    def _add_message(
        self,
        level: str,
        text: str,
        frames: Iterable[Mapping[str, Any]] = (),
        *,
        url: str = "",
        line: int | None = None,
    ) -> None:
        frames = list(frames)
        if frames and not url:
            url = str(frames[0].get("url", ""))
            line = int(frames[0].get("lineNumber", 0)) + 1
        stack = tuple(
            _cut(
                f"{frame.get('functionName') or '(anonymous)'} "
                f"({frame.get('url', '')}:{int(frame.get('lineNumber', 0)) + 1}:"
                f"{int(frame.get('columnNumber', 0)) + 1})",
                _FRAME_LIMIT,
            )
            for frame in frames[:_STACK_FRAMES]
        )
        self.console_count += 1
        self.messages.append(
            ConsoleMessage(
                seq=self.console_count,
                level=level,
                text=_cut(text),
                source=_cut(url, _URL_LIMIT),
                line=line,
                stack=stack,
            )
        )

    def _console_called(self, params: Mapping[str, Any]) -> None:
        kind = str(params.get("type", "log"))
        if kind in ("endGroup", "clear", "profile", "profileEnd"):
            return
        parts = [_argument(arg) for arg in (params.get("args") or [])[:20]]
        frames = (params.get("stackTrace") or {}).get("callFrames") or []
        level = _LEVELS.get(kind, "info")
        top = frames[0] if frames else {}
        url = str(top.get("url", ""))
        self._add_message(
            level,
            " ".join(parts),
            # A stack belongs to errors and traces; elsewhere the top frame says where.
            frames if level == "error" or kind == "trace" else (),
            url=url,
            line=int(top.get("lineNumber", 0)) + 1 if url else None,
        )

    def _exception(self, details: Mapping[str, Any]) -> None:
        exception = details.get("exception") or {}
        description = exception.get("description")
        text = str(details.get("text", "Uncaught"))
        if isinstance(description, str) and description:
            # V8's description repeats the stack after the first line: frames come apart.
            first = description.split("\n    at ", 1)[0]
            text = first if text in ("Uncaught", "") else f"{text} {first}"
        frames = (details.get("stackTrace") or {}).get("callFrames") or []
        url = str(details.get("url", ""))
        line = details.get("lineNumber")
        self._add_message(
            "error",
            text,
            frames,
            url=url,
            line=int(line) + 1 if isinstance(line, int) and url else None,
        )

    def _log_entry(self, entry: Mapping[str, Any]) -> None:
        level = _LEVELS.get(str(entry.get("level", "info")), "info")
        line = entry.get("lineNumber")
        frames = (entry.get("stackTrace") or {}).get("callFrames") or []
        url = str(entry.get("url", ""))
        self._add_message(
            level,
            str(entry.get("text", "")),
            frames,
            url=url,
            line=int(line) + 1 if isinstance(line, int) and url else None,
        )

    def _network(self, method: str, params: Mapping[str, Any]) -> None:
        request_id = str(params.get("requestId", ""))
        if method == cdp.events.NETWORK_REQUEST_WILL_BE_SENT:
            self._request_sent(request_id, params)
            return
        if method == cdp.events.NETWORK_REQUEST_WILL_BE_SENT_EXTRA_INFO:
            headers = _headers(params.get("headers"))
            entry = self._live.get(request_id) or self._finished.get(request_id)
            if entry is None:
                _keep_latest(self._early_sent, request_id, headers)
            elif not entry.request_headers_extra:
                entry.request_headers = headers
                entry.request_headers_extra = True
            return
        entry = self._live.get(request_id)
        if entry is None and method == cdp.events.NETWORK_RESPONSE_RECEIVED_EXTRA_INFO:
            entry = self._finished.get(request_id)
            if entry is None:
                _keep_latest(self._early_received, request_id, _headers(params.get("headers")))
        if entry is None:
            return
        if method == cdp.events.NETWORK_RESPONSE_RECEIVED:
            response = params.get("response") or {}
            coming = params.get("hasExtraInfo")
            entry.response_headers_coming = coming if isinstance(coming, bool) else None
            entry.status = int(response.get("status", 0))
            entry.status_text = _cut(response.get("statusText", ""), 200)
            entry.mime = _cut(response.get("mimeType", ""), 200)
            if not entry.response_headers:
                entry.response_headers = _headers(response.get("headers"))
        elif method == cdp.events.NETWORK_RESPONSE_RECEIVED_EXTRA_INFO:
            entry.response_headers = _headers(params.get("headers"))
            entry.response_headers_extra = True
        elif method == cdp.events.NETWORK_DATA_RECEIVED:
            entry.received += int(params.get("dataLength", 0))
        elif method == cdp.events.NETWORK_LOADING_FINISHED:
            entry.encoded = int(params.get("encodedDataLength", 0))
            self._done(entry, params)
        elif method == cdp.events.NETWORK_LOADING_FAILED:
            entry.failed = _failure(params)
            self._done(entry, params)

    def _request_sent(self, request_id: str, params: Mapping[str, Any]) -> None:
        request = params.get("request") or {}
        posted = request.get("postData")
        started = float(params.get("timestamp", 0.0))
        earlier = self._live.get(request_id)
        redirect = params.get("redirectResponse")
        if earlier is not None and isinstance(redirect, Mapping):
            # A redirect: the earlier hop ends here, with the redirect's status.
            earlier.status = int(redirect.get("status", 0))
            earlier.status_text = _cut(redirect.get("statusText", ""), 200)
            earlier.response_headers = _headers(redirect.get("headers"))
            earlier.redirected = True
            self._done(earlier, params)
        self.request_count += 1
        entry = NetworkRequest(
            seq=self.request_count,
            request_id=request_id,
            method=_cut(request.get("method", "GET"), 20),
            url=_cut(request.get("url", ""), _URL_LIMIT),
            resource_type=_cut(params.get("type", "Other"), 40),
            started=started,
            post_data=_cut(posted, _POST_DATA_KEPT) if isinstance(posted, str) else None,
            has_post_data=bool(request.get("hasPostData")),
            request_headers=_headers(request.get("headers")),
        )
        early = self._early_sent.pop(request_id, None)
        if early is not None:
            entry.request_headers = early
            entry.request_headers_extra = True
        early = self._early_received.pop(request_id, None)
        if early is not None:
            entry.response_headers = early
            entry.response_headers_extra = True
        self.requests.append(entry)
        self._live[request_id] = entry
        if len(self._live) > REQUESTS_KEPT:
            # Requests that never finish (a stream, a hung server) must not pile up.
            self._live.pop(next(iter(self._live)))
        if entry.has_post_data and self._nursery is not None:
            # A body may post a password: learn the page's while the page is there.
            self._nursery.start_soon(functools.partial(self.read_secrets, unless_reading=True))

    def _done(self, entry: NetworkRequest, params: Mapping[str, Any]) -> None:
        ended = params.get("timestamp")
        if isinstance(ended, int | float) and entry.started:
            entry.duration_ms = max(0.0, (float(ended) - entry.started) * 1000)
        entry.finished = True
        if self._live.get(entry.request_id) is entry:
            del self._live[entry.request_id]
        _keep_latest(self._finished, entry.request_id, entry)


def _keep_latest(kept: collections.OrderedDict[str, _V], request_id: str, value: _V) -> None:
    """Keep ``value`` for a request, the latest `_HEADERS_KEPT` requests' only."""
    kept[request_id] = value
    while len(kept) > _HEADERS_KEPT:
        kept.popitem(last=False)


def _argument(arg: Mapping[str, Any]) -> str:
    """One console argument as text, the way DevTools prints it."""
    if "value" in arg:
        value = arg["value"]
        if isinstance(value, str):
            return _cut(value)
        if value is None:
            return "null"
        if isinstance(value, bool):
            return "true" if value else "false"
        return _cut(value)
    if "unserializableValue" in arg:
        return _cut(arg["unserializableValue"])
    preview = arg.get("preview")
    if isinstance(preview, Mapping) and isinstance(preview.get("properties"), list):
        return _cut(_previewed(preview))
    description = arg.get("description")
    if isinstance(description, str):
        return _cut(description)
    return str(arg.get("type", "undefined"))


def _previewed(preview: Mapping[str, Any]) -> str:
    """An object or array argument as DevTools previews it: ``{ready: true}``, ``[1, 2]``."""
    properties = [p for p in preview["properties"] if isinstance(p, Mapping)]
    more = "…" if preview.get("overflow") else ""
    if preview.get("subtype") == "array":
        return "[" + ", ".join(str(p.get("value", "")) for p in properties) + more + "]"
    inner = ", ".join(f"{p.get('name', '')}: {p.get('value', '')}" for p in properties)
    return "{" + inner + (", …" if more and inner else more) + "}"


def _headers(raw: object) -> dict[str, str]:
    if not isinstance(raw, Mapping):
        return {}
    kept: dict[str, str] = {}
    room = _HEADERS_CHARS
    for name, value in list(raw.items())[:_HEADERS_KEPT]:
        if room <= 0:
            kept["…"] = f"{len(raw) - len(kept)} more headers"
            break
        shown_name, shown = _cut(name, 200), _cut(value, _HEADER_LIMIT)
        kept[shown_name] = shown
        room -= len(shown_name) + len(shown)
    return kept


def _failure(params: Mapping[str, Any]) -> str:
    """Why a request failed, in the browser's words: CORS, a block, or the net error."""
    error = str(params.get("errorText", "failed"))
    cors = params.get("corsErrorStatus")
    if isinstance(cors, Mapping) and cors.get("corsError"):
        parameter = cors.get("failedParameter")
        return _cut(
            f"CORS {cors['corsError']}" + (f" ({parameter})" if parameter else "") + f", {error}",
            300,
        )
    blocked = params.get("blockedReason")
    if blocked:
        return _cut(f"blocked: {blocked}, {error}", 300)
    if params.get("canceled"):
        return _cut(f"canceled, {error}", 300)
    return _cut(error, 300)
