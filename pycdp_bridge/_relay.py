"""The relay transport: CDP through the extension's ``chrome.debugger``.

The host decides every command; the extension's service worker runs it with
``chrome.debugger.sendCommand`` and sends back results and events as native
messages (``host/PROTOCOL.md``, "The CDP relay"). `RelayHub` is the host's end:
the host's dispatcher passes every ``cdp_result``/``cdp_event``/``cdp_detached``
message to `RelayHub.feed`, and `RelayHub.target` gives a `Target` per tab that
attaches the debugger on first use. All tabs share one id space because a
``cdp_result`` carries only the id.

The extension speaks other messages over the same port (tabs opened and closed, a
gate's verdicts), which are the host's and not CDP: `RelayHub.request` sends one of
its requests in the shared id space (the reply comes back as a ``cdp_result``), and
the ``handlers`` the hub is made with take the messages of the types they name
(``trimtab.browser`` gives the tab messages this way).
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import attrs
import trio

from ._connection import CDPConnection, Request
from ._target import CommandChannel, SessionTarget

__all__ = ["MessageHandler", "RelayHub", "RelayTarget", "SendMessage"]

#: How the hub writes one message to the extension.
SendMessage = Callable[[dict[str, Any]], Awaitable[None]]
#: Takes a message of a type it was registered for; returns how many of its
#: deliveries failed (each counted as unroutable).
MessageHandler = Callable[[Mapping[str, Any]], int]

_ATTACH = "cdp_attach"
_DETACH = "cdp_detach"
_ID_PREFIX = "c"


@attrs.frozen
class RelayStatistics:
    """A snapshot of a relay hub's counters."""

    tabs: int
    messages_fed: int
    unroutable: int


class RelayTarget(SessionTarget):
    """One tab reached through the extension; attaches the debugger on first use."""

    def __init__(self, hub: RelayHub, tab_id: int) -> None:
        super().__init__(CommandChannel(self._transmit, hub._new_connection()), None)
        self.tab_id = tab_id
        self._hub = hub
        self._attach_lock = trio.Lock()
        self._attached = False

    async def send(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        session_id: str | None = None,
    ) -> dict[str, Any]:
        if not self._attached:
            async with self._attach_lock:
                if not self._attached:
                    await self._channel.call(_ATTACH)
                    self._attached = True
        return await super().send(method, params, session_id=session_id)

    async def detach(self) -> None:
        """Ask the extension to detach the debugger; the target is closed afterwards."""
        if self._attached and not self.closed:
            await self._channel.call(_DETACH)
        self._channel.close("detached by the host")
        self._hub._forget(self)

    async def _transmit(self, request: Request) -> None:
        message: dict[str, Any] = {"type": "cdp", "id": f"{_ID_PREFIX}{request.id}"}
        if request.method in (_ATTACH, _DETACH):
            message = {"type": request.method, "id": message["id"], "tab": self.tab_id}
        else:
            message.update(
                tab=self.tab_id,
                session=request.session_id,
                method=request.method,
                params=request.params,
            )
        await self._hub._send_message(message)


class RelayHub:
    """The host's side of the CDP relay for every tab of one extension connection."""

    def __init__(
        self, send_message: SendMessage, *, handlers: Mapping[str, MessageHandler] | None = None
    ) -> None:
        self._send_message = send_message
        self._handlers = dict(handlers or {})
        self._ids = itertools.count(1)
        self._targets: dict[int, RelayTarget] = {}
        self._messages_fed = 0
        self._unroutable = 0
        # The host's requests to the extension that are not CDP (`request`), which no
        # tab's target sends.
        self._requests = CommandChannel(self._transmit_request, self._new_connection())

    @property
    def closed(self) -> bool:
        """Whether the hub was closed (`close`): every request fails from then on."""
        return self._requests.closed

    def target(self, tab_id: int) -> RelayTarget:
        """The tab's target; a closed one (tab detached) is replaced by a fresh one."""
        existing = self._targets.get(tab_id)
        if existing is None or existing.closed:
            existing = self._targets[tab_id] = RelayTarget(self, tab_id)
        return existing

    def feed(self, message: Mapping[str, Any]) -> None:
        """Route one ``cdp_result``, ``cdp_event`` or ``cdp_detached`` message, or one of
        a type the hub has a handler for."""
        self._messages_fed += 1
        kind = message.get("type")
        if kind == "cdp_result":
            self._feed_result(message)
        elif kind == "cdp_event":
            target = self._targets.get(_tab_of(message))
            if target is None:
                self._unroutable += 1
                return
            event: dict[str, Any] = {
                "method": message.get("method"),
                "params": message.get("params") or {},
            }
            if message.get("session") is not None:
                event["sessionId"] = message["session"]
            target._channel.feed(event)
        elif isinstance(kind, str) and kind in self._handlers:
            self._unroutable += self._handlers[kind](message)
        elif kind == "cdp_detached":
            target = self._targets.pop(_tab_of(message), None)
            if target is None:
                self._unroutable += 1
                return
            target._channel.close(f"debugger detached: {message.get('reason', 'unknown')}")
        else:
            raise ValueError(f"not a CDP relay message: type {kind!r}")

    def close(self, reason: str = "extension disconnected") -> None:
        """Fail every tab's pending commands (the native port closed)."""
        for target in self._targets.values():
            target._channel.close(reason)
        self._targets.clear()
        self._requests.close(reason)

    def close_target(self, tab_id: int, reason: str) -> None:
        """End the tab's target, if it has one (its pending commands fail as closed):
        the tab is gone."""
        target = self._targets.pop(tab_id, None)
        if target is not None:
            target._channel.close(reason)

    async def request(self, message_type: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """Send the extension a ``message_type`` request with ``params`` as its fields,
        in the CDP commands' id space: its ``cdp_result`` (an error raises CDPError)."""
        return await self._requests.call(message_type, params)

    def statistics(self) -> RelayStatistics:
        return RelayStatistics(
            tabs=len(self._targets), messages_fed=self._messages_fed, unroutable=self._unroutable
        )

    async def _transmit_request(self, request: Request) -> None:
        message: dict[str, Any] = {"type": request.method, "id": f"{_ID_PREFIX}{request.id}"}
        message.update(request.params or {})
        await self._send_message(message)

    def _new_connection(self) -> CDPConnection:
        return CDPConnection(self._ids)

    def _forget(self, target: RelayTarget) -> None:
        if self._targets.get(target.tab_id) is target:
            del self._targets[target.tab_id]

    def _feed_result(self, message: Mapping[str, Any]) -> None:
        raw_id = str(message.get("id", ""))
        number = raw_id.removeprefix(_ID_PREFIX)
        if not (raw_id.startswith(_ID_PREFIX) and number.isdigit()):
            self._unroutable += 1
            return
        command_id = int(number)
        channels = [self._requests, *(t._channel for t in self._targets.values())]
        for channel in channels:
            if channel.connection.is_pending(command_id):
                reply: dict[str, Any] = {"id": command_id}
                if "error" in message:
                    reply["error"] = message["error"]
                else:
                    reply["result"] = message.get("result") or {}
                channel.feed(reply)
                return
        self._unroutable += 1


def _tab_of(message: Mapping[str, Any]) -> int:
    tab = message.get("tab")
    if not isinstance(tab, int):
        raise ValueError(f"CDP relay message without an integer tab: {tab!r}")
    return tab
