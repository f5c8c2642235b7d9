"""The sans-I/O core of a CDP connection.

`CDPConnection` does the bookkeeping every transport needs and no I/O: it numbers
outgoing commands, matches each response to its command, turns protocol errors into
`CDPError`, hands events to subscribers, follows which flattened child sessions hang
under which parent (from ``Target.attachedToTarget``/``detachedFromTarget``), and fails
the commands of a session that detached or of a connection that closed with
`TargetClosedError`. It also follows the two states in which a page stops answering
for good or for a while, and fails commands that would wait for ever: a crashed
renderer (`PageCrashedError`, until a navigation brings it back) and a JavaScript
dialog (`DialogOpenError`, until it is answered). Transports feed it decoded
messages and send what it builds; the tests drive it with plain dicts.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs

from . import _events as events
from ._errors import CDPError, DialogOpenError, PageCrashedError, TargetClosedError

__all__ = [
    "CDPConnection",
    "ConnectionStatistics",
    "Event",
    "Reply",
    "Request",
    "Subscription",
]


@attrs.frozen
class Event:
    """A CDP event; ``session_id`` is None for the target's own session."""

    method: str
    params: Mapping[str, Any]
    session_id: str | None = None


@attrs.frozen
class Request:
    """A command the connection has registered and is waiting for an answer to."""

    id: int
    method: str
    params: Mapping[str, Any]
    session_id: str | None

    def to_message(self) -> dict[str, Any]:
        """The CDP wire message (what a pipe or WebSocket transport sends)."""
        message: dict[str, Any] = {"id": self.id, "method": self.method, "params": self.params}
        if self.session_id is not None:
            message["sessionId"] = self.session_id
        return message


@attrs.frozen
class Reply:
    """The outcome of one command: exactly one of ``result`` and ``error`` is set."""

    request: Request
    result: dict[str, Any] | None = None
    error: CDPError | TargetClosedError | DialogOpenError | None = None


@attrs.frozen
class ConnectionStatistics:
    """A snapshot of a connection's counters."""

    commands_sent: int
    replies_received: int
    events_received: int
    pending: int
    sessions: int
    unmatched_replies: int
    closed: bool


@attrs.define(eq=False)
class Subscription:
    """One consumer of events: a method filter, a session scope and a delivery callback."""

    # Empty means every method.
    methods: frozenset[str]
    # Deliver events of this session and of every session attached under it; None is
    # the connection's root session, so it sees everything.
    session_id: str | None
    deliver: Callable[[Event], None]


_ROOT_SESSION = None

# What a crashed page still answers: the browser, not the dead renderer, handles
# these, and a navigation or reload brings the page back.
# Fetch too: paused requests are the browser's, and are let go (or failed) whatever
# the page's renderer is doing.
_ANSWERED_WHEN_CRASHED = ("Page.navigate", "Page.reload", "Target.", "Browser.", "Fetch.")
# What a page blocked in a JavaScript dialog still answers (measured on Chromium 156:
# everything the renderer handles waits for the dialog; input is queued behind it).
_ANSWERED_UNDER_DIALOG = (
    "Page.handleJavaScriptDialog",
    "Page.navigate",
    "Page.reload",
    "Page.getNavigationHistory",
    "Page.navigateToHistoryEntry",
    "Target.",
    "Browser.",
    "Fetch.",
)
# Commands already waiting when a dialog opens that are still answered in time.
_KEPT_UNDER_DIALOG = ("Page.handleJavaScriptDialog", "Target.", "Browser.", "Fetch.")


