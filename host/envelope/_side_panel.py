"""The side panel as the one place where the person is asked.

Every question, from the side panel's own agent or from an outside client, goes to
the extension as an ``ask`` message and waits for its ``answer`` request. The wait is
bounded (`ASK_TIMEOUT`, below the 60 s after which common MCP clients give up on a
call), and when it ends without an answer, for whatever reason (the call was
cancelled, its client left, Stop, the wait ran out), the question is withdrawn at
once: the extension removes it, and a late answer finds nothing to act on.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

import attrs
import trio

from ..wire import OutboxClosed
from ._question import Answer, Question

__all__ = ["ASK_TIMEOUT", "SidePanel"]

# Seconds a question waits for the person. Clients built on the MCP TypeScript SDK give
# up on a call after 60 s, so the wait ends before that and says nobody answered.
ASK_TIMEOUT: Final = 50.0
# A withdraw that the extension does not take within this long is dropped.
_WITHDRAW_TIMEOUT: Final = 2.0

Send = Callable[[Mapping[str, Any]], Awaitable[None]]


@attrs.define(eq=False)
class _Open:
    done: trio.Event = attrs.field(factory=trio.Event)
    answer: Answer | None = None


@attrs.define(eq=False)
class SidePanel:
    """Questions shown in the side panel, each alive exactly as long as the call that asks.

    ``send`` puts a message on the native port (the extension's outbox).
    """

    send: Send
    timeout: float = ASK_TIMEOUT
    _open: dict[str, _Open] = attrs.field(factory=dict, init=False)
    _numbers: itertools.count[int] = attrs.field(factory=lambda: itertools.count(1), init=False)

    def __attrs_post_init__(self) -> None:
        if not 0 < self.timeout <= 3600:
            raise ValueError(f"timeout={self.timeout!r} must be between 0 and 3600 seconds")

    @property
    def open_questions(self) -> int:
        return len(self._open)

    async def ask(self, question: Question) -> Answer:
        """Ask the person and wait for their answer (an `Ask`)."""
        # A call already over (a judge run only to fail what would ask) shows nothing.
        await trio.lowlevel.checkpoint_if_cancelled()
        ask_id = f"q{next(self._numbers)}"
        pending = _Open()
        self._open[ask_id] = pending
        withdrawn = (
            "the call that asked ended before an answer (cancelled, its client left, or Stop)"
        )
        try:
            try:
                await self.send(
                    {"type": "ask", "ask": ask_id, **question.to_json(), "timeout": self.timeout}
                )
            except (OutboxClosed, ValueError):
                return Answer.unaskable("the browser could not be reached")
            with trio.move_on_after(self.timeout):
                await pending.done.wait()
            if pending.answer is None:
                withdrawn = f"nobody answered within {self.timeout:g} s"
                return Answer.unanswered(self.timeout)
            return pending.answer
        finally:
            del self._open[ask_id]
            if pending.answer is None:
                await self._withdraw(ask_id, withdrawn)

    def answer(
        self, ask_id: str, *, allow: bool, always: bool = False, why: str | None = None
    ) -> bool:
        """Give the person's answer to its question: True when a call was still waiting for
        it, False when the question was already withdrawn (the answer does nothing).
        ``always`` is a yes about a site for every task, not only the asking one."""
        pending = self._open.get(ask_id)
        if pending is None or pending.answer is not None:
            return False
        pending.answer = (
            Answer(allow=allow, always=allow and always) if why is None else Answer.unaskable(why)
        )
        pending.done.set()
        return True

    async def _withdraw(self, ask_id: str, why: str) -> None:
        # Shielded: a cancelled call must still take its question off the screen.
        with (
            trio.CancelScope(shield=True),
            trio.move_on_after(_WITHDRAW_TIMEOUT),
            contextlib.suppress(OutboxClosed, ValueError),
        ):
            await self.send({"type": "withdraw", "ask": ask_id, "why": why})
