"""An action's answer rendered ahead, while the page settles, is the answer.

`Tab.prepare` renders the answer on a fork of the snapshot memory
(`SnapshotMemory.render_ahead`) and the snapshot adopts it (`adopt`) only if the memory
is still the one it forked. A Hypothesis state machine drives two memories through the
same calls, one that always renders when asked and one that renders ahead and adopts,
with anything the memory does between the two steps (other snapshots, forced
baselines, expands, ids shown live, views forgotten) and checks that every answer,
every id and every later answer are the same. The pages are captured once, from a real
browser; rendering is sans-I/O.
"""

from __future__ import annotations

import pytest
import trio
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from pycdp_bridge import PageModel, PageTarget
from tests.support.pages import page_url
from trimtab.tab import RenderedAhead, Snapshot, SnapshotMemory, SnapshotOptions

pytestmark = pytest.mark.browser

TIMEOUT = 90


def _page(title: str, items: int) -> str:
    links = "".join(f'<li><a href="/p{n}">Section {n}</a></li>' for n in range(30))
    rows = "".join(f"<p>Item {n} of {title} waits in the basket.</p>" for n in range(items))
    return (
        f"<!doctype html><html lang='en'><head><title>{title}</title></head><body>"
        f"<nav aria-label='Site'><ul>{links}</ul></nav>"
        f"<main><h1>{title}</h1>{rows}<button>Pay</button></main>"
        "<footer><a href='/help'>Help</a></footer></body></html>"
    )


# Changes of the first page's document, each captured after the ones before it.
_CHANGES = (
    "document.querySelector('h1').textContent = 'Basket (1)'",
    "document.querySelector('main').insertAdjacentHTML('beforeend',"
    " '<button>Save for later</button>')",
    "document.querySelector('nav li').remove()",
    "document.querySelector('main p').textContent = 'Item 0 is gone.'",
)


async def _models(page: PageTarget) -> list[PageModel]:
    """Captures of one document as it changes, then of another document."""
    memory = SnapshotMemory(page)
    with trio.fail_after(TIMEOUT):
        await page.navigate(page_url(_page("Basket", 12)))
        models = [await memory.capture()]
        for change in _CHANGES:
            await page.evaluate(f"{change}; 0")
            models.append(await memory.capture())
        await page.navigate(page_url(_page("Orders", 150)))
        models.append(await memory.capture())
    return models


def _same(ahead: Snapshot, direct: Snapshot) -> None:
    assert (ahead.kind, ahead.xml) == (direct.kind, direct.xml)
    assert ahead.regions_collapsed == direct.regions_collapsed


async def test_an_answer_rendered_ahead_is_the_answer_rendered_then(page: PageTarget) -> None:
    """Through any sequence of the memory's calls, an answer rendered ahead and adopted
    equals the one rendering at that moment gives, with the same ids and the same later
    answers; it is adopted whenever nothing the memory does came in between."""
    models = await _models(page)
    # A budget small enough that the bigger page is cut and its regions paged.
    options = SnapshotOptions(budget=1000)

    class RenderedAheadMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.direct = SnapshotMemory(page, options)
            self.ahead = SnapshotMemory(page, options)
            # The answer rendered ahead, of which model, and whether the memory was
            # called since.
            self.pending: tuple[RenderedAhead, int] | None = None
            self.touched = False

        @rule(k=st.integers(0, len(models) - 1))
        def render_ahead(self, k: int) -> None:
            self.pending = (self.ahead.render_ahead(models[k]), k)
            self.touched = False

        @precondition(lambda self: self.pending is not None)
        @rule(baseline=st.booleans())
        def answer(self, baseline: bool) -> None:
            """The action's answer: the one rendered ahead, unless a baseline is asked."""
            assert self.pending is not None
            (ahead, k), self.pending = self.pending, None
            answer = None
            if not baseline:
                answer = self.ahead.adopt(ahead)
                # Adopted whenever nothing came between (an expand that showed only a
                # page of a region changes nothing, and may leave it adoptable too).
                assert answer is not None or self.touched
            if answer is None:
                answer = self.ahead.render(models[k], baseline=baseline)
            _same(answer, self.direct.render(models[k], baseline=baseline))
            self.touched = True

        @rule(k=st.integers(0, len(models) - 1), baseline=st.booleans())
        def snapshot(self, k: int, baseline: bool) -> None:
            """Another answer, which may come between rendering ahead and the answer."""
            _same(
                self.ahead.render(models[k], baseline=baseline),
                self.direct.render(models[k], baseline=baseline),
            )
            self.touched = True

        @rule(n=st.integers(0, 30), at=st.sampled_from((0, 5)))
        def expand(self, n: int, at: int) -> None:
            if self.direct.latest is None:
                return
            regions = self.direct.latest.regions
            key = regions[n % len(regions)].key
            try:
                shown = self.direct.expand(key, at)
            except (LookupError, ValueError) as error:
                with pytest.raises(type(error)):
                    self.ahead.expand(key, at)
                return
            assert self.ahead.expand(key, at) == shown
            self.touched = True

        @rule(n=st.integers(0, 30))
        def shown_live(self, n: int) -> None:
            if self.direct.latest is None or not self.direct.latest.controls:
                return
            eids = sorted(self.direct.latest.controls)
            self.direct.shown_live(eids[n % len(eids)])
            self.ahead.shown_live(eids[n % len(eids)])
            self.touched = True

        @rule(everything=st.booleans())
        def forget(self, everything: bool) -> None:
            """The client dropped its views (`forget_views`), or an error dropped all."""
            for memory in (self.direct, self.ahead):
                memory.forget() if everything else memory.forget_views()
            self.touched = True

        @invariant()
        def same_ids(self) -> None:
            assert dict(self.ahead.issued) == dict(self.direct.issued)
            assert self.ahead.view == self.direct.view
            assert (self.ahead.unseen, self.ahead.trimmed) == (
                self.direct.unseen,
                self.direct.trimmed,
            )

    run_state_machine_as_test(
        RenderedAheadMachine,
        settings=settings(
            max_examples=150,
            stateful_step_count=25,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
