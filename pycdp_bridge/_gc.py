"""The cyclic garbage collector paused over a capture and over each large reply.

Parsing a large page's reply (JSON of several megabytes), decoding the snapshot and
joining the model allocate hundreds of thousands of containers. Most of them (the
reply's JSON, the tree and states decoded from it) are garbage once the join is
done, and the collector would walk them all if it ran in between: with the
collector paused from the capture's first request to the end of its join they are
freed by their reference counts and never walked (``python -m tests.bench --only
speed`` reports the collector's time per snapshot). Nothing in those steps makes
reference cycles to reclaim.

A pause may span awaits (the capture's): pauses count, so concurrent and nested
ones end with the last of them, and the collector is enabled again only if a pause
disabled it. Other tasks run without collections meanwhile, which only delays what
they would reclaim. The host has the same pause for its frames, and the
process-wide threshold, in ``trimtab.wire`` (this package imports nothing of the
host).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["gc_paused"]

# Pauses open now; the collector was enabled when the first of them started.
_open = 0


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Run the body with automatic garbage collection off; it is enabled again when
    the last open pause ends, unless it was off before the first one began."""
    global _open
    if _open == 0 and not gc.isenabled():
        yield  # someone else turned it off: theirs to turn on
        return
    _open += 1
    gc.disable()
    try:
        yield
    finally:
        _open -= 1
        if _open == 0:
            gc.enable()
