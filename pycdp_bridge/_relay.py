"""The relay transport: CDP through the extension's ``chrome.debugger``.

The host decides every command; the extension's service worker runs it with
``chrome.debugger.sendCommand`` and sends back results and events as native
messages (``host/PROTOCOL.md``, "The CDP relay"). `RelayHub` is the host's end:
the host's dispatcher passes every ``cdp_result``/``cdp_event``/``cdp_detached``
message to `RelayHub.feed`, and `RelayHub.target` gives a `Target` per tab that
attaches the debugger on first use. All tabs share one id space because a
``cdp_result`` carries only the id.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import attrs
import trio

from ._connection import CDPConnection, Request
from ._target import CommandChannel, SessionTarget

__all__ = ["RelayHub", "RelayTarget"]

SendMessage = Callable[[dict[str, Any]], Awaitable[None]]

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

    def __init__(self, send_message: SendMessage) -> None:
        self._send_message = send_message
        self._ids = itertools.count(1)
        self._targets: dict[int, RelayTarget] = {}
        self._messages_fed = 0
        self._unroutable = 0

    def target(self, tab_id: int) -> RelayTarget:
        """The tab's target; a closed one (tab detached) is replaced by a fresh one."""
        existing = self._targets.get(tab_id)
        if existing is None or existing.closed:
            existing = self._targets[tab_id] = RelayTarget(self, tab_id)
        return existing

    def feed(self, message: Mapping[str, Any]) -> None:
        """Route one ``cdp_result``, ``cdp_event`` or ``cdp_detached`` message."""
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

    def statistics(self) -> RelayStatistics:
        return RelayStatistics(
            tabs=len(self._targets), messages_fed=self._messages_fed, unroutable=self._unroutable
        )

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
        for target in self._targets.values():
            if target._channel.connection.is_pending(command_id):
                reply: dict[str, Any] = {"id": command_id}
                if "error" in message:
                    reply["error"] = message["error"]
                else:
                    reply["result"] = message.get("result") or {}
                target._channel.feed(reply)
                return
        self._unroutable += 1


def _tab_of(message: Mapping[str, Any]) -> int:
    tab = message.get("tab")
    if not isinstance(tab, int):
        raise ValueError(f"CDP relay message without an integer tab: {tab!r}")
    return tab
