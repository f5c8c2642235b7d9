"""Diffs: what changed since the previous snapshot of the same document.

Only the lines that changed, as hunks with a line of context (removed text and ids,
added lines), regions added and removed; a region nested in the same region in both
snapshots (a form in main) is compared on its own. Sent only while it fits the budget
and costs fewer tokens than the page itself.
"""

from __future__ import annotations

import difflib

from ..pipeline import Compaction, Item, Region, TokenMemo, least_tokens, xml
from ._values import Counted, Figures, Snapshot, page_open

__all__ = ["render_diff"]


def render_diff(
    previous: Compaction,
    current: Compaction,
    capture_ms: float,
    *,
    budget: int | None,
    memo: TokenMemo,
) -> Snapshot | None:
    """The diff from `previous` to `current`, two snapshots of one document; None when
    it would pass the `budget` or cost more tokens than the page (then a baseline)."""
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
        # A frame of another site keeps naming its site in every form (see `_frames`).
        removed = {"name": gone.key, "site": gone.site or None, "removed": True, "ids": ids}
        parts.append(xml.element("region", removed))
        parts.append("\n")
    if not parts:
        parts.append("<unchanged/>\n")
    document = page_open(current, "diff") + "".join(parts) + "</page>\n"
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

    return Snapshot("diff", document, current, capture_ms, counted=Counted(count))


def _label(item: Item) -> str:
    """A line as a change quotes it: its text, else its name (a field by its label)."""
    return (item.text or item.name or item.xml)[:80]


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
        # After the line before, as a person would call it (a field without text by
        # its name): a line without text is still a place, never the region's start.
        place: dict[str, object] = {"at": "start"}
        if b0 > 0:
            context = _label(new.items[b0 - 1])
            # A line that reads like one before it is counted: the change has one place.
            nth = sum(1 for item in new.items[:b0] if _label(item) == context)
            place = {"after": context, "nth": nth if nth > 1 else None}
        pieces = [xml.start_tag("change", place)]
        if a1 > a0:
            removed = old.items[a0:a1]
            gone = [e for item in removed for e in item.eids if e not in new_ids]
            # What a person saw there: the text, else the names of what had none; and
            # how many lines, so that the change has one reading.
            said = " ".join(item.text or item.name for item in removed).strip()
            attributes = {"ids": " ".join(gone) or None, "lines": a1 - a0}
            pieces.append(xml.element("del", attributes, content=said or None))
        if b1 > b0:
            added = "".join(f"{item.xml}\n" for item in new.items[b0:b1])
            pieces.append(f"{xml.start_tag('ins')}\n{added}{xml.end_tag('ins')}")
        pieces.append(xml.end_tag("change"))
        hunks.append("".join(pieces))
    if not hunks:
        return ""
    return (
        xml.start_tag("region", {"name": new.key, "site": new.site or None, "changed": True})
        + "\n"
        + "".join(f"{hunk}\n" for hunk in hunks)
        + "</region>\n"
    )
