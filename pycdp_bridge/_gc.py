"""The cyclic garbage collector paused over one large, purely synchronous step.

Parsing a large page's reply (JSON of several megabytes), decoding the snapshot and
joining the model allocate hundreds of thousands of containers that all stay alive,
and without a pause their young collections soon start full ones that walk the whole
heap again (``python -m tests.bench.capture`` shows the capture's parts). Nothing in
those steps makes reference cycles to reclaim; the step must not ``await``. The host
has the same pause for its frames, and the process-wide threshold, in
``trimtab.wire`` (this package imports nothing of the host).
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
