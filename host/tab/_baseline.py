"""Baselines: every region, those unchanged since the agent saw them collapsed, long
repeating regions trimmed.

A region whose rendering (its ordered eids *and* its content: states, values, text)
equals the region as the client last saw it (`Seen`: whichever answer showed it, a
baseline, a diff or an expand; back on a page it saw, as it last saw it there)
collapses to ``<region name="nav" unchanged="true" count="73"/>``; runs of lines
that it saw in the same order collapse to ``<unchanged>`` lines; long changed
regions that repeat across a site (nav, header, footer, aside) keep their head and
tail lines and say how many lines were trimmed. Above the token budget the baseline
is fitted to it (`_budget`).
"""

from __future__ import annotations

import difflib

from ..pipeline import (
    LISTS,
    NOTED_RUN,
    TEXT_MARKER,
    Compaction,
    Item,
    OutNode,
    Region,
    TokenMemo,
    lines_shown,
    open_tag,
    xml,
)
from ._budget import LineTokens, fit_baseline
from ._values import (
    Counted,
    Figures,
    Seen,
    Snapshot,
    SnapshotOptions,
    TrimLimits,
    page_open,
)

__all__ = ["render_baseline"]

# Regions that repeat across the pages of a site and may be trimmed.
TRIMMABLE = frozenset({"nav", "header", "footer", "aside"})


def render_baseline(
    current: Compaction,
    capture_ms: float,
    *,
    previous: Seen,
    options: SnapshotOptions,
    long_text: int,
    memo: TokenMemo,
    line_tokens: LineTokens,
    cut_ahead: bool = False,
) -> Snapshot | None:
    """The baseline of `current` against what the client saw of the page (`previous`);
    over the budget, fitted to it (`fit_baseline`), or None when the page has long
    texts (over `long_text` characters) to cut first.

    `cut_ahead`: `current` has its long texts cut already (at `long_text`), on a guess
    that the page is over the budget with them whole: also None unless this rendering
    shows that it is (`_over_whole`), and the caller renders it whole."""
    parts, untrimmed, collapsed, trimmed = _baseline_parts(current, previous, options)
    head = page_open(current, "baseline")
    document = head + "".join(shown for _, shown in parts) + "</page>\n"
    budget = options.budget
    cut_ahead = cut_ahead and bool(current.texts)
    if budget is not None and not memo.fits(document, budget):
        if not current.texts and _has_long_text(current, long_text):
            return None
        if cut_ahead and not _over_whole(current, document, budget, memo, previous, long_text):
            return None
        fitted, hidden, tokens, unseen = fit_baseline(current, head, parts, budget, line_tokens)
        return Snapshot(
            kind="baseline",
            xml=fitted,
            compaction=current,
            capture_ms=capture_ms,
            regions_collapsed=tuple(collapsed),
            regions_trimmed=tuple(trimmed),
            regions_unseen=unseen,
            counted=Counted.now(Figures(tokens, tokens + hidden, budget_hidden=hidden)),
        )
    if cut_ahead:
        return None  # within the budget cut: whole, it may be too
    whole = head + "".join(untrimmed) + "</page>\n" if trimmed else document

    def count() -> Figures:
        tokens = memo.count(document)
        full = tokens
        if document != page_open(current, "baseline") + current.xml.split("\n", 1)[1]:
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
        counted=Counted(count),
    )


def _baseline_parts(
    current: Compaction, previous: Seen, options: SnapshotOptions
) -> tuple[list[tuple[Region, str]], list[str], list[str], list[str]]:
    """Each top-level region with its XML as the baseline shows it, the same XML
    untrimmed (for `trim_saved`), and the keys of the regions collapsed and
    trimmed (collapsed in document order, trimmed innermost first)."""
    previous_regions = previous.regions if options.dedup else {}
    previous_items = previous.items if options.dedup else ()
    by_node = {id(r.out): r for r in current.regions}
    collapsed: list[str] = []
    trimmed: list[str] = []
    limits = options.limits

    def decide(region: Region) -> tuple[str, str]:
        """The region as shown, and as shown untrimmed: its own `xml` (the very
        string) where nothing in it was collapsed or trimmed."""
        if region.xml == previous_regions.get(region.key):
            collapsed.append(region.key)
            marker = {
                "name": region.key,
                "site": region.site or None,  # a frame of another site still names it
                "unchanged": True,
                "count": len(region.eids),
            }
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
        runs = _runs(items, previous_items, options.block_min_lines)
        lines = _collapse_repeats(items, shown_items, runs)
        cut = (
            options.trim
            and region.name in TRIMMABLE
            and sum(lines_shown(line[0]) for line in lines) > limits.max_lines
        )
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


