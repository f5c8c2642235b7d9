"""Dedup and trimming lose nothing along a flow of pages of one site.

Each step of a flow is captured once and rendered by two tab sessions: one as the
agent gets it (dedup and trimming), one as full baselines. `reconstruct` then
accounts for every line of the full baseline in the agent's answer: there, or
behind a marker pointing at the previous baseline or at ``expand``. Our own fixture
flow covers every kind of marker; the corpus flows do the same on real sites.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from pycdp_bridge import PageModel, PageTarget
from tests.support.lossless import LossError, reconstruct
from tests.support.pages import load
from trimtab.tab import SnapshotMemory, SnapshotOptions

pytestmark = pytest.mark.browser

TIMEOUT = 120

CATEGORIES = [f"Category {name}" for name in "ABCDEFGHIJ"]
NAV = [f"Section {n}" for n in range(1, 31)]


def site_page(title: str, *, nav: list[str] = NAV, categories: list[str] = CATEGORIES) -> str:
    """A page of a small shop: a long nav, a demo-site alert, a category list in a plain
    div and the page's own content."""
    nav_links = "".join(f"<li><a href='/s/{n}'>{name}</a></li>" for n, name in enumerate(nav))
    category_links = "".join(
        f"<li><a href='/c/{n}'>{name}</a></li>" for n, name in enumerate(categories)
    )
    return (
        f"<!doctype html><html lang='en'><head><title>{title}</title></head><body>"
        "<header><a href='/'>Corner Books</a> <span>Since 1999</span></header>"
        f"<nav aria-label='Sections'><ul>{nav_links}</ul></nav>"
        "<main><div role='alert'>Demo site: nothing here is for sale.</div>"
        f"<div class='side'><h3>Categories</h3><ul>{category_links}</ul></div>"
        f"<h1>{title}</h1><p>Everything about {title}, on its own page.</p>"
        f"<label>Copies <input type='number' value='{len(title)}'></label>"
        f"<button>Add {title} to basket</button></main>"
        "<footer><a href='/contact'>Contact</a> <span>Open 9 to 5</span></footer>"
        "</body></html>"
    )


FIXTURE_FLOW = [
    site_page("Home"),
    site_page("Dune"),  # same chrome: header, nav, alert and categories repeat
    site_page("Emma", nav=[*NAV[:20], "Section twenty-one", *NAV[21:]]),  # nav changes
    site_page("Ulysses", categories=[*CATEGORIES[:7], "Category Z", *CATEGORIES[8:]]),
]


async def check_flow(page: PageTarget, steps: list[str]) -> dict[str, int]:
    """Visit the steps in one tab; every answer must account for its full baseline.
    Returns how many markers of each kind the answers used."""
    # No token budget: the budget's own paging is checked in tests/tab/test_budget.py; here the
    # markers of dedup and trimming are replayed against whole pages.
    agent = SnapshotMemory(page, SnapshotOptions(budget=None))
    reference = SnapshotMemory(page, SnapshotOptions(dedup=False, trim=False, budget=None))
    used = {"collapsed": 0, "unchanged": 0, "trimmed": 0}
    previous_full: str | None = None
    for step in steps:
        with trio.fail_after(TIMEOUT):
            model: PageModel = await load(page, step)
        answer = agent.render(model)
        full = reference.render(model)
        assert (answer.kind, full.kind) == ("baseline", "baseline")
        reconstruct(answer.xml, full.xml, previous_full, agent.expand)
        used["collapsed"] += answer.xml.count('unchanged="true"')
        used["unchanged"] += answer.xml.count("<unchanged ")
        used["trimmed"] += answer.xml.count("<trimmed ")
        assert answer.tokens <= full.tokens
        previous_full = full.xml
    return used


async def test_fixture_flow_loses_nothing(page: PageTarget) -> None:
    """Along our own four-page flow every line is present or behind a truthful marker,
    and collapsed regions, unchanged blocks and trimmed regions all occur."""
    used = await check_flow(page, FIXTURE_FLOW)
    assert used["collapsed"] >= 3  # header, nav, alert, footer on the second page
    assert used["unchanged"] >= 2  # the category list, whole and then split
    assert used["trimmed"] >= 1  # the changed long nav


async def test_reconstruct_catches_a_dropped_line(page: PageTarget) -> None:
    """The checker itself fails when a line of the page is missing from the answer, or
    when a marker hides a line that was not in the previous baseline."""
    session = SnapshotMemory(page)
    reference = SnapshotMemory(page, SnapshotOptions(dedup=False, trim=False))
    first_model = await load(page, FIXTURE_FLOW[0])
    second_model = await load(page, FIXTURE_FLOW[1])
    first_full = reference.render(first_model).xml
    session.render(first_model)
    answer = session.render(second_model).xml
    full = reference.render(second_model).xml
    reconstruct(answer, full, first_full, session.expand)
    dropped = answer.replace("Everything about Dune, on its own page.\n", "")
    with pytest.raises(LossError, match="Everything about Dune"):
        reconstruct(dropped, full, first_full, session.expand)
    # Against a previous baseline without the category list, the block marker lies.
    other = first_full.replace("Category C", "Category Q")
    with pytest.raises(LossError, match="not in the previous baseline"):
        reconstruct(answer, full, other, session.expand)


def corpus_flows(corpus: Path) -> list[Path]:
    return sorted(p for p in (corpus / "flows").iterdir() if p.is_dir())


@pytest.mark.corpus
@pytest.mark.parametrize("flow", ["books-toscrape", "whatwg-site", "wikipedia-articles"])
async def test_corpus_flow_loses_nothing(page: PageTarget, corpus: Path, flow: str) -> None:
    """Along each corpus flow, visited in order, every line of every step is present or
    behind a truthful marker."""
    steps = sorted(
        p / "index.html" for p in (corpus / "flows" / flow).iterdir() if p.name[:2].isdigit()
    )
    assert len(steps) >= 2, flow
    await check_flow(page, [step.as_uri() for step in steps])
