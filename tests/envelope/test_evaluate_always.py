"""The person's "always" to an `evaluate` question, without a browser: it covers the
exact code they were shown on that one site; any other code, or site, asks again."""

from __future__ import annotations

import json
import re
import stat
import unicodedata
from pathlib import Path

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.e2e import EXTENSION_DIR
from trimtab.envelope import (
    ALWAYS_CODE_MAX,
    EVALUATE_FILE,
    ONCE_OR_NO,
    Answer,
    EvaluateAlways,
    Question,
    SitePolicy,
    _evaluate_always,
    code_digest,
    decide_evaluate,
)
from trimtab.sites import Site, site_of

SHOP = site_of("https://www.shop.example/cart")
OTHER = site_of("https://mail.example/inbox")
A = "document.querySelectorAll('tr').length"
B = "fetch('/account', {method: 'DELETE'})"
# Any character, lone surrogates included (a JSON string can carry one).
_ANY = st.characters(exclude_categories=())


@attrs.define
class Person:
    """Answers every question with ``answer`` and keeps the questions asked."""

    answer: Answer = attrs.field(factory=lambda: Answer(allow=True, always=True))
    asked: list[Question] = attrs.field(factory=list)

    async def __call__(self, question: Question) -> Answer:
        self.asked.append(question)
        return self.answer


def question(code: object, site: Site | None = SHOP) -> Question:
    """The question an evaluate call of ``code`` asks on ``site``, as the host builds it."""
    return Question(
        client="c",
        session="s",
        tab=1,
        what="evaluate",
        tool="evaluate",
        args={"expression": code},
        site=None if site is None else str(site),
    )


async def run(policy: SitePolicy, person: Person, code: object, site: Site | None = SHOP) -> bool:
    """Whether an evaluate of ``code`` on ``site`` may run (asking ``person`` if need be)."""
    return (await decide_evaluate(policy, site, person, question(code, site))).allow


async def test_always_covers_this_code_on_this_site_only(tmp_path: Path) -> None:
    """Yes-always to A on S: A on S runs unasked from then on; B on S asks again and a
    no runs it not (nor remembers anything); A on another site asks again."""
    policy = SitePolicy.load(tmp_path)
    person = Person()
    assert await run(policy, person, A)
    (asked,) = person.asked
    assert asked.to_json()["choices"] == ["once", "always", "no"]
    assert await run(policy, person, A)
    assert len(person.asked) == 1
    person.answer = Answer.no()
    assert not await run(policy, person, B)
    assert person.asked[-1].args == {"expression": B}
    assert not await run(policy, person, A, OTHER)
    assert str(person.asked[-1].site) == "https://mail.example"
    assert len(person.asked) == 3
    assert [e["code"] for e in policy.evaluate.listed()["always"]] == [A]


@pytest.mark.parametrize(
    "variant",
    [
        A + " ",
        " " + A,
        A + ";",
        A.replace("'", '"'),
        A + "\n",
        A.replace("tr", "t\u200br"),  # a zero-width space: looks the same
        A.upper(),
    ],
)
async def test_any_other_text_is_other_code_and_asks_again(variant: str) -> None:
    """The code is compared as its exact text: a space, a newline, another quote, a
    zero-width character or another case is other code, asked about again."""
    policy = SitePolicy()
    person = Person()
    await run(policy, person, A)
    person.answer = Answer.no()
    assert not await run(policy, person, variant)
    assert len(person.asked) == 2


async def test_no_unicode_normalisation_joins_two_codes() -> None:
    """Two spellings of one text (composed é and e with a combining accent) are two
    codes: an always for one does not run the other."""
    composed = "'caf\u00e9'"
    decomposed = unicodedata.normalize("NFD", composed)
    assert composed != decomposed
    policy = SitePolicy()
    person = Person()
    await run(policy, person, composed)
    assert not policy.evaluate.allows(SHOP, decomposed)
    assert code_digest(composed) != code_digest(decomposed)


@settings(max_examples=200)
@given(allowed=st.text(_ANY, max_size=40), other=st.text(_ANY, max_size=40))
def test_an_always_for_one_code_never_runs_another(allowed: str, other: str) -> None:
    """Whatever two texts are, the always for one allows the other only when they are
    the same text, and only on the same site (lone surrogates included)."""
    always = EvaluateAlways()
    always.remember(SHOP, allowed)
    assert always.allows(SHOP, other) is (other == allowed)
    assert not always.allows(OTHER, allowed)


