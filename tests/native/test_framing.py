"""Sans-I/O tests of the native-messaging framing (``trimtab.native._framing``)."""

from __future__ import annotations

import gc
import json
import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trimtab.wire._framing import (
    DEFAULT_CHUNK_THRESHOLD,
    LARGE_FRAME,
    MAX_INCOMING_FRAME,
    MAX_OUTGOING_FRAME,
    ChunkAssembler,
    ChunkError,
    DecodedMessage,
    DecoderEvent,
    FrameDecoder,
    FrameError,
    JSONObject,
    encode_frame,
    encode_json,
    encode_reply_frames,
    request_id_of,
)


def raw_frame(body: bytes) -> bytes:
    """A frame built with struct, independently of the code under test."""
    return struct.pack("@I", len(body)) + body


def payloads(frames: list[bytes]) -> list[bytes]:
    """The JSON bytes of each frame, checking each header against its length."""
    out = []
    for frame in frames:
        (length,) = struct.unpack("@I", frame[:4])
        assert length == len(frame) - 4
        out.append(frame[4:])
    return out


def messages(events: list[DecoderEvent]) -> list[JSONObject]:
    assert all(isinstance(e, DecodedMessage) for e in events), events
    return [e.message for e in events if isinstance(e, DecodedMessage)]


def only_error(events: list[DecoderEvent]) -> FrameError:
    assert len(events) == 1, events
    event = events[0]
    assert isinstance(event, FrameError), event
    return event


SAMPLES: list[JSONObject] = [
    {"type": "ping", "id": 1},
    {"type": "snapshot", "id": "r7", "tab": 42, "session": None},
    {"type": "tool", "id": "x", "args": {"text": 'naïve “quotes” \\ " \n 😀 \u2028'}},
]


# --------------------------------------------------------------------------- decoding


def test_encode_frame_uses_native_byte_order_and_compact_utf8() -> None:
    """encode_frame writes a native-endian length and compact UTF-8 JSON, as Chrome expects."""
    message = {"type": "result", "id": 3, "result": {"text": "é😀"}}
    frame = encode_frame(message)
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    assert frame == raw_frame(body)


def test_round_trip_in_one_feed() -> None:
    """Several frames fed at once decode to the same messages, in order."""
    decoder = FrameDecoder()
    events = decoder.feed(b"".join(encode_frame(m) for m in SAMPLES))
    assert messages(events) == SAMPLES
    assert decoder.statistics().messages_decoded == len(SAMPLES)
    assert decoder.statistics().buffered_bytes == 0


def test_round_trip_one_byte_at_a_time() -> None:
    """Frames split into single bytes decode exactly once each, when their last byte arrives."""
    decoder = FrameDecoder()
    stream = b"".join(raw_frame(json.dumps(m).encode()) for m in SAMPLES)
    events: list[DecoderEvent] = []
    for i in range(len(stream)):
        events += decoder.feed(stream[i : i + 1])
    assert messages(events) == SAMPLES
    assert decoder.feed_eof() == []


def test_a_large_frame_decodes_alike_and_leaves_the_collector_on() -> None:
    """A frame past LARGE_FRAME (a relayed CDP result of a big page), decoded with the
    collector paused, gives the same message, and the collector runs again after."""
    message = {"type": "cdp_result", "id": "c1", "result": {"nodes": list(range(20_000))}}
    body = json.dumps(message).encode()
    assert len(body) > LARGE_FRAME
    assert gc.isenabled()
    (event,) = FrameDecoder().feed(raw_frame(body))
    assert isinstance(event, DecodedMessage)
    assert event.message == message
    assert gc.isenabled()


def test_decoded_message_reports_body_size() -> None:
    """A decoded message carries the byte length of its JSON body."""
    body = json.dumps({"type": "ping"}).encode()
    (event,) = FrameDecoder().feed(raw_frame(body))
    assert isinstance(event, DecodedMessage)
    assert event.size == len(body)


