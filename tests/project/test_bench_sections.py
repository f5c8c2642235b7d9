"""Which sections ``make bench`` runs where the page corpus is absent, and a corpus
reached through a symbolic link."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench import CORPUS_SECTIONS, REPO
from tests.bench.__main__ import SECTIONS, sections_to_run


def test_without_the_corpus_every_other_section_runs_and_one_line_says_why() -> None:
    """A default run without the corpus leaves out exactly the corpus sections, in one
    line naming them and the missing folder, and runs the rest in their order."""
    running, skipped = sections_to_run(None, corpus_here=False)
    assert running == [s for s in SECTIONS if s not in CORPUS_SECTIONS]
    assert running, "some sections must run without the corpus"
    assert skipped is not None
    assert "\n" not in skipped
    assert "corpus is absent" in skipped
    for section in CORPUS_SECTIONS:
        assert section in skipped


def test_with_the_corpus_every_section_runs() -> None:
    """With the corpus, a default run measures every section and skips none."""
    assert sections_to_run(None, corpus_here=True) == (list(SECTIONS), None)


def test_a_named_corpus_section_without_the_corpus_is_an_error_naming_it() -> None:
    """``--only speed,prefix`` without the corpus stops with an error that names the
    section that needs it, instead of quietly measuring less than was asked."""
    with pytest.raises(ValueError, match=r"corpus is absent.*speed"):
        sections_to_run("speed,prefix", corpus_here=False)
    assert sections_to_run("prefix, tabs", corpus_here=False) == (["prefix", "tabs"], None)


def test_an_unknown_section_is_named() -> None:
    """A section name the bench does not know is named in the error."""
    with pytest.raises(ValueError, match="'speeed'"):
        sections_to_run("speeed", corpus_here=True)


def test_the_bench_command_without_the_corpus_names_what_is_missing(tmp_path: Path) -> None:
    """``python -m tests.bench --only pages`` with no corpus exits at once with an error
    that says the corpus is absent and where it was looked for."""
    missing = tmp_path / "no-corpus"
    done = subprocess.run(
        [sys.executable, "-m", "tests.bench", "--only", "pages"],
        cwd=REPO,
        env={**os.environ, "TRIMTAB_CORPUS": str(missing)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "corpus is absent" in done.stderr
    assert str(missing) in done.stderr


def test_a_corpus_through_a_symbolic_link_names_its_pages_under_its_resolved_root(
    tmp_path: Path,
) -> None:
    """Pages of a corpus reached through a symbolic link lie under the folder a static
    server serves from (its resolved root), so a page's URL path can be made from it."""
    real = tmp_path / "real-corpus"
    (real / "pages").mkdir(parents=True)
    (real / "pages" / "one.html").write_text("<p>one</p>", encoding="utf-8")
    item = {
        "type": "page",
        "id": "pages/one",
        "path": "pages/one.html",
        "kind": "doc",
        "css": {"status": "inline"},
    }
    (real / "MANIFEST.json").write_text(json.dumps({"items": [item]}), encoding="utf-8")
    link = tmp_path / "shared-corpus"
    link.symlink_to(real, target_is_directory=True)
    probe = (
        "from tests.bench import CORPUS, corpus_pages\n"
        "from pathlib import Path\n"
        "import sys\n"
        "root = Path(sys.argv[1]).resolve()\n"
        "print([str(p.path.relative_to(root)) for p in corpus_pages()])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(link)],
        cwd=REPO,
        env={**os.environ, "TRIMTAB_CORPUS": str(link)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['pages/one.html']"
