"""Chrome native-messaging framing, sans-I/O.

Every message is a 4-byte length in native byte order followed by that many bytes of
UTF-8 JSON (``host/PROTOCOL.md``). This module only turns bytes into messages and
messages into bytes; the trio server in ``_server.py`` owns the streams. Keeping it
free of I/O lets the tests drive every edge (one byte at a time, truncated input,
oversized frames) deterministically.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any, Final, Literal, TypeAlias

import attrs

from ._gc import gc_paused
from ._json import loads_json

__all__ = [
    "DEFAULT_CHUNK_THRESHOLD",
    "HEADER_SIZE",
    "MAX_INCOMING_FRAME",
    "MAX_OUTGOING_FRAME",
    "ChunkAssembler",
    "ChunkAssemblerStatistics",
    "ChunkError",
    "DecodedMessage",
    "DecoderEvent",
    "ErrorCode",
    "FrameDecoder",
    "FrameDecoderStatistics",
    "FrameError",
    "JSONObject",
    "RequestId",
    "encode_frame",
    "encode_json",
    "encode_reply_frames",
    "request_id_of",
]

JSONObject: TypeAlias = dict[str, Any]
RequestId: TypeAlias = str | int | None

ErrorCode: TypeAlias = Literal[
    "bad_frame",
    "bad_message",
    "frame_too_large",
    "unknown_type",
    "bad_request",
    "target_closed",
    "page_crashed",
    "dialog_open",
    "page_unresponsive",
    "cdp_error",
    "page_changed",
    "stale_id",
    "forbidden",
    "cancelled",
    "busy",
    "internal",
]

HEADER_SIZE: Final = 4
# Chrome itself accepts up to 64 MiB towards the host; we refuse far earlier because a
# request that large is a bug in the extension, and buffering it would only cost memory.
MAX_INCOMING_FRAME: Final = 64 * 1024 * 1024
# Chrome closes the port when the host sends a message over 1 MiB (the JSON, without
# the 4-byte header).
MAX_OUTGOING_FRAME: Final = 1024 * 1024
DEFAULT_CHUNK_THRESHOLD: Final = 1_000_000
# Frames from this size on are decoded with the garbage collector paused (see
# `_gc.gc_paused`): the relay's CDP results of a large page.
LARGE_FRAME: Final = 1 << 16

# Ids are echoed in every reply and in every chunk of it, so an unbounded id could
# push a chunk over Chrome's limit; real ids are short counters like "r7".
MAX_ID_LENGTH: Final = 256
_MAX_INT_ID: Final = 2**53  # beyond this a JavaScript number no longer round-trips

_BYTE_ORDER: Final = sys.byteorder


# --------------------------------------------------------------------------- decoding


@attrs.frozen
class DecodedMessage:
    """One well-formed message: a JSON object with a string ``type``."""

    message: JSONObject
    size: int  # bytes of JSON, header excluded


@attrs.frozen
class FrameError:
    """Input the decoder could not turn into a message; the server replies with ``code``.

    ``request_id`` is the sender's id when the frame was an object carrying a usable
    one (so the sender can match the error to its request), else None.
    """

    code: ErrorCode
    message: str
    request_id: RequestId = None


DecoderEvent: TypeAlias = DecodedMessage | FrameError


@attrs.frozen
class FrameDecoderStatistics:
    bytes_received: int
    messages_decoded: int
    frame_errors: int
    oversized_frames: int
    bytes_skipped: int
    buffered_bytes: int
    skipping_bytes: int


def request_id_of(message: Mapping[str, Any]) -> tuple[bool, RequestId]:
    """Return ``(valid, id)`` for a message's ``id`` field; absent counts as a valid None."""
    value = message.get("id")
    if value is None:
        return True, None
    if isinstance(value, bool):  # bool is an int subclass; true is not an id
        return False, None
    if isinstance(value, int):
        return (abs(value) < _MAX_INT_ID, value if abs(value) < _MAX_INT_ID else None)
    if isinstance(value, str) and len(value) <= MAX_ID_LENGTH:
        return True, value
    return False, None


def _reject_constant(name: str) -> Any:
    # Python's json accepts NaN/Infinity; Chrome never sends them and they are not JSON.
    raise ValueError(f"{name} is not valid JSON")


