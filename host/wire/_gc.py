"""Python's cyclic garbage collector around snapshots: paused over one large, purely
synchronous step (`gc_paused`), and run less often in a process that takes snapshots
(`collect_less_often`).

Decoding a large page's CDP reply (JSON of several megabytes), decoding the snapshot
and joining the model allocate hundreds of thousands of lists, dicts and objects that
all stay alive. Every 700 of them start a collection of the young generation, whose
survivors move up and soon start full collections that walk the whole heap again,
the models kept from earlier snapshots included: on a large page that was more time
than the work itself (``python -m tests.bench.capture`` shows the capture's parts).
Nothing in those steps makes reference cycles to reclaim, so the collector waits until
the step is over; the step must not ``await``, so no other task runs meanwhile.

The host's frame decoder pauses it over a large frame (a relayed snapshot); the mains
of the native host and the command line call `collect_less_often`. ``pycdp_bridge``
pauses it over its own replies and over a whole capture, awaits included, with pauses
that count (its private ``_gc``; it may import nothing of the host): this pause, inside
one of those, leaves the collector off.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["YOUNG_THRESHOLD", "collect_less_often", "gc_paused"]

#: Containers the young generation may gain before a collection, where Python's
#: default is 700. A snapshot makes hundreds of thousands of them between its paused
#: steps (the tree it renders, each reply's JSON) and frees most of them soon, and
#: every young collection walks all those still alive. With this threshold most
#: snapshots of ordinary pages end without one (``python -m tests.bench --only
#: speed`` times the snapshots under it).
#: What a collection reclaims (reference cycles) waits for at most this many
#: containers of garbage.
YOUNG_THRESHOLD = 100_000


def collect_less_often() -> None:
    """Set the young generation's threshold to `YOUNG_THRESHOLD` for the whole process
    (the older generations' are kept): for the main function of a process that takes
    snapshots, never for a library to do on import."""
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)


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
