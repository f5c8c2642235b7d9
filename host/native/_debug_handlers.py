"""Test-only request types, registered only when ``TRIMTAB_HOST_DEBUG=1``.

They let ``tests/native/test_host_process.py`` exercise the real host process through its
public wire protocol: concurrency without timing (``debug_wait``/``debug_release``),
requests in flight at EOF (``debug_sleep``), chunking (``debug_blob``), the error
paths (``debug_raise``, ``debug_fail``), the stdout guard (``debug_print``) and
host-initiated messages (``debug_send``). Chrome never starts the host with the
variable set, so an extension cannot reach them.
"""

from __future__ import annotations

import os
import sys
from typing import Final, cast

import trio

from ..wire import ERROR_CODES, ErrorCode, Handler, JSONObject, Outbox, Request, RequestError

__all__ = ["debug_handlers"]

_MAX_SLEEP: Final = 3600.0
_MAX_BLOB: Final = 64 * 1024 * 1024


async def _echo(request: Request) -> JSONObject:
    return {"echo": {k: v for k, v in request.fields.items() if k not in {"type", "id"}}}


async def _sleep(request: Request) -> JSONObject:
    seconds = request.get("seconds", (int, float))
    if not 0 <= seconds <= _MAX_SLEEP:
        raise RequestError("bad_request", f"seconds={seconds!r} is outside 0..{_MAX_SLEEP}")
    await trio.sleep(seconds)
    return {"slept": seconds, "tag": request.fields.get("tag")}


async def _blob(request: Request) -> JSONObject:
    size = request.get("size", int)
    alphabet = request.get("alphabet", str, default="x")
    if not 0 <= size <= _MAX_BLOB or not alphabet:
        raise RequestError(
            "bad_request", f"size={size!r} must be in 0..{_MAX_BLOB} with a non-empty alphabet"
        )
    repeats = -(-size // len(alphabet))
    return {"blob": (alphabet * repeats)[:size]}


async def _raise(request: Request) -> JSONObject:
    raise RuntimeError(request.get("message", str, default="debug_raise was asked to fail"))


async def _fail(request: Request) -> JSONObject:
    code = request.get("code", str)
    if code not in ERROR_CODES:
        raise RequestError("bad_request", f"code={code!r} is not a protocol error code")
    raise RequestError(cast(ErrorCode, code), request.get("message", str, default="debug_fail"))


async def _print(request: Request) -> JSONObject:
    text = request.get("text", str, default="stray output")
    # Both ways code can reach stdout by accident: Python's sys.stdout and raw fd 1
    # (as a C extension or a child process would).
    print(text)
    sys.stdout.flush()
    os.write(1, (text + "\n").encode("utf-8"))
    return {"printed": True}


def debug_handlers(outbox: Outbox) -> dict[str, Handler]:
    """The test-only handlers; ``debug_send`` writes through ``outbox``.

    ``debug_wait`` blocks until a ``debug_release`` with the same ``key`` arrives, so a
    test can prove two requests run concurrently without relying on timing.
    """
    gates: dict[str, trio.Event] = {}

    async def wait(request: Request) -> JSONObject:
        key = request.get("key", str)
        await gates.setdefault(key, trio.Event()).wait()
        return {"released": key}

    async def release(request: Request) -> JSONObject:
        key = request.get("key", str)
        gates.setdefault(key, trio.Event()).set()
        return {"released": key}

    async def send(request: Request) -> JSONObject:
        note = request.get("note", str)
        await outbox.send_message({"type": "debug_note", "note": note})
        return {"sent": True}

    return {
        "debug_echo": _echo,
        "debug_sleep": _sleep,
        "debug_blob": _blob,
        "debug_raise": _raise,
        "debug_fail": _fail,
        "debug_print": _print,
        "debug_send": send,
        "debug_wait": wait,
        "debug_release": release,
    }
