"""The token budget of a snapshot (issue 15, point 7): huge pages stay within it, lossless
by reference: `<more>` markers with exact counts that `expand` and `read` page through."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any, cast

import pytest
import trio
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from lxml import etree

from pycdp_bridge import Node, NodeType, PageModel, PageTarget, Style, Target
from tests.support.handlers_host import TAB, Host, open_host
from tests.support.models import ModelBuilder
from tests.support.pages import page_url, parse_xml
from tests.support.xmltree import LIST_TAGS
from trimtab.pipeline import Prepared, count_tokens
from trimtab.pipeline import xml as xmlw
from trimtab.tab import DEFAULT_BUDGET, MIN_BUDGET, SnapshotMemory, SnapshotOptions, Tab
from trimtab.tab._budget import region_of_key, tokens_within
from trimtab.tools import _catalogue, run_tool
from trimtab.wire import RequestError

pytestmark = pytest.mark.browser


# -- splicing the pages back into the snapshot -------------------------------------------


def _insert(marker: etree._Element, lead: str, nodes: list[etree._Element]) -> None:
    """Put `lead` text and `nodes` where `marker` stands, keeping the text around it."""
    parent = marker.getparent()
    assert parent is not None
    tail = marker.tail or ""
    index = parent.index(marker)
    previous = marker.getprevious()
    parent.remove(marker)
    if previous is not None:
        previous.tail = (previous.tail or "") + lead
    else:
        parent.text = (parent.text or "") + lead
    for offset, node in enumerate(nodes):
        parent.insert(index + offset, node)
    if nodes:
        nodes[-1].tail = (nodes[-1].tail or "") + tail
    elif previous is not None:
        previous.tail = (previous.tail or "") + tail
    else:
        parent.text = (parent.text or "") + tail


def splice(memory: SnapshotMemory, document: str, budget: int) -> etree._Element:
    """The snapshot with every `<more>` marker replaced by what paging from it gives,
    each page checked to be well-formed and within the budget."""
    tree = parse_xml(document)
    while True:
        marker = next(tree.iter("more"), None)
        if marker is None:
            return tree
        if marker.get("text"):
            page = memory.read_text(marker.get("text") or "", int(marker.get("at") or ""))
            assert count_tokens(page) <= budget
            (text, *rest) = list(parse_xml(f"<pages>{page}</pages>"))
            for more in rest:
                more.tail = None  # the line break after a page's marker is not the text's
            _insert(marker, text.text or "", rest)
            continue
        key = marker.get("region") or ""
        assert "." in key, key  # a marker's key says which rendering of the region
        page = memory.expand(key, int(marker.get("at") or ""))
        assert count_tokens(page) <= budget
        region = parse_xml(page)
        parent = marker.getparent()
        assert parent is not None
        name = key.split(".")[0]
        if (parent.tag, parent.get("name")) in (("region", name), ("regions", None)):
            _insert(marker, region.text or "", list(region))  # the rest of its region
        else:
            _insert(marker, "", [region])


def words_and_ids(tree: etree._Element) -> tuple[list[str], list[str]]:
    """What a reader gets of a document: its words in order, and its ids in order. A
    line of a `<links>` or `<buttons>` list is an element (its id, then its text), as
    an `<a id>` or `<button id>` is: which form a run of links takes depends on what
    surrounds it, and a page read through its markers may take the other one."""
    texts: list[str] = []
    ids: list[str] = []

    def read(element: etree._Element) -> None:
        if element.tag in LIST_TAGS:
            for line in (element.text or "").strip("\n").split("\n"):
                eid, _, text = line.partition(" ")
                ids.append(eid)
                texts.append(f"\n{text}\n")
            return
        if element.get("id"):
            ids.append(element.get("id") or "")
        texts.append(element.text or "")
        for child in element:
            read(child)
            texts.append(child.tail or "")

    read(tree)
    return "".join(texts).split(), ids


def assert_markers_exact(memory: SnapshotMemory, document: str) -> None:
    """Every region marker counts exactly the lines of its region it stands for (for a
    ``page.`` marker, the page's later top-level regions, one line each)."""
    assert memory.latest is not None
    for marker in parse_xml(document).iter("more"):
        key = marker.get("region")
        if key is None:
            text = memory.latest.texts[marker.get("text") or ""]
            at = int(marker.get("at") or "")
            assert marker.get("chars") == str(len(text) - at)
            assert marker.get("lines") == str(text[at:].count("\n"))
            continue
        region = region_of_key(memory.latest, key)
        rest = region.items[int(marker.get("at") or "") :]
        body = "".join(f"{item.xml}\n" for item in rest)
        assert marker.get("lines") == str(len(rest))
        assert marker.get("count") == str(sum(len(item.eids) for item in rest))
        assert marker.get("tokens") == str(count_tokens(body))
        assert marker.get("chars") == str(len(body))


# -- a synthetic page, for the property ---------------------------------------------------


# A paragraph's text, and whether a link follows it (its text, if not "go N").
Row = tuple[str, bool | str]
Landmark = tuple[str, list[Row], list[Row]]  # tag, rows, rows of a nav nested in it


def page_model(landmarks: list[Landmark], title: str = "Budget") -> PageModel:
    """document > html > body > landmarks of paragraphs (blocks) and links, without boxes."""
    build = ModelBuilder()
    document = build.add(NodeType.DOCUMENT, "#document", -1)
    html = build.add(NodeType.ELEMENT, "html", document.index)
    body = build.add(NodeType.ELEMENT, "body", html.index)

    def rows(parent: Node, items: list[Row]) -> None:
        for number, (text, link) in enumerate(items):
            paragraph = build.add(NodeType.ELEMENT, "p", parent.index)
            paragraph.style = Style(display="block")  # one line per paragraph
            build.add(NodeType.TEXT, "#text", paragraph.index, text)
            if link:
                anchor = build.add(NodeType.ELEMENT, "a", paragraph.index, href=f"#r{number}")
                label = link if isinstance(link, str) else f"go {number}"
                build.add(NodeType.TEXT, "#text", anchor.index, label)

    for tag, items, inner in landmarks:
        landmark = build.add(NodeType.ELEMENT, tag, body.index)
        rows(landmark, items)
        if inner:
            nav = build.add(NodeType.ELEMENT, "nav", landmark.index, **{"aria-label": "Inner"})
            rows(nav, inner)
    return build.model("http://budget.test/", title)


# Words, lines that start with "/" (where token counts do not add up line by line),
# markup characters, and now and then a text longer than a snapshot shows.
_text = st.one_of(
    st.text(st.sampled_from("ab /<&é\n"), min_size=1, max_size=40),
    st.sampled_from(["/usr/bin", "//", "a/b", "x " * 1500, "/" * 30]),
)
_rows = st.lists(st.tuples(_text, st.booleans()), max_size=300)
_landmarks = st.lists(
    st.tuples(st.sampled_from(["header", "main", "aside", "footer", "div"]), _rows, _rows),
    min_size=1,
    max_size=5,
)


def memory_for(budget: int | None) -> SnapshotMemory:
    """Snapshot memory for a model rendered without a browser (no trimming, so that the
    whole content is in the snapshot or behind its markers)."""
    return SnapshotMemory(cast(Target, None), SnapshotOptions(trim=False, budget=budget))


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(landmarks=_landmarks, budget=st.integers(MIN_BUDGET, 6_000))
# Two links after a text cut by a marker: inline `<a>`s in the snapshot, a `<links>`
# list in the whole page (found by a run of `make test`).
@example(landmarks=[("header", [], [("x " * 1500, False), (" ", True), (" ", True)])], budget=1000)
def test_any_page_fits_any_budget_and_pages_back(landmarks: list[Landmark], budget: int) -> None:
    """For any budget from the minimum, a snapshot is well-formed and within it, its
    markers count exactly, and paging through them gives back every word and id of
    the page in order; a page within the budget is exactly as without one."""
    model = page_model(landmarks)
    whole = memory_for(None).render(model).xml
    memory = memory_for(budget)
    document = memory.render(model).xml
    assert count_tokens(document) <= budget
    if count_tokens(whole) <= budget:
        assert document == whole
    assert_markers_exact(memory, document)
    assert words_and_ids(splice(memory, document, budget)) == words_and_ids(parse_xml(whole))


# -- long texts cut before the first rendering ---------------------------------------------


def _first_looks(model: PageModel, budget: int, *, guess: bool) -> tuple[object, ...]:
    """What a fresh memory answers for `model` twice in a row (a baseline, then the
    same page again), with its figures and the document it cuts long texts in; without
    `guess`, long texts are never cut before the page was rendered whole."""
    with pytest.MonkeyPatch.context() as patch:
        if not guess:
            patch.setattr(SnapshotMemory, "_over_at_sight", lambda self, prepared: False)
        memory = SnapshotMemory(cast(Target, None), SnapshotOptions(budget=budget))
        first = memory.render(model)
        again = memory.render(model)
        return first.xml, first.counted.get(), again.xml, again.counted.get(), memory.cut_document


def _renderings(patch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each `Prepared.finish` from here on cut long texts."""
    calls: list[bool] = []
    finish = Prepared.finish

    def counted(self: Prepared, **options: Any) -> Any:
        calls.append(options.get("long_text") is not None)
        return finish(self, **options)

    patch.setattr(Prepared, "finish", counted)
    return calls


# Short lines, enough to pass a budget by themselves, and now and then a long text: of
# words, of one character, of lines starting with "/", or a link's text (rarer: with
# one the cut page proves nothing, and the page is rendered whole).
_long = st.sampled_from(["x " * 1500, "z" * 2100, "/\n" * 1100, "y " * 1100])
_short = st.text(st.sampled_from("ab /<&é\n"), min_size=8, max_size=40)


def _now_and_then(rarity: int) -> st.SearchStrategy[bool]:
    """True once in `rarity` draws (not `st.integers`, nor True first: Hypothesis
    draws the bounds far more often)."""
    return st.sampled_from([False] * (rarity - 1) + [True])


def _cut_rows(rarity: int, size: int) -> st.SearchStrategy[list[Row]]:
    # A link's text is long four times more rarely: a cut one proves nothing.
    row = st.tuples(
        _now_and_then(rarity).flatmap(lambda long: _long if long else _short),
        _now_and_then(4 * rarity).flatmap(lambda long: _long if long else st.booleans()),
    )
    return st.lists(row, min_size=size // 2, max_size=size)


# A main region of many lines, and a few small ones, trimmable or not.
_cut_landmarks = st.tuples(st.sampled_from([16, 64, 256]), st.sampled_from([100, 400])).flatmap(
    lambda shape: st.tuples(
        _cut_rows(*shape),
        _cut_rows(4 * shape[0], 6),
        st.lists(
            st.tuples(
                st.sampled_from(["header", "nav", "aside", "footer", "div"]),
                _cut_rows(4 * shape[0], 12),
                _cut_rows(4 * shape[0], 6),
            ),
            max_size=2,
        ),
    ).map(lambda parts: [("main", parts[0], parts[1]), *parts[2]])
)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(landmarks=_cut_landmarks, budget=st.integers(MIN_BUDGET, 2_000))
def test_a_first_look_is_the_same_whether_long_texts_are_cut_ahead(
    landmarks: list[Landmark], budget: int
) -> None:
    """A page's first baseline, its figures, the next answer and whether the memory
    cuts long texts from then on are the same when a page that looks over its budget
    has its long texts cut before its first rendering as when it is rendered whole
    first: long texts in trimmable regions, in links and in runs of one character."""
    model = page_model(landmarks)
    assert _first_looks(model, budget, guess=True) == _first_looks(model, budget, guess=False)


def _looks_along(models: list[PageModel], budget: int, *, guess: bool) -> list[object]:
    """What a fresh memory answers for each of `models` in turn, with its figures, and
    the document it cuts long texts in at the end; without `guess`, long texts are
    never cut before the page was rendered whole."""
    with pytest.MonkeyPatch.context() as patch:
        if not guess:
            patch.setattr(SnapshotMemory, "_over_at_sight", lambda self, prepared: False)
        memory = SnapshotMemory(cast(Target, None), SnapshotOptions(budget=budget))
        answers: list[object] = []
        for model in models:
            snapshot = memory.render(model)
            answers += [snapshot.xml, snapshot.counted.get()]
        return [*answers, memory.cut_document]


def _short_links(rows: list[Row]) -> list[Row]:
    return [(text, link if isinstance(link, bool) else True) for text, link in rows]


@st.composite
def _site(draw: st.DrawFn) -> list[PageModel]:
    """A page, another page of its site (the main region's lines shifted: some left, some
    new, so runs of them are ones the client saw), at another address or the same one,
    then the first page again (its address's lines as the client last saw them). A
    long text on both pages may be cut on one and whole on the other."""
    first = draw(_cut_landmarks)
    if not draw(_now_and_then(4)):
        # A link's long text is kept rarely here: with one the new page proves nothing,
        # and what the client saw would not matter.
        first = [(tag, _short_links(rows), _short_links(inner)) for tag, rows, inner in first]
    (tag, rows, inner), *others = first
    kept = draw(st.integers(0, len(rows)))
    # Now and then many more lines: a page over its budget after one within it.
    more = draw(_cut_rows(16, draw(st.sampled_from([32, 32, 400]))))
    second = [(tag, rows[kept:] + _short_links(more), inner), *others]
    if draw(st.booleans()):
        # A small region on both pages with a long text: the same on the second page
        # (it may collapse), or with a line more (its lines may match the first's).
        box: list[Row] = [(draw(_long), False), *draw(_cut_rows(64, 4))]
        first = [("div", box, []), *first]
        second = [("div", box + draw(st.sampled_from([[], [("one more", False)]])), []), *second]
    one = page_model(first)
    other = page_model(second, title="Budget, too")
    other.document_id = "doc-2"
    if draw(st.booleans()):
        other.url = "http://budget.test/2"
    return [one, other, other, one]


def _whole_then_cut() -> list[PageModel]:
    """A page within its budget showing a long text whole, then one over it holding the
    same text (cut there, and seen whole before)."""
    box: list[Row] = [("z" * 2100, False), ("a short line", False)]
    first = page_model([("div", box, []), ("main", [(f"line {n}", False) for n in range(20)], [])])
    rows: list[Row] = [(f"row {n} of words", n % 2 == 0) for n in range(400)]
    second = page_model([("div", box, []), ("main", rows, [])], title="Budget, too")
    second.document_id = "doc-2"
    return [first, second, second, first]


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(models=_site(), budget=st.integers(MIN_BUDGET, 2_000))
# Rare in what is drawn: the text a new page cuts is one the client saw whole.
@example(models=_whole_then_cut(), budget=2_000)
def test_a_look_after_a_navigation_is_the_same_whether_long_texts_are_cut_ahead(
    models: list[PageModel], budget: int
) -> None:
    """Along pages of one site (a navigation, the same page again, back to the first),
    every answer, its figures and whether the memory cuts long texts at the end are the
    same when a new document that looks over its budget has its long texts cut before
    its first rendering as when it is rendered whole first, whatever the client saw
    before: lines and regions holding the same cut texts, and long texts seen whole."""
    assert _looks_along(models, budget, guess=True) == _looks_along(models, budget, guess=False)


def test_a_page_over_its_budget_after_a_navigation_is_rendered_once() -> None:
    """A navigation from a page whose long texts were cut to another page over its
    budget with long texts renders the new page once, its long texts cut."""
    rows: list[Row] = [(f"line {n} of plain words", n % 3 == 0) for n in range(600)]
    rows[10:10] = [("w " * 1200, False)] * 5
    first = page_model([("main", rows, [])])
    second = page_model([("main", [("v " * 1200, False), *rows[300:]], [])], title="Next")
    second.document_id = "doc-2"
    budget = MIN_BUDGET * 2
    memory = SnapshotMemory(cast(Target, None), SnapshotOptions(budget=budget))
    memory.render(first)
    with pytest.MonkeyPatch.context() as patch:
        calls = _renderings(patch)
        document = memory.render(second).xml
    assert calls == [True]
    assert document.count('<more text="') >= 1
    assert memory.cut_document == "doc-2"
    assert count_tokens(document) <= budget


def test_a_page_over_its_budget_with_long_texts_is_rendered_once() -> None:
    """A first look at a page over its budget whose long texts make it so renders the
    page once, its long texts cut, not whole first and then cut."""
    rows: list[Row] = [(f"line {n} of plain words", n % 3 == 0) for n in range(600)]
    rows[10:10] = [("w " * 1200, False)] * 5
    model = page_model([("main", rows, [])])
    budget = MIN_BUDGET * 2
    with pytest.MonkeyPatch.context() as patch:
        calls = _renderings(patch)
        memory = SnapshotMemory(cast(Target, None), SnapshotOptions(budget=budget))
        document = memory.render(model).xml
    assert calls == [True]
    assert '<more text="' in document
    assert memory.cut_document == "doc"
    assert count_tokens(document) <= budget


def test_a_page_that_only_looks_over_its_budget_is_shown_whole() -> None:
    """A page with more characters than its budget's worth that fits it all the same
    (a run of one character is few tokens) is rendered whole after the cut rendering
    showed it may fit, and sent whole, as without the guess."""
    model = page_model([("main", [("a" * 3000, False)] * 3, [])])
    budget = MIN_BUDGET * 2
    with pytest.MonkeyPatch.context() as patch:
        calls = _renderings(patch)
        memory = SnapshotMemory(cast(Target, None), SnapshotOptions(budget=budget))
        document = memory.render(model).xml
    assert calls == [True, False]
    assert "<more" not in document
    assert memory.cut_document == ""
    assert document == memory_for(None).render(model).xml


def test_counting_within_a_limit_ends_for_any_limit() -> None:
    """Counting against a limit answers for every limit, none or zero room included
    (a page filled to the token once looped for ever here)."""
    assert tokens_within("x\n", 0) is None
    assert tokens_within("", 0) == 0
    assert tokens_within("x\n" * 100_000, 50) is None
    assert tokens_within("x\n" * 10, 50) == count_tokens("x\n" * 10)


def test_a_budget_below_the_minimum_is_refused() -> None:
    """A budget too small to hold a page's head and markers is refused, naming it."""
    with pytest.raises(ValueError, match="999"):
        SnapshotOptions(budget=MIN_BUDGET - 1)
    assert SnapshotOptions().budget == DEFAULT_BUDGET


# -- real pages in Chromium ------------------------------------------------------------------


async def open_tab(page: PageTarget, fixture: str, budget: int = DEFAULT_BUDGET) -> tuple[Tab, str]:
    """A tab loaded with `fixture` through `navigate`; its baseline."""
    tab = Tab.open(page, options=SnapshotOptions(budget=budget))
    result = await run_tool(tab, "navigate", {"url": page_url(fixture)})
    assert not result.is_error, result.content
    return tab, result.content


@pytest.fixture
def huge_page_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tools' time limit (`ACTION_TIMEOUT`) lifted to the test's deadline. The limit
    is the answer to a page that does not respond; the huge pages below respond, and
    their first snapshot is a fixed amount of work: 11 s here on an idle machine (6.3 s
    of it the pipeline's CPU), past 60 s with two suites side by side on two cores."""
    monkeypatch.setattr(_catalogue, "ACTION_TIMEOUT", 900.0)


@pytest.mark.deadline(900)
@pytest.mark.long
@pytest.mark.usefixtures("huge_page_time")
async def test_a_page_of_100k_elements_fits_and_expand_pages_through_it(page: PageTarget) -> None:
    """A page of 100,000 elements (about a million tokens) gives a snapshot within the
    budget that keeps the beginning of the page: regions in order, the first lines of
    main, then markers with exact counts for the rest of main, the aside and the
    footer; `expand` pages through main, each page within the budget, and gives back
    every row and id; the aside comes whole."""
    tab, document = await open_tab(page, "budget-many.html")
    tokens = count_tokens(document)
    assert tokens <= DEFAULT_BUDGET
    tree = parse_xml(document)
    assert [r.get("name") for r in tree.iter("region")] == ["header", "nav", "main"]
    memory = tab.memory
    assert memory.latest is not None
    main = next(r for r in memory.latest.regions if r.key == "main")
    assert len(main.items) == 50_001  # the heading and 50,000 rows
    (rest, aside, footer) = tree.iter("more")
    assert rest.get("region", "").startswith("main.")
    assert int(rest.get("at") or "") > 100  # the beginning of main is shown
    assert aside.get("region", "").startswith("aside.")
    assert aside.get("at") == "0"
    assert footer.get("region", "").startswith("footer.")
    assert int(rest.get("tokens") or "") > 20 * DEFAULT_BUDGET
    assert_markers_exact(memory, document)
    # Paging through the tool: every page within the budget, every row back in order.
    at = int(rest.get("at") or "")
    shown = [item.xml for item in main.items[:at]]
    pages = 0
    key: str | None = rest.get("region")
    while key is not None:
        result = await run_tool(tab, "expand", {"region": key, "at": at})
        assert not result.is_error, result.content
        assert count_tokens(result.content) <= DEFAULT_BUDGET
        pages += 1
        lines = result.content.split("\n")
        assert lines[0] == '<region name="main">'
        assert lines[-2:] == ["</region>", ""]
        body = lines[1:-2]
        more = re.fullmatch(r'<more region="([^"]+)" at="(\d+)".*/>', body[-1])
        key = None
        if more is not None:
            body = body[:-1]
            key, at = more.group(1), int(more.group(2))
        shown += body
    assert shown == [item.xml for item in main.items]
    assert pages > 20
    expanded = await run_tool(tab, "expand", {"region": aside.get("region")})
    assert expanded.content == next(r.xml for r in memory.latest.regions if r.key == "aside")


@pytest.mark.deadline(900)
@pytest.mark.long
@pytest.mark.usefixtures("huge_page_time")
async def test_a_20mb_text_fits_and_read_pages_through_it(page: PageTarget) -> None:
    """A page with one text node of 20 MB (millions of tokens) gives a snapshot within
    the budget, the text cut after its head with an exact `<more text>` marker; `read`
    pages through the rest, each page within the budget, and the pages give back the
    page's text exactly; each page but the last is close to the budget."""
    tab, document = await open_tab(page, "budget-long-text.html")
    assert count_tokens(document) <= DEFAULT_BUDGET
    tree = parse_xml(document)
    (marker,) = tree.iter("more")
    key, at = marker.get("text") or "", int(marker.get("at") or "")
    assert tab.memory.latest is not None
    text = tab.memory.latest.texts[key]
    assert len(text) > 20_000_000
    assert_markers_exact(tab.memory, document)
    assert xmlw.text(text[:at]) in document  # the head, as the snapshot shows it
    pages: list[str] = [text[:at]]
    while True:
        result = await run_tool(tab, "read", {"text": key, "at": at})
        assert not result.is_error, result.content
        tokens = count_tokens(result.content)
        assert tokens <= DEFAULT_BUDGET
        (read, *more) = list(parse_xml(f"<pages>{result.content}</pages>"))
        if more:  # a page before the last is nearly the whole budget: few calls
            assert tokens >= 0.9 * DEFAULT_BUDGET, tokens
        assert read.get("at") == str(at)
        pages.append(read.text or "")
        if not more:
            break
        at = int(more[0].get("at") or "")
    assert "".join(pages) == text
    assert text.split() == [f"w{i}x" for i in range(2_150_000)]
    assert len(pages) > 100
    assert [a.text for a in tree.iter("a")] == ["Next export", "Terms"]


ROWS = "".join(f"<p>Row {i} of the list <a href='#r{i}'>open {i}</a></p>" for i in range(300))
SMALL_PAGE = (
    "<title>Rows</title><header><a href='#h'>Home</a></header>"
    f"<main><h1>Rows</h1><p id='long'>{'word ' * 3000}</p>{ROWS}</main>"
    "<footer><a href='#t'>Terms</a></footer>"
)


async def test_a_stale_key_is_refused(page: PageTarget) -> None:
    """After the page changed, a marker's text key and region key from the earlier
    snapshot are refused with an error that says so, never answered with other text."""
    tab, document = await open_tab(page, SMALL_PAGE, budget=MIN_BUDGET)
    tree = parse_xml(document)
    markers = list(tree.iter("more"))
    region = next(m for m in markers if m.get("region"))
    text_markers = [m for m in markers if m.get("text")]
    key = region.get("region") or ""
    ok = await run_tool(tab, "expand", {"region": key, "at": int(region.get("at") or "")})
    assert not ok.is_error, ok.content
    # The page changes: the long text and the rows of main are other ones now.
    await page.evaluate(
        "document.getElementById('long').textContent = 'other '.repeat(3000);"
        "document.querySelector('main h1').textContent = 'Changed';"
    )
    again = await run_tool(tab, "capture_snapshot", {})
    assert not again.is_error
    stale = await run_tool(tab, "expand", {"region": key, "at": int(region.get("at") or "")})
    assert stale.is_error
    assert "changed since" in stale.content
    for marker in text_markers:
        refused = await run_tool(tab, "read", {"text": marker.get("text"), "at": 2000})
        assert refused.is_error
        assert "page changed" in refused.content
    bad = await run_tool(tab, "expand", {"region": "main", "at": 10**6})
    assert bad.is_error
    assert "outside region" in bad.content


UNDER_BUDGET = [
    "snapshots-site-1.html",
    "tools-long-list.html",
    "pipeline-text.html",
    "widgets-tables.html",
    "tools-form.html",
]


@pytest.mark.parametrize("fixture", UNDER_BUDGET)
async def test_a_page_within_the_budget_is_unchanged(page: PageTarget, fixture: str) -> None:
    """A page within the budget gives byte for byte the snapshot it gives without one."""
    from pycdp_bridge import capture

    await page.navigate(page_url(fixture))
    model = await capture(page)
    plain = SnapshotMemory(page, SnapshotOptions(budget=None)).render(model)
    budgeted = SnapshotMemory(page).render(model)
    assert budgeted.tokens <= DEFAULT_BUDGET
    assert budgeted.xml == plain.xml
    assert budgeted.budget_hidden == 0


# -- through the extension's host ----------------------------------------------------------


@pytest.fixture
async def host(page: PageTarget, nursery: trio.Nursery) -> AsyncIterator[Host]:
    """Handlers of a host whose relay reaches the test page, loaded with the rows page."""
    async with open_host(page, page_url(SMALL_PAGE), nursery) as host:
        yield host


async def test_the_hosts_requests_take_the_budget(host: Host) -> None:
    """The inspector's `snapshot` request and the agent's `tool` requests take a
    `budget` field: the snapshot and the expanded page stay within it, 0 means none,
    and a budget below the minimum is a bad request."""
    inspected = await host.request("snapshot", tab=TAB, budget=MIN_BUDGET)
    assert inspected["stats"]["tokens"] <= MIN_BUDGET
    assert inspected["stats"]["budget_hidden"] > 0
    assert 'region="main.' in inspected["xml"]
    whole = await host.request("snapshot", tab=TAB, budget=0)
    assert "<more" not in whole["xml"]
    fields: dict[str, Any] = {"session": "agent-1", "tab": TAB, "budget": MIN_BUDGET}
    looked = await host.request("tool", name="capture_snapshot", args={}, **fields)
    assert count_tokens(looked["content"]) <= MIN_BUDGET
    marker = next(m for m in parse_xml(looked["content"]).iter("more") if m.get("region"))
    args = {"region": marker.get("region"), "at": int(marker.get("at") or "")}
    page = await host.request("tool", name="expand", args=args, **fields)
    assert not page["is_error"], page["content"]
    assert count_tokens(page["content"]) <= MIN_BUDGET
    # The call tracker keys a call by its budget too: the same page again is cached,
    # the same call under no budget is another call.
    again = await host.request("tool", name="expand", args=args, **fields)
    assert again["cached"]
    unbudgeted = await host.request("tool", name="expand", args=args, **{**fields, "budget": 0})
    assert not unbudgeted["cached"]
    error = await host.error("snapshot", tab=TAB, budget=10)
    assert isinstance(error, RequestError)
    assert error.code == "bad_request"
    assert "10" in error.message


async def test_inspect_takes_a_budget() -> None:
    """`trimtab inspect --budget N` prints a snapshot within N tokens with its markers;
    0 prints the whole page; a budget below the minimum is a usage error."""
    from tests.pipeline.test_inspect_cli import inspect

    done = await inspect(page_url(SMALL_PAGE), "--budget", str(MIN_BUDGET))
    assert done.returncode == 0, done.stderr.decode()
    document = done.stdout.decode()
    assert count_tokens(document) <= MIN_BUDGET
    assert 'region="main.' in document
    assert "behind budget markers=" in done.stderr.decode()
    whole = await inspect(page_url(SMALL_PAGE), "--budget", "0")
    assert "<more" not in whole.stdout.decode()
    assert count_tokens(whole.stdout.decode()) > MIN_BUDGET
    refused = await inspect(page_url(SMALL_PAGE), "--budget", "10")
    assert refused.returncode == 2
    assert "at least 1000" in refused.stderr.decode()