@pytest.mark.parametrize(
    ("body", "code", "fragment"),
    [
        (b'{"type":"ping","x":"\xff"}', "bad_frame", "UTF-8"),
        (b"\xed\xa0\x80", "bad_frame", "UTF-8"),  # an encoded surrogate is not UTF-8
        (b'{"type": ping}', "bad_frame", "JSON"),
        (b"", "bad_frame", "JSON"),
        (b'{"type":"ping","n":NaN}', "bad_frame", "NaN"),
        (b"[" * 100_000, "bad_frame", "JSON"),
        (b"[1,2]", "bad_message", "list"),
        (b'"ping"', "bad_message", "str"),
        (b"null", "bad_message", "NoneType"),
        (b'{"tab":1}', "bad_message", "type"),
        (b'{"type":7}', "bad_message", "type"),
        (b'{"type":""}', "bad_message", "type"),
    ],
)
def test_bad_frames_cost_one_frame(body: bytes, code: str, fragment: str) -> None:
    """Each kind of bad frame yields its error code and the next frame still decodes."""
    decoder = FrameDecoder()
    events = decoder.feed(raw_frame(body) + raw_frame(b'{"type":"ping","id":2}'))
    assert len(events) == 2
    error, after = events
    assert isinstance(error, FrameError)
    assert error.code == code
    assert fragment in error.message
    assert error.request_id is None
    assert isinstance(after, DecodedMessage)
    assert after.message == {"type": "ping", "id": 2}
    assert decoder.statistics().frame_errors == 1


def test_bad_message_echoes_a_usable_id() -> None:
    """An object without a type still gets its own id back, so the sender can match it."""
    error = only_error(FrameDecoder().feed(raw_frame(b'{"id":"r9","tab":1}')))
    assert (error.code, error.request_id) == ("bad_message", "r9")


def test_frame_too_large_is_reported_at_the_header_and_skipped_exactly() -> None:
    """A frame over the limit is reported as soon as its header arrives; its body is skipped."""
    decoder = FrameDecoder(max_frame=16)
    oversized = 17
    error = only_error(decoder.feed(struct.pack("@I", oversized)))
    assert error.code == "frame_too_large"
    assert str(oversized) in error.message
    assert "16" in error.message
    # The body, which would be invalid JSON if decoded, arrives split across feeds
    # and glued to the next good frame.
    body = b"]" * oversized
    assert decoder.feed(body[:5]) == []
    assert decoder.statistics().skipping_bytes == oversized - 5
    good = raw_frame(b'{"type":"ping"}')
    assert messages(decoder.feed(body[5:] + good)) == [{"type": "ping"}]
    stats = decoder.statistics()
    assert (stats.bytes_skipped, stats.oversized_frames, stats.buffered_bytes) == (oversized, 1, 0)


def test_frame_at_the_limit_is_accepted() -> None:
    """A frame of exactly max_frame bytes is decoded, not refused."""
    body = b'{"type":"p","x":"' + b"a" * 10 + b'"}'
    decoder = FrameDecoder(max_frame=len(body))
    assert messages(decoder.feed(raw_frame(body))) == [{"type": "p", "x": "a" * 10}]


def test_default_incoming_limit_is_8_mib() -> None:
    """The default decoder refuses a declared length of 64 MiB + 1 and nothing below."""
    assert MAX_INCOMING_FRAME == 64 * 1024 * 1024
    decoder = FrameDecoder()
    error = only_error(decoder.feed(struct.pack("@I", MAX_INCOMING_FRAME + 1)))
    assert error.code == "frame_too_large"
    assert FrameDecoder().feed(struct.pack("@I", MAX_INCOMING_FRAME)) == []


def test_eof_inside_a_body_is_a_truncated_frame() -> None:
    """A stream that ends inside a frame body yields bad_frame naming the bytes missing."""
    decoder = FrameDecoder()
    assert decoder.feed(struct.pack("@I", 100) + b"x" * 10) == []
    error = only_error(decoder.feed_eof())
    assert error.code == "bad_frame"
    assert "10 of 100" in error.message


def test_eof_inside_a_header_is_a_truncated_prefix() -> None:
    """A stream that ends inside a length prefix yields bad_frame."""
    decoder = FrameDecoder()
    assert decoder.feed(b"\x01\x00") == []
    error = only_error(decoder.feed_eof())
    assert error.code == "bad_frame"
    assert "length prefix" in error.message


