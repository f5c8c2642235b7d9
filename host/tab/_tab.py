"""`Tab`: one tab as the host holds it, for the tools and the request handlers."""

from __future__ import annotations

from collections.abc import Callable

import attrs
import trio

from pycdp_bridge import Target

from ..pipeline import Compaction
from ._revisions import PageRevisions
from ._snapshots import Snapshot, SnapshotMemory, SnapshotOptions

__all__ = ["Tab"]


def _ignore(reason: str) -> None:
    del reason


@attrs.define(eq=False)
class Tab:
    """A tab's target, what the model has seen of it, and its page observer.

    The tools act through it, the handlers keep one per browser tab, and the command
    line makes one for the page it inspects. `lock` runs one tool at a time: actions
    and reads share the snapshot memory. `revisions` is the single page observer:
    the call tracker learns of page changes from it, and `settle` waits on it.
    """

    target: Target
    memory: SnapshotMemory
    revisions: PageRevisions
    lock: trio.Lock = attrs.field(factory=trio.Lock)

    @classmethod
    def open(
        cls,
        target: Target,
        *,
        options: SnapshotOptions | None = None,
        on_change: Callable[[str], None] = _ignore,
    ) -> Tab:
        """A tab over `target`; `on_change(reason)` hears of every page change."""
        memory = SnapshotMemory(target, options) if options else SnapshotMemory(target)
        return cls(target=target, memory=memory, revisions=PageRevisions(target, on_change))

    @property
    def latest(self) -> Compaction | None:
        """The compaction behind the last snapshot the model received, if any."""
        return self.memory.latest

    async def snapshot(self, *, baseline: bool = False) -> Snapshot:
        """Capture the page and answer with a baseline or a diff (`SnapshotMemory`)."""
        return await self.memory.snapshot(baseline=baseline)

    def expand(self, region: str, at: int = 0) -> str:
        """Everything of one region of the latest snapshot (a page of it from line
        `at` when it is over the budget)."""
        return self.memory.expand(region, at)

    def read_text(self, key: str, at: int) -> str:
        """A page of a long text the latest snapshot showed cut, from character `at`."""
        return self.memory.read_text(key, at)

    def forget(self) -> None:
        """Drop what the model has seen (after an error, or a released tab)."""
        self.memory.forget()
