"""The one async interface every caller of CDP uses, whatever carries the messages.

`Target` is what the capture, the agent tools and the tests program against. A
`CommandChannel` is the async shell around the sans-I/O `CDPConnection`: it sends a
registered request through a transport callback, parks the caller until the reply
arrives, and fans events out to memory channels. `SessionTarget` is a `Target` bound
to one session of a channel; the direct transport's browser and pages, and each tab of
the relay, are session targets.
"""

from __future__ import annotations

import abc
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Mapping
from contextlib import (
    AbstractAsyncContextManager,
    AbstractContextManager,
    asynccontextmanager,
    contextmanager,
)
from typing import Any, TypeVar

import attrs
import trio

from ._command import Command
from ._connection import CDPConnection, ConnectionStatistics, Event, Reply, Request
from ._trace import note_sent, tracing

__all__ = ["CommandChannel", "SessionTarget", "Target"]

T = TypeVar("T")

DEFAULT_EVENT_BUFFER = 1024


class Target(abc.ABC):
    """A CDP endpoint: a tab (with the child sessions of its out-of-process iframes).

    ``session_id=None`` always means the target's own session; pass a child session
    id (from ``Target.attachedToTarget``) to talk to an out-of-process iframe.
    """

    @property
    @abc.abstractmethod
    def closed(self) -> bool:
        """True once the target is gone; every command then raises TargetClosedError."""

    @property
    def crashed(self) -> bool:
        """True while the page has crashed: commands other than a navigation or a
        reload raise PageCrashedError until one of those brings the page back."""
        return False

    @property
    def open_dialog(self) -> Mapping[str, Any] | None:
        """The JavaScript dialog the page shows (``Page.javascriptDialogOpening``'s
        params), if any: until it is answered most commands raise DialogOpenError."""
        return None

    @abc.abstractmethod
    async def send(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        session_id: str | None = None,
    ) -> dict[str, Any]:
        """Run one raw CDP command and return its result object."""

    @abc.abstractmethod
    def listen(
        self,
        *methods: str,
        session_id: str | None = None,
        buffer_size: int = DEFAULT_EVENT_BUFFER,
    ) -> AbstractAsyncContextManager[trio.MemoryReceiveChannel[Event]]:
        """Receive events (all methods if none given) of the session and its children.

        The channel ends when the target closes. Events arriving while the buffer is
        full are dropped and counted, so a slow listener never stalls the connection.
        """

    def follow(
        self, deliver: Callable[[Event], None], *methods: str
    ) -> AbstractContextManager[None]:
        """Call ``deliver`` with every event (of ``methods``; all if none) of the
        target's own session, as it arrives, while the block runs.

        For a consumer that must count every event even in a flood (a bounded log):
        nothing is buffered or dropped, so ``deliver`` must be quick and never raise.
        """
        raise NotImplementedError(f"{type(self).__name__} cannot deliver events as they come")

    @abc.abstractmethod
    def child_sessions(self) -> Mapping[str, Mapping[str, Any]]:
        """Attached child sessions (out-of-process iframes) below this target.

        Maps each session id to the ``targetInfo`` the browser announced it with.
        """

    def holding(self, group: str) -> tuple[str | None, ...]:
        """The sessions (None: the target's own) that may hold remote objects of the
        object group ``group``: those to send ``Runtime.releaseObjectGroup`` to. Here
        every session; a target that sees its commands says which did put some there."""
        del group
        return (None, *self.child_sessions())

    async def execute(
        self,
        command: Command[T],
        *,
        session_id: str | None = None,
    ) -> T:
        """Run a command generator (ours from `_protocol`, or the ``cdp`` package's)."""
        request = next(command)
        result = await self.send(request["method"], request.get("params"), session_id=session_id)
        try:
            command.send(result)
        except StopIteration as done:
            value: T = done.value
            return value
        raise RuntimeError(f"command generator for {request['method']} yielded twice")


@attrs.define(eq=False)
class _Waiter:
    done: trio.Event = attrs.field(factory=trio.Event)
    reply: Reply | None = None


@attrs.frozen
class ChannelStatistics:
    """A snapshot of a command channel's counters."""

    connection: ConnectionStatistics
    listeners: int
    events_dropped: int


