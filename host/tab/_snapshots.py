"""Snapshots of one tab: baselines with unchanged regions collapsed, trimming, diffs.

A `SnapshotMemory` captures its target (`_capture`), runs the pipeline and decides
what to send:

* a **baseline** (first look, a navigation to another document, or when asked):
  every region, collapsed where it is exactly as the client last saw it and trimmed
  where it is a long repeating region (`_baseline`);
* a **diff** (after an action that left the document in place): only the lines
  that changed since the previous snapshot, with a line of context, or a baseline
  when the diff would cost more or pass the budget (`_diff`).

Above the token budget (`SnapshotOptions.budget`) a baseline cuts long texts, then
shows regions while they fit and markers for the rest (`_budget`); `expand` and
`read_text` page through them. Pages within the budget are sent as they always were.

What the client last saw (`view`, a `Seen`) is the one thing a region is compared
with: every answer that shows page content moves it (a baseline, a diff, an
`expand` of a whole region), a budget marker the client never expanded is no view
of its region, and an error clears it, as does a client that dropped the pages it was
shown from its context (`forget_views`). Back on a page it saw, the client holds what
it last saw there (`seen`, per URL).
Ids never move within a document's life: the memory keeps, per document, which node
each id it sent names (`_issued`).

Nothing the memory holds is changed in place: each snapshot puts new values in its
fields. `fork` relies on it: the side panel's inspector renders on a fork, which
starts from what the agent saw and changes nothing the agent's next answer reads. So
does `render_ahead`: an action's answer is rendered on a fork while the page settles,
and `adopt` takes the fork's state only when the memory is still the one it forked.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import attrs

from pycdp_bridge import PageModel, Target, capture

from ..pipeline import LONG_TEXT, Compaction, Control, Prepared, TokenMemo, prepare
from ._baseline import render_baseline
from ._budget import DEFAULT_BUDGET, LineTokens, page_region, page_text, region_of_key
from ._capture import capture_document
from ._diff import render_diff
from ._issued import IssuedIds
from ._values import Seen, Snapshot, SnapshotOptions, keys_within

__all__ = ["RenderedAhead", "SnapshotMemory"]

# Pages whose regions the memory keeps as the agent last saw them, newest last.
SEEN_PAGES = 8
# Characters of page text per token above which a page is taken to be over its
# budget before it is rendered (`SnapshotMemory._over_at_sight`).
_CHARS_PER_TOKEN = 4


@attrs.frozen(eq=False)
class RenderedAhead:
    """An answer rendered ahead on a fork (`SnapshotMemory.render_ahead`): the memory's
    state it started from (`basis`), the answer, and the fork's state after it."""

    basis: tuple[object, ...]
    snapshot: Snapshot
    after: SnapshotMemory


