"""Snapshots of one tab: baselines with unchanged regions collapsed, trimming, diffs.

A `SnapshotMemory` captures its target, runs the pipeline and decides what to send:

* a **baseline** (first look, a navigation to another document, or when asked):
  every region, except that a region whose rendering (its ordered eids *and* its
  content: states, values, text) equals the one in the previous baseline collapses
  to ``<region name="nav" unchanged="true" count="73"/>``; long changed regions
  that repeat across a site (nav, header, footer, aside) keep their head and tail
  lines and say how many lines were trimmed;
* a **diff** (after an action that left the document in place): only the lines
  that changed since the previous snapshot, with a line of context, or a baseline
  when the diff would cost more.

The previous-baseline memory is updated only by baselines and cleared on errors.

Ids never move within a document's life: the memory keeps, per document, which node
each id it sent names (`issued`), and the pipeline keeps those ids on their nodes
and gives none of them to another node while its own still exists.
"""

from __future__ import annotations

import difflib
import time

import attrs

from pycdp_bridge import AXMode, PageModel, Target, capture
from pycdp_bridge import protocol as cdp

from ..pipeline import (
    Compaction,
    Control,
    Item,
    OutNode,
    Region,
    compact,
    count_tokens,
    open_tag,
    render_items,
    render_node,
    xml,
)

__all__ = ["PageChangedError", "Snapshot", "SnapshotMemory", "SnapshotOptions", "TrimLimits"]

# A capture that saw the page navigate is taken again, this many times at most.
CAPTURE_ATTEMPTS = 3


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


@attrs.frozen
class Snapshot:
    """One answer to the agent: its XML and the figures behind it."""

    kind: str  # "baseline" or "diff"
    xml: str
    compaction: Compaction
    capture_ms: float
    tokens: int
    full_tokens: int  # tokens of the baseline without dedup or trimming
    dedup_saved: int = 0
    trim_saved: int = 0
    regions_collapsed: tuple[str, ...] = ()
    regions_trimmed: tuple[str, ...] = ()

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
        )
        return stats


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
    # Every eid sent for the document `issued_document` → the control it was sent for
    # (nodes of the tab's own session). Kept by `forget`: the model may still hold them.
    issued: dict[str, Control] = attrs.field(factory=dict)
    issued_document: str = ""

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
            model = await capture(self.target, ax=self.options.ax, rects=self.options.rects)
            if not model.navigated and model.document_id == before:
                return model
        raise PageChangedError(CAPTURE_ATTEMPTS)

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

    def render(
        self, model: PageModel, *, capture_ms: float = 0.0, baseline: bool = False
    ) -> Snapshot:
        """The answer for a captured page (sans-I/O: tests call this directly)."""
        if model.document_id != self.issued_document:
            self.issued = {}
            self.issued_document = model.document_id
        # Tokens are counted for what is sent; the full page only when compared.
        current = compact(model, count=False, reserved=self.reserved(model))
        for eid, control in current.controls.items():
            if model.frames[control.frame].session_id is None:
                self.issued[eid] = control
        previous = self.latest
        same_document = (
            previous is not None and model.document_id == self.latest_document and not baseline
        )
        snapshot: Snapshot | None = None
        if same_document:
            assert previous is not None
            snapshot = self._diff(previous, current, capture_ms)
        if snapshot is None:
            snapshot = self._baseline(current, capture_ms)
            self.baseline_regions = {r.key: r.xml for r in current.regions}
            self.baseline_items = tuple(
                item for r in current.regions if r.depth == 0 for item in r.items
            )
        self.latest = current
        self.latest_document = model.document_id
        return snapshot

    def expand(self, region: str) -> str:
        """Everything of one region of the latest snapshot, untrimmed and uncollapsed."""
        if self.latest is None:
            raise LookupError("no snapshot of this tab yet: take a snapshot first")
        for candidate in self.latest.regions:
            if candidate.key == region:
                return candidate.xml
        known = ", ".join(r.key for r in self.latest.regions)
        raise LookupError(f"no region {region!r} in the latest snapshot (regions: {known})")

    # -- baselines ----------------------------------------------------------

    def _baseline(self, current: Compaction, capture_ms: float) -> Snapshot:
        document, collapsed, trimmed = self._baseline_xml(current, trim=self.options.trim)
        tokens = count_tokens(document)
        full = tokens
        if document != _page_open(current, "baseline") + current.xml.split("\n", 1)[1]:
            full = count_tokens(current.xml)  # something was collapsed or trimmed
        trim_saved = 0
        if trimmed:
            untrimmed, _, _ = self._baseline_xml(current, trim=False)
            trim_saved = count_tokens(untrimmed) - tokens
        return Snapshot(
            kind="baseline",
            xml=document,
            compaction=current,
            capture_ms=capture_ms,
            tokens=tokens,
            full_tokens=full,
            dedup_saved=max(0, full - tokens - trim_saved),
            trim_saved=trim_saved,
            regions_collapsed=tuple(collapsed),
            regions_trimmed=tuple(trimmed),
        )

    def _baseline_xml(self, current: Compaction, *, trim: bool) -> tuple[str, list[str], list[str]]:
        previous = self.baseline_regions if self.options.dedup else None
        previous_items = self.baseline_items if self.options.dedup else ()
        by_node = {id(r.out): r for r in current.regions}
        collapsed: list[str] = []
        trimmed: list[str] = []
        limits = self.options.limits

        def replace(node: OutNode) -> str | None:
            region = by_node.get(id(node))
            if region is None:
                return None
            if previous is not None and previous.get(region.key) == region.xml:
                collapsed.append(region.key)
                marker = {"name": region.key, "unchanged": True, "count": len(region.eids)}
                return xml.element("region", marker) + "\n"
            # What is shown (nested regions already decided) beside the full items,
            # one to one, so every marker counts the lines and ids it stands for.
            shown = render_items(node, replace)
            lines = _collapse_repeats(
                region.items, shown, previous_items, self.options.block_min_lines
            )
            if trim and region.name in TRIMMABLE and len(lines) > limits.max_lines:
                trimmed.append(region.key)
                lines = _trim(lines, region.key, limits)
            # Rendered here even when nothing changed: the nested regions were
            # already decided (and counted) by render_items above.
            body = "".join(f"{line.xml}\n" for line in lines)
            return f"{open_tag(node)}\n{body}</region>\n"

        body = [
            replace(n) or render_node(n, replace)
            for n in current.root.children
            if isinstance(n, OutNode)
        ]
        return _page_open(current, "baseline") + "".join(body) + "</page>\n", collapsed, trimmed

    # -- diffs ----------------------------------------------------------------

    def _diff(
        self, previous: Compaction, current: Compaction, capture_ms: float
    ) -> Snapshot | None:
        before = {r.key: r for r in previous.regions if r.depth == 0}
        parts: list[str] = []
        for region in current.regions:
            if region.depth != 0:
                continue
            old = before.pop(region.key, None)
            if old is not None and old.xml == region.xml:
                continue
            if old is None:
                parts.append(region.xml.replace("<region ", '<region added="true" ', 1))
            else:
                parts.append(_region_diff(old, region))
        for gone in before.values():
            ids = " ".join(gone.eids) or None
            parts.append(xml.element("region", {"name": gone.key, "removed": True, "ids": ids}))
            parts.append("\n")
        if not parts:
            parts.append("<unchanged/>\n")
        document = _page_open(current, "diff") + "".join(parts) + "</page>\n"
        tokens = count_tokens(document)
        full = count_tokens(current.xml)
        if tokens >= full:
            return None  # a baseline is cheaper
        return Snapshot("diff", document, current, capture_ms, tokens, full_tokens=full)