async def test_always_is_offered_only_where_it_can_hold() -> None:
    """Code too long to be shown whole, a page without a site of its own, or one whose
    site is unknown: the question offers once and no, and an "always" answer counts as
    once (nothing is kept, the next call asks)."""
    long_code = "1;" + " " * ALWAYS_CODE_MAX
    for code, site in (
        (long_code, SHOP),
        (A, site_of("about:blank")),
        (A, site_of("data:text/html,hi")),
        (A, None),
    ):
        policy = SitePolicy()
        person = Person()
        assert await run(policy, person, code, site)
        assert await run(policy, person, code, site)
        assert len(person.asked) == 2, (code[:10], site)
        assert person.asked[0].choices == ONCE_OR_NO
        assert person.asked[0].to_json()["choices"] == ["once", "no"]
        assert policy.evaluate.listed() == {"always": []}
    # Counted as the panel counts (UTF-16): an emoji is two of its characters.
    emoji = "'\U0001f600'" + "x" * (ALWAYS_CODE_MAX - 3)
    assert len(emoji) == ALWAYS_CODE_MAX
    policy, person = SitePolicy(), Person()
    await run(policy, person, emoji)
    assert person.asked[0].choices == ONCE_OR_NO
    exact = "x" * ALWAYS_CODE_MAX
    policy, person = SitePolicy(), Person()
    await run(policy, person, exact)
    assert await run(policy, person, exact)
    assert len(person.asked) == 1


async def test_a_call_without_code_is_asked_and_kept_nowhere() -> None:
    """An expression that is no text (the tool refuses it before asking anyway) is
    asked about with once and no, and nothing is kept."""
    policy, person = SitePolicy(), Person()
    await run(policy, person, 5)
    assert person.asked[0].choices == ONCE_OR_NO
    assert policy.evaluate.listed() == {"always": []}


async def test_the_list_is_kept_with_each_code_and_its_digest(tmp_path: Path) -> None:
    """evaluate.json (0600) holds site, SHA-256 and code of each always; loaded again,
    A still runs unasked and B still asks."""
    policy = SitePolicy.load(tmp_path)
    await run(policy, Person(), A)
    path = tmp_path / EVALUATE_FILE
    assert json.loads(path.read_text()) == {
        "always": [{"site": "https://shop.example", "sha256": code_digest(A), "code": A}]
    }
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = SitePolicy.load(tmp_path)
    assert again.evaluate.allows(SHOP, A)
    assert not again.evaluate.allows(SHOP, B)


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ('{"sites": ["https://shop.example"]}', "whole sites"),
        ('{"always": [{"site": "https://shop.example", "sha256": "00", "code": "1"}]}', "sha256"),
        ('{"always": [{"site": "nowhere", "sha256": "00", "code": "1"}]}', "not a site"),
        ('{"always": "all"}', "must be"),
        ("{not json", "Expecting"),
    ],
)
def test_a_list_that_does_not_hold_is_set_aside_and_nothing_runs_unasked(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, content: str, why: str
) -> None:
    """An earlier version's list of whole sites, an entry whose digest is not its
    code's, a bad site or no JSON: the file is set aside (logged, naming why) and the
    person starts with no always at all."""
    (tmp_path / EVALUATE_FILE).write_text(content)
    policy = SitePolicy.load(tmp_path)
    assert policy.evaluate.listed() == {"always": []}
    assert not policy.evaluate.allows(SHOP, "1")
    assert (tmp_path / (EVALUATE_FILE + ".unreadable")).exists()
    assert why in caplog.text


def test_the_settings_only_take_entries_off(tmp_path: Path) -> None:
    """Remove takes one (site, digest) off, saved; an entry not there is no error; a
    bad site or digest is an error naming it, and the list is unchanged."""
    always = EvaluateAlways.load(tmp_path)
    always.remember(SHOP, A)
    always.remember(SHOP, B)
    always.remember(OTHER, A)
    with pytest.raises(ValueError, match="'nowhere' is not a site"):
        always.remove("nowhere", code_digest(A))
    with pytest.raises(ValueError, match="sha256 must be 64 lowercase hex digits; got 'A'"):
        always.remove("https://shop.example", "A")
    assert len(always.listed()["always"]) == 3
    always.remove("https://shop.example", code_digest(A))
    always.remove("https://shop.example", code_digest(A))
    assert not always.allows(SHOP, A)
    assert always.allows(SHOP, B)
    assert always.allows(OTHER, A)
    assert [(e["site"], e["code"]) for e in EvaluateAlways.load(tmp_path).listed()["always"]] == [
        ("https://mail.example", A),
        ("https://shop.example", B),
    ]


def test_a_full_list_drops_its_oldest_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the bound, the oldest always goes (asked about again): the list never
    allows more than the person's own answers."""
    monkeypatch.setattr(_evaluate_always, "MAX_ALWAYS", 2)
    always = EvaluateAlways()
    for code in ("1", "2", "3"):
        always.remember(SHOP, code)
    assert [always.allows(SHOP, code) for code in ("1", "2", "3")] == [False, True, True]


def test_always_is_offered_for_the_code_the_side_panel_shows_whole() -> None:
    """The host's bound for an always (`ALWAYS_CODE_MAX`) is the side panel's
    ``CODE_SHOWN``: longer code is cut in the question, and never kept as always."""
    source = (EXTENSION_DIR / "shared" / "questions.js").read_text(encoding="utf-8")
    found = re.search(r"export const CODE_SHOWN = (\d+);", source)
    assert found is not None, "questions.js defines no CODE_SHOWN"
    assert int(found.group(1)) == ALWAYS_CODE_MAX
