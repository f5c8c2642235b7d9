"""Check that a deduplicated, trimmed baseline loses nothing.

A baseline with dedup and trimming (what the agent gets) must say, line for line,
what the same page's full baseline says: every line is either there, or behind a
marker that points at content the agent already has or can ask for:

* ``<region name="K" unchanged="true" count="N"/>``: the full region stood, exactly,
  in the previous full baseline, with N ids;
* ``<unchanged lines="n" count="m" first="…"/>``: the next n items of the full
  baseline stood, in that order, in the previous full baseline;
* ``<trimmed lines="n" controls="m" expand="K"/>``: the next n items are in what
  ``expand(K)`` returns.

`reconstruct` replays the markers against the full baselines and raises
`LossError` at the first line it cannot account for. Items are the unit of the
format (``render_items``): one per line, and a nested region or a list of links or
buttons is one item however many lines it spans.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from html import unescape

__all__ = ["LossError", "items_of", "reconstruct"]

_COLLAPSED = re.compile(r'<region name="([^"]*)" unchanged="true" count="(\d+)"/>$')
_UNCHANGED = re.compile(r'<unchanged lines="(\d+)" count="(\d+)" first="([^"]*)"/>$')
_TRIMMED = re.compile(r'<trimmed lines="(\d+)" controls="(\d+)" expand="([^"]*)"/>$')
_ID = re.compile(r' id="[^"]+"')
_TAG = re.compile(r"<[^>]+>")
_LIST = re.compile(r"<(links|buttons)\b[^>]*>$")
_LIST_BODY = re.compile(r"^<(links|buttons)\b[^>]*>\n(.*?)\n</\1>$", re.MULTILINE | re.DOTALL)
# The id that starts each line of a list.
_LISTED_ID = re.compile(r"^[a-z][a-z0-9]* ", re.MULTILINE)


class LossError(AssertionError):
    """A line of the full baseline is neither in the answer nor behind a marker."""


def items_of(body: str) -> list[str]:
    """The items of a region body (or of a page): lines, a nested region as one item."""
    items: list[str] = []
    lines = body.split("\n")
    k = 0
    while k < len(lines):
        line = lines[k]
        opens = _LIST.match(line)
        if opens is not None:
            # A list of links or buttons: one item from its start tag to its end tag.
            end = lines.index(f"</{opens[1]}>", k)
            items.append("\n".join(lines[k : end + 1]))
            k = end + 1
        elif line.startswith("<region ") and not line.endswith("/>"):
            depth, end = 0, k
            for end in range(k, len(lines)):
                if lines[end].startswith("<region ") and not lines[end].endswith("/>"):
                    depth += 1
                elif lines[end] == "</region>":
                    depth -= 1
                    if depth == 0:
                        break
            items.append("\n".join(lines[k : end + 1]))
            k = end + 1
        else:
            if line:
                items.append(line)
            k += 1
    return items


def _body(region_item: str) -> list[str]:
    """The items inside one rendered region (without its opening and closing lines)."""
    inner = region_item.split("\n", 1)[1].rsplit("\n", 1)[0]
    return items_of(inner)


def _page_items(xml: str) -> list[str]:
    lines = xml.rstrip("\n").split("\n")
    if not (lines[0].startswith("<page ") and lines[-1] == "</page>"):
        raise LossError(f"not a rendered page: {xml[:80]!r}")
    return [lines[0], *items_of("\n".join(lines[1:-1]))]


def _regions_anywhere(items: Sequence[str]) -> set[str]:
    found: set[str] = set()
    for item in items:
        if item.startswith("<region ") and "\n" in item:
            found.add(item)
            found |= _regions_anywhere(_body(item))
    return found


def _names_start(first: str, item: str) -> bool:
    """Whether a marker's ``first`` is how the item starts: its text, or for an item
    without text (an image link) its name."""
    if _LIST.match(item.split("\n", 1)[0]):
        item = _LISTED_ID.sub("", item)
    text = " ".join(unescape(_TAG.sub(" ", item)).split())
    return bool(first) and (text.startswith(first) if text else first in unescape(item))


def _is_run_of(run: Sequence[str], sequence: Sequence[str]) -> bool:
    """Whether `run` stands, contiguous and in order, somewhere in `sequence`."""
    n = len(run)
    return any(
        list(sequence[start : start + n]) == list(run)
        for start, item in enumerate(sequence)
        if item == run[0]
    )


def reconstruct(
    answer: str,
    full: str,
    previous_full: str | None,
    expand: Callable[[str], str],
) -> None:
    """Raise `LossError` unless `answer` accounts for every item of `full`.

    `previous_full` is the full baseline of the previous step (None for the first);
    `expand` returns a region of the latest snapshot, as ``SnapshotMemory.expand`` does.
    """
    previous_pages = _page_items(previous_full) if previous_full is not None else []
    previous_regions = _regions_anywhere(previous_pages[1:])
    # The dedup compares against the previous baseline's top-level region items, in order.
    previous_items = [
        item for region in previous_pages[1:] if "\n" in region for item in _body(region)
    ]

    def walk(got: list[str], want: list[str], where: str) -> None:
        j = 0
        for item in got:
            if j >= len(want):
                raise LossError(f"{where}: the answer has more than the page: {item[:120]!r}")
            expected = want[j]
            if item == expected:
                j += 1
                continue
            if match := _COLLAPSED.match(item):
                if expected not in previous_regions:
                    raise LossError(
                        f"{where}: region {match[1]!r} collapsed but it differs from the"
                        f" previous baseline: {expected[:200]!r}"
                    )
                _check_count(int(match[2]), [expected], where, item)
                j += 1
            elif match := _UNCHANGED.match(item):
                run = want[j : j + int(match[1])]
                if len(run) != int(match[1]) or not _is_run_of(run, previous_items):
                    raise LossError(
                        f"{where}: {item} hides lines that were not in the previous"
                        f" baseline: {run[:3]!r}"
                    )
                _check_count(int(match[2]), run, where, item)
                if not _names_start(unescape(match[3]), run[0]):
                    raise LossError(f"{where}: {item} names {run[0][:80]!r} wrongly")
                j += len(run)
            elif match := _TRIMMED.match(item):
                run = want[j : j + int(match[1])]
                expanded = _body(expand(unescape(match[3])))
                if len(run) != int(match[1]) or not _is_run_of(run, expanded):
                    raise LossError(f"{where}: {item} hides lines expand() does not return")
                _check_count(int(match[2]), run, where, item)
                j += len(run)
            elif item.startswith("<region ") and expected.startswith("<region "):
                if item.split("\n", 1)[0] != expected.split("\n", 1)[0]:
                    raise LossError(f"{where}: region {item[:80]!r} instead of {expected[:80]!r}")
                walk(_body(item), _body(expected), f"{where}/{item.split(chr(10), 1)[0]}")
                j += 1
            else:
                raise LossError(f"{where}: {expected[:200]!r} is missing (got {item[:200]!r})")
        if j != len(want):
            raise LossError(f"{where}: the answer ends before {want[j][:200]!r}")

    got, want = _page_items(answer), _page_items(full)
    if got[0].replace(' snapshot="baseline"', "") != want[0].replace(' snapshot="baseline"', ""):
        raise LossError(f"page lines differ: {got[0]!r} vs {want[0]!r}")
    walk(got[1:], want[1:], "page")


def _ids_in(item: str) -> int:
    """The ids an item shows: `id` attributes, and one per line of a list."""
    listed = sum(body.count("\n") + 1 for _, body in _LIST_BODY.findall(item))
    return len(_ID.findall(item)) + listed


def _check_count(count: int, run: Sequence[str], where: str, marker: str) -> None:
    ids = sum(_ids_in(item) for item in run)
    if ids != count:
        raise LossError(f"{where}: {marker} counts {count} ids, the hidden lines hold {ids}")
