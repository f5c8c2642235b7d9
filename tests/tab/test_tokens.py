"""Token counts remembered line by line (`TokenMemo`): the same counts as counting the
whole text, and no more counting than a decision needs."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from trimtab.pipeline import TokenMemo, count_tokens, least_tokens
from trimtab.tab._budget import tokens_within

ENCODINGS = ("o200k_base", "cl100k_base")
# Every class the pre-tokenizers tell apart near a line break: whitespace of all kinds
# (which joins lines into one pre-token), "/" (o200k's punctuation takes it after a
# line break), markup, letters, marks, digits, apostrophes.
_NEAR_BREAKS = "\n\n\n \t\r\x0b\x0c\xa0\u3000\u2028\x1c/<>=\"'sT1é\u0301的"
texts = st.text(st.sampled_from(_NEAR_BREAKS), max_size=200)
lines = st.lists(st.text(st.sampled_from(_NEAR_BREAKS), max_size=12), max_size=30).map("\n".join)


@settings(max_examples=500)
@given(text=st.one_of(texts, lines), encoding=st.sampled_from(ENCODINGS))
@example(text="<a>\n/b\n c\n\n<d/>\n", encoding="o200k_base")
@example(text="x  \n\n", encoding="cl100k_base")
def test_memo_counts_equal_whole_counts(text: str, encoding: str) -> None:
    """Summing remembered lines gives exactly the count of the whole text, whatever
    starts or ends its lines, in both encodings, counted cold or warm."""
    memo = TokenMemo(encoding)
    whole = count_tokens(text, encoding)
    assert memo.count(text) == whole
    assert memo.count(text) == whole  # now from the memo
    assert memo.count(text + "\n" + text) == count_tokens(text + "\n" + text, encoding)
    assert least_tokens(text) <= whole


@settings(max_examples=300)
@given(text=st.one_of(texts, lines), limit=st.integers(0, 40))
def test_within_is_the_count_or_none(text: str, limit: int) -> None:
    """`within` gives the exact count when it is at most the limit, else None, as
    `tokens_within` does; `fits` says the same."""
    memo = TokenMemo()
    assert memo.within(text, limit) == tokens_within(text, limit)
    if limit >= 1:
        assert memo.fits(text, limit) == (count_tokens(text) <= limit)


def test_within_stops_counting_soon_after_the_limit() -> None:
    """A text far over the limit is not counted to its end: only the lines before the
    count passed the limit are remembered."""
    memo = TokenMemo()
    text = "".join(f"<p>line {k}</p>\n" for k in range(100_000))
    assert memo.within(text, 50) is None
    assert 0 < len(memo._lines) < 100


def test_a_long_line_over_the_limit_is_counted_a_slice_at_a_time() -> None:
    """One line far over the limit (no line break to stop at) is refused like
    `tokens_within` refuses it, and an exact count comes back when it fits."""
    memo = TokenMemo()
    assert memo.within("word " * 200_000, 100) is None
    assert memo.within("word " * 1_000, 2_000) == count_tokens("word " * 1_000)


def test_fits_needs_no_count_for_a_text_of_at_most_limit_bytes() -> None:
    """A token is at least one byte: a text of at most `limit` bytes fits without
    being counted; a shorter text of many bytes is counted."""
    memo = TokenMemo()
    assert memo.fits("<p>hello</p>\n" * 10, 130)
    assert memo._lines == {}
    assert memo.fits("é\n" * 40, 100)  # 120 bytes, 80 tokens
    assert memo._lines != {}
    assert not memo.fits("<p>hello</p>\n" * 10, 10)


def test_the_memo_forgets_everything_past_its_size() -> None:
    """The memo keeps a bounded amount of text: far more distinct lines than it holds
    leave it no larger than its bound, and the counts stay exact."""
    memo = TokenMemo()
    text = "".join(f"<li>item number {k} of a very long list</li>\n" for k in range(60_000))
    assert memo.count(text) == count_tokens(text)
    assert sum(len(line) + 1 for line in memo._lines) <= 1 << 20