async def _loader_id(target: Target) -> str:
    """The main frame's loader id: it changes with every navigation to a new document."""
    tree = await target.execute(cdp.page_get_frame_tree())
    return str(tree["frameTree"]["frame"].get("loaderId", ""))


def _page_open(current: Compaction, kind: str) -> str:
    page = {"url": current.url, "title": current.title, "snapshot": kind}
    return xml.start_tag("page", page) + "\n"


@attrs.frozen
class _Line:
    """One line of a region as sent, and how much of the full region it stands for."""

    xml: str
    lines: int  # items of the full region behind it (1 unless it is a marker)
    ids: int  # element ids behind it


def _trim(lines: list[_Line], key: str, limits: TrimLimits) -> list[_Line]:
    """Head and tail lines of a long region, the middle replaced by a marker that
    counts every line and id it hides (those behind collapsed blocks included)."""
    middle = lines[limits.head : len(lines) - limits.tail]
    hidden_lines = sum(line.lines for line in middle)
    hidden_ids = sum(line.ids for line in middle)
    marker = xml.element("trimmed", {"lines": hidden_lines, "controls": hidden_ids, "expand": key})
    return [
        *lines[: limits.head],
        _Line(marker, hidden_lines, hidden_ids),
        *lines[len(lines) - limits.tail :],
    ]


def _collapse_repeats(
    full: tuple[Item, ...], shown: list[Item], previous: tuple[Item, ...], min_lines: int
) -> list[_Line]:
    """The region's lines, where runs of at least `min_lines` full items that stood, in
    the same order, in the previous baseline become one `<unchanged>` line (blocks
    outside landmarks). `shown` is `full` with nested regions already decided."""
    assert len(full) == len(shown), "a nested region is one item in both renderings"
    runs = (
        difflib.SequenceMatcher(
            a=[item.xml for item in previous], b=[item.xml for item in full], autojunk=False
        ).get_matching_blocks()
        if previous
        else []
    )

    def as_shown(lo: int, hi: int) -> list[_Line]:
        return [_Line(shown[k].xml, 1, len(full[k].eids)) for k in range(lo, hi)]

    out: list[_Line] = []
    cursor = 0
    for _, start, size in runs:
        if size < min_lines:
            continue
        out += as_shown(cursor, start)
        ids = sum(len(item.eids) for item in full[start : start + size])
        first = (full[start].text or full[start].name)[:60]
        marker = xml.element("unchanged", {"lines": size, "count": ids, "first": first})
        out.append(_Line(marker, size, ids))
        cursor = start + size
    return out + as_shown(cursor, len(full))


def _region_diff(old: Region, new: Region) -> str:
    """Hunks of changed lines: removed text and ids, added lines, a line of context."""
    matcher = difflib.SequenceMatcher(
        a=[item.xml for item in old.items], b=[item.xml for item in new.items], autojunk=False
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
    return (
        xml.start_tag("region", {"name": new.key, "changed": True})
        + "\n"
        + "".join(f"{hunk}\n" for hunk in hunks)
        + "</region>\n"
    )
