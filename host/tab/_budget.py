"""The token budget of a snapshot: what does not fit stands as markers to page through.

Above the budget a baseline keeps the beginning of the page: whole regions in document
order while they fit, then the lines of the region where the budget runs out, then
``<more region="main.4f2a9c1e" at="512" lines="…" count="…" tokens="…" chars="…"/>``
for the rest of that region and one such marker per region after it. The counts are
those of the XML that paging gives back: `expand(region, at)` (`page_region`) answers
the lines from ``at`` a page at a time, each page within the budget, and paging from
every marker to its end gives every line of the region exactly once. Long texts are
cut before regions (``compact(long_text=…)``), and `page_text` reads them.

A marker's key is the region's key and a digest of the region's whole XML: a region
that changed since the marker was sent is refused as stale, never served in its place.
"""

from __future__ import annotations

import bisect
import hashlib

import attrs

from ..pipeline import (
    Compaction,
    Item,
    OutNode,
    Region,
    TokenMemo,
    count_tokens,
    open_tag,
    read_text,
    xml,
)

__all__ = [
    "DEFAULT_BUDGET",
    "MIN_BUDGET",
    "LineTokens",
    "check_budget",
    "fit_baseline",
    "page_region",
    "page_text",
    "region_of_key",
    "tokens_within",
]

# Tokens (o200k_base, the pipeline's counter) one snapshot may take: half the side
# panel's default context budget (extension/agent/compact.js, 40k), a tenth of a
# 200k-token context. 55 of the corpus's 58 pages stay whole; the three over it are
# a 135k-token Wikipedia article and two framework manuals (34k and 29k).
DEFAULT_BUDGET = 20_000
# Below this the head of the page and a few markers would not fit.
MIN_BUDGET = 1_000
# Tokens kept free for each marker while lines are fitted (a marker costs about 40);
# the whole answer is counted at the end and fitted again, tighter, if it is over.
_MARKER_RESERVE = 80
# Markers of whole regions after the cut take at most this share of the budget; the
# regions beyond are counted in one last marker.
_MARKERS_SHARE = 4
# A text page's first length comes from how the text's next this many characters
# count (a few milliseconds), so that a page is most often counted once.
_TEXT_SAMPLE = 4_000
# A text page over its budget is tried again this many hundredths as long as the
# budget's share of it: the text's tokens are not spread evenly, and the page's own
# markup counts too.
_REFIT = 97


def check_budget(budget: int | None) -> int | None:
    """`budget` if it is a usable budget (None: no budget); ValueError naming it."""
    if budget is None:
        return None
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < MIN_BUDGET:
        raise ValueError(f"a snapshot budget must be at least {MIN_BUDGET} tokens, not {budget!r}")
    return budget


def tokens_within(text: str, limit: int) -> int | None:
    """The exact token count of `text` if it is at most `limit`, else None.

    Counting stops soon after the count passes `limit`: a 20 MB page over the budget
    costs the counting of a few budgets' worth of text, not of all of it.
    """
    if limit < 1:
        return 0 if not text else None
    if len(text) <= 4 * limit:  # short enough to count in one go
        tokens = count_tokens(text)
        return tokens if tokens <= limit else None
    # Slices end at a line break, where our XML's pre-tokens end too, so their sum is
    # the count of the whole (checked exactly below once it looks within).
    step = 4 * limit  # at least 4 characters: `limit` is 1 or more here
    total = 0
    start = 0
    while start < len(text):
        end = min(len(text), start + step)
        if end < len(text):
            newline = text.rfind("\n", start, end)
            end = newline + 1 if newline > start else end
        total += count_tokens(text[start:end])
        if total > limit + limit // 50 + 16:
            return None
        start = end
    tokens = count_tokens(text)
    return tokens if tokens <= limit else None


@attrs.define
class LineTokens:
    """Token counts of the lines of one compaction's regions, counted once each, so that
    every marker's ``tokens`` is exact and paging costs a page, not the whole rest.

    Counts add up at a line break (no pre-token of our XML crosses one) except before
    a line that starts with ``/`` (``>\n/`` is one pre-token): such lines are counted
    in one block with the lines before them. Lines are counted through `memo`, which
    the tab keeps from one snapshot to the next.
    """

    memo: TokenMemo = attrs.field(factory=TokenMemo)
    _regions: dict[int, tuple[Region, list[int], list[int]]] = attrs.field(factory=dict)

    def rest(self, region: Region, at: int) -> int:
        """Exactly the tokens of the region's lines from `at` on, as paging gives them."""
        starts, suffix = self._blocks(region)
        block = bisect.bisect_right(starts, at) - 1
        if starts[block] == at:
            return suffix[block]
        end = starts[block + 1] if block + 1 < len(starts) else len(region.items)
        head = "".join(f"{item.xml}\n" for item in region.items[at:end])
        return self.memo.count(head) + suffix[block + 1]

    def _blocks(self, region: Region) -> tuple[list[int], list[int]]:
        known = self._regions.get(id(region))
        if known is not None and known[0] is region:
            return known[1], known[2]
        items = region.items
        starts = [k for k, item in enumerate(items) if k == 0 or not item.xml.startswith("/")]
        suffix = [0] * (len(starts) + 1)
        for block in range(len(starts) - 1, -1, -1):
            end = starts[block + 1] if block + 1 < len(starts) else len(items)
            lines = "".join(f"{item.xml}\n" for item in items[starts[block] : end])
            suffix[block] = suffix[block + 1] + self.memo.count(lines)
        if not starts:  # a region without lines
            starts = [0]
        self._regions[id(region)] = (region, starts, suffix)
        return starts, suffix


