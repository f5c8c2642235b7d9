"""The browser's replies off the pipe, parsed fast (orjson), and parsed again by `json`
when orjson refuses them: Chromium writes an escaped lone surrogate for page text that
holds one, which is an error to orjson. The host parses its frames the same way in
``trimtab.wire`` (this package imports nothing of the host).
"""

from __future__ import annotations

import json
from typing import Any

import orjson

__all__ = ["loads_json"]


def loads_json(data: bytes | bytearray | str) -> Any:
    """The value of a JSON text (`ValueError` for what neither parser accepts)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)
