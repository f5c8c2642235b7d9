"""The measurements page that ``make bench`` refreshes: one marked block per section,
replaced whole, with every line outside the blocks kept as it was."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.bench import CORPUS, REPO
from tests.bench._page import (
    PAGE,
    block_markers,
    local_paths_named,
    render_block,
    replace_block,
    write_block,
)

PAGE_TEXT = """# Measurements

Prose someone wrote.

<!-- bench:speed -->
old speed figures
<!-- /bench:speed -->

Between the blocks.

<!-- bench:tasks -->
old task figures
<!-- /bench:tasks -->
"""

# Text that holds no marker: no "<!--" can be formed from these characters.
outside = st.text(st.sampled_from("ab \n#`-:/!>"), max_size=80)


def test_replace_block_changes_only_that_block() -> None:
    """The named block gets the new body; the other block and the prose stay as they were."""
    updated = replace_block(PAGE_TEXT, "speed", "new speed figures\n  detail line")
    assert updated == PAGE_TEXT.replace("old speed figures", "new speed figures\n  detail line")


def test_replace_block_is_idempotent() -> None:
    """Writing the same body twice gives the same text as writing it once."""
    once = replace_block(PAGE_TEXT, "tasks", "figures")
    assert replace_block(once, "tasks", "figures") == once


def test_absent_block_is_added_at_the_end() -> None:
    """A section the page does not hold yet gets its block at the end, after one blank line."""
    updated = replace_block("# Measurements\n\n\n", "flows", "flow figures")
    block = "<!-- bench:flows -->\nflow figures\n<!-- /bench:flows -->\n"
    assert updated == "# Measurements\n\n" + block
    assert replace_block("", "flows", "x") == "<!-- bench:flows -->\nx\n<!-- /bench:flows -->\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("<!-- bench:speed -->\na\n<!-- bench:speed -->\nb\n<!-- /bench:speed -->\n", "opened 2"),
        ("<!-- bench:speed -->\nnever closed\n", "closed 0"),
        ("<!-- /bench:speed -->\nclosed first\n<!-- bench:speed -->\n", "closed before"),
        ("closed without an opening\n<!-- /bench:speed -->\n", "opened 0"),
    ],
)
def test_malformed_block_is_refused(text: str, message: str) -> None:
    """A block that is not opened once and then closed once is an error naming the
    block, not a replacement that would swallow text."""
    with pytest.raises(ValueError, match=message) as raised:
        replace_block(text, "speed", "figures")
    assert "'speed'" in str(raised.value)


def test_bad_block_name_is_refused() -> None:
    """A name that could not sit in a marker is an error naming it."""
    with pytest.raises(ValueError, match="'speed -->'"):
        block_markers("speed -->")


@given(before=outside, after=outside, old=outside, new=outside)
def test_outside_text_is_kept_byte_for_byte(before: str, after: str, old: str, new: str) -> None:
    """Whatever surrounds a block, a replacement keeps it exactly and the block then
    holds the new body, its surrounding newlines trimmed to one each side."""
    opening, closing = block_markers("pages")
    text = f"{before}{opening}{old}{closing}{after}"
    updated = replace_block(text, "pages", new)
    assert updated.startswith(before + opening)
    assert updated.endswith(closing + after)
    assert updated[len(before + opening) : len(updated) - len(closing + after)] == (
        "\n" + new.strip("\n") + "\n"
    )


def test_write_block_replaces_the_section_on_each_run(tmp_path: Path) -> None:
    """Two runs of a section leave one block holding the second run's lines, with the
    command that refreshes it and when it ran."""
    page = tmp_path / "README.md"
    page.write_text(PAGE_TEXT, encoding="utf-8")
    write_block("tasks", ["SUMMARY tasks: first", "  row 1"], "2026-01-01 00:00 UTC", page)
    write_block("tasks", ["SUMMARY tasks: second", "  row 2"], "2026-01-02 00:00 UTC", page)
    text = page.read_text(encoding="utf-8")
    assert text.count("<!-- bench:tasks -->") == 1
    assert "first" not in text
    assert "old task figures" not in text
    second = render_block("tasks", ["SUMMARY tasks: second", "  row 2"], "2026-01-02 00:00 UTC")
    assert second in text
    assert "`python -m tests.bench --only tasks`, last run 2026-01-02 00:00 UTC" in text
    assert "old speed figures" in text


def test_local_paths_are_named(tmp_path: Path) -> None:
    """A folder of this machine, as a path or a file:// URL, is written as its name,
    a folder inside another keeps its own name, and other text is left alone."""
    repo = tmp_path / "clone"
    corpus = repo / "corpus"
    line = f"page: {corpus}/pages/a.html, url {corpus.as_uri()}/b.html, log {repo}/x.log"
    named = local_paths_named(line, {repo: ".", corpus: "../shared/corpus"})
    assert named == "page: ../shared/corpus/pages/a.html, url ../shared/corpus/b.html, log ./x.log"
    assert str(tmp_path) not in named
    assert local_paths_named("no path here", {repo: "."}) == "no path here"


def test_relative_folder_is_refused() -> None:
    """Only absolute folders can be named; a relative one is an error naming it."""
    with pytest.raises(ValueError, match="'corpus'"):
        local_paths_named("text", {Path("corpus"): "../shared/corpus"})


def test_the_measurements_page_holds_each_section_once() -> None:
    """tests/bench/README.md has one well-formed block for every bench section, so
    `make bench` can refresh each of them."""
    from tests.bench.__main__ import SECTIONS

    text = PAGE.read_text(encoding="utf-8")
    assert str(REPO) not in text, f"{PAGE.name} names this clone's absolute path"
    assert str(CORPUS) not in text, f"{PAGE.name} names the corpus's absolute path"
    for section in SECTIONS:
        opening, _ = block_markers(section)
        assert text.count(opening) == 1, f"no single {opening} in {PAGE.name}"
        replace_block(text, section, "figures")  # raises on a malformed block
