"""JSON off the wire (CDP messages, native-messaging frames), parsed fast.

A DOMSnapshot reply of a large page is megabytes, and the standard library takes
two to three times as long as orjson to parse it (``python -m tests.bench --only
speed`` shows what a snapshot costs). orjson is stricter in one way that matters:
an escaped lone surrogate, which Chromium writes for page text that holds one, is
an error to it, so such a message is parsed again by `json`, which keeps it.
``pycdp_bridge`` parses its pipe's replies the same way (its private ``_json``): it
may import nothing of the host.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

__all__ = ["loads_json"]


def loads_json(data: bytes | bytearray | str, **lenient: Any) -> Any:
    """The value of a JSON text; `lenient` goes to `json.loads`, which parses what
    orjson refuses (and raises `ValueError` for what neither accepts)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data, **lenient)
