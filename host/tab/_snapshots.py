"""Snapshots of one tab: baselines with unchanged regions collapsed, trimming, diffs.

A `SnapshotMemory` captures its target, runs the pipeline and decides what to send:

* a **baseline** (first look, a navigation to another document, or when asked):
  every region, except that a region whose rendering (its ordered eids *and* its
  content: states, values, text) equals the one in the previous baseline, or the one
  the agent last saw at the same URL (back to a page it saw), collapses to
  ``<region name="nav" unchanged="true" count="73"/>``; long changed regions
  that repeat across a site (nav, header, footer, aside) keep their head and tail
  lines and say how many lines were trimmed;
* a **diff** (after an action that left the document in place): only the lines
  that changed since the previous snapshot, with a line of context, or a baseline
  when the diff would cost more or pass the budget.

Above the token budget (`SnapshotOptions.budget`) a baseline cuts long texts, then
shows regions while they fit and markers for the rest (`_budget`); `expand` and
`read_text` page through them. Pages within the budget are sent as they always were.

The previous-baseline memory is updated only by baselines and cleared on errors.

Ids never move within a document's life: the memory keeps, per document, which node
each id it sent names (`issued`), and the pipeline keeps those ids on their nodes
and gives none of them to another node while its own still exists.
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Callable

import attrs

from pycdp_bridge import AXMode, PageModel, Target, capture
from pycdp_bridge import protocol as cdp

from ..pipeline import (
    LONG_TEXT,
    Compaction,
    Control,
    Item,
    OutNode,
    Region,
    TokenMemo,
    least_tokens,
    open_tag,
    prepare,
    xml,
)
from ._budget import (
    DEFAULT_BUDGET,
    LineTokens,
    check_budget,
    fit_baseline,
    page_region,
    page_text,
    region_of_key,
)

__all__ = [
    "PageChangedError",
    "Seen",
    "Snapshot",
    "SnapshotMemory",
    "SnapshotOptions",
    "TrimLimits",
]

# A capture that saw the page navigate is taken again, this many times at most.
CAPTURE_ATTEMPTS = 3
# Pages whose regions the memory keeps as the agent last saw them, newest last.
SEEN_PAGES = 8


class PageChangedError(Exception):
    """The page navigated during every capture attempt; no consistent view exists yet."""

    def __init__(self, attempts: int) -> None:
        super().__init__(
            f"the page navigated while it was being captured ({attempts} attempts); "
            "take a snapshot again once it has loaded"
        )
        self.attempts = attempts


# Regions that repeat across the pages of a site and may be trimmed.
TRIMMABLE = frozenset({"nav", "header", "footer", "aside"})


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
class _Counted:
    """A snapshot's figures, counted the first time they are read: the tools send
    only the XML, and counting a page's tokens costs more than rendering it."""

    count: Callable[[], Figures] | None
    figures: Figures | None = None

    @classmethod
    def now(cls, figures: Figures) -> _Counted:
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
    counted: _Counted = attrs.field(kw_only=True, eq=False, repr=False)

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
    """A page as the agent last saw it: its regions and its top-level lines."""

    regions: dict[str, str] = attrs.field(factory=dict)  # region key → rendered XML
    items: tuple[Item, ...] = ()

    @classmethod
    def of(cls, compaction: Compaction) -> Seen:
        return cls(
            {r.key: r.xml for r in compaction.regions},
            tuple(item for r in compaction.regions if r.depth == 0 for item in r.items),
        )