def _digest(region: Region) -> str:
    return hashlib.blake2b(region.xml.encode("utf-8"), digest_size=4).hexdigest()


def _paging_key(region: Region) -> str:
    return f"{region.key}.{_digest(region)}"


# The key of the page's top-level regions as one sequence, each region one line (the
# last marker of a page with more regions after the budget than markers fit).
_PAGE = "page"


def _top_regions(compaction: Compaction) -> Region:
    """The page's top-level regions as the lines of one region, to page through."""
    top = [r for r in compaction.regions if r.depth == 0]
    items = tuple(Item(r.xml.rstrip("\n"), r.eids, "", r.key) for r in top)
    eids = tuple(e for r in top for e in r.eids)
    xml_ = "".join(r.xml for r in top)
    return Region(_PAGE, _PAGE, "", xml_, items, eids, -1, OutNode("regions"))


def region_of_key(compaction: Compaction, key: str) -> Region:
    """The region a key names (``main``, or a marker's ``main.4f2a9c1e``); LookupError
    when there is none, or when the region changed since the marker was sent."""
    name, _, digest = key.partition(".")
    regions = compaction.regions
    if name == _PAGE and digest:
        regions = (_top_regions(compaction),)
    for region in regions:
        if region.key == name:
            if digest and digest != _digest(region):
                raise LookupError(
                    f"region {name!r} changed since the marker {key!r} was sent (the page "
                    f"changed): take a snapshot, or expand({name!r}) as it is now"
                )
            return region
    known = ", ".join(r.key for r in compaction.regions)
    raise LookupError(f"no region {name!r} in the latest snapshot (regions: {known})")


def _marker(region: Region, at: int, counts: LineTokens) -> tuple[str, int]:
    """``<more region=… at=…/>``, counting exactly what paging gives from `at` on, and
    the tokens it stands for."""
    rest = region.items[at:]
    tokens = counts.rest(region, at)
    attributes = {
        "region": _paging_key(region),
        "at": at,
        "lines": len(rest),
        "count": sum(len(item.eids) for item in rest),
        "tokens": tokens,
        "chars": sum(len(item.xml) + 1 for item in rest),
    }
    return xml.element("more", attributes), tokens


def _nested(compaction: Compaction, region: Region, item: Item) -> Region | None:
    """The region directly inside `region` that `item` is, if it is one."""
    for candidate in compaction.regions:
        if candidate.depth == region.depth + 1 and candidate.xml.rstrip("\n") == item.xml:
            return candidate
    return None


def _fill(
    compaction: Compaction,
    region: Region,
    at: int,
    budget: int,
    counts: LineTokens,
    *,
    first: bool,
) -> tuple[list[str], int, int]:
    """Lines of `region` from item `at` that fit in `budget` tokens: (lines, the next
    item, tokens used). A nested region that does not fit shows its own head and
    marker. With `first`, a line that fits on no page is shown alone (paging goes on)."""
    lines: list[str] = []
    used = 0
    k = at
    while k < len(region.items):
        item = region.items[k]
        cost = counts.memo.within(f"{item.xml}\n", budget - used)
        if cost is not None:
            lines.append(item.xml)
            used += cost
            k += 1
            continue
        nested = _nested(compaction, region, item)
        room = budget - used - 2 * _MARKER_RESERVE
        if nested is not None and room > _MARKER_RESERVE:
            head = open_tag(nested.out)
            inner, stop, inner_used = _fill(compaction, nested, 0, room, counts, first=False)
            shown = [head, *inner]
            if stop < len(nested.items):
                shown.append(_marker(nested, stop, counts)[0])
            lines.append("\n".join([*shown, "</region>"]))
            used += inner_used + _MARKER_RESERVE
            k += 1
        elif first and not lines:
            lines.append(item.xml)  # one line longer than a page: shown whole
            used += counts.memo.count(f"{item.xml}\n")
            k += 1
        break
    return lines, k, used


