"""When two tool calls are the same call: canonical argument keys for the call tracker.

Equality is decided by exact key names and normalised values, never by similarity.
The seed design's generic fallback matched key names by substring, so `{"width": 5}`
counted as `{"id": 5}` and a resize was answered with a read; a cache may only merge
calls it can prove would run the same way.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Hashable, Mapping

__all__ = [
    "KeyFunction",
    "canonical_json",
    "canonical_key",
    "encoded_size",
    "fields_key",
    "folded_key",
]

KeyFunction = Callable[[Mapping[str, object]], Hashable]
"""Maps a call's arguments to a hashable key; calls with equal keys are the same call."""

# One encoder for every key: json.dumps with options builds a new one per call.
_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)
# 128 bits: a collision would serve one call's result for another, so the digest is
# wide enough that it never happens in practice, and short enough to keep entries small.
_DIGEST_BYTES = 16


def canonical_json(value: object) -> str:
    """Encode `value` as JSON with sorted keys, no spaces and normalised numbers.

    Integral floats become integers (`1.0` and `1` are the same argument, as they are
    to any JSON consumer), `-0.0` becomes `0`, tuples become lists. Booleans stay
    booleans: `true` and `1` differ. Raises `TypeError` for a value JSON cannot carry
    and `ValueError` for a non-finite number, naming where in the arguments it is.
    """
    return _ENCODER.encode(_normalise(value, "args"))


def canonical_key(args: Mapping[str, object]) -> bytes:
    """The generic equivalence key: a hash of the arguments' canonical JSON."""
    encoded = canonical_json(args).encode("utf-8")
    return hashlib.blake2b(encoded, digest_size=_DIGEST_BYTES).digest()


def folded_key(*fields: str) -> KeyFunction:
    """A key over all arguments, where the named text fields ignore case and spacing.

    For search-like tools: `find(query="Add  to bag")` and `find(query="add to bag")`
    are the same call. Every other argument still counts exactly.
    """
    if not fields:
        raise ValueError("folded_key needs at least one field name to fold")
    folded = frozenset(fields)

    def key(args: Mapping[str, object]) -> Hashable:
        normalised = {
            name: _fold(value) if name in folded and isinstance(value, str) else value
            for name, value in args.items()
        }
        return canonical_key(normalised)

    return key


def fields_key(*fields: str) -> KeyFunction:
    """A key over only the named arguments, for tools whose other arguments are cosmetic.

    Use it only when the tool's result really does not depend on the other arguments:
    a key that ignores an argument that matters serves one call's result for another.
    A missing field and a field set to null are different calls.
    """
    if not fields:
        raise ValueError("fields_key needs at least one field name")
    chosen = tuple(dict.fromkeys(fields))

    def key(args: Mapping[str, object]) -> Hashable:
        return canonical_key({name: args[name] for name in chosen if name in args})

    return key


def encoded_size(result: object) -> int:
    """Bytes a cached result holds, for the tracker's byte cap: its UTF-8 or JSON size."""
    if isinstance(result, str):
        return len(result.encode("utf-8"))
    if isinstance(result, bytes | bytearray | memoryview):
        return len(result)
    try:
        encoded = json.dumps(result, default=repr, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        # Keys JSON cannot hold (tuples, objects): repr is a fair size for the cap.
        encoded = repr(result)
    return len(encoded.encode("utf-8"))


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def _normalise(value: object, where: str) -> object:
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where} = {value!r} is not a finite number, so it has no JSON key")
        return int(value) if value.is_integer() else value
    if isinstance(value, Mapping):
        normalised: dict[str, object] = {}
        for name, item in value.items():
            if not isinstance(name, str):
                raise TypeError(f"{where} has a non-string key {name!r}, so it has no JSON key")
            normalised[name] = _normalise(item, f"{where}.{name}")
        return normalised
    if isinstance(value, list | tuple):
        return [_normalise(item, f"{where}[{index}]") for index, item in enumerate(value)]
    raise TypeError(
        f"{where} = {value!r:.80} is a {type(value).__name__}, which has no JSON key; "
        "register a key function for this tool"
    )
