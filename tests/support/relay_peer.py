"""A fake extension service worker for host-side tests of the CDP relay."""

from __future__ import annotations

from typing import Any

import trio
import trio.testing

from pycdp_bridge import CDPError, DialogOpenError, PageTarget, RelayHub, TargetClosedError

__all__ = ["HOLD", "RelayPeer"]

# A method the peer never answers: a command left pending, for detach and close tests.
HOLD = "Test.neverAnswered"


class RelayPeer:
    """Plays the extension's service worker: relays the host's CDP to a real page.

    Answers ``cdp_attach``/``cdp_detach`` itself, runs ``cdp`` commands on the page
    (child sessions included) and forwards the page's events once attached, the way
    ``chrome.debugger`` would: results and errors as ``cdp_result``, a page that went
    away as ``cdp_detached``.
    """

    def __init__(self, page: PageTarget, tab: int) -> None:
        self.page = page
        self.tab = tab
        self.hub = RelayHub(self.send_message)
        self.sent: list[dict[str, Any]] = []
        self._inbox_send, self._inbox = trio.open_memory_channel[dict[str, Any]](1000)
        self.attached = trio.Event()

    async def send_message(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        await self._inbox_send.send(message)

    def kinds(self) -> list[str]:
        """Message types sent to the peer, with CDP commands by method name."""
        return [m["type"] if m["type"] != "cdp" else m["method"] for m in self.sent]

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._forward_events)
            task_status.started()
            async for message in self._inbox:
                nursery.start_soon(self._handle, message)

    def detach(self, reason: str) -> None:
        """What the worker reports when Chrome detaches the debugger."""
        self.hub.feed({"type": "cdp_detached", "tab": self.tab, "reason": reason})

    async def _handle(self, message: dict[str, Any]) -> None:
        if message["type"] in ("cdp_attach", "cdp_detach"):
            if message["type"] == "cdp_attach":
                self.attached.set()
            self.hub.feed({"type": "cdp_result", "id": message["id"], "result": {}})
            return
        if message["method"] == HOLD:
            return
        reply: dict[str, Any] = {"type": "cdp_result", "id": message["id"]}
        try:
            reply["result"] = await self.page.send(
                message["method"], message["params"], session_id=message["session"]
            )
        except CDPError as error:
            reply["error"] = {"code": error.code, "message": error.message}
        except TargetClosedError:
            self.detach("target_closed")
            return
        except DialogOpenError:
            # The page shows a dialog the host's connection has not heard of yet. Chrome
            # keeps such a command waiting until the dialog is answered; the host fails
            # it itself once the dialog's event reaches it.
            return
        # chrome.debugger hands over a command's events (Target.attachedToTarget for the
        # frames Target.setAutoAttach finds) before its result. Here they travel through
        # the forwarding task: let it pass on everything already received first.
        await trio.testing.wait_all_tasks_blocked()
        self.hub.feed(reply)

    async def _forward_events(self) -> None:
        async with self.page.listen() as events:
            await self.attached.wait()
            async for event in events:
                self.hub.feed(
                    {
                        "type": "cdp_event",
                        "tab": self.tab,
                        "session": event.session_id,
                        "method": event.method,
                        "params": dict(event.params),
                    }
                )