def test_eof_while_skipping_adds_no_second_error() -> None:
    """EOF in the middle of an oversized frame's body is not reported twice."""
    decoder = FrameDecoder(max_frame=4)
    assert only_error(decoder.feed(struct.pack("@I", 50) + b"x")).code == "frame_too_large"
    assert decoder.feed_eof() == []


def test_feed_after_eof_is_an_error() -> None:
    """Feeding a decoder after feed_eof raises instead of silently accepting data."""
    decoder = FrameDecoder()
    decoder.feed_eof()
    with pytest.raises(RuntimeError, match="after feed_eof"):
        decoder.feed(b"x")


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ({}, (True, None)),
        ({"id": None}, (True, None)),
        ({"id": 5}, (True, 5)),
        ({"id": -5}, (True, -5)),
        ({"id": "r7"}, (True, "r7")),
        ({"id": "x" * 256}, (True, "x" * 256)),
        ({"id": "x" * 257}, (False, None)),
        ({"id": True}, (False, None)),
        ({"id": 2**53}, (False, None)),
        ({"id": 1.5}, (False, None)),
        ({"id": [1]}, (False, None)),
    ],
)
def test_request_id_of(message: JSONObject, expected: tuple[bool, Any]) -> None:
    """Only strings up to 256 characters and JavaScript-safe integers are usable ids."""
    assert request_id_of(message) == expected


# --------------------------------------------------------------------------- encoding


def test_encode_json_falls_back_to_ascii_for_lone_surrogates() -> None:
    """A string with a lone surrogate is sent as valid UTF-8 using \\u escapes."""
    message = {"type": "result", "text": "a\ud800b"}
    text = encode_json(message)
    assert text.isascii()
    assert "\\ud800" in text
    assert json.loads(text) == message
    assert FrameDecoder().feed(encode_frame(message))[0] == DecodedMessage(message, len(text))


def test_encode_json_keeps_non_ascii_as_utf8() -> None:
    """Non-ASCII text is written raw (fewer bytes than \\u escapes)."""
    text = encode_json({"t": "日本語"})
    assert text == '{"t":"日本語"}'


def test_encode_json_rejects_nan() -> None:
    """NaN is not JSON, so encoding a message holding it raises ValueError."""
    with pytest.raises(ValueError, match="JSON"):
        encode_json({"x": float("nan")})


def test_encode_frame_refuses_messages_over_chromes_limit() -> None:
    """encode_frame raises rather than emit a message Chrome would drop the port for."""
    with pytest.raises(ValueError, match="1048576"):
        encode_frame({"type": "cdp", "data": "x" * MAX_OUTGOING_FRAME})


def test_small_reply_is_one_plain_frame() -> None:
    """A reply under the threshold is sent as a single ordinary frame."""
    reply = {"type": "result", "id": 1, "result": {"pong": True}}
    assert encode_reply_frames(reply) == [encode_frame(reply)]


def test_threshold_boundary() -> None:
    """A reply of exactly the threshold stays whole; one byte more is chunked."""
    reply: JSONObject = {"type": "result", "id": 1, "result": {"s": ""}}
    base = len(encode_json(reply).encode())
    reply["result"]["s"] = "a" * (300 - base)
    assert len(encode_json(reply).encode()) == 300
    assert encode_reply_frames(reply, chunk_threshold=300) == [encode_frame(reply)]
    reply["result"]["s"] += "a"
    frames = encode_reply_frames(reply, chunk_threshold=300)
    assert len(frames) == 2
    assert all(json.loads(p)["type"] == "chunk" for p in payloads(frames))


@pytest.mark.parametrize("threshold", [0, MAX_OUTGOING_FRAME + 1])
def test_threshold_out_of_range(threshold: int) -> None:
    """A threshold that is not positive or exceeds Chrome's limit is refused by value."""
    with pytest.raises(ValueError, match=str(threshold)):
        encode_reply_frames({"type": "result", "id": 1}, chunk_threshold=threshold)


