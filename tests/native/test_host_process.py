"""The native-messaging host as Chrome runs it: a subprocess spoken to over stdin/stdout.

Requests are framed with the ``nativemessaging`` package (an implementation of the
framing that is not ours) or, for malformed input, by hand with ``struct``; stdout is
parsed by a strict reader written here, so the host's own decoder is never trusted
to check the host's output. A few tests at the end drive ``HostServer`` in-process
over memory streams, for wiring a subprocess cannot reach (the CDP relay hook).
"""

from __future__ import annotations

import json
import math
import os
import struct
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

import attrs
import nativemessaging  # type: ignore[import-untyped]
import pytest
import trio
import trio.testing

from trimtab.install import extension_id
from trimtab.native import HostContext, HostSetup, run_host
from trimtab.wire import (
    MAX_INCOMING_FRAME,
    ChunkAssembler,
    Handler,
    HostServer,
    JSONObject,
    Outbox,
    Request,
    RequestError,
    default_log_dir,
    encode_frame,
)

ORIGIN = f"chrome-extension://{extension_id()}/"
CHROME_MESSAGE_LIMIT = 1024 * 1024
TIMEOUT = 60  # generous: the machines are noisy; no test should come near it


def nm_frame(message: Any) -> bytes:
    """A request framed by the nativemessaging package."""
    encoded = nativemessaging.encode_message(message)
    return cast(bytes, encoded["length"]) + cast(bytes, encoded["content"])


def raw_frame(body: bytes) -> bytes:
    return struct.pack("@I", len(body)) + body


class ProtocolViolation(AssertionError):
    """The host wrote something to stdout that is not a well-formed frame."""


@attrs.define
class StrictFrameReader:
    """Parses the host's output: native-endian length, UTF-8 JSON object; nothing else."""

    buffer: bytearray = attrs.field(factory=bytearray)
    largest_frame: int = 0
    frames_read: int = 0

    def feed(self, data: bytes | bytearray) -> list[JSONObject]:
        self.buffer += data
        out = []
        while len(self.buffer) >= 4:
            (length,) = struct.unpack("@I", self.buffer[:4])
            if length > CHROME_MESSAGE_LIMIT:
                raise ProtocolViolation(f"frame of {length} bytes; Chrome would drop the port")
            if len(self.buffer) < 4 + length:
                break
            body = bytes(self.buffer[4 : 4 + length])
            del self.buffer[: 4 + length]
            self.largest_frame = max(self.largest_frame, length)
            self.frames_read += 1
            try:
                message = json.loads(body.decode("utf-8"))
            except ValueError as exc:
                raise ProtocolViolation(f"frame is not UTF-8 JSON: {body[:80]!r}") from exc
            if not isinstance(message, dict) or not isinstance(message.get("type"), str):
                raise ProtocolViolation(f"frame is not a typed JSON object: {body[:80]!r}")
            out.append(message)
        return out