def page_region(compaction: Compaction, key: str, at: int, budget: int, counts: LineTokens) -> str:
    """One page of a region from its line `at`, within `budget` tokens (but for a single
    line longer than any page), with a marker for the rest when more follows."""
    region = region_of_key(compaction, key)
    if not 0 <= at < max(1, len(region.items)):
        raise ValueError(
            f"line {at!r} is outside region {region.key!r} of {len(region.items)} lines"
        )
    memo = counts.memo
    if at == 0 and memo.within(region.xml, budget) is not None:
        return region.xml
    head = open_tag(region.out)
    room = budget - memo.count(head) - _MARKER_RESERVE - 8
    while True:
        lines, stop, _ = _fill(compaction, region, at, room, counts, first=True)
        if stop < len(region.items):
            lines.append(_marker(region, stop, counts)[0])
        # The page's own pseudo-region (`_PAGE`) is a <regions> element, not a <region>.
        page = "".join(f"{line}\n" for line in [head, *lines, f"</{region.out.tag}>"])
        over = memo.count(page) - budget
        if over <= 0 or len(lines) <= 2:
            return page
        room -= over + 16


def page_text(compaction: Compaction, key: str, at: int, budget: int) -> str:
    """One page of a long text from character `at` (`read_text`), within `budget`, and
    close to it: a page too long is cut in proportion to how far over it was (a little
    more), not halved, so a text is read in as few pages, and calls, as the budget
    allows."""
    sample = read_text(compaction, key, at, _TEXT_SAMPLE)  # (a bad key or offset: raises)
    tokens = count_tokens(sample)
    rest = len(compaction.texts[key]) - at
    if rest <= _TEXT_SAMPLE and tokens <= budget:
        return sample  # the rest of the text, within the budget
    sampled = min(rest, _TEXT_SAMPLE)
    limit = max(1, sampled * budget * _REFIT // (max(tokens, 1) * 100))
    while True:
        page = read_text(compaction, key, at, limit)
        tokens = count_tokens(page)  # at most `limit` characters: counted in one go
        if tokens <= budget or limit <= 1:
            return page
        limit = max(1, min(limit - 1, limit * budget * _REFIT // (tokens * 100)))


def fit_baseline(
    compaction: Compaction,
    head: str,
    parts: list[tuple[Region, str]],
    budget: int,
    counts: LineTokens,
) -> tuple[str, int, int, frozenset[str]]:
    """A baseline within `budget`: `head`, then the top-level `parts` (each region
    with its XML as the baseline shows it) while they fit, the lines of the region
    where the budget runs out, and markers for the rest. Returns the document, the
    tokens the markers stand for, the document's own tokens, and the keys of the
    top-level regions it did not show whole (those cut or behind a marker)."""
    room = budget
    while True:
        document, hidden, cut = _fitted(compaction, head, parts, room, counts)
        tokens = counts.memo.count(document)
        over = tokens - budget
        if over <= 0 or room <= MIN_BUDGET // 2:
            unseen = {r.key for r in cut}
            return document, hidden, tokens, frozenset(unseen)
        room -= over + 32


def _fitted(
    compaction: Compaction,
    head: str,
    parts: list[tuple[Region, str]],
    budget: int,
    counts: LineTokens,
) -> tuple[str, int, list[Region]]:
    """The document, the tokens its markers stand for, and the top-level regions it
    did not show whole."""
    end = "</page>\n"
    memo = counts.memo
    used = memo.count(head) + memo.count(end)
    out = [head]
    for index, (region, shown) in enumerate(parts):
        rest = len(parts) - index - 1
        reserve = min(rest, budget // _MARKERS_SHARE // _MARKER_RESERVE) * _MARKER_RESERVE
        cost = memo.within(shown, budget - used - reserve)
        if cost is not None:
            out.append(shown)
            used += cost
            continue
        # The budget runs out in this region: its first lines, then markers.
        hidden = 0
        cut = [region]
        tag = open_tag(region.out)
        room = budget - used - reserve - memo.count(tag) - 2 * _MARKER_RESERVE
        lines: list[str] = []
        stop = 0
        if room > 0:
            lines, stop, _ = _fill(compaction, region, 0, room, counts, first=False)
        if stop < len(region.items):
            marker, tokens = _marker(region, stop, counts)
            hidden += tokens
            lines.append(marker)
        out.append("".join(f"{line}\n" for line in [tag, *lines, "</region>"]))
        listed = budget // _MARKERS_SHARE // _MARKER_RESERVE
        for other, shown in parts[index + 1 : index + 1 + listed]:
            marker, tokens = _marker(other, 0, counts)
            if memo.within(shown, memo.count(marker)) is not None:
                out.append(shown)  # the whole region costs less than its marker
                continue
            cut.append(other)
            hidden += tokens
            out.append(f"{marker}\n")
        if index + 1 + listed < len(parts):
            # Too many regions for a marker each: the rest, region by region, from here.
            marker, tokens = _marker(_top_regions(compaction), index + 1 + listed, counts)
            cut.extend(other for other, _ in parts[index + 1 + listed :])
            hidden += tokens
            out.append(f"{marker}\n")
        out.append(end)
        return "".join(out), hidden, cut
    out.append(end)
    return "".join(out), 0, []
