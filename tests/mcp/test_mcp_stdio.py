"""``trimtab mcp``'s stdin without I/O: lines split and bounded, and what is wrong with a
line that is not a JSON-RPC message."""

from __future__ import annotations

import json

from trimtab.mcp._stdio import (
    INVALID_REQUEST,
    PARSE_ERROR,
    LineSplitter,
    Oversized,
    line_problem,
)


def test_lines_split_across_reads_and_blank_lines_skipped() -> None:
    """A line split over several reads comes out whole; blank lines and a last line
    without its newline are handled."""
    splitter = LineSplitter(limit=100)
    assert splitter.feed(b'{"a":') == []
    assert splitter.feed(b'1}\n\n  \n{"b":2}\n{"c"') == [b'{"a":1}', b'{"b":2}']
    assert splitter.end() == [b'{"c"']


def test_oversized_line_is_skipped_with_its_size_and_the_next_line_kept() -> None:
    """A line over the limit is dropped as it streams in (memory stays bounded), reported
    with its size, and the line after it comes through."""
    splitter = LineSplitter(limit=50)
    head = b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"x":"'
    assert splitter.feed(head) == []
    for _ in range(100):
        assert splitter.feed(b"y" * 1000) == []
        assert len(splitter._buffer) <= 50
    out = splitter.feed(b'"}}\n{"ok":1}\n')
    assert out[1] == b'{"ok":1}'
    skipped = out[0]
    assert isinstance(skipped, Oversized)
    assert skipped.size == len(head) + 100_000 + 3
    assert skipped.request_id() == 9


def test_oversized_request_id_only_when_it_is_the_requests_own() -> None:
    """The id of a skipped line is taken from its start or its end only where it is the
    top-level one; an "id" inside the params is never taken for it."""

    def skipped(message: dict[str, object]) -> Oversized:
        [out] = LineSplitter(limit=64).feed(json.dumps(message).encode() + b"\n")
        assert isinstance(out, Oversized)
        return out

    pad = "z" * 2000
    assert skipped({"jsonrpc": "2.0", "id": "a-1", "params": {"t": pad}}).request_id() == "a-1"
    assert (
        skipped({"method": "m", "params": {"t": pad}, "jsonrpc": "2.0", "id": 12}).request_id()
        == 12
    )
    assert skipped({"method": "m", "params": {"id": "e5", "t": pad}}).request_id() is None
    assert skipped({"method": "m", "params": {"t": pad, "id": "e5"}}).request_id() is None


def test_line_problems_name_the_json_rpc_error() -> None:
    """Not JSON (or not UTF-8) is a parse error; JSON that is no JSON-RPC message is an
    invalid request, with its id when it has a usable one; a valid message has none."""
    garbage = line_problem(b"garbage {")
    assert garbage is not None
    assert (garbage[0], garbage[2]) == (PARSE_ERROR, None)
    not_utf8 = line_problem(b'{"a": "\xff"}')
    assert not_utf8 is not None
    assert not_utf8[0] == PARSE_ERROR
    invalid = line_problem(b'{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": 7}')
    assert invalid is not None
    code, message, request_id = invalid
    assert (code, request_id) == (INVALID_REQUEST, 3)
    assert "params" in message
    odd_id = line_problem(b'{"id": true, "method": "x"}')
    assert odd_id is not None
    assert odd_id[2] is None
    assert line_problem(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}') is None
    assert line_problem(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}') is None
