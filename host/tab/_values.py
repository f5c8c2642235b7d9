"""The values of a snapshot: the answer (`Snapshot`, its `Figures`), the options that
shape it, and a page as the agent last saw it (`Seen`).

None of them is changed in place once made, their dicts included (a snapshot's
figures are only counted late, once, and then kept): a copy of the memory that holds
them (`SnapshotMemory.fork`) may share them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import attrs

from pycdp_bridge import AXMode

from ..pipeline import Compaction, Item, Region, xml
from ._budget import DEFAULT_BUDGET, check_budget

__all__ = [
    "Counted",
    "Figures",
    "Seen",
    "Snapshot",
    "SnapshotOptions",
    "TrimLimits",
    "keys_within",
    "page_open",
]


@attrs.frozen
class TrimLimits:
    """How long a changed repeating region may be before its middle is trimmed."""

    max_lines: int = 24
    head: int = 12
    tail: int = 4


@attrs.frozen
class SnapshotOptions:
    """Per-session switches (``trimtab inspect --no-dedup --no-trim``)."""

    dedup: bool = True
    trim: bool = True
    limits: TrimLimits = TrimLimits()
    # What the capture asks the browser for. The pipeline computes roles, names
    # and states from markup (pipeline/_accname.py), so by default it skips the
    # accessibility tree and DOMSnapshot's client/scroll rects, the two costliest
    # parts of a capture that it does not need (figures: `make bench`, capture).
    ax: AXMode = False
    rects: bool = False
    # Collapse repeated blocks of this many lines or more, even outside landmarks.
    block_min_lines: int = 6
    # Tokens one snapshot, expand page or read page may take (None: no limit).
    budget: int | None = attrs.field(default=DEFAULT_BUDGET, converter=check_budget)


@attrs.frozen
class Figures:
    """The token figures of one snapshot."""

    tokens: int
    full_tokens: int  # tokens of the baseline without dedup or trimming
    dedup_saved: int = 0
    trim_saved: int = 0
    # Tokens behind the budget's region markers (0: the snapshot was within its budget).
    budget_hidden: int = 0


@attrs.define
class Counted:
    """A snapshot's figures, counted the first time they are read: the tools send
    only the XML, and counting a page's tokens costs more than rendering it."""

    count: Callable[[], Figures] | None
    figures: Figures | None = None

    @classmethod
    def now(cls, figures: Figures) -> Counted:
        return cls(None, figures)

    def get(self) -> Figures:
        if self.figures is None:
            assert self.count is not None
            self.figures = self.count()
            self.count = None  # what it counted may go
        return self.figures


@attrs.frozen
class Snapshot:
    """One answer to the agent: its XML and the figures behind it (exact; counted
    when first read)."""

    kind: str  # "baseline" or "diff"
    xml: str
    compaction: Compaction
    capture_ms: float
    regions_collapsed: tuple[str, ...] = ()
    regions_trimmed: tuple[str, ...] = ()
    # Regions shown only as budget markers, or cut by one: the client has not seen them.
    regions_unseen: frozenset[str] = frozenset()
    counted: Counted = attrs.field(kw_only=True, eq=False, repr=False)
    #: Where the time went, in ms (`SnapshotMemory.render` fills it): ``capture`` (the
    #: whole capture, with the loader check before it), ``capture.<part>`` (each CDP
    #: call's wall time, ``decode``, ``tree`` and ``join`` of the replies, ``total``),
    #: the pipeline's ``filter``, ``build`` and ``encode``, and ``answer`` (the
    #: baseline or diff: dedup, the budget's fitting and its token counts).
    timings: Mapping[str, float] = attrs.field(factory=dict, kw_only=True, eq=False)

    @property
    def figures(self) -> Figures:
        return self.counted.get()

    @property
    def tokens(self) -> int:
        return self.figures.tokens

    @property
    def full_tokens(self) -> int:
        return self.figures.full_tokens

    @property
    def dedup_saved(self) -> int:
        return self.figures.dedup_saved

    @property
    def trim_saved(self) -> int:
        return self.figures.trim_saved

    @property
    def budget_hidden(self) -> int:
        return self.figures.budget_hidden

    def stats_dict(self) -> dict[str, object]:
        stats = self.compaction.stats.as_dict()
        stats.update(
            kind=self.kind,
            tokens=self.tokens,
            full_tokens=self.full_tokens,
            dedup_saved=self.dedup_saved,
            trim_saved=self.trim_saved,
            capture_ms=round(self.capture_ms, 1),
            regions_collapsed=list(self.regions_collapsed),
            regions_trimmed=list(self.regions_trimmed),
            budget_hidden=self.budget_hidden,
            long_texts=len(self.compaction.texts),
        )
        return stats


@attrs.frozen
class Seen:
    """A page as the client last saw it: each region it saw whole or trimmed (with the
    marker that expands it), which of those it saw trimmed, and the top-level lines it
    saw, in order.

    A region the client was shown only as a budget marker (``<more region>``) is not
    in it: a marker it never expanded is no view of the region's content. Nor are
    the lines of a region it saw trimmed (or holding a trimmed or unseen region).
    """

    regions: dict[str, str] = attrs.field(factory=dict)  # region key → rendered XML
    items: tuple[Item, ...] = ()
    trimmed: frozenset[str] = frozenset()
    # The text runs over `NOTED_RUN` characters it may hold whole (`long_runs`).
    whole_runs: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        compaction: Compaction,
        *,
        unseen: frozenset[str] = frozenset(),
        trimmed: frozenset[str] = frozenset(),
    ) -> Seen:
        """`compaction` as the client saw it: without the `unseen` regions, and with
        the `trimmed` ones' middle lines not seen."""
        missing = unseen | trimmed
        whole = [
            r
            for r in compaction.regions
            if r.depth == 0 and missing.isdisjoint(keys_within(compaction, r))
        ]
        return cls(
            {r.key: r.xml for r in compaction.regions if r.key not in unseen},
            tuple(item for r in whole for item in r.items),
            trimmed - unseen,
            compaction.long_runs,
        )

    def beside(self, earlier: Seen | None) -> Seen:
        """What a client on a page holds of it: what it last saw on that page
        (`earlier`), and for a region it did not see there, what it saw of that region
        here. Its lines are the page's own when it saw the page before."""
        if earlier is None:
            return self
        kept = {k for k in self.trimmed if k not in earlier.regions}
        return Seen(
            {**self.regions, **earlier.regions},
            earlier.items,
            earlier.trimmed | kept,
            self.whole_runs + earlier.whole_runs,
        )


def keys_within(compaction: Compaction, region: Region) -> list[str]:
    """The keys of `region` and of every region nested in it."""
    inside = {id(node) for node in region.out.iter() if node.tag == "region"}
    return [r.key for r in compaction.regions if id(r.out) in inside]


def page_open(current: Compaction, kind: str) -> str:
    """The ``<page>`` start tag of a snapshot of `current` (`kind`: baseline or diff)."""
    page = {"url": current.url, "title": current.title, "snapshot": kind}
    return xml.start_tag("page", page) + "\n"