@attrs.define
class SnapshotMemory:
    """The snapshot state of one tab: latest snapshot, previous baseline, id map."""

    target: Target
    options: SnapshotOptions = SnapshotOptions()
    latest: Compaction | None = None
    latest_document: str = ""
    # Region key → rendered XML of the previous baseline.
    baseline_regions: dict[str, str] | None = None
    # Every line of the previous baseline, in order, for repeated blocks outside landmarks.
    baseline_items: tuple[Item, ...] = ()
    # URL → its page as the latest snapshot of that URL left it: going back to a page
    # the agent saw sends only what changed since (SEEN_PAGES at most).
    seen: dict[str, Seen] = attrs.field(factory=dict)
    # Whether the latest capture's page had a shadow root: its next capture asks for
    # the DOM tree with the snapshot rather than after it (see `capture`'s dom_tree).
    shadow_roots: bool = False
    # Every eid sent for the document `issued_document` → the control it was sent for
    # (nodes of the tab's own session). Kept by `forget`: the model may still hold them.
    issued: dict[str, Control] = attrs.field(factory=dict)
    issued_document: str = ""
    # The document whose snapshots cut long texts (one went over the budget): its
    # later snapshots cut them too, so diffs compare like with like and keys last.
    cut_document: str = ""
    # Token counts of lines, kept from one snapshot to the next (copies share it).
    token_memo: TokenMemo = attrs.field(factory=TokenMemo)
    # Token counts of the latest snapshot's lines, for markers and pages.
    line_tokens: LineTokens = attrs.field(factory=LineTokens)

    async def snapshot(self, *, baseline: bool = False) -> Snapshot:
        """Capture the tab and answer with a baseline or a diff."""
        started = time.perf_counter()
        try:
            model = await self._capture_consistent()
        except Exception:
            self.forget()
            raise
        capture_ms = (time.perf_counter() - started) * 1000
        return self.render(model, capture_ms=capture_ms, baseline=baseline)

    async def _capture_consistent(self) -> PageModel:
        """A capture of one document: the DOM tree, the snapshot and the AX data are
        separate commands, and a navigation between them would join two pages (the
        capture reads the main frame's loader with them and after them: `navigated`)."""
        for _ in range(CAPTURE_ATTEMPTS):
            # Asked and answered before the capture starts: the capture's own first
            # frame tree is sent with its other calls, and a navigation the browser
            # commits ahead of them all would go unseen by it.
            before = await _loader_id(self.target)
            model = await self.capture()
            if not model.navigated and model.document_id == before:
                return model
        raise PageChangedError(CAPTURE_ATTEMPTS)

    async def capture(self) -> PageModel:
        """One capture of the tab with this memory's options (`capture`'s caller checks
        that it is of one document)."""
        model = await capture(
            self.target,
            ax=self.options.ax,
            rects=self.options.rects,
            dom_tree=self.shadow_roots,
        )
        self.shadow_roots = any(node.shadow_root_type in ("open", "closed") for node in model.nodes)
        return model

    def reserved(self, model: PageModel) -> dict[str, int]:
        """Eid → backend node id of every id sent for `model`'s document (`compact`'s
        ``reserved``); empty for another document."""
        if model.document_id != self.issued_document:
            return {}
        return {eid: control.backend_node_id for eid, control in self.issued.items()}

    def forget(self) -> None:
        """Drop every memory of the tab (after an error, or a released tab), except
        which node each id sent for the current document names."""
        self.latest = None
        self.latest_document = ""
        self.baseline_regions = None
        self.baseline_items = ()
        self.seen = {}

    def render(
        self, model: PageModel, *, capture_ms: float = 0.0, baseline: bool = False
    ) -> Snapshot:
        """The answer for a captured page (sans-I/O: tests call this directly)."""
        if model.document_id != self.issued_document:
            self.issued = {}
            self.issued_document = model.document_id
        self.line_tokens = LineTokens(self.token_memo)
        # Tokens are counted for what is sent; the full page only when compared.
        long_text = self._long_text() if model.document_id == self.cut_document else None
        prepared = prepare(model)
        current = prepared.finish(count=False, long_text=long_text, reserved=self.reserved(model))
        self._issue(model, current)
        previous = self.latest
        same_document = (
            previous is not None and model.document_id == self.latest_document and not baseline
        )
        snapshot: Snapshot | None = None
        if same_document:
            assert previous is not None
            snapshot = self._diff(previous, current, capture_ms)
        if snapshot is None:
            # A page the agent left and came back to (back, forward, a link to it): what
            # it last saw there. Not for a fresh look at the same document, which shows
            # whole what diffs showed piecemeal.
            returned = model.document_id != self.latest_document
            earlier = self.seen.get(current.url) if returned else None
            snapshot = self._baseline(current, capture_ms, earlier)
            if snapshot is None:  # over the budget with long texts: they are cut first
                self.cut_document = model.document_id
                # Rendered again from the same build: only the rendering changes.
                current = prepared.finish(
                    count=False, long_text=self._long_text(), reserved=self.reserved(model)
                )
                self._issue(model, current)
                snapshot = self._baseline(current, capture_ms, earlier)
                assert snapshot is not None
        # Never changed in place (nor are its dicts): a copy of the memory
        # (attrs.evolve) keeps what it saw.
        now = Seen.of(current)
        if snapshot.kind == "baseline":
            self.baseline_regions = now.regions
            self.baseline_items = now.items
        self.latest = snapshot.compaction
        self.latest_document = model.document_id
        # A new dict, never one changed in place.
        pages = [(url, page) for url, page in self.seen.items() if url != current.url]
        pages.append((current.url, now))
        self.seen = dict(pages[-SEEN_PAGES:])
        return snapshot

    def _long_text(self) -> int:
        """Characters of a long text a snapshot shows: `LONG_TEXT`, fewer for a small
        budget (a tenth of it), so that one line of text always fits a page."""
        budget = self.options.budget
        return LONG_TEXT if budget is None else min(LONG_TEXT, budget // 10)

    def _issue(self, model: PageModel, current: Compaction) -> None:
        for eid, control in current.controls.items():
            if model.frames[control.frame].session_id is None:
                self.issued[eid] = control

    def expand(self, region: str, at: int = 0) -> str:
        """Everything of one region of the latest snapshot, untrimmed and uncollapsed;
        over the budget a page of its lines from line `at`, with a marker for the rest.
        `region` is a key (``main``) or a marker's (``main.4f2a9c1e``): LookupError
        when there is no such region or it changed since the marker; ValueError for a
        line outside it."""
        if self.latest is None:
            raise LookupError("no snapshot of this tab yet: take a snapshot first")
        budget = self.options.budget
        if budget is None and at == 0:
            return region_of_key(self.latest, region).xml
        return page_region(self.latest, region, at, budget or DEFAULT_BUDGET, self.line_tokens)

    def read_text(self, key: str, at: int) -> str:
        """A page of a long text the latest snapshot showed cut, from character `at`
        (LookupError for a key it does not have, ValueError for an offset outside)."""
        if self.latest is None:
            raise LookupError("no snapshot of this tab yet: take a snapshot first")
        return page_text(self.latest, key, at, self.options.budget or DEFAULT_BUDGET)

    # -- baselines ----------------------------------------------------------

    def _baseline(
        self, current: Compaction, capture_ms: float, earlier: Seen | None
    ) -> Snapshot | None:
        """The baseline; over the budget, fitted to it (`fit_baseline`), or None when
        the page has long texts to cut first."""
        parts, untrimmed, collapsed, trimmed = self._baseline_parts(
            current, earlier, trim=self.options.trim
        )
        head = _page_open(current, "baseline")
        document = head + "".join(shown for _, shown in parts) + "</page>\n"
        budget = self.options.budget
        memo = self.token_memo
        if budget is not None and not memo.fits(document, budget):
            if not current.texts and _has_long_text(current, self._long_text()):
                return None
            fitted, hidden, tokens = fit_baseline(current, head, parts, budget, self.line_tokens)
            return Snapshot(
                kind="baseline",
                xml=fitted,
                compaction=current,
                capture_ms=capture_ms,
                regions_collapsed=tuple(collapsed),
                regions_trimmed=tuple(trimmed),
                counted=_Counted.now(Figures(tokens, tokens + hidden, budget_hidden=hidden)),
            )
        whole = head + "".join(untrimmed) + "</page>\n" if trimmed else document

        def count() -> Figures:
            tokens = memo.count(document)
            full = tokens
            if document != _page_open(current, "baseline") + current.xml.split("\n", 1)[1]:
                full = memo.count(current.xml)  # something was collapsed or trimmed
            trim_saved = memo.count(whole) - tokens if whole is not document else 0
            return Figures(
                tokens,
                full,
                dedup_saved=max(0, full - tokens - trim_saved),
                trim_saved=trim_saved,
            )

        return Snapshot(
            kind="baseline",
            xml=document,
            compaction=current,
            capture_ms=capture_ms,
            regions_collapsed=tuple(collapsed),
            regions_trimmed=tuple(trimmed),
            counted=_Counted(count),
        )

    def _baseline_parts(
        self, current: Compaction, earlier: Seen | None, *, trim: bool
    ) -> tuple[list[tuple[Region, str]], list[str], list[str], list[str]]:
        """Each top-level region with its XML as the baseline shows it, the same XML
        untrimmed (for `trim_saved`), and the keys of the regions collapsed and
        trimmed (collapsed in document order, trimmed innermost first)."""
        previous = (self.baseline_regions or {}) if self.options.dedup else {}
        earlier = earlier if self.options.dedup else None
        # Runs of unchanged lines: since the agent last saw this URL when it comes back
        # to it (a far closer match than the page it comes from), else since the
        # previous baseline.
        previous_items = self.baseline_items if self.options.dedup else ()
        if earlier is not None:
            previous_items = earlier.items
        by_node = {id(r.out): r for r in current.regions}
        collapsed: list[str] = []
        trimmed: list[str] = []
        limits = self.options.limits

        def decide(region: Region) -> tuple[str, str]:
            """The region as shown, and as shown untrimmed: its own `xml` (the very
            string) where nothing in it was collapsed or trimmed."""
            then = earlier.regions.get(region.key) if earlier is not None else None
            if region.xml in (then, previous.get(region.key)):
                collapsed.append(region.key)
                marker = {"name": region.key, "unchanged": True, "count": len(region.eids)}
                shown = xml.element("region", marker) + "\n"
                return shown, shown
            # What is shown (nested regions decided first) beside the full items, one
            # to one, so every marker counts the lines and ids it stands for. A nested
            # region is the one item of its region that is its XML (items are one line
            # each, a region's XML is several).
            items = region.items
            shown_items = [item.xml for item in items]
            plain_items = shown_items
            changed = False
            inner = [c for c in region.out.children if isinstance(c, OutNode) and c.tag == "region"]
            if inner:
                plain_items = list(shown_items)
                at = 0
                for node in inner:
                    nested = by_node[id(node)]
                    item = nested.xml[:-1]  # without its line break, as render_items
                    while shown_items[at] != item:
                        at += 1
                    shown, plain = decide(nested)
                    if shown is not nested.xml:
                        shown_items[at] = shown.rstrip("\n")
                        plain_items[at] = plain.rstrip("\n")
                        changed = True
                    at += 1
            runs = _runs(items, previous_items, self.options.block_min_lines)
            lines = _collapse_repeats(items, shown_items, runs)
            cut = trim and region.name in TRIMMABLE and len(lines) > limits.max_lines
            if not cut and not runs and not changed:
                return region.xml, region.xml  # as compact rendered it
            plain_lines = lines
            if plain_items is not shown_items and plain_items != shown_items:
                plain_lines = _collapse_repeats(items, plain_items, runs)
            if cut:
                trimmed.append(region.key)
                lines = _trim(lines, region.key, limits)
            head = open_tag(region.out)
            shown = _region_xml(head, lines)
            return shown, shown if plain_lines is lines else _region_xml(head, plain_lines)

        parts: list[tuple[Region, str]] = []
        untrimmed: list[str] = []
        for node in current.root.children:
            if isinstance(node, OutNode):
                region = by_node[id(node)]
                shown, plain = decide(region)
                parts.append((region, shown))
                untrimmed.append(plain)
        return parts, untrimmed, collapsed, trimmed

    # -- diffs ----------------------------------------------------------------

    def _diff(
        self, previous: Compaction, current: Compaction, capture_ms: float
    ) -> Snapshot | None:
        before = {r.key: r for r in previous.regions if r.depth == 0}
        # A region nested in the same region in both snapshots (a form in main) is
        # compared on its own: typing into a form changes one of its lines, and its
        # parent's diff would otherwise send the whole form again after every action.
        old_nested, new_nested = _nested(previous), _nested(current)
        kept = {
            key
            for key, (parent, _) in new_nested.items()
            if key in old_nested and old_nested[key][0] == parent
        }
        old_keys = _item_keys(old_nested, kept)
        new_keys = _item_keys(new_nested, kept)
        parts: list[str] = []

        def changed(old: Region, new: Region) -> None:
            if old.xml == new.xml:
                return
            parts.append(_region_diff(old, new, old_keys, new_keys))
            for item in new.items:
                inner = new_keys.get(item.xml)
                if inner is not None:
                    changed(old_nested[inner][1], new_nested[inner][1])

        for region in current.regions:
            if region.depth != 0:
                continue
            old = before.pop(region.key, None)
            if old is None:
                parts.append(region.xml.replace("<region ", '<region added="true" ', 1))
            else:
                changed(old, region)
        parts = [part for part in parts if part]
        for gone in before.values():
            ids = " ".join(gone.eids) or None
            parts.append(xml.element("region", {"name": gone.key, "removed": True, "ids": ids}))
            parts.append("\n")
        if not parts:
            parts.append("<unchanged/>\n")
        document = _page_open(current, "diff") + "".join(parts) + "</page>\n"
        budget = self.options.budget
        memo = self.token_memo
        if budget is not None and not memo.fits(document, budget):
            return None  # over the budget: a baseline fitted to it
        # Sent only when it costs fewer tokens than the page. Most diffs are far
        # smaller than the page's lines: each line of the page costs a token at least
        # (`least_tokens`), and the diff no more than one per byte of it; only a
        # closer call is counted.
        least = least_tokens(current.xml)
        if len(document.encode("utf-8", "surrogatepass")) >= least:
            tokens = memo.count(document)
            if tokens >= least and tokens >= memo.count(current.xml):
                return None  # a baseline is cheaper

        def count() -> Figures:
            return Figures(memo.count(document), memo.count(current.xml))

        return Snapshot("diff", document, current, capture_ms, counted=_Counted(count))


async def _loader_id(target: Target) -> str:
    """The main frame's loader id: it changes with every navigation to a new document."""
    tree = await target.execute(cdp.page_get_frame_tree())
    return str(tree["frameTree"]["frame"].get("loaderId", ""))


def _has_long_text(current: Compaction, limit: int) -> bool:
    """Whether a text run of the page is longer than `limit` (``compact`` would cut it)."""
    return any(
        isinstance(child, str) and len(child) > limit
        for node in current.root.iter()
        for child in node.children
    )


def _page_open(current: Compaction, kind: str) -> str:
    page = {"url": current.url, "title": current.title, "snapshot": kind}
    return xml.start_tag("page", page) + "\n"


# One line of a region as sent: its XML, and how many items (1 unless it is a
# marker) and element ids of the full region it stands for.
_Line = tuple[str, int, int]


def _region_xml(head: str, lines: list[_Line]) -> str:
    body = "".join(f"{line[0]}\n" for line in lines)
    return f"{head}\n{body}</region>\n"


def _trim(lines: list[_Line], key: str, limits: TrimLimits) -> list[_Line]:
    """Head and tail lines of a long region, the middle replaced by a marker that
    counts every line and id it hides (those behind collapsed blocks included)."""
    middle = lines[limits.head : len(lines) - limits.tail]
    hidden_lines = sum(line[1] for line in middle)
    hidden_ids = sum(line[2] for line in middle)
    marker = xml.element("trimmed", {"lines": hidden_lines, "controls": hidden_ids, "expand": key})
    return [
        *lines[: limits.head],
        (marker, hidden_lines, hidden_ids),
        *lines[len(lines) - limits.tail :],
    ]


def _runs(
    full: tuple[Item, ...], previous: tuple[Item, ...], min_lines: int
) -> list[tuple[int, int]]:
    """Where and how long the runs of at least `min_lines` items of `full` are that
    stood, in the same order, in `previous` (the previous baseline's lines)."""
    if not previous or len(full) < min_lines:
        return []
    matcher = difflib.SequenceMatcher(
        a=[item.xml for item in previous], b=[item.xml for item in full], autojunk=False
    )
    return [(start, size) for _, start, size in matcher.get_matching_blocks() if size >= min_lines]


def _collapse_repeats(
    full: tuple[Item, ...], shown: list[str], runs: list[tuple[int, int]]
) -> list[_Line]:
    """The region's lines, where each of the `runs` of full items becomes one
    `<unchanged>` line (blocks outside landmarks). `shown` is the items' XML with
    nested regions already decided, one to one."""
    assert len(full) == len(shown), "a nested region is one item in both renderings"

    def as_shown(lo: int, hi: int) -> list[_Line]:
        return [(shown[k], 1, len(full[k].eids)) for k in range(lo, hi)]

    out: list[_Line] = []
    cursor = 0
    for start, size in runs:
        out += as_shown(cursor, start)
        ids = sum(len(item.eids) for item in full[start : start + size])
        first = (full[start].text or full[start].name)[:60]
        marker = xml.element("unchanged", {"lines": size, "count": ids, "first": first})
        out.append((marker, size, ids))
        cursor = start + size
    return out + as_shown(cursor, len(full))


def _nested(compaction: Compaction) -> dict[str, tuple[str, Region]]:
    """Region key → the key of the region it is nested in, and the region itself."""
    inner = {r.xml.rstrip("\n"): r for r in compaction.regions if r.depth > 0}
    found: dict[str, tuple[str, Region]] = {}
    for parent in compaction.regions:
        for item in parent.items:
            region = inner.get(item.xml)
            if region is not None:
                found[region.key] = (parent.key, region)
    return found


def _item_keys(nested: dict[str, tuple[str, Region]], kept: set[str]) -> dict[str, str]:
    """The item (rendering) of each nested region diffed on its own → its key."""
    return {region.xml.rstrip("\n"): key for key, (_, region) in nested.items() if key in kept}


def _region_diff(
    old: Region,
    new: Region,
    old_keys: dict[str, str] | None = None,
    new_keys: dict[str, str] | None = None,
) -> str:
    """Hunks of changed lines: removed text and ids, added lines, a line of context;
    empty when no line changed. A nested region named in `old_keys`/`new_keys` (by its
    item) is one line that stays equal: it is diffed on its own."""

    def line(item: Item, keys: dict[str, str] | None) -> str:
        key = keys.get(item.xml) if keys else None
        return item.xml if key is None else f"\0region {key}"

    matcher = difflib.SequenceMatcher(
        a=[line(item, old_keys) for item in old.items],
        b=[line(item, new_keys) for item in new.items],
        autojunk=False,
    )
    new_ids = set(new.eids)
    hunks: list[str] = []
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            continue
        context = new.items[b0 - 1].text[:80] if b0 > 0 else ""
        pieces = [xml.start_tag("change", {"after": context} if context else {"at": "start"})]
        if a1 > a0:
            removed = old.items[a0:a1]
            gone = [e for item in removed for e in item.eids if e not in new_ids]
            # What a person saw there: the text, else the names of what had none.
            said = " ".join(item.text or item.name for item in removed).strip()
            attributes = {"ids": " ".join(gone) or None, "lines": None if said else a1 - a0}
            pieces.append(xml.element("del", attributes, content=said or None))
        if b1 > b0:
            added = "".join(f"{item.xml}\n" for item in new.items[b0:b1])
            pieces.append(f"{xml.start_tag('ins')}\n{added}{xml.end_tag('ins')}")
        pieces.append(xml.end_tag("change"))
        hunks.append("".join(pieces))
    if not hunks:
        return ""
    return (
        xml.start_tag("region", {"name": new.key, "changed": True})
        + "\n"
        + "".join(f"{hunk}\n" for hunk in hunks)
        + "</region>\n"
    )