@attrs.define
class FrameDecoder:
    """Incremental decoder: ``feed`` bytes as they arrive, get messages and errors back.

    Error handling keeps the stream in sync: invalid UTF-8/JSON and wrong shapes cost
    exactly one frame, and a frame declared larger than ``max_frame`` is reported as
    soon as its header arrives, then its body is skipped without being buffered.
    """

    max_frame: int = MAX_INCOMING_FRAME
    _buffer: bytearray = attrs.field(factory=bytearray, init=False)
    _expected: int | None = attrs.field(default=None, init=False)  # body length, header read
    _skip: int = attrs.field(default=0, init=False)
    _bytes_received: int = attrs.field(default=0, init=False)
    _messages: int = attrs.field(default=0, init=False)
    _errors: int = attrs.field(default=0, init=False)
    _oversized: int = attrs.field(default=0, init=False)
    _bytes_skipped: int = attrs.field(default=0, init=False)
    _eof: bool = attrs.field(default=False, init=False)

    def feed(self, data: bytes | bytearray | memoryview) -> list[DecoderEvent]:
        """Consume ``data`` and return the events it completed, in stream order."""
        if self._eof:
            raise RuntimeError("FrameDecoder.feed() called after feed_eof()")
        self._bytes_received += len(data)
        view = memoryview(data)
        if self._skip:
            skipped = min(self._skip, len(view))
            self._skip -= skipped
            self._bytes_skipped += skipped
            view = view[skipped:]
        self._buffer += view
        events: list[DecoderEvent] = []
        while True:
            if self._skip:
                # The buffer can only be non-empty here if we just entered skip mode.
                skipped = min(self._skip, len(self._buffer))
                del self._buffer[:skipped]
                self._skip -= skipped
                self._bytes_skipped += skipped
                if self._skip:
                    break
            if self._expected is None:
                if len(self._buffer) < HEADER_SIZE:
                    break
                length = int.from_bytes(self._buffer[:HEADER_SIZE], _BYTE_ORDER)
                del self._buffer[:HEADER_SIZE]
                if length > self.max_frame:
                    self._oversized += 1
                    self._skip = length
                    events.append(
                        self._error(
                            "frame_too_large",
                            f"frame of {length} bytes exceeds the limit of "
                            f"{self.max_frame} bytes; its bytes are discarded",
                        )
                    )
                    continue
                self._expected = length
            if len(self._buffer) < self._expected:
                break
            body = bytes(self._buffer[: self._expected])
            del self._buffer[: self._expected]
            self._expected = None
            events.append(self._decode_body(body))
        return events

    def feed_eof(self) -> list[DecoderEvent]:
        """Signal the end of the stream; a partial frame left over becomes ``bad_frame``."""
        self._eof = True
        if self._skip:
            # Already reported as frame_too_large when its header arrived.
            self._skip = 0
            return []
        if self._expected is not None:
            have, want = len(self._buffer), self._expected
            self._buffer.clear()
            self._expected = None
            return [
                self._error(
                    "bad_frame",
                    f"truncated frame: stream ended after {have} of {want} bytes",
                )
            ]
        if self._buffer:
            have = len(self._buffer)
            self._buffer.clear()
            return [
                self._error(
                    "bad_frame",
                    f"truncated length prefix: stream ended after {have} of {HEADER_SIZE} bytes",
                )
            ]
        return []

    def statistics(self) -> FrameDecoderStatistics:
        return FrameDecoderStatistics(
            bytes_received=self._bytes_received,
            messages_decoded=self._messages,
            frame_errors=self._errors,
            oversized_frames=self._oversized,
            bytes_skipped=self._bytes_skipped,
            buffered_bytes=len(self._buffer),
            skipping_bytes=self._skip,
        )

    def _error(self, code: ErrorCode, message: str, request_id: RequestId = None) -> FrameError:
        self._errors += 1
        return FrameError(code, message, request_id)

    def _decode_body(self, body: bytes) -> DecoderEvent:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            return self._error(
                "bad_frame", f"frame is not valid UTF-8: {exc.reason} at byte {exc.start}"
            )
        # Parsed as the direct pipe parses CDP (`loads_json`: orjson, or `json` for what
        # orjson refuses, which then rejects NaN and the infinities as before): a
        # relayed DOMSnapshot is megabytes, and the relay must not parse it slower.
        try:
            if len(body) < LARGE_FRAME:
                value = loads_json(text, parse_constant=_reject_constant)
            else:
                # A CDP result of the relay: as over the direct pipe, no collections
                # while its objects are made (they make no cycles).
                with gc_paused():
                    value = loads_json(text, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as exc:
            # RecursionError: deeply nested arrays exhaust the parser's stack.
            return self._error("bad_frame", f"frame is not valid JSON: {_short(exc)}")
        if not isinstance(value, dict):
            return self._error(
                "bad_message",
                f"message must be a JSON object with a 'type', got {type(value).__name__}",
            )
        valid_id, request_id = request_id_of(value)
        kind = value.get("type")
        if not isinstance(kind, str) or not kind:
            return self._error(
                "bad_message",
                f"message has no 'type' string (type={_short_repr(kind)})",
                request_id if valid_id else None,
            )
        self._messages += 1
        return DecodedMessage(value, len(body))


def _short(exc: BaseException, limit: int = 200) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= limit else text[:limit] + "…"


def _short_repr(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


# --------------------------------------------------------------------------- encoding


def encode_json(message: Mapping[str, Any]) -> str:
    """Serialize ``message`` compactly as the host sends it.

    Non-ASCII text is written as UTF-8 rather than ``\\uXXXX`` escapes (a third of the
    bytes for most scripts). A string holding a lone surrogate cannot be UTF-8
    encoded; for such a message we fall back to ASCII escapes, which JavaScript's
    ``JSON.parse`` turns back into the same string. NaN and infinities raise
    ValueError: they are not JSON.
    """
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(message, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text


def _frame(payload: bytes) -> bytes:
    return len(payload).to_bytes(HEADER_SIZE, _BYTE_ORDER) + payload


def encode_frame(message: Mapping[str, Any]) -> bytes:
    """Encode one message as a frame; raise ValueError if it exceeds Chrome's limit."""
    payload = encode_json(message).encode("utf-8")
    if len(payload) > MAX_OUTGOING_FRAME:
        raise ValueError(
            f"message of type {message.get('type')!r} is {len(payload)} bytes, over "
            f"Chrome's {MAX_OUTGOING_FRAME}-byte limit; send it with encode_reply_frames"
        )
    return _frame(payload)


def _split_escaped(escaped: bytes, budget: int) -> list[bytes]:
    """Cut a JSON string body into pieces of at most ``budget`` bytes at token boundaries.

    ``escaped`` is the reply's JSON text escaped once more as a JSON string body. That
    text never holds a raw control character (JSON escapes them), so its escaping
    only produces the two-byte pairs ``\\\\`` and ``\\"``. A cut is therefore safe
    when it is not inside a UTF-8 sequence and not after an odd run of backslashes
    (a run starts at a token boundary, so its pairs are aligned from its start).
    """
    pieces = []
    start = 0
    while start < len(escaped):
        end = min(start + budget, len(escaped))
        if end < len(escaped):
            while escaped[end] & 0xC0 == 0x80:  # a UTF-8 continuation byte
                end -= 1
            head = escaped[start:end]
            if (len(head) - len(head.rstrip(b"\\"))) % 2:
                end -= 1
        pieces.append(escaped[start:end])
        start = end
    return pieces


def encode_reply_frames(
    reply: Mapping[str, Any], chunk_threshold: int = DEFAULT_CHUNK_THRESHOLD
) -> list[bytes]:
    """Encode a reply as one frame, or as ``chunk`` frames if its JSON is too long.

    A reply whose UTF-8 JSON exceeds ``chunk_threshold`` bytes is cut into pieces of
    its JSON text, each carried as the ``data`` string of a ``chunk`` message. The cut
    is sized on the *escaped* piece, so every chunk's JSON (envelope included) is at
    most ``chunk_threshold`` bytes however much escaping grows the text: with the
    default threshold every frame stays under Chrome's 1,048,576-byte limit. Each
    chunk's JSON is byte-for-byte what ``encode_json`` would produce for it.
    """
    if not 0 < chunk_threshold <= MAX_OUTGOING_FRAME:
        raise ValueError(
            f"chunk_threshold={chunk_threshold} must be in 1..{MAX_OUTGOING_FRAME} "
            "(Chrome's per-message limit)"
        )
    text = encode_json(reply)
    payload = text.encode("utf-8")
    if len(payload) <= chunk_threshold:
        return [_frame(payload)]

    reply_id = reply.get("id")
    # The envelope with the widest index/count a split of this text can need;
    # count <= len(text) because every piece holds at least one character.
    widest = len(text)
    envelope = len(
        encode_json(
            {"type": "chunk", "id": reply_id, "index": widest, "count": widest, "data": ""}
        ).encode("utf-8")
    )
    budget = chunk_threshold - envelope
    if budget < 8:  # room for a 4-byte character after backing off a split escape
        raise ValueError(
            f"chunk_threshold={chunk_threshold} leaves no room for data next to a "
            f"{envelope}-byte chunk envelope (id {_short_repr(reply_id)})"
        )

    # Escaping the text a second time, as the chunks' `data` strings will carry it, in
    # one pass: the cuts are then made on exactly the bytes that go on the wire.
    escaped = json.dumps(text, ensure_ascii=False)[1:-1].encode("utf-8")
    pieces = _split_escaped(escaped, budget)
    count = len(pieces)
    frames = []
    for index, piece in enumerate(pieces):
        shell = encode_json(
            {"type": "chunk", "id": reply_id, "index": index, "count": count, "data": ""}
        ).encode("utf-8")
        # The shell ends with `"data":""}`: the piece goes between those two quotes.
        chunk_payload = shell[:-2] + piece + shell[-2:]
        if len(chunk_payload) > chunk_threshold:  # pragma: no cover - guarded by the budget
            raise AssertionError(f"chunk {index} is {len(chunk_payload)} bytes")
        frames.append(_frame(chunk_payload))
    return frames


# --------------------------------------------------------------------------- reassembly


class ChunkError(ValueError):
    """A ``chunk`` message that does not fit the reply it claims to belong to."""


@attrs.frozen
class ChunkAssemblerStatistics:
    messages_completed: int
    chunks_received: int
    replies_pending: int


@attrs.define
class _Partial:
    count: int
    pieces: dict[int, str] = attrs.field(factory=dict)


@attrs.define
class ChunkAssembler:
    """Reassemble chunked replies, the receiving side of ``encode_reply_frames``.

    Feed every message the host sends; non-chunk messages come straight back, a chunk
    returns None until the last piece of its reply arrives, which returns the whole
    reply. Chunks are keyed by reply ``id`` (request ids are unique per sender), so
    chunks of different replies may interleave. ``extension/`` implements the same
    algorithm in JavaScript.
    """

    _partials: dict[RequestId, _Partial] = attrs.field(factory=dict, init=False)
    _completed: int = attrs.field(default=0, init=False)
    _chunks: int = attrs.field(default=0, init=False)

    def feed(self, message: JSONObject) -> JSONObject | None:
        if message.get("type") != "chunk":
            return message
        self._chunks += 1
        reply_id = message.get("id")
        index, count, data = message.get("index"), message.get("count"), message.get("data")
        if not (isinstance(count, int) and not isinstance(count, bool) and count >= 1) or not (
            isinstance(index, int) and not isinstance(index, bool) and 0 <= index < count
        ):
            raise ChunkError(f"chunk of reply {reply_id!r} has bad index/count {index!r}/{count!r}")
        if not isinstance(data, str):
            raise ChunkError(f"chunk {index} of reply {reply_id!r} has non-string data")
        if not isinstance(reply_id, str | int | None):
            raise ChunkError(f"chunk has an id of type {type(reply_id).__name__}")
        partial = self._partials.setdefault(reply_id, _Partial(count))
        if partial.count != count:
            raise ChunkError(
                f"chunk {index} of reply {reply_id!r} says count={count}, "
                f"earlier chunks said {partial.count}"
            )
        if index in partial.pieces:
            raise ChunkError(f"chunk {index} of reply {reply_id!r} arrived twice")
        partial.pieces[index] = data
        if len(partial.pieces) < count:
            return None
        del self._partials[reply_id]
        text = "".join(partial.pieces[i] for i in range(count))
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise ChunkError(f"reassembled reply {reply_id!r} is not JSON: {exc}") from exc
        if not isinstance(value, dict):
            raise ChunkError(f"reassembled reply {reply_id!r} is not a JSON object")
        self._completed += 1
        return value

    def statistics(self) -> ChunkAssemblerStatistics:
        return ChunkAssemblerStatistics(
            messages_completed=self._completed,
            chunks_received=self._chunks,
            replies_pending=len(self._partials),
        )
