"""Pausing Python's cyclic garbage collector over one large, purely synchronous step.

Decoding a large page's CDP reply (JSON of several megabytes), decoding the snapshot
and joining the model allocate hundreds of thousands of lists, dicts and objects that
all stay alive. Every 700 of them start a collection of the young generation, whose
survivors move up and soon start full collections that walk the whole heap again,
the models kept from earlier snapshots included: on a large page that was more time
than the work itself (``python -m tests.bench.capture`` shows the capture's parts).
Nothing in those steps makes reference cycles to reclaim, so the collector waits until
the step is over; the step must not ``await``, so no other task runs meanwhile.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["gc_paused"]


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Run the body with automatic garbage collection off (as it was, afterwards)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