@attrs.define
class SnapshotMemory:
    """The snapshot state of one tab for one client: latest snapshot, what it saw, id map."""

    target: Target
    options: SnapshotOptions = attrs.field(factory=SnapshotOptions)
    latest: Compaction | None = None
    latest_document: str = ""
    # The page as the client last saw it: the regions it saw (whole, or trimmed with
    # their marker) and their lines. A baseline collapses what equals it.
    view: Seen = attrs.field(factory=Seen)
    # Regions of the latest snapshot the client has not seen (budget markers, a region
    # a tool showed it otherwise), and those it saw trimmed: what `view` leaves out.
    unseen: frozenset[str] = frozenset()
    trimmed: frozenset[str] = frozenset()
    # URL → its page as the client last saw it there: going back to a page it saw
    # sends only what changed since (SEEN_PAGES at most).
    seen: dict[str, Seen] = attrs.field(factory=dict)
    # Whether the latest capture's page had a shadow root: its next capture asks for
    # the DOM tree with the snapshot rather than after it (see `capture`'s dom_tree).
    shadow_roots: bool = False
    # The ids sent for the current document. Kept by `forget`: the model may still hold them.
    ids: IssuedIds = attrs.field(factory=IssuedIds)
    # The document whose snapshots cut long texts (one went over the budget): its
    # later snapshots cut them too, so diffs compare like with like and keys last.
    cut_document: str = ""
    # Token counts of lines, kept from one snapshot to the next. The one thing copies
    # share that changes: a cache, whose counts are the same whoever counted them.
    token_memo: TokenMemo = attrs.field(factory=TokenMemo)
    # Token counts of the latest snapshot's lines, for markers and pages.
    line_tokens: LineTokens = attrs.field(factory=LineTokens)

    @property
    def issued(self) -> Mapping[str, Control]:
        """Every eid sent for the document `issued_document` → the control it was sent
        for (nodes of the tab's own session)."""
        return self.ids.controls

    def frame_url_of(self, eid: str) -> str | None:
        """The URL of the frame that holds element ``eid`` of the latest snapshot (for a
        frame its embedder wrote, the embedder's, as the capture read it from the
        browser), or None when it is in the main frame (or unknown)."""
        control = self.latest.controls.get(eid) if self.latest is not None else None
        if control is None or control.frame == 0:
            return None
        return control.frame_url or None

    @property
    def issued_document(self) -> str:
        """The document the `issued` ids were sent for."""
        return self.ids.document

    def fork(self) -> SnapshotMemory:
        """A copy to render on that never changes what this memory's next snapshot,
        diff or id resolution reads (the inspector's view of the agent's tab).

        It starts from what this memory's client saw, pages seen, latest snapshot
        and ids, so it collapses what this memory saw unchanged and shows the same
        ids; those are values, shared. What it renders, sees and issues from then on
        is its own, and so are its options. Only the token counts' cache is shared.
        """
        return attrs.evolve(self)

    def render_ahead(self, model: PageModel, *, capture_ms: float = 0.0) -> RenderedAhead:
        """The answer `render` would give for ``model`` (not a forced baseline),
        rendered on a fork: this memory is unchanged until `adopt` takes it."""
        basis = self._state()
        after = self.fork()
        return RenderedAhead(basis, after.render(model, capture_ms=capture_ms), after)

    def adopt(self, ahead: RenderedAhead) -> Snapshot | None:
        """``ahead``'s answer, the memory moved to the state it rendered it in; None (and
        nothing changed) when the memory changed since it was rendered: it would no
        longer be the answer `render` gives."""
        if not all(now is then for now, then in zip(self._state(), ahead.basis, strict=True)):
            return None
        for field in attrs.fields(SnapshotMemory):
            setattr(self, field.name, getattr(ahead.after, field.name))
        return ahead.snapshot

    def _state(self) -> tuple[object, ...]:
        """Every field, by identity: no field is changed in place (the module's
        docstring), so the same objects are the same state."""
        return tuple(getattr(self, field.name) for field in attrs.fields(SnapshotMemory))

    async def snapshot(self, *, baseline: bool = False) -> Snapshot:
        """Capture the tab and answer with a baseline or a diff."""
        started = time.perf_counter()
        try:
            model = await capture_document(self.capture)
        except Exception:
            self.forget()
            raise
        capture_ms = (time.perf_counter() - started) * 1000
        return self.render(model, capture_ms=capture_ms, baseline=baseline)

    async def capture(self, frame_tree: Mapping[str, Any] | None = None) -> PageModel:
        """One capture of the tab with this memory's options (`capture`'s caller checks
        that it is of one document); `frame_tree`: the main frame's tree just read."""
        model = await capture(
            self.target,
            ax=self.options.ax,
            rects=self.options.rects,
            dom_tree=self.shadow_roots,
            frame_tree=frame_tree,
        )
        self.shadow_roots = any(node.shadow_root_type in ("open", "closed") for node in model.nodes)
        return model

    def reserved(self, model: PageModel) -> dict[str, int]:
        """Eid → backend node id of every id sent for `model`'s document (`compact`'s
        ``reserved``); empty for another document."""
        return self.ids.reserved(model)

    def forget(self) -> None:
        """Drop every memory of the tab (after an error, or a released tab), except
        which node each id sent for the current document names."""
        self.latest = None
        self.latest_document = ""
        self.view = Seen()
        self.unseen = self.trimmed = frozenset()
        self.seen = {}

    def forget_views(self) -> None:
        """The client no longer holds any page it was shown (the side panel's agent
        compacted its history): from now on no region is collapsed as "as you last
        saw it" until an answer shows it whole again.

        The latest snapshot stays, with the ids: the next answer may still be a diff
        against it, `expand` still shows its regions, and the ids the client kept stay
        valid. Every region of it counts as unseen, not just `view` emptied: a diff
        moves `view` to the page as it is, less the unseen regions (only a region a
        diff adds, an `expand` or a baseline shows whole is held again)."""
        self.view = Seen()
        self.seen = {}
        self.trimmed = frozenset()
        regions = self.latest.regions if self.latest is not None else ()
        self.unseen = frozenset(r.key for r in regions)

    def render(
        self, model: PageModel, *, capture_ms: float = 0.0, baseline: bool = False
    ) -> Snapshot:
        """The answer for a captured page (sans-I/O: tests call this directly)."""
        started = time.perf_counter()
        self.ids = self.ids.of_document(model.document_id)
        self.line_tokens = LineTokens(self.token_memo)
        previous = self.latest
        same_document = (
            previous is not None and model.document_id == self.latest_document and not baseline
        )
        prepared = prepare(model)
        # Tokens are counted for what is sent; the full page only when compared.
        long_text = self._long_text() if model.document_id == self.cut_document else None
        cut_ahead = long_text is None and not same_document and self._over_at_sight(prepared)
        if cut_ahead:
            long_text = self._long_text()
        current = prepared.finish(count=False, long_text=long_text, reserved=self.reserved(model))
        pipeline = current.stats.stage_ms
        answering = time.perf_counter()
        self.ids = self.ids.with_sent(model, current)
        snapshot: Snapshot | None = None
        if same_document:
            assert previous is not None
            snapshot = render_diff(
                previous, current, capture_ms, budget=self.options.budget, memo=self.token_memo
            )
            if snapshot is not None:
                # A diff shows every change since the latest snapshot: the client now
                # holds each region as it is, but for those it had not seen whole before
                # (a new region it was shown whole).
                kept = {r.key for r in current.regions} & {r.key for r in previous.regions}
                self.unseen &= kept
                self.trimmed &= kept
        if snapshot is None:
            # What the client holds of the page: what it last saw of each region, and on
            # a page it left and came back to (back, forward, a link to it), what it
            # last saw there.
            base = self.view.beside(self.seen.get(current.url))
            snapshot = self._baseline(current, capture_ms, base, cut_ahead=cut_ahead)
            if snapshot is None and cut_ahead:  # not surely over the budget whole
                current = prepared.finish(count=False, reserved=self.reserved(model))
                self.ids = self.ids.with_sent(model, current)
                snapshot = self._baseline(current, capture_ms, base)
            elif cut_ahead and current.texts:
                self.cut_document = model.document_id
            if snapshot is None:  # over the budget with long texts: they are cut first
                self.cut_document = model.document_id
                # Rendered again from the same build: only the rendering changes.
                current = prepared.finish(
                    count=False, long_text=self._long_text(), reserved=self.reserved(model)
                )
                self.ids = self.ids.with_sent(model, current)
                snapshot = self._baseline(current, capture_ms, base)
                assert snapshot is not None
            self._after_baseline(snapshot, base)
        self.latest = snapshot.compaction
        self.latest_document = model.document_id
        self._saw(current)
        done = time.perf_counter()
        timings = {"capture": capture_ms}
        timings.update((f"capture.{k}", v * 1000) for k, v in model.timings.items())
        timings.update(filter=pipeline["filter"], build=pipeline["build"])
        timings["encode"] = (answering - started) * 1000 - pipeline["filter"] - pipeline["build"]
        timings["answer"] = (done - answering) * 1000
        return attrs.evolve(snapshot, timings=timings)

    def _after_baseline(self, snapshot: Snapshot, base: Seen) -> None:
        """What the client holds after `snapshot`, a baseline rendered against `base`:
        what it shows whole, and a collapsed region as the client held it (trimmed if
        it saw it trimmed)."""
        current = snapshot.compaction
        by_key = {r.key: r for r in current.regions}
        carried = {
            inner
            for key in snapshot.regions_collapsed
            for inner in keys_within(current, by_key[key])
            if inner in base.trimmed
        }
        self.unseen = frozenset(
            inner for key in snapshot.regions_unseen for inner in keys_within(current, by_key[key])
        )
        self.trimmed = frozenset(snapshot.regions_trimmed) | carried

    def _saw(self, current: Compaction) -> None:
        """The client now holds `current` as `unseen` and `trimmed` say; new values,
        never ones changed in place: a fork keeps what it saw."""
        self.view = Seen.of(current, unseen=self.unseen, trimmed=self.trimmed)
        pages = [(url, page) for url, page in self.seen.items() if url != current.url]
        pages.append((current.url, self.view))
        self.seen = dict(pages[-SEEN_PAGES:])

    def _baseline(
        self, current: Compaction, capture_ms: float, base: Seen, *, cut_ahead: bool = False
    ) -> Snapshot | None:
        return render_baseline(
            current,
            capture_ms,
            previous=base,
            options=self.options,
            long_text=self._long_text(),
            memo=self.token_memo,
            line_tokens=self.line_tokens,
            cut_ahead=cut_ahead,
        )

    def _over_at_sight(self, prepared: Prepared) -> bool:
        """Whether a baseline of a new document, `prepared`'s page, is likely over the
        budget with its long texts whole, so that they are cut before its first
        rendering: a page over its budget is then rendered once, not whole and then
        cut. The guess is checked (see `render_baseline`'s ``cut_ahead``), and a page it
        was wrong about is rendered whole after."""
        budget = self.options.budget
        if budget is None:
            return False
        # The corpus's pages have 2.6 characters of text per token at the median, 4.8
        # at most: a page this long is over the budget but for a few (a wrong guess
        # costs one rendering more, never another answer).
        return prepared.text_chars() > _CHARS_PER_TOKEN * budget

    def _long_text(self) -> int:
        """Characters of a long text a snapshot shows: `LONG_TEXT`, fewer for a small
        budget (a tenth of it), so that one line of text always fits a page."""
        budget = self.options.budget
        return LONG_TEXT if budget is None else min(LONG_TEXT, budget // 10)

    def expand(self, region: str, at: int = 0) -> str:
        """Everything of one region of the latest snapshot, untrimmed and uncollapsed;
        over the budget a page of its lines from line `at`, with a marker for the rest.
        `region` is a key (``main``) or a marker's (``main.4f2a9c1e``): LookupError
        when there is no such region or it changed since the marker; ValueError for a
        line outside it."""
        if self.latest is None:
            raise LookupError("no snapshot of this tab yet: take a snapshot first")
        budget = self.options.budget
        whole = region_of_key(self.latest, region)
        if budget is None and at == 0:
            shown = whole.xml
        else:
            shown = page_region(self.latest, region, at, budget or DEFAULT_BUDGET, self.line_tokens)
        if shown == whole.xml:
            # The client now holds the whole region, however it was shown before.
            inside = frozenset(keys_within(self.latest, whole))
            self.unseen -= inside
            self.trimmed -= inside
            self._saw(self.latest)
        return shown

    def shown_live(self, eid: str) -> None:
        """A tool showed the client element `eid` as the page has it now, which may
        differ from the latest snapshot: the regions that hold it are no longer what
        the client last saw, so the next baseline shows them whole."""
        if self.latest is None:
            return
        holding = frozenset(r.key for r in self.latest.regions if eid in r.eids)
        if holding:
            self.unseen |= holding
            self._saw(self.latest)

    def read_text(self, key: str, at: int) -> str:
        """A page of a long text the latest snapshot showed cut, from character `at`
        (LookupError for a key it does not have, ValueError for an offset outside)."""
        if self.latest is None:
            raise LookupError("no snapshot of this tab yet: take a snapshot first")
        return page_text(self.latest, key, at, self.options.budget or DEFAULT_BUDGET)