def _over_whole(
    current: Compaction,
    document: str,
    budget: int,
    memo: TokenMemo,
    previous: Seen,
    long_text: int,
) -> bool:
    """Whether the baseline of `current`'s page against `previous` with its long texts
    whole would be over `budget`, judged from `document`, that baseline with them cut
    at `long_text`.

    The two render alike but for the lines that hold a cut text, unless cutting
    changes how many lines a region has (a trimmable one is trimmed by that count),
    which lines form a list (a link or button whose text was cut may be one of `LISTS`
    whole), or what matches what the client saw: a region or line holding a cut text
    that it saw (cut, on a page before), or one that it may have seen whole (one of
    its `Seen.whole_runs`), could collapse in one rendering and not in the other, and
    move which of its lines match (`_runs`). Otherwise every piece of `document`
    without a marker is a piece of the whole baseline too, and those cost more than
    `budget` already when `over_outside` says so."""
    if current.cut_in & LISTS.keys():
        return False
    cut = [r for r in current.regions if TEXT_MARKER in r.xml]
    if any(r.name in TRIMMABLE for r in cut):
        return False
    if previous.regions or previous.items:
        if long_text < NOTED_RUN or not set(previous.whole_runs).isdisjoint(current.texts.values()):
            return False
        if any(previous.regions.get(r.key) == r.xml for r in cut):
            return False
        lines = {item.xml for item in previous.items}
        if any(item.xml in lines for r in cut for item in r.items if TEXT_MARKER in item.xml):
            return False
    return memo.over_outside(document, budget, TEXT_MARKER)


def _has_long_text(current: Compaction, limit: int) -> bool:
    """Whether a text run of the page is longer than `limit` (``compact`` would cut it)."""
    return any(
        isinstance(child, str) and len(child) > limit
        for node in current.root.iter()
        for child in node.children
    )


# One line of a region as sent: its XML, and how many items (1 unless it is a
# marker) and element ids of the full region it stands for.
_Line = tuple[str, int, int]


def _region_xml(head: str, lines: list[_Line]) -> str:
    body = "".join(f"{line[0]}\n" for line in lines)
    return f"{head}\n{body}</region>\n"


def _trim(lines: list[_Line], key: str, limits: TrimLimits) -> list[_Line]:
    """Head and tail lines of a long region, the middle replaced by a marker that
    counts every line and id it hides (those behind collapsed blocks included). The
    head and tail are measured in lines of the page (`lines_shown`: a list of links
    shows each), and hold whole items."""
    head = _lines_for(lines, limits.head)
    tail = _lines_for(lines[head:][::-1], limits.tail)
    if head + tail >= len(lines):
        return lines
    middle = lines[head : len(lines) - tail]
    hidden_lines = sum(line[1] for line in middle)
    hidden_ids = sum(line[2] for line in middle)
    marker = xml.element("trimmed", {"lines": hidden_lines, "controls": hidden_ids, "expand": key})
    return [
        *lines[:head],
        (marker, hidden_lines, hidden_ids),
        *lines[len(lines) - tail :],
    ]


def _lines_for(lines: list[_Line], wanted: int) -> int:
    """How many of `lines`, from the first, show `wanted` lines of the page (fewer if
    one more would show more than `wanted`, but at least one line when one is wanted)."""
    shown = 0
    for count, line in enumerate(lines):
        shown += lines_shown(line[0])
        if shown > wanted:
            return max(count, 1 if wanted else 0)
    return len(lines)


def _runs(
    full: tuple[Item, ...], previous: tuple[Item, ...], min_lines: int
) -> list[tuple[int, int]]:
    """Where and how long the runs of items of `full` that show at least `min_lines`
    lines are that stood, in the same order, in `previous` (the lines the client saw)."""
    if not previous or sum(lines_shown(item.xml) for item in full) < min_lines:
        return []
    matcher = difflib.SequenceMatcher(
        a=[item.xml for item in previous], b=[item.xml for item in full], autojunk=False
    )
    # A run is measured in lines of the page: a list of links shows each.
    return [
        (start, size)
        for _, start, size in matcher.get_matching_blocks()
        if sum(lines_shown(item.xml) for item in full[start : start + size]) >= min_lines
    ]


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