def test_threshold_too_small_for_the_envelope() -> None:
    """A threshold that cannot hold a chunk envelope plus data is refused, naming the id."""
    reply = {"type": "result", "id": "a-long-request-id" * 4, "result": {"s": "x" * 500}}
    with pytest.raises(ValueError, match="a-long-request-id"):
        encode_reply_frames(reply, chunk_threshold=100)


def _chunks(frames: list[bytes]) -> list[JSONObject]:
    return [json.loads(p) for p in payloads(frames)]


# Every character here is escaped or multi-byte once the reply's JSON text is itself
# put into a chunk's JSON string: quotes and backslashes double, control characters
# become \u00XX (then \\u00XX), and the rest take 2-4 bytes of UTF-8.
ESCAPING = '"\\\x00\x01\x1f\n\té€😀\u2028\x7f'


def test_escape_heavy_reply_chunks_stay_under_chromes_limit() -> None:
    """A 3 MB reply made of escaping characters is chunked with every frame under 1 MiB."""
    blob = (ESCAPING * (3_000_000 // len(ESCAPING) + 1))[:3_000_000]
    reply = {"type": "result", "id": "r1", "result": {"blob": blob}}
    frames = encode_reply_frames(reply)
    chunks = _chunks(frames)
    count = len(chunks)
    assert count >= 3
    for index, (frame, chunk) in enumerate(zip(frames, chunks, strict=True)):
        assert len(frame) - 4 <= DEFAULT_CHUNK_THRESHOLD < MAX_OUTGOING_FRAME
        assert (chunk["type"], chunk["id"], chunk["index"], chunk["count"]) == (
            "chunk",
            "r1",
            index,
            count,
        )
    assert "".join(c["data"] for c in chunks) == encode_json(reply)
    assembler = ChunkAssembler()
    results = [assembler.feed(c) for c in chunks]
    assert results[:-1] == [None] * (count - 1)
    assert results[-1] == reply


def test_chunks_are_filled_close_to_the_threshold() -> None:
    """Every chunk but the last is within one character's escape of the threshold."""
    # Cheap characters first, costly ones later: the layout that makes a proportional
    # first guess undershoot.
    blob = ("a" * 150 + "😀\\" * 150) * 20
    reply = {"type": "result", "id": 9, "result": {"blob": blob}}
    threshold = 400
    frames = encode_reply_frames(reply, chunk_threshold=threshold)
    text_digits = len(str(len(encode_json(reply))))
    sizes = [len(p) for p in payloads(frames)]
    assert max(sizes) <= threshold
    # 6 bytes: the costliest escape; 2 * digits: index/count were budgeted at full width.
    assert min(sizes[:-1]) >= threshold - 6 - 2 * text_digits


@pytest.mark.parametrize("threshold", range(150, 170))
def test_cuts_never_split_an_escape(threshold: int) -> None:
    """Runs of backslashes and quotes cut at every offset still reassemble exactly."""
    blob = "".join("\\" * k + '"' + "é" for k in range(1, 40))
    reply = {"type": "result", "id": 1, "result": {"s": blob}}
    chunks = _chunks(encode_reply_frames(reply, chunk_threshold=threshold))
    assert len(chunks) > 5
    assert "".join(c["data"] for c in chunks) == encode_json(reply)


def test_non_ascii_pieces_are_whole_code_points() -> None:
    """Chunk data never splits a character: every piece is valid text on its own."""
    reply = {"type": "result", "id": 1, "result": {"s": "😀é" * 500}}
    for chunk in _chunks(encode_reply_frames(reply, chunk_threshold=120)):
        chunk["data"].encode("utf-8")  # raises on a split surrogate pair


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=6) | st.dictionaries(st.text(max_size=8), children, max_size=6)
    ),
    max_leaves=40,
)


