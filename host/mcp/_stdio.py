"""Standard input and output of ``trimtab mcp``: one JSON-RPC message a line, bounded.

The SDK's own stdio transport reads stdin a line at a time in a worker thread, takes
a line of any length into memory, and drops a line it cannot parse with no answer,
so a client that sent a malformed request waits for its reply forever. This one
reads and writes the pipes with trio directly (no thread hop per message), and
answers every line it cannot hand to the server:

- longer than `MAX_MESSAGE` bytes: skipped as it streams in, never held whole, and
  answered with ``-32600`` (invalid request) naming the limit;
- not UTF-8 JSON: ``-32700`` (parse error);
- JSON but not a JSON-RPC message: ``-32600``, with the request's id when it has one.

The server then goes on serving the same client. Lines are handed to the SDK's
`stdio_server` (its public ``stdin``/``stdout`` arguments), so the SDK still owns
the MCP session; this module owns only the bytes.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any, Final, cast

import anyio
import attrs
import mcp_types as types
import trio
from mcp.server.stdio import stdio_server
from pydantic import ValidationError

__all__ = ["MAX_MESSAGE", "LineSplitter", "Oversized", "line_problem", "open_stdio"]

# A request is relayed to the host as one link frame, which the framing caps at
# 1 MiB; a larger message could never be carried out, so it is refused at the door.
MAX_MESSAGE: Final = 1024 * 1024
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
_RECEIVE_SIZE: Final = 256 * 1024


@attrs.frozen
class Oversized:
    """A line longer than the limit, skipped: its length and its two ends."""

    size: int
    head: bytes = b""
    tail: bytes = b""

    def request_id(self) -> str | int | None:
        """The request's id, when an end of the line shows it plainly; None otherwise.

        Clients write the id before the params (``{"jsonrpc":"2.0","id":9,...``) or
        last (``...,"jsonrpc":"2.0","id":9}``). Only an ``"id"`` that no ``{`` or
        ``[`` precedes, or that the closing ``}`` follows, is the request's own.
        """
        found = _HEAD_ID.match(self.head) or _TAIL_ID.search(self.tail)
        if found is None:
            return None
        value = json.loads(found.group(1))
        return value if isinstance(value, str | int) else None


_ID_VALUE: Final = rb'(-?\d{1,16}|"[^"\\]{0,256}")'
_HEAD_ID: Final = re.compile(
    rb'\s*\{[^{}\[\]"]*(?:"[^"\\{}\[\]]*"[^{}\[\]"]*)*?"id"\s*:\s*' + _ID_VALUE
)
_TAIL_ID: Final = re.compile(
    rb'[,{]\s*"id"\s*:\s*' + _ID_VALUE + rb'\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$'
)
_ENDS: Final = 512


@attrs.define
class LineSplitter:
    """Bytes in, complete lines out; a line over ``limit`` bytes is dropped as it
    arrives (only its length and its ends are kept), so memory stays bounded."""

    limit: int = MAX_MESSAGE
    _buffer: bytearray = attrs.field(factory=bytearray)
    _skipping: int | None = None  # bytes of the oversized line seen so far
    _head: bytes = b""
    _tail: bytes = b""

    def feed(self, data: bytes | bytearray) -> list[bytes | Oversized]:
        out: list[bytes | Oversized] = []
        start = 0
        while True:
            end = data.find(b"\n", start)
            piece = data[start:] if end < 0 else data[start:end]
            if self._skipping is not None:
                self._skipping += len(piece)
                self._tail = (self._tail + piece)[-_ENDS:]
            elif len(self._buffer) + len(piece) > self.limit:
                self._skipping = len(self._buffer) + len(piece)
                self._head = bytes((self._buffer + piece)[:_ENDS])
                self._tail = bytes((self._buffer[-_ENDS:] + piece)[-_ENDS:])
                self._buffer.clear()
            else:
                self._buffer += piece
            if end < 0:
                return out
            if self._skipping is not None:
                out.append(Oversized(self._skipping, self._head, self._tail))
                self._skipping = None
            else:
                line = bytes(self._buffer).strip()
                if line:
                    out.append(line)
            self._buffer.clear()
            start = end + 1

    def end(self) -> list[bytes | Oversized]:
        """What is left at end of input: a last line without its newline."""
        return self.feed(b"\n")


def line_problem(line: bytes) -> tuple[int, str, Any] | None:
    """Why ``line`` is not a JSON-RPC message (code, message, request id), or None."""
    try:
        decoded = json.loads(line)
    except (UnicodeDecodeError, ValueError) as exc:
        return PARSE_ERROR, f"parse error: the line is not UTF-8 JSON ({exc})", None
    request_id = decoded.get("id") if isinstance(decoded, dict) else None
    if not isinstance(request_id, str | int) or isinstance(request_id, bool):
        request_id = None
    try:
        types.jsonrpc_message_adapter.validate_python(decoded, by_name=False)
    except ValidationError as exc:
        first = exc.errors()[0] if exc.errors() else {"msg": str(exc), "loc": ()}
        where = ".".join(str(part) for part in first.get("loc", ()))
        detail = f"{first['msg']} at {where}" if where else str(first["msg"])
        return (
            INVALID_REQUEST,
            f"invalid request: not a JSON-RPC 2.0 message ({detail[:300]})",
            request_id,
        )
    return None


@attrs.define(eq=False)
class _Output:
    """Standard output: whole messages, one writer at a time (the SDK's replies and
    this module's errors never interleave)."""

    stream: trio.abc.SendStream
    _lock: trio.Lock = attrs.field(factory=trio.Lock)

    async def write(self, text: str) -> None:
        data = text.encode("utf-8")
        async with self._lock:
            try:
                await self.stream.send_all(data)
            except trio.BrokenResourceError as exc:
                # The client is gone: the SDK's writer ends on this error quietly,
                # and the reader ends at the end of input that follows.
                raise anyio.ClosedResourceError from exc

    async def flush(self) -> None:
        """Nothing is buffered: `write` sent it all."""

    async def error(self, code: int, message: str, request_id: Any) -> None:
        reply = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
        with contextlib.suppress(anyio.ClosedResourceError, trio.ClosedResourceError):
            await self.write(json.dumps(reply) + "\n")


@attrs.define(eq=False)
class _Input:
    """Standard input as the SDK's transport reads it: ``async for line in ...``."""

    stream: trio.abc.ReceiveStream
    output: _Output
    limit: int = MAX_MESSAGE

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        splitter = LineSplitter(self.limit)
        while True:
            try:
                data = await self.stream.receive_some(_RECEIVE_SIZE)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
            items = splitter.feed(data) if data else splitter.end()
            for item in items:
                if isinstance(item, Oversized):
                    await self.output.error(
                        INVALID_REQUEST,
                        f"message too large: over {self.limit} bytes "
                        f"({item.size} bytes before the line ended); it was skipped",
                        item.request_id(),
                    )
                    continue
                problem = line_problem(item)
                if problem is not None:
                    await self.output.error(*problem)
                    continue
                yield item.decode("utf-8")
            if not data:
                return


@contextlib.contextmanager
def _claim_std_fds() -> Iterator[tuple[int, int]]:
    """Private copies of fds 0 and 1 for the wire; fd 0 then reads /dev/null and fd 1
    writes to stderr, so a stray print (ours, a library's, a child's) cannot corrupt
    the messages. Restored on exit."""
    wire_in = os.dup(0)
    wire_out = os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
    finally:
        os.close(null)
    try:
        yield wire_in, wire_out
    finally:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
        os.close(wire_in)
        os.close(wire_out)


@contextlib.asynccontextmanager
async def open_stdio(limit: int = MAX_MESSAGE) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's read and write streams over this process's stdin and stdout."""
    with _claim_std_fds() as (wire_in, wire_out):
        # Each FdStream owns (and closes) a copy of its descriptor, and puts back
        # the blocking mode it changed, which the pipe shares with the client.
        async with (
            trio.lowlevel.FdStream(os.dup(wire_in)) as stdin,
            trio.lowlevel.FdStream(os.dup(wire_out)) as stdout,
        ):
            output = _Output(stdout)
            lines = _Input(stdin, output, limit)
            # The SDK reads `async for line in stdin` and calls write/flush on stdout.
            async with stdio_server(stdin=cast(Any, lines), stdout=cast(Any, output)) as streams:
                yield streams
