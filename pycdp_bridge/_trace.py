"""Which commands a block of work sent, and how long each waited for its reply.

A diagnostic, for the benches' breakdowns of where an action's time goes (the speed
bench's ``envelope`` part) and the host's trace of a tool call: `traced_commands`
collects, for the block and every task it starts, each command any `CommandChannel`
sends (the CDP commands of both transports, and the relay's own requests such as a
gate). Work the block does not wait for (a request sent in the background) runs
`off_the_path`, and its commands are marked so; `note_wait` adds a wait of the block
that is not a command (for what a background request must have done first). It
changes nothing of what is sent; outside a traced block it costs one context-variable
lookup per command. A context variable rather than an argument: the commands come
from deep inside the driver and the guard, and what is measured must be the code as
it runs untraced.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterable, Iterator

import attrs

__all__ = [
    "SentCommand",
    "note_sent",
    "note_wait",
    "off_the_path",
    "tally",
    "traced_commands",
    "tracing",
]


@attrs.frozen
class SentCommand:
    """One command of a traced block: its method (or relay request type, or for a wait
    what it waited for), the session it went to (None: the target's own), when it was
    sent and answered (`time.perf_counter` seconds), and whether the block went on
    without waiting for it (``background``)."""

    method: str
    session: str | None
    sent: float
    answered: float
    background: bool = False

    @property
    def ms(self) -> float:
        return (self.answered - self.sent) * 1000


def tally(sent: Iterable[SentCommand]) -> dict[str, list[float]]:
    """Per method: how many of ``sent`` the block waited for and their milliseconds,
    then how many went in the background and theirs (``[n, ms, n, ms]``)."""
    methods: dict[str, list[float]] = {}
    for command in sent:
        counts = methods.setdefault(command.method, [0, 0.0, 0, 0.0])
        at = 2 if command.background else 0
        counts[at] += 1
        counts[at + 1] += command.ms
    return methods


@attrs.define(eq=False)
class _Trace:
    """The commands of one traced block, collected while it runs (a task it started
    that outlives it adds nothing more); a background view shares its root's list."""

    sent: list[SentCommand] = attrs.field(factory=list)
    running: bool = True
    background: bool = False
    root: _Trace | None = None

    @property
    def live(self) -> bool:
        return (self.root or self).running


_TRACE: contextvars.ContextVar[_Trace | None] = contextvars.ContextVar(
    "pycdp_bridge_command_trace", default=None
)


def tracing() -> bool:
    """Whether the current task is inside a `traced_commands` block."""
    trace = _TRACE.get()
    return trace is not None and trace.live


def note_sent(method: str, session: str | None, sent: float) -> None:
    """Record one command answered now, if the current task is traced (the channel calls
    this once its reply came, or it failed)."""
    trace = _TRACE.get()
    if trace is not None and trace.live:
        answered = time.perf_counter()
        trace.sent.append(SentCommand(method, session, sent, answered, trace.background))


def note_wait(what: str, began: float) -> None:
    """Record that the traced block waited from ``began`` until now for ``what``."""
    note_sent(what, None, began)


@contextlib.contextmanager
def off_the_path() -> Iterator[None]:
    """Mark what the block (and the tasks it starts) sends as sent in the background:
    the traced work does not wait for it."""
    trace = _TRACE.get()
    if trace is None:
        yield
        return
    token = _TRACE.set(_Trace(trace.sent, background=True, root=trace.root or trace))
    try:
        yield
    finally:
        _TRACE.reset(token)


@contextlib.contextmanager
def traced_commands() -> Iterator[list[SentCommand]]:
    """Collect every command sent during the block (by it and the tasks it starts) into
    the list it gives, in the order their replies came."""
    trace = _Trace()
    token = _TRACE.set(trace)
    try:
        yield trace.sent
    finally:
        trace.running = False
        _TRACE.reset(token)
