"""The host's settings from its environment: one reading for all of them.

Chrome starts the host with its own environment, so these variables are the only
settings a person can give the native host without the side panel. A bad value never
stops the host: it is logged, naming the variable and the value, and the default
holds.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Mapping

__all__ = ["count_setting", "seconds_setting"]

log = logging.getLogger("trimtab.host")


def seconds_setting(
    name: str, default: float, *, positive: bool = True, environ: Mapping[str, str] | None = None
) -> float:
    """Seconds from the variable ``name`` (> 0, or >= 0 unless ``positive``);
    ``default`` when it is unset, blank or not such a number."""
    raw = _raw(name, environ)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and (value > 0 or (value == 0 and not positive))):
        log.warning(
            "ignoring %s=%r: not a number of seconds %s 0; using %g",
            name,
            raw,
            ">" if positive else ">=",
            default,
        )
        return default
    return value


def count_setting(name: str, default: int, *, environ: Mapping[str, str] | None = None) -> int:
    """A whole number of at least 1 from the variable ``name``; ``default`` when it is
    unset, blank or not such a number."""
    raw = _raw(name, environ)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        log.warning("ignoring %s=%r: not a whole number >= 1; using %d", name, raw, default)
        return default
    return value


def _raw(name: str, environ: Mapping[str, str] | None) -> str | None:
    raw = (os.environ if environ is None else environ).get(name, "").strip()
    return raw or None