@attrs.define
class HostProcess:
    """A running host with its stdout parsed into messages as it arrives."""

    process: trio.Process
    log_dir: Path
    stderr: bytearray = attrs.field(factory=bytearray)
    reader: StrictFrameReader = attrs.field(factory=StrictFrameReader)
    violation: BaseException | None = None
    stdout_done: trio.Event = attrs.field(factory=trio.Event)
    _assembler: ChunkAssembler = attrs.field(factory=ChunkAssembler)
    _send: trio.MemorySendChannel[JSONObject] = attrs.field(init=False)
    _receive: trio.MemoryReceiveChannel[JSONObject] = attrs.field(init=False)
    _stash: list[JSONObject] = attrs.field(factory=list)
    chunks_seen: int = 0

    def __attrs_post_init__(self) -> None:
        self._send, self._receive = trio.open_memory_channel[JSONObject](math.inf)

    async def send(self, message: Any) -> None:
        await self.send_raw(nm_frame(message))

    async def send_raw(self, data: bytes) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        await stdin.send_all(data)

    async def close_stdin(self) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        await stdin.aclose()

    async def next_message(self) -> JSONObject:
        """The next complete message, chunked replies reassembled."""
        while True:
            try:
                message = await self._receive.receive()
            except trio.EndOfChannel:
                raise AssertionError(
                    f"host stdout ended ({self.violation!r}); stderr: {self.stderr[-2000:]!r}"
                ) from None
            if message["type"] == "chunk":
                self.chunks_seen += 1
            whole = self._assembler.feed(message)
            if whole is not None:
                return whole

    async def reply_to(self, request_id: Any) -> JSONObject:
        """The reply with this id, keeping other messages for later calls."""
        for i, message in enumerate(self._stash):
            if message.get("id") == request_id:
                return self._stash.pop(i)
        while True:
            message = await self.next_message()
            if message.get("id") == request_id and message["type"] in {"result", "error"}:
                return message
            self._stash.append(message)

    async def request(self, message: JSONObject) -> JSONObject:
        await self.send(message)
        return await self.reply_to(message.get("id"))

    async def finish(self) -> int:
        """Close stdin, wait for exit, and check stdout held nothing but whole frames."""
        await self.close_stdin()
        code = await self.process.wait()
        await self.stdout_done.wait()
        if self.violation is not None:
            raise self.violation
        assert self.reader.buffer == b"", f"trailing bytes on stdout: {self.reader.buffer[:80]!r}"
        return code

    def log_text(self) -> str:
        return (self.log_dir / "host.log").read_text(encoding="utf-8")

    async def pump_stdout(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            while data := await stdout.receive_some(65536):
                for message in self.reader.feed(data):
                    self._send.send_nowait(message)
        except ProtocolViolation as exc:
            self.violation = exc
        finally:
            self.stdout_done.set()
            self._send.close()

    async def pump_stderr(self) -> None:
        stderr = self.process.stderr
        assert stderr is not None
        while data := await stderr.receive_some(65536):
            self.stderr += data


def host_env(log_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRIMTAB_")}
    env.update({"TRIMTAB_LOG_DIR": str(log_dir), "TRIMTAB_HOST_DEBUG": "1", **extra})
    return env


async def run_host_process(
    log_dir: Path,
    env_extra: Mapping[str, str] | None = None,
    command: list[str] | None = None,
    *,
    task_status: trio.TaskStatus[HostProcess] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Start the host, pump its output, and kill it if it outlives the test."""
    argv = command or [sys.executable, "-m", "trimtab.native", ORIGIN]
    process = await trio.lowlevel.open_process(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=host_env(log_dir, **(env_extra or {})),
    )
    host = HostProcess(process, log_dir)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(host.pump_stdout)
            nursery.start_soon(host.pump_stderr)
            task_status.started(host)
    finally:
        with trio.CancelScope(shield=True):
            if process.returncode is None:
                process.kill()
                await process.wait()


@pytest.fixture
async def host(nursery: trio.Nursery, tmp_path: Path) -> HostProcess:
    return cast(HostProcess, await nursery.start(run_host_process, tmp_path / "logs"))


# --------------------------------------------------------------------------- basics


async def test_ping(host: HostProcess) -> None:
    """A ping framed by the nativemessaging package gets a pong with the version."""
    reply = await host.request({"type": "ping", "id": 1})
    assert reply["type"] == "result"
    assert reply["id"] == 1
    assert reply["result"]["pong"] is True
    assert isinstance(reply["result"]["version"], str)
    assert await host.finish() == 0


async def test_console_script_serves(nursery: trio.Nursery, tmp_path: Path) -> None:
    """The installed trimtab-host entry point starts and answers a ping."""
    script = Path(sys.executable).parent / "trimtab-host"
    if not script.exists():
        pytest.skip(f"no trimtab-host script next to {sys.executable}")
    host = await nursery.start(
        run_host_process, tmp_path, None, [str(script), ORIGIN, "--parent-window=0"]
    )
    reply = await host.request({"type": "ping", "id": "p"})
    assert reply["result"]["pong"] is True
    assert await host.finish() == 0
    log = host.log_text()
    assert ORIGIN in log
    assert "--parent-window=0" in log


async def test_two_requests_run_concurrently(host: HostProcess) -> None:
    """A request blocked until a later request arrives is answered, so both ran at once."""
    await host.send({"type": "debug_wait", "id": "waiter", "key": "k"})
    await host.send({"type": "debug_release", "id": "releaser", "key": "k"})
    released = await host.reply_to("releaser")
    waited = await host.reply_to("waiter")
    assert released["result"] == {"released": "k"}
    assert waited["result"] == {"released": "k"}
    assert await host.finish() == 0


async def test_large_reply_arrives_chunked_and_byte_exact(host: HostProcess) -> None:
    """A 3 MB reply of escaping characters arrives as chunks under 1 MiB and reassembles exactly."""
    alphabet = '"\\\x01é😀\u2028 '
    size = 3_000_000
    reply = await host.request(
        {"type": "debug_blob", "id": "big", "size": size, "alphabet": alphabet}
    )
    expected = (alphabet * (size // len(alphabet) + 1))[:size]
    assert reply["result"]["blob"] == expected
    assert host.chunks_seen >= 3
    assert host.reader.largest_frame <= 1_000_000
    assert await host.finish() == 0


async def test_handler_can_send_messages_to_the_extension(host: HostProcess) -> None:
    """A message a handler sends through the outbox reaches stdout as its own frame."""
    await host.send({"type": "debug_send", "id": 5, "note": "hello"})
    first = await host.next_message()
    second = await host.next_message()
    assert first == {"type": "debug_note", "note": "hello"}
    assert second == {"type": "result", "id": 5, "result": {"sent": True}}
    assert await host.finish() == 0


async def test_relay_messages_get_no_reply(host: HostProcess) -> None:
    """cdp_* messages go to the CDP relay, not the request path: no reply, serving goes on."""
    relay = [
        {"type": "cdp_result", "id": "c99", "result": {}},
        {"type": "cdp_event", "tab": 4, "session": None, "method": "Page.loadEventFired"},
        {"type": "cdp_detached", "tab": 4, "reason": "canceled_by_user"},
    ]
    for message in relay:
        await host.send(message)
    reply = await host.request(PING_AFTER)
    assert reply["result"]["pong"] is True
    assert await host.finish() == 0
    assert host.reader.frames_read == 1
    assert "no CDP relay is connected" not in host.log_text()


async def test_debug_handlers_need_the_debug_switch(nursery: trio.Nursery, tmp_path: Path) -> None:
    """Without TRIMTAB_HOST_DEBUG=1 the test-only request types do not exist."""
    host = await nursery.start(run_host_process, tmp_path, {"TRIMTAB_HOST_DEBUG": "0"})
    reply = await host.request({"type": "debug_echo", "id": 1})
    assert reply["error"]["code"] == "unknown_type"
    assert await host.finish() == 0


# --------------------------------------------------------------------------- bad input


PING_AFTER = {"type": "ping", "id": "after"}


@pytest.mark.parametrize(
    ("bad_input", "code", "error_id"),
    [
        pytest.param(raw_frame(b'{"type":"ping","id":"\xff"}'), "bad_frame", None, id="utf8"),
        pytest.param(raw_frame(b'{"type": ping, "id": 1}'), "bad_frame", None, id="json"),
        pytest.param(raw_frame(b""), "bad_frame", None, id="empty"),
        pytest.param(nm_frame([1, 2, 3]), "bad_message", None, id="array"),
        pytest.param(nm_frame({"id": 7, "tab": 1}), "bad_message", 7, id="no-type"),
        pytest.param(nm_frame({"type": "nope", "id": "u1"}), "unknown_type", "u1", id="unknown"),
        pytest.param(nm_frame({"type": "ping", "id": [1]}), "bad_request", None, id="bad-id"),
        pytest.param(
            nm_frame({"type": "debug_sleep", "id": "s"}), "bad_request", "s", id="missing-field"
        ),
        pytest.param(
            nm_frame({"type": "debug_fail", "id": "f", "code": "stale_id", "message": "gone"}),
            "stale_id",
            "f",
            id="request-error",
        ),
    ],
)
async def test_bad_input_gets_an_error_and_the_host_keeps_serving(
    host: HostProcess, bad_input: bytes, code: str, error_id: Any
) -> None:
    """Each bad input gets an error reply with its code, and the next request succeeds."""
    await host.send_raw(bad_input + nm_frame(PING_AFTER))
    error = await host.next_message()
    if error.get("id") == "after":  # replies may come in any order
        error, pong = await host.next_message(), error
    else:
        pong = await host.next_message()
    assert error["type"] == "error"
    assert error["error"]["code"] == code
    assert isinstance(error["error"]["message"], str)
    assert error["error"]["message"]
    assert error["id"] == error_id
    assert pong["result"]["pong"] is True
    assert await host.finish() == 0


async def test_oversized_frame_is_refused_early_and_skipped(host: HostProcess) -> None:
    """A frame over 64 MiB is refused when its header arrives, its body is skipped, pings work."""
    size = MAX_INCOMING_FRAME + 1
    await host.send_raw(struct.pack("@I", size))
    error = await host.next_message()
    assert error["error"]["code"] == "frame_too_large"
    assert error["id"] is None
    assert str(size) in error["error"]["message"]
    await host.send_raw(b"{" * size)
    reply = await host.request(PING_AFTER)
    assert reply["result"]["pong"] is True
    assert await host.finish() == 0


async def test_garbage_length_prefix(host: HostProcess) -> None:
    """Four bytes of text read as a length are refused as frame_too_large, and EOF exits 0."""
    await host.send_raw(b"ping")
    error = await host.next_message()
    assert error["error"]["code"] == "frame_too_large"
    assert await host.finish() == 0


@pytest.mark.parametrize(
    ("tail", "fragment"),
    [
        pytest.param(struct.pack("@I", 100) + b'{"type":', "truncated frame", id="body"),
        pytest.param(b"\x07\x00", "truncated length prefix", id="header"),
    ],
)
async def test_truncated_input_at_eof(host: HostProcess, tail: bytes, fragment: str) -> None:
    """Input cut off by EOF gets a bad_frame reply, after the whole requests before it."""
    await host.send_raw(nm_frame({"type": "ping", "id": 1}) + tail)
    await host.close_stdin()
    replies = [await host.next_message(), await host.next_message()]
    by_type = {r["type"]: r for r in replies}
    assert by_type["result"]["result"]["pong"] is True
    assert by_type["error"]["error"]["code"] == "bad_frame"
    assert fragment in by_type["error"]["error"]["message"]
    assert await host.finish() == 0


async def test_handler_crash_is_internal_and_logged(host: HostProcess) -> None:
    """A handler that raises yields an internal error, its traceback is logged, serving goes on."""
    reply = await host.request({"type": "debug_raise", "id": 3, "message": "kaboom-42"})
    assert reply["error"]["code"] == "internal"
    assert "kaboom-42" in reply["error"]["message"]
    pong = await host.request(PING_AFTER)
    assert pong["result"]["pong"] is True
    assert await host.finish() == 0
    log = host.log_text()
    assert "Traceback" in log
    assert "RuntimeError: kaboom-42" in log


# --------------------------------------------------------------------------- stdout, EOF, log


async def test_stray_output_never_reaches_the_channel(host: HostProcess) -> None:
    """print() and raw writes to fd 1 inside the host land on stderr; stdout holds only frames."""
    reply = await host.request({"type": "debug_print", "id": 1, "text": "STRAY-TEXT"})
    assert reply["result"] == {"printed": True}
    pong = await host.request(PING_AFTER)
    assert pong["result"]["pong"] is True
    assert await host.finish() == 0  # checks every stdout byte was part of a frame
    assert host.stderr.count(b"STRAY-TEXT") == 2


async def test_eof_lets_in_flight_requests_finish(nursery: trio.Nursery, tmp_path: Path) -> None:
    """A request still running when stdin closes is answered before the host exits 0."""
    host = await nursery.start(run_host_process, tmp_path, {"TRIMTAB_HOST_EOF_GRACE": "50"})
    await host.send({"type": "debug_sleep", "id": "s", "seconds": 0.2})
    await host.close_stdin()
    reply = await host.reply_to("s")
    assert reply["result"]["slept"] == 0.2
    assert await host.finish() == 0


async def test_eof_grace_is_bounded(nursery: trio.Nursery, tmp_path: Path) -> None:
    """A request that never finishes is cancelled after the EOF grace and the host exits 0."""
    host = await nursery.start(run_host_process, tmp_path, {"TRIMTAB_HOST_EOF_GRACE": "0.1"})
    await host.send({"type": "debug_wait", "id": "w", "key": "never"})
    reply = await host.request(PING_AFTER)  # the wait is in flight by now
    assert reply["result"]["pong"] is True
    assert await host.finish() == 0
    assert "cancelled requests still running" in host.log_text()


async def test_log_goes_to_the_log_dir(host: HostProcess) -> None:
    """The host logs its start, with the caller's origin, to TRIMTAB_LOG_DIR/host.log."""
    await host.request({"type": "nope", "id": 1})
    assert await host.finish() == 0
    log = host.log_text()
    assert "starting" in log
    assert ORIGIN in log
    assert "unknown request type 'nope'" in log
    assert b"starting" not in host.stderr


async def test_regular_files_as_stdio(tmp_path: Path) -> None:
    """With stdin and stdout redirected to files (no pipes to poll) the host still serves."""
    requests = tmp_path / "in.bin"
    replies = tmp_path / "out.bin"
    requests.write_bytes(
        nm_frame({"type": "ping", "id": 1}) + nm_frame({"type": "debug_echo", "id": 2, "x": "é"})
    )
    with trio.fail_after(TIMEOUT), requests.open("rb") as stdin, replies.open("wb") as stdout:
        process = await trio.run_process(
            [sys.executable, "-m", "trimtab.native", ORIGIN],
            stdin=stdin,
            stdout=stdout,
            capture_stderr=True,
            env=host_env(tmp_path),
            check=False,
        )
    assert process.returncode == 0, process.stderr
    messages = StrictFrameReader().feed(replies.read_bytes())
    by_id = {m["id"]: m for m in messages}
    assert by_id[1]["result"]["pong"] is True
    assert by_id[2]["result"] == {"echo": {"x": "é"}}


# --------------------------------------------------------------------------- log location


def test_log_dir_override() -> None:
    """TRIMTAB_LOG_DIR wins over every platform default."""
    env = {"TRIMTAB_LOG_DIR": "/x/logs", "XDG_STATE_HOME": "/state"}
    assert default_log_dir(env, "linux") == Path("/x/logs")


def test_log_dir_xdg() -> None:
    """On Linux the log goes under $XDG_STATE_HOME/trimtab, or ~/.local/state/trimtab."""
    assert default_log_dir({"XDG_STATE_HOME": "/state"}, "linux") == Path("/state/trimtab")
    home_default = Path.home() / ".local" / "state" / "trimtab"
    assert default_log_dir({}, "linux") == home_default
    # The XDG spec says a relative path is invalid and must be ignored.
    assert default_log_dir({"XDG_STATE_HOME": "rel"}, "linux") == home_default


def test_log_dir_macos_and_windows() -> None:
    """macOS uses ~/Library/Logs/trimtab; Windows uses %LOCALAPPDATA%/trimtab/Logs."""
    assert default_log_dir({}, "darwin") == Path.home() / "Library" / "Logs" / "trimtab"
    assert default_log_dir({"LOCALAPPDATA": "/appdata"}, "win32") == Path("/appdata/trimtab/Logs")


# --------------------------------------------------------------------------- in-process


@attrs.define
class InProcessHost:
    """A HostServer on memory streams, with a client side that speaks frames."""

    to_host: trio.testing.MemorySendStream
    from_host: trio.testing.MemoryReceiveStream
    reader: StrictFrameReader = attrs.field(factory=StrictFrameReader)
    pending: list[JSONObject] = attrs.field(factory=list)

    async def send(self, message: Any) -> None:
        await self.to_host.send_all(nm_frame(message))

    async def receive(self) -> JSONObject:
        while not self.pending:
            data = await self.from_host.receive_some()
            assert data, "host output closed"
            self.pending += self.reader.feed(data)
        return self.pending.pop(0)


async def serve_in_process(
    server_factory: Any, *, task_status: trio.TaskStatus[InProcessHost] = trio.TASK_STATUS_IGNORED
) -> None:
    """Run ``server_factory(outbox)``'s server until the client closes its side."""
    to_host, host_in = trio.testing.memory_stream_one_way_pair()
    host_out, from_host = trio.testing.memory_stream_one_way_pair()
    server: HostServer = server_factory(Outbox(host_out))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.serve, host_in)
        task_status.started(InProcessHost(to_host, from_host))


async def test_relay_messages_reach_the_hook_in_order(nursery: trio.Nursery) -> None:
    """cdp_* messages go to the relay hook in arrival order and get no reply."""
    seen: list[JSONObject] = []
    async_seen: list[JSONObject] = []

    def hook(message: JSONObject) -> None:
        if message.get("fail"):
            raise RuntimeError("relay bug")
        seen.append(message)

    relay = [
        {"type": "cdp_result", "id": "c1", "result": {}},
        {"type": "cdp_event", "tab": 1, "method": "Page.loadEventFired", "params": {}},
        {"type": "cdp_event", "tab": 1, "fail": True},
        {"type": "cdp_detached", "tab": 1, "reason": "target_closed"},
    ]
    client = await nursery.start(
        serve_in_process, lambda outbox: HostServer(outbox, on_relay_message=hook)
    )
    for message in relay:
        await client.send(message)
    await client.send(PING_AFTER)
    reply = await client.receive()
    assert reply["id"] == "after"  # nothing was sent back for the relay messages
    assert seen == [relay[0], relay[1], relay[3]]  # a failing hook call is skipped

    async def async_hook(message: JSONObject) -> None:
        await trio.lowlevel.checkpoint()
        async_seen.append(message)

    client = await nursery.start(
        serve_in_process, lambda outbox: HostServer(outbox, on_relay_message=async_hook)
    )
    await client.send(relay[1])
    await client.send(PING_AFTER)
    assert (await client.receive())["id"] == "after"
    assert async_seen == [relay[1]]


async def test_request_error_inside_a_nursery_keeps_its_code(nursery: trio.Nursery) -> None:
    """A RequestError wrapped in an exception group by a handler's nursery keeps its code."""

    async def grouped(request: Request) -> JSONObject:
        async with trio.open_nursery() as inner:
            inner.start_soon(trio.sleep, 0)
            raise RequestError("target_closed", "tab 9 is gone")

    async def not_json(request: Request) -> JSONObject:
        return {"value": object()}

    async def not_mapping(request: Request) -> JSONObject:
        return cast(JSONObject, [1, 2])

    handlers: dict[str, Handler] = {"grouped": grouped, "object": not_json, "list": not_mapping}
    client = await nursery.start(
        serve_in_process, lambda outbox: HostServer(outbox, handlers=handlers)
    )
    await client.send({"type": "grouped", "id": 1})
    reply = await client.receive()
    assert reply["error"] == {"code": "target_closed", "message": "tab 9 is gone"}
    for kind in ("object", "list"):
        await client.send({"type": kind, "id": kind})
        reply = await client.receive()
        assert (reply["id"], reply["error"]["code"]) == (kind, "internal")


async def test_request_error_facts_go_in_the_error_reply(nursery: trio.Nursery) -> None:
    """A RequestError's facts (a call's tab and number) are fields of the reply's
    ``error`` beside its code and message, which they may not replace."""

    async def refused(request: Request) -> JSONObject:
        raise RequestError("forbidden", "tab 7 is not shared", facts={"tab": 7, "call_id": 3})

    client = await nursery.start(
        serve_in_process, lambda outbox: HostServer(outbox, handlers={"tool": refused})
    )
    await client.send({"type": "tool", "id": 1})
    reply = await client.receive()
    assert reply["error"] == {
        "code": "forbidden",
        "message": "tab 7 is not shared",
        "tab": 7,
        "call_id": 3,
    }
    with pytest.raises(ValueError, match=r"error facts \['code'\] may not replace"):
        RequestError("forbidden", "no", facts={"code": "internal"})


async def test_serve_stops_when_the_output_breaks() -> None:
    """If the reader of the host's output goes away, serve returns instead of hanging."""
    to_host, host_in = trio.testing.memory_stream_one_way_pair()
    host_out, from_host = trio.testing.memory_stream_one_way_pair()
    server = HostServer(Outbox(host_out))
    await from_host.aclose()
    await to_host.send_all(nm_frame({"type": "ping", "id": 1}))
    await server.serve(host_in)  # returns although its input never ended
    stats = server.statistics()
    assert stats.outbox.closed
    assert stats.requests_received == 1
    assert stats.results_sent == 0


async def test_serve_ends_when_its_input_breaks() -> None:
    """An input that breaks (a reset connection) ends serving like EOF, no exception."""
    host_out, _from_host = trio.testing.memory_stream_one_way_pair()

    class Broken(trio.abc.ReceiveStream):
        async def receive_some(self, max_bytes: int | None = None) -> bytes:
            raise trio.BrokenResourceError("connection reset by peer")

        async def aclose(self) -> None:
            pass

    server = HostServer(Outbox(host_out))
    await server.serve(Broken())
    assert server.statistics().requests_received == 0


async def test_statistics_count_what_happened(nursery: trio.Nursery) -> None:
    """The statistics snapshot counts requests, results, errors and relay messages."""
    servers: list[HostServer] = []

    def factory(outbox: Outbox) -> HostServer:
        servers.append(HostServer(outbox))
        return servers[-1]

    client = await nursery.start(serve_in_process, factory)
    await client.send({"type": "ping", "id": 1})
    await client.send({"type": "nope", "id": 2})
    await client.send({"type": "cdp_event", "tab": 1})
    await client.to_host.send_all(raw_frame(b"[]"))
    replies = [await client.receive() for _ in range(3)]
    assert sorted(r["type"] for r in replies) == ["error", "error", "result"]
    stats = servers[0].statistics()
    assert (stats.requests_received, stats.results_sent, stats.errors_sent) == (2, 1, 2)
    assert (stats.relay_messages, stats.internal_errors, stats.requests_in_flight) == (1, 0, 0)
    assert stats.decoder.frame_errors == 1
    assert stats.outbox.frames_sent == 3


def test_protocol_types_cannot_be_handlers() -> None:
    """Registering a handler for a relay or reply message type is refused by name."""

    async def handler(request: Request) -> JSONObject:
        return {}

    outbox = Outbox(trio.testing.MemorySendStream())
    for kind in ("cdp_result", "chunk"):
        with pytest.raises(ValueError, match=kind):
            HostServer(outbox, handlers={kind: handler})


def test_request_error_needs_a_known_code() -> None:
    """RequestError refuses a code that is not in the protocol's list."""
    with pytest.raises(ValueError, match="no_such_code"):
        RequestError("no_such_code", "x")  # type: ignore[arg-type]


async def test_run_host_plugs_in_a_setup(nursery: trio.Nursery) -> None:
    """run_host serves the handlers and relay hook a setup factory yields, with its context."""
    contexts: list[HostContext] = []
    relayed: list[JSONObject] = []

    async def hello(request: Request) -> JSONObject:
        return {"hello": request.get("name", str)}

    @asynccontextmanager
    async def setup(context: HostContext) -> AsyncIterator[HostSetup]:
        contexts.append(context)
        yield HostSetup(handlers={"hello": hello}, on_relay_message=relayed.append)

    to_host, host_in = trio.testing.memory_stream_one_way_pair()
    host_out, from_host = trio.testing.memory_stream_one_way_pair()
    reader = StrictFrameReader()
    await to_host.send_all(
        encode_frame({"type": "cdp_event", "tab": 3})
        + nm_frame({"type": "hello", "id": 1, "name": "tab"})
    )
    await to_host.aclose()
    stats = await run_host(host_in, host_out, origin=ORIGIN, setup=setup)
    replies = reader.feed(await from_host.receive_some())
    assert replies == [{"type": "result", "id": 1, "result": {"hello": "tab"}}]
    assert relayed == [{"type": "cdp_event", "tab": 3}]
    assert contexts[0].origin == ORIGIN
    assert contexts[0].debug is False
    assert stats.results_sent == 1


async def test_requests_start_in_arrival_order(nursery: trio.Nursery) -> None:
    """Requests read together start in the order they came: what a handler does before
    its first await (a new list of shared tabs or sites replacing the old) happens in
    arrival order, so an older list never lands after a newer one."""
    applied: list[int] = []

    async def replace(request: Request) -> JSONObject:
        applied.append(request.get("n", int))  # the state changes before any await
        await trio.lowlevel.checkpoint()
        return {}

    client = await nursery.start(
        serve_in_process, lambda outbox: HostServer(outbox, handlers={"replace": replace})
    )
    # Trio runs a batch of newly started tasks reversed half of the time: twelve
    # batches of eight would all come out in order by chance once in 4,096 runs.
    for batch in range(12):
        numbers = range(batch * 8, batch * 8 + 8)
        await client.to_host.send_all(
            b"".join(nm_frame({"type": "replace", "id": n, "n": n}) for n in numbers)
        )
        for _ in numbers:
            await client.receive()
    assert applied == list(range(96))


async def test_a_cancel_sent_with_its_request_always_finds_it(nursery: trio.Nursery) -> None:
    """A client that sends a call and its cancel in one write (it gave up at once) has
    the call cancelled every time, never left running because the cancel ran first."""

    async def forever(request: Request) -> JSONObject:
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    client = await nursery.start(
        serve_in_process, lambda outbox: HostServer(outbox, handlers={"forever": forever})
    )
    for n in range(12):
        await client.to_host.send_all(
            nm_frame({"type": "forever", "id": f"call{n}"})
            + nm_frame({"type": "cancel", "id": f"cancel{n}", "request": f"call{n}"})
        )
        with trio.fail_after(10):
            replies = {reply["id"]: reply for reply in [await client.receive() for _ in "ab"]}
        assert replies[f"cancel{n}"]["result"] == {"cancelled": True}
        assert replies[f"call{n}"]["error"]["code"] == "cancelled"