class CommandChannel:
    """Async request/response and event fan-out over a `CDPConnection`.

    ``transmit`` sends one registered request (encoded however the transport needs);
    the transport calls `feed` with every decoded incoming message and `close` when
    the peer goes away.
    """

    def __init__(
        self,
        transmit: Callable[[Request], Awaitable[None]],
        connection: CDPConnection | None = None,
    ) -> None:
        self._transmit = transmit
        self.connection = connection if connection is not None else CDPConnection()
        self._waiters: dict[int, _Waiter] = {}
        self._listeners: set[trio.MemorySendChannel[Event]] = set()
        self._events_dropped = 0

    @property
    def closed(self) -> bool:
        return self.connection.closed

    async def call(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        session_id: str | None = None,
    ) -> dict[str, Any]:
        request = self.connection.command(method, params, session_id)
        waiter = _Waiter()
        self._waiters[request.id] = waiter
        sent = time.perf_counter() if tracing() else None
        try:
            await self._transmit(request)
            await waiter.done.wait()
        finally:
            if not waiter.done.is_set():
                self.connection.forget(request.id)
            self._waiters.pop(request.id, None)
            if sent is not None:
                note_sent(method, session_id, sent)
        reply = waiter.reply
        assert reply is not None  # set together with `done`
        if reply.error is not None:
            raise reply.error
        return reply.result if reply.result is not None else {}

    def feed(self, message: Mapping[str, Any]) -> None:
        """Process one decoded incoming message (response or event)."""
        self._settle(self.connection.receive(message))

    def close(self, reason: str) -> None:
        """Fail pending commands with TargetClosedError and end every listener."""
        self._settle(self.connection.close(reason))
        for listener in list(self._listeners):
            listener.close()
        self._listeners.clear()

    def detach_session(self, session_id: str, reason: str) -> None:
        self._settle(self.connection.detach_session(session_id, reason))

    @asynccontextmanager
    async def listen(
        self,
        methods: frozenset[str],
        scope: str | None,
        own_session: str | None,
        buffer_size: int,
    ) -> AsyncIterator[trio.MemoryReceiveChannel[Event]]:
        sender, receiver = trio.open_memory_channel[Event](buffer_size)
        if self.closed:
            sender.close()

        def deliver(event: Event) -> None:
            if own_session is not None and event.session_id == own_session:
                event = attrs.evolve(event, session_id=None)
            try:
                sender.send_nowait(event)
            except trio.WouldBlock:
                self._events_dropped += 1
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass

        subscription = self.connection.subscribe(deliver, methods, scope)
        self._listeners.add(sender)
        try:
            async with receiver:
                yield receiver
        finally:
            self.connection.unsubscribe(subscription)
            self._listeners.discard(sender)
            sender.close()

    @contextmanager
    def follow(
        self,
        deliver: Callable[[Event], None],
        methods: frozenset[str],
        own_session: str | None,
    ) -> Generator[None, None, None]:
        def own(event: Event) -> None:
            # The target's own session only: its children's events are not followed.
            if event.session_id == own_session:
                deliver(attrs.evolve(event, session_id=None) if own_session else event)

        subscription = self.connection.subscribe(own, methods, own_session)
        try:
            yield
        finally:
            self.connection.unsubscribe(subscription)

    def statistics(self) -> ChannelStatistics:
        return ChannelStatistics(
            connection=self.connection.statistics(),
            listeners=len(self._listeners),
            events_dropped=self._events_dropped,
        )

    def _settle(self, replies: list[Reply]) -> None:
        for reply in replies:
            waiter = self._waiters.get(reply.request.id)
            if waiter is not None:
                waiter.reply = reply
                waiter.done.set()


class SessionTarget(Target):
    """A `Target` bound to one session of a `CommandChannel` (None: the channel's root)."""

    def __init__(self, channel: CommandChannel, session_id: str | None = None) -> None:
        self._channel = channel
        self._session_id = session_id
        # Object group -> the sessions (as `send` named them) a command of this target
        # asked to put remote objects in since the group's release there (`holding`).
        self._groups: dict[str, set[str | None]] = {}

    @property
    def session_id(self) -> str | None:
        return self._session_id

    @property
    def closed(self) -> bool:
        if self._channel.closed:
            return True
        return self._session_id is not None and self._channel.connection.is_detached(
            self._session_id
        )

    @property
    def crashed(self) -> bool:
        return self._channel.connection.is_crashed(self._session_id)

    @property
    def open_dialog(self) -> Mapping[str, Any] | None:
        return self._channel.connection.open_dialog(self._session_id)

    async def send(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        session_id: str | None = None,
    ) -> dict[str, Any]:
        group = params.get("objectGroup") if params is not None else None
        if group is None:
            return await self._channel.call(method, params, session_id or self._session_id)
        sessions = self._groups.setdefault(str(group), set())
        if method != "Runtime.releaseObjectGroup":
            sessions.add(session_id)
            return await self._channel.call(method, params, session_id or self._session_id)
        # Forgotten before the release is sent: objects a command puts there meanwhile
        # are noted again, and released next time.
        held = session_id in sessions
        sessions.discard(session_id)
        try:
            return await self._channel.call(method, params, session_id or self._session_id)
        except BaseException:
            if held:
                sessions.add(session_id)
            raise

    def holding(self, group: str) -> tuple[str | None, ...]:
        sessions = self._groups.get(group, set())
        attached = self.child_sessions()
        # A child session that went away took its objects with it.
        sessions.intersection_update({None, self._session_id, *attached})
        return tuple(sorted(sessions, key=lambda s: (s is not None, s or "")))

    def listen(
        self,
        *methods: str,
        session_id: str | None = None,
        buffer_size: int = DEFAULT_EVENT_BUFFER,
    ) -> AbstractAsyncContextManager[trio.MemoryReceiveChannel[Event]]:
        return self._channel.listen(
            frozenset(methods), session_id or self._session_id, self._session_id, buffer_size
        )

    def follow(
        self, deliver: Callable[[Event], None], *methods: str
    ) -> AbstractContextManager[None]:
        return self._channel.follow(deliver, frozenset(methods), self._session_id)

    def child_sessions(self) -> Mapping[str, Mapping[str, Any]]:
        return self._channel.connection.attached_under(self._session_id)

    def statistics(self) -> ChannelStatistics:
        return self._channel.statistics()
