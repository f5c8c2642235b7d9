"""What a snapshot costs after the capture: figures counted when read and exact, lines
counted once, and a page over its budget rendered again without being built again."""

from __future__ import annotations

from typing import cast

import attrs

from pycdp_bridge import PageModel, Target
from tests.tab.test_budget import Landmark, page_model
from trimtab.pipeline import compact, count_tokens, prepare
from trimtab.tab import SnapshotMemory, SnapshotOptions

LONG = "x " * 1500  # longer than a snapshot shows of one text under a small budget


def memory(**options: object) -> SnapshotMemory:
    return SnapshotMemory(cast(Target, None), SnapshotOptions(**options))  # type: ignore[arg-type]


def site(main_rows: int, changed: str = "") -> PageModel:
    """A page with a header, a long nav (trimmed), a main (its sixth line `changed`),
    a second nav and stray text."""
    landmarks: list[Landmark] = [
        ("header", [("Site header", True)], []),
        ("nav", [(f"section {k}", True) for k in range(40)], []),
        ("main", [(f"paragraph {k}", k % 3 == 0) for k in range(main_rows)], []),
        ("nav", [("other", True)], [("inner", True)]),
        ("div", [("stray text", False)], []),
    ]
    if changed:
        landmarks[2][1][5] = (changed, False)
    return page_model(landmarks)


def test_baseline_figures_are_the_counts_of_what_was_sent() -> None:
    """tokens count the XML sent, full_tokens the whole page, trim_saved what trimming
    took off (against the same page untrimmed), dedup_saved what collapsing took off."""
    model = site(30)
    tab = memory()
    first = tab.render(model)
    assert first.regions_trimmed == ("nav",)
    untrimmed = memory(trim=False).render(model)
    assert first.tokens == count_tokens(first.xml)
    assert first.full_tokens == count_tokens(first.compaction.xml)
    assert first.trim_saved == count_tokens(untrimmed.xml) - first.tokens > 0
    # Nothing collapsed: only the page's own head differs (snapshot="baseline").
    assert first.dedup_saved == max(0, first.full_tokens - first.tokens - first.trim_saved)
    again = tab.render(model, baseline=True)
    assert set(again.regions_collapsed) >= {"header", "main"}
    assert again.tokens == count_tokens(again.xml)
    assert again.full_tokens == count_tokens(again.compaction.xml)
    assert again.dedup_saved == again.full_tokens - again.tokens - again.trim_saved > 0


def test_figures_are_counted_only_when_read() -> None:
    """A baseline of fewer bytes than its budget and a small diff are sent without
    counting a token; reading a figure counts it, exactly."""
    tab = memory()
    tab.render(site(60))
    diff = tab.render(site(60, changed="now"))
    assert diff.kind == "diff"
    assert "paragraph 31" not in tab.token_memo._lines
    assert diff.tokens == count_tokens(diff.xml)
    assert diff.full_tokens == count_tokens(diff.compaction.xml) > diff.tokens
    assert "paragraph 31" in tab.token_memo._lines


def test_a_diff_that_costs_more_than_the_page_is_a_baseline() -> None:
    """When every line changed, the answer is the page itself, not a longer diff."""
    tab = memory()
    tab.render(page_model([("main", [("a", False)], [])]))
    answer = tab.render(page_model([("main", [("b b b b b b b b b b b b", True)], [])]))
    assert answer.kind == "baseline"


def test_a_second_finish_renders_as_a_fresh_compaction() -> None:
    """Finishing a prepared page again with long texts cut, then whole again, gives
    exactly what compacting the page afresh with each option gives."""
    model = page_model(
        [
            ("nav", [("one", True)], []),
            ("main", [(LONG, True), ("after", False)], [(LONG, True)]),
            ("nav", [("two", True)], []),
            ("div", [(LONG, False)], []),
        ]
    )
    prepared = prepare(model)
    whole = prepared.finish()
    cut = prepared.finish(long_text=200)
    again = prepared.finish()
    fresh, fresh_cut = compact(model), compact(model, long_text=200)
    assert whole.xml == again.xml == fresh.xml
    assert cut.xml == fresh_cut.xml != fresh.xml
    assert list(cut.texts) == list(fresh_cut.texts)
    assert [r.key for r in again.regions] == [r.key for r in fresh.regions]
    assert dict(again.controls) == dict(fresh.controls)
    assert again.root.text() == fresh.root.text()


def test_a_page_over_its_budget_is_built_once() -> None:
    """A snapshot over its budget with long texts cuts them from the same build: the
    answer is the one a memory that cut them from the start gives."""
    rows = [(LONG, False)] * 3 + [(f"line {k}", True) for k in range(200)]
    model = page_model([("main", rows, [])])
    tab = memory(budget=1_000)
    first = tab.render(model)
    assert tab.cut_document == model.document_id
    assert first.compaction.texts
    fresh = attrs.evolve(memory(budget=1_000), cut_document=model.document_id)
    assert fresh.render(model).xml == first.xml


def test_a_page_over_its_budget_is_encoded_once_where_nothing_was_cut() -> None:
    """When a snapshot over its budget renders again with long texts cut, the regions
    without a long text are not rendered again (their XML is the very string of the
    first rendering), the ids are not assigned again, and the answer is the one a
    memory that cut them from the start gives."""
    rows = [(LONG, False)] * 3 + [(f"line {k}", True) for k in range(200)]
    model = page_model([("nav", [(f"link {k}", True) for k in range(30)], []), ("main", rows, [])])
    whole = prepare(model)
    first = whole.finish(count=False)
    cut = whole.finish(count=False, long_text=200)
    by_key = {r.key: r for r in first.regions}
    again = {r.key: r for r in cut.regions}
    assert again["nav"].xml is by_key["nav"].xml
    assert again["main"].xml != by_key["main"].xml
    assert cut.controls is first.controls
    tab = memory(budget=1_000)
    answer = tab.render(model)
    assert answer.compaction.texts
    fresh = attrs.evolve(memory(budget=1_000), cut_document=model.document_id)
    assert fresh.render(model).xml == answer.xml
    assert cut.xml == compact(model, long_text=200).xml