@attrs.define
class CDPConnection:
    """Numbering, matching and routing for one CDP connection, without I/O.

    ``ids`` lets several connections share one id space (the relay multiplexes many
    tabs over one native-messaging port, and its replies carry only the id).
    """

    ids: Iterator[int] = attrs.field(factory=lambda: itertools.count(1))
    _pending: dict[int, Request] = attrs.field(factory=dict, init=False)
    _subscriptions: list[Subscription] = attrs.field(factory=list, init=False)
    # Child session -> the session it was attached through (None: the root session).
    _parents: dict[str, str | None] = attrs.field(factory=dict, init=False)
    # Child session -> the targetInfo it was announced with.
    _target_infos: dict[str, Mapping[str, Any]] = attrs.field(factory=dict, init=False)
    # Sessions that detached; bounded by the number of sessions a page ever had.
    _detached: set[str] = attrs.field(factory=set, init=False)
    # Sessions whose page crashed and was not brought back yet (None: the root).
    _crashed: set[str | None] = attrs.field(factory=set, init=False)
    # Sessions whose page shows a JavaScript dialog: the dialog's event params.
    _dialogs: dict[str | None, Mapping[str, Any]] = attrs.field(factory=dict, init=False)
    _closed_reason: str | None = attrs.field(default=None, init=False)
    _commands_sent: int = attrs.field(default=0, init=False)
    _replies_received: int = attrs.field(default=0, init=False)
    _events_received: int = attrs.field(default=0, init=False)
    _unmatched_replies: int = attrs.field(default=0, init=False)

    @property
    def closed(self) -> bool:
        return self._closed_reason is not None

    @property
    def closed_reason(self) -> str | None:
        return self._closed_reason

    def is_pending(self, command_id: int) -> bool:
        return command_id in self._pending

    def is_detached(self, session_id: str) -> bool:
        return session_id in self._detached

    def is_crashed(self, session_id: str | None) -> bool:
        """Whether the session's page crashed and no navigation brought it back yet."""
        return session_id in self._crashed

    def open_dialog(self, session_id: str | None) -> Mapping[str, Any] | None:
        """The JavaScript dialog the session's page shows (its event params), if any."""
        return self._dialogs.get(session_id)

    def sessions(self) -> dict[str, str | None]:
        """Attached child sessions and the session each hangs under."""
        return dict(self._parents)

    def attached_under(self, session_id: str | None) -> dict[str, Mapping[str, Any]]:
        """Sessions attached (directly or not) below ``session_id``, with their targetInfo.

        The browser announces a child only once (repeating ``Target.setAutoAttach``
        does not announce it again), so this is how a later capture finds them.
        """
        return {
            child: self._target_infos.get(child, {})
            for child in self._parents
            if child != session_id and session_id in self._ancestors(child)
        }

    def command(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Request:
        """Register a command and return it; the transport sends ``request``."""
        if self._closed_reason is not None:
            raise TargetClosedError(self._closed_reason, method)
        if session_id is not None and session_id in self._detached:
            raise TargetClosedError("session detached", method)
        if session_id in self._crashed and not method.startswith(_ANSWERED_WHEN_CRASHED):
            # The renderer is gone: the command would never be answered.
            raise PageCrashedError(method)
        dialog = self._dialogs.get(session_id)
        if dialog is not None and not method.startswith(_ANSWERED_UNDER_DIALOG):
            raise DialogOpenError.of(method, dialog)
        request = Request(next(self.ids), method, dict(params) if params else {}, session_id)
        self._pending[request.id] = request
        self._commands_sent += 1
        return request

    def forget(self, command_id: int) -> None:
        """Stop waiting for a command (its caller was cancelled); a late reply is dropped."""
        self._pending.pop(command_id, None)

    def subscribe(
        self,
        deliver: Callable[[Event], None],
        methods: frozenset[str] = frozenset(),
        session_id: str | None = _ROOT_SESSION,
    ) -> Subscription:
        subscription = Subscription(methods, session_id, deliver)
        self._subscriptions.append(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        if subscription in self._subscriptions:
            self._subscriptions.remove(subscription)

    def receive(self, message: Mapping[str, Any]) -> list[Reply]:
        """Process one incoming message; return the commands it settled.

        Events go to matching subscribers before this returns. A message that is
        neither a response nor an event is a protocol violation and raises ValueError.
        """
        if "id" in message:
            reply = self._settle(message)
            return [reply] if reply is not None else []
        if "method" in message:
            return self._dispatch(message)
        raise ValueError(f"CDP message is neither a response nor an event: {message!r:.200}")

    def close(self, reason: str) -> list[Reply]:
        """Mark the connection closed and fail every pending command."""
        if self._closed_reason is None:
            self._closed_reason = reason
        failed = [
            Reply(request, error=TargetClosedError(reason, request.method))
            for request in self._pending.values()
        ]
        self._pending.clear()
        self._parents.clear()
        self._target_infos.clear()
        self._crashed.clear()
        self._dialogs.clear()
        return failed

    def detach_session(self, session_id: str, reason: str) -> list[Reply]:
        """Forget a child session (and its descendants); fail their pending commands."""
        gone = {session_id} | self._descendants(session_id)
        for session in gone:
            self._parents.pop(session, None)
            self._target_infos.pop(session, None)
            self._crashed.discard(session)
            self._dialogs.pop(session, None)
        self._detached |= gone
        failed = [
            Reply(request, error=TargetClosedError(reason, request.method))
            for request in self._pending.values()
            if request.session_id in gone
        ]
        for reply in failed:
            del self._pending[reply.request.id]
        return failed

    def statistics(self) -> ConnectionStatistics:
        return ConnectionStatistics(
            commands_sent=self._commands_sent,
            replies_received=self._replies_received,
            events_received=self._events_received,
            pending=len(self._pending),
            sessions=len(self._parents),
            unmatched_replies=self._unmatched_replies,
            closed=self.closed,
        )

    def _settle(self, message: Mapping[str, Any]) -> Reply | None:
        self._replies_received += 1
        raw_id = message["id"]
        request = self._pending.pop(raw_id, None) if isinstance(raw_id, int) else None
        if request is None:
            # The caller gave up (cancelled) or the id is not ours; nobody is waiting.
            self._unmatched_replies += 1
            return None
        error = message.get("error")
        if error is not None:
            return Reply(
                request,
                error=CDPError(
                    request.method,
                    int(error.get("code", 0)),
                    str(error.get("message", "")),
                    error.get("data"),
                ),
            )
        result = message.get("result")
        return Reply(request, result=dict(result) if result else {})

    def _dispatch(self, message: Mapping[str, Any]) -> list[Reply]:
        self._events_received += 1
        method = str(message["method"])
        params: Mapping[str, Any] = message.get("params") or {}
        session_id: str | None = message.get("sessionId")
        settled: list[Reply] = []
        if method == events.TARGET_ATTACHED_TO_TARGET:
            child = params.get("sessionId")
            if isinstance(child, str):
                self._parents[child] = session_id
                self._target_infos[child] = params.get("targetInfo") or {}
        event = Event(method, params, session_id)
        scopes = self._scopes(session_id)
        for subscription in list(self._subscriptions):
            if subscription.methods and method not in subscription.methods:
                continue
            if subscription.session_id is _ROOT_SESSION or subscription.session_id in scopes:
                subscription.deliver(event)
        if method == events.TARGET_DETACHED_FROM_TARGET:
            child = params.get("sessionId")
            if isinstance(child, str):
                settled = self.detach_session(child, "session detached")
        elif method == events.INSPECTOR_TARGET_CRASHED:
            self._crashed.add(session_id)
            self._dialogs.pop(session_id, None)
            settled = self._fail_waiting(session_id, _ANSWERED_WHEN_CRASHED, PageCrashedError)
        elif method == events.INSPECTOR_TARGET_RELOADED_AFTER_CRASH:
            self._crashed.discard(session_id)
        elif method == events.PAGE_JAVASCRIPT_DIALOG_OPENING:
            self._dialogs[session_id] = params
            # A navigation waiting on a "leave this page?" dialog fails too: its caller
            # learns of the dialog now, and the navigation goes on once it is answered.
            settled = self._fail_waiting(
                session_id, _KEPT_UNDER_DIALOG, lambda m: DialogOpenError.of(m, params)
            )
        elif method == events.PAGE_JAVASCRIPT_DIALOG_CLOSED:
            self._dialogs.pop(session_id, None)
        return settled

    def _fail_waiting(
        self,
        session_id: str | None,
        answered: tuple[str, ...],
        error: Callable[[str], PageCrashedError | DialogOpenError],
    ) -> list[Reply]:
        """The session's page stopped answering: fail its pending commands, except
        those the browser still answers, rather than let them wait for ever."""
        failed = [
            Reply(request, error=error(request.method))
            for request in self._pending.values()
            if request.session_id == session_id and not request.method.startswith(answered)
        ]
        for reply in failed:
            del self._pending[reply.request.id]
        return failed

    def _scopes(self, session_id: str | None) -> set[str]:
        """The session and every session above it (the scopes that see its events)."""
        scopes: set[str] = set()
        current = session_id
        while current is not None and current not in scopes:
            scopes.add(current)
            current = self._parents.get(current)
        return scopes

    def _ancestors(self, session_id: str) -> list[str | None]:
        """The sessions above ``session_id``, ending with None (the root session)."""
        chain: list[str | None] = []
        current = self._parents.get(session_id)
        while current is not None and current not in chain:
            chain.append(current)
            current = self._parents.get(current)
        chain.append(None)
        return chain

    def _descendants(self, session_id: str) -> set[str]:
        found: set[str] = set()
        frontier = [session_id]
        while frontier:
            parent = frontier.pop()
            for child, its_parent in self._parents.items():
                if its_parent == parent and child not in found:
                    found.add(child)
                    frontier.append(child)
        return found