@settings(max_examples=300)
@given(
    result=JSON_VALUES,
    request_id=st.none() | st.integers(-(2**53) + 1, 2**53 - 1) | st.text(max_size=12),
    threshold=st.integers(min_value=200, max_value=600),
)
def test_any_reply_reassembles_byte_exact(result: Any, request_id: Any, threshold: int) -> None:
    """Any JSON-able reply, chunked at any threshold, reassembles to the same text and value."""
    reply = {"type": "result", "id": request_id, "result": result}
    text = encode_json(reply)
    frames = encode_reply_frames(reply, chunk_threshold=threshold)
    sizes = [len(p) for p in payloads(frames)]
    assert max(sizes) <= threshold
    if len(text.encode("utf-8")) <= threshold:
        assert frames == [encode_frame(reply)]
        return
    chunks = _chunks(frames)
    assert [encode_json(c).encode() for c in chunks] == payloads(frames)
    assert [c["index"] for c in chunks] == list(range(len(chunks)))
    assert {c["count"] for c in chunks} == {len(chunks)}
    assert "".join(c["data"] for c in chunks) == text
    assembler = ChunkAssembler()
    completed = [m for m in map(assembler.feed, chunks) if m is not None]
    assert completed == [json.loads(text)]
    assert assembler.statistics().replies_pending == 0


# --------------------------------------------------------------------------- reassembly


def _chunk_messages(reply: JSONObject, threshold: int = 200) -> list[JSONObject]:
    return _chunks(encode_reply_frames(reply, chunk_threshold=threshold))


def test_assembler_passes_other_messages_through() -> None:
    """A message that is not a chunk comes straight back from feed."""
    message = {"type": "result", "id": 1, "result": {}}
    assert ChunkAssembler().feed(message) is message


def test_assembler_handles_interleaved_replies_and_any_order() -> None:
    """Chunks of two replies, interleaved and out of order, reassemble to both replies."""
    first = {"type": "result", "id": "a", "result": {"s": "1" * 700}}
    second = {"type": "result", "id": "b", "result": {"s": "2" * 700}}
    a, b = _chunk_messages(first), _chunk_messages(second)
    assembler = ChunkAssembler()
    mixed = [x for pair in zip(reversed(a), b, strict=False) for x in pair]
    mixed += a[: len(a) - len(b)] if len(a) > len(b) else b[len(a) :]
    done = [m for m in map(assembler.feed, mixed) if m is not None]
    assert sorted(done, key=lambda m: m["id"]) == [first, second]
    stats = assembler.statistics()
    assert (stats.messages_completed, stats.chunks_received, stats.replies_pending) == (
        2,
        len(a) + len(b),
        0,
    )


def test_assembler_rejects_a_duplicate_chunk() -> None:
    """The same chunk index twice is a ChunkError naming the index."""
    chunks = _chunk_messages({"type": "result", "id": 4, "result": {"s": "x" * 900}})
    assembler = ChunkAssembler()
    assembler.feed(chunks[0])
    with pytest.raises(ChunkError, match=r"chunk 0 .* twice"):
        assembler.feed(chunks[0])


def test_assembler_rejects_inconsistent_count() -> None:
    """A chunk whose count differs from its reply's earlier chunks is a ChunkError."""
    chunks = _chunk_messages({"type": "result", "id": 4, "result": {"s": "x" * 900}})
    assembler = ChunkAssembler()
    assembler.feed(chunks[0])
    with pytest.raises(ChunkError, match="count"):
        assembler.feed({**chunks[1], "count": chunks[1]["count"] + 1})


@pytest.mark.parametrize(
    "bad",
    [
        {"index": 5, "count": 2},
        {"index": -1, "count": 2},
        {"index": 0, "count": 0},
        {"index": True, "count": 2},
        {"data": 7},
    ],
)
def test_assembler_rejects_malformed_chunks(bad: JSONObject) -> None:
    """Chunks with impossible index, count or data are refused with ChunkError."""
    chunk = {"type": "chunk", "id": 1, "index": 0, "count": 2, "data": "{"} | bad
    with pytest.raises(ChunkError):
        ChunkAssembler().feed(chunk)


def test_assembler_rejects_reassembled_non_json() -> None:
    """Chunks whose joined data is not a JSON object raise ChunkError."""
    assembler = ChunkAssembler()
    assembler.feed({"type": "chunk", "id": 1, "index": 0, "count": 2, "data": "[1,"})
    with pytest.raises(ChunkError, match="not a JSON object"):
        assembler.feed({"type": "chunk", "id": 1, "index": 1, "count": 2, "data": "2]"})
