"""Routines across tabs: a step that switches to a tab or closes one finds it as a person
picks it from the tab strip (its title and page), prefers a tab the run itself opened,
and never picks one of several alike. Without a browser (a model of the run's tabs),
then end to end through the link: results opened behind in tabs, each read, back to
the list; a result read in a tab the run opened by its address, and closed."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import attrs
import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.link_host import TAB, TIMEOUT, open_link_host
from tests.support.xmltree import control_id
from trimtab.link import LinkClient
from trimtab.routines import Acted, PageSeen, Routine, Step, TabSeen, replay, url_matches
from trimtab.routines._replay import OPENING_WAIT

LIST = "http://127.0.0.1:8000/results.html"
OFFER = "http://127.0.0.1:8000/offer.html"
_TITLES = ("Ridge 2 tent", "Cairn 3 tent", "")


@attrs.define
class Tabs:
    """The run's tabs: those open before it, and those its steps open (here: all at
    the first step's act, as a click that opens results behind)."""

    before: list[TabSeen]
    opened: list[TabSeen]
    acted: list[tuple[str, dict[str, object]]] = attrs.field(factory=list)
    current: int = 1

    async def act(self, tool: str, args: Mapping[str, object], at: int | None = None) -> Acted:
        del at
        self.acted.append((tool, dict(args)))
        if tool == "switch_tab":
            self.current = int(str(args["tab"]))
        if tool == "close_tab":
            self.before = [seen for seen in self.before if seen.tab != args["tab"]]
            self.opened = [seen for seen in self.opened if seen.tab != args["tab"]]
            return Acted(f"closed tab {args['tab']}", is_error=False, refused=False, url=None)
        [now] = [seen for seen in await self.tabs() if seen.tab == self.current]
        return Acted(f"in {now.title}", is_error=False, refused=False, url=now.url)

    async def look(self, *, fresh: bool) -> PageSeen:
        del fresh
        return PageSeen(LIST, {}, "")

    async def address(self) -> str:
        return LIST

    async def whole_page(self) -> str:
        return ""

    async def tabs(self) -> Sequence[TabSeen]:
        return [*self.before, *(self.opened if self.acted else ())]


_TABS = st.lists(st.tuples(st.sampled_from(_TITLES), st.sampled_from([LIST, OFFER])), max_size=4)


_NAMING: Mapping[str, Step] = {
    "switch_tab": Step("switch_tab", page=LIST, after=OFFER, result=True),
    "close_tab": Step("close_tab", page=OFFER),
}


@settings(max_examples=300)
@given(
    before=_TABS,
    opened=_TABS,
    title=st.sampled_from(_TITLES),
    tool=st.sampled_from(sorted(_NAMING)),
)
async def test_a_switch_or_a_close_goes_to_the_one_tab_a_person_would_pick_or_asks(
    before: list[tuple[str, str]], opened: list[tuple[str, str]], title: str, tool: str
) -> None:
    """Of the tabs with the recorded title (any, when none was recorded) on the
    recorded page, the one the run opened, else the one open before it; with none or
    several of those, the run needs help and switches to or closes no tab."""
    run_tabs = Tabs(
        [TabSeen(1, "Results", LIST), *(TabSeen(2 + i, *t) for i, t in enumerate(before))],
        [TabSeen(20 + i, *t) for i, t in enumerate(opened)],
    )
    routine = Routine(
        "Read the offer",
        (
            Step("scroll", page=LIST, after=LIST, args={"direction": "down"}),
            attrs.evolve(_NAMING[tool], title=title),
        ),
    )

    def alike(seen: TabSeen) -> bool:
        return url_matches(OFFER, seen.url) and (not title or seen.title == title)

    fresh = [seen.tab for seen in run_tabs.opened if alike(seen)]
    old = [seen.tab for seen in run_tabs.before if alike(seen)]
    expected = fresh if fresh else old
    run = await replay(routine, run_tabs, {})
    switches = [args for done, args in run_tabs.acted if done == tool]
    if len(expected) == 1:
        assert run.status == "done", run.why
        assert switches == [{"tab": expected[0]}]
    else:
        assert run.status == "needs_help"
        assert run.at == 1
        assert switches == []
        assert ("no tab of the run is" if not expected else "not one to pick") in run.why


@attrs.define
class OpeningTabs(Tabs):
    """The run's tabs, where those its steps open show no page for the first
    ``blank`` looks at the tab strip, as a tab a click just opened behind."""

    blank: int = 3

    async def tabs(self) -> Sequence[TabSeen]:
        listed = await super().tabs()
        if not self.acted or self.blank <= 0:
            return listed
        self.blank -= 1
        return [seen if seen in self.before else TabSeen(seen.tab, "", "") for seen in listed]


def _switch_to_the_tent(title: str) -> Routine:
    return Routine(
        "Read the tent",
        (
            Step("scroll", page=LIST, after=LIST, args={"direction": "down"}),
            Step("switch_tab", page=LIST, after=OFFER, title=title, result=True),
        ),
    )


async def test_a_switch_waits_for_a_tab_the_run_opened_to_show_its_page() -> None:
    """A tab the run opened that shows no page yet (its first page not committed) is
    waited for, and the switch goes to it once it shows the recorded title and page."""
    run_tabs = OpeningTabs(
        [TabSeen(1, "Results", LIST)], [TabSeen(20, "Ridge 2 tent", OFFER)], blank=3
    )
    run = await replay(_switch_to_the_tent("Ridge 2 tent"), run_tabs, {})
    assert run.status == "done", run.why
    assert ("switch_tab", {"tab": 20}) in run_tabs.acted
    assert run_tabs.blank == 0


async def test_a_tab_that_never_shows_a_page_is_waited_for_a_bounded_time(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A tab the run opened that never shows a page is waited for `OPENING_WAIT`, then
    the run needs help at the switch, naming what it looked for; no tab is switched to."""
    del autojump_clock
    run_tabs = OpeningTabs(
        [TabSeen(1, "Results", LIST)], [TabSeen(20, "Ridge 2 tent", OFFER)], blank=10**6
    )
    started = trio.current_time()
    run = await replay(_switch_to_the_tent("Ridge 2 tent"), run_tabs, {})
    assert trio.current_time() - started >= OPENING_WAIT
    assert (run.status, run.at) == ("needs_help", 1)
    assert "no tab of the run is the tab 'Ridge 2 tent'" in run.why
    assert [tool for tool, _ in run_tabs.acted] == ["scroll"]


# -- end to end through the link -------------------------------------------------------


def _opened(content: str) -> int:
    found = re.search(r"new tab behind, tab (\d+)", content)
    assert found is not None, content
    return int(found.group(1))


async def _tool(client: LinkClient, name: str, **args: Any) -> str:
    with trio.fail_after(TIMEOUT):
        reply = await client.request("tool", tab=TAB, name=name, args=args)
    assert not reply["is_error"], reply["content"]
    return str(reply["content"])


@contextlib.asynccontextmanager
async def _agent(page: PageTarget, server: StaticServer) -> AsyncIterator[LinkClient]:
    """An agent over the link, on the results list in the shared tab `TAB`."""
    async with open_link_host(page, server.url("tabs-results.html")) as linked:
        await linked.share(TAB)
        async with linked.agent("agent") as agent:
            yield agent


@pytest.mark.browser
async def test_results_read_in_tabs_run_again_in_the_tabs_the_run_opened(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Two results opened behind, each read in its tab, then back to the list: saved,
    each switch names its tab by title and page (no tab number), and the routine runs
    again with no model, reading the results in the tabs this run opened, though the
    first run's tabs of the same titles are still open."""
    async with _agent(page, pages_server) as agent:
        listed = await _tool(agent, "capture_snapshot")
        first = _opened(await _tool(agent, "click", id=control_id(listed, "a", "Ridge 2 tent")))
        second = _opened(await _tool(agent, "click", id=control_id(listed, "a", "Cairn 3 tent")))
        assert "Price £110" in await _tool(agent, "switch_tab", tab=first)
        assert "Price £120" in await _tool(agent, "switch_tab", tab=second)
        await _tool(agent, "switch_tab", tab=TAB)

        saved = await agent.request("routine_save", name="Two tents")
        steps = saved["routine"]["steps"]
        assert [s["tool"] for s in steps] == ["click"] * 2 + ["switch_tab"] * 3
        assert [s["title"] for s in steps[2:]] == [
            "Ridge 2 tent \N{EN DASH} details",
            "Cairn 3 tent \N{EN DASH} details",
            "Results for tents",
        ]
        assert all("args" not in s for s in steps[2:])

        with trio.fail_after(TIMEOUT * 2):
            ran = await agent.request("routine_run", tab=TAB, name="Two tents")
        assert ran["status"] == "done", ran["content"]
        ridge, cairn, back = ran["results"]
        assert "Price £110" in ridge
        assert "Price £120" in cairn
        assert "Results for tents" in back
        tabs = await _tool(agent, "tabs")
        assert tabs.count("<tab ") == 5  # the list, and two results of each run
        switched = [
            int(n) for n in re.findall(r"you act in tab (\d+) now", "\n".join(ran["results"]))
        ]
        assert len(switched) == 3
        assert switched[2] == TAB
        assert not {first, second} & set(switched)


async def _result_tabs(page: PageTarget, server: StaticServer) -> list[str]:
    """The titles of the browser's tabs on this test's result pages."""
    targets = await page.browser.send("Target.getTargets")
    prefix = server.url("tabs-result.html")
    return sorted(
        t["title"]
        for t in targets["targetInfos"]
        if t["type"] == "page" and t["url"].startswith(prefix)
    )


@pytest.mark.browser
async def test_a_result_read_in_a_tab_opened_by_its_address_and_closed_runs_again(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A result opened behind and closed once read, and another opened by its address
    and closed: saved with each close naming its tab by title and page, the routine
    runs again with no model, reads both, and leaves no tab of its own open."""
    async with _agent(page, pages_server) as agent:
        listed = await _tool(agent, "capture_snapshot")
        first = _opened(await _tool(agent, "click", id=control_id(listed, "a", "Ridge 2 tent")))
        assert "Price £110" in await _tool(agent, "switch_tab", tab=first)
        assert f"closed tab {first}" in await _tool(agent, "close_tab", tab=first)
        offer = pages_server.url("tabs-result.html?n=2")
        opened = await _tool(agent, "new_tab", url=offer)
        assert "Price £120" in opened
        second = int(re.findall(r"opened tab (\d+)", opened)[0])
        assert f"closed tab {second}" in await _tool(agent, "close_tab", tab=second)
        assert await _result_tabs(page, pages_server) == []

        saved = await agent.request("routine_save", name="Two prices")
        steps = saved["routine"]["steps"]
        assert [s["tool"] for s in steps] == [
            "click",
            "switch_tab",
            "close_tab",
            "new_tab",
            "close_tab",
        ]
        ridge, cairn = "Ridge 2 tent \N{EN DASH} details", "Cairn 3 tent \N{EN DASH} details"
        assert [(s.get("title"), "args" in s) for s in steps[2::2]] == [
            (ridge, False),
            (cairn, False),
        ]
        assert steps[3]["args"] == {"url": offer}

        with trio.fail_after(TIMEOUT * 2):
            ran = await agent.request("routine_run", tab=TAB, name="Two prices")
        assert ran["status"] == "done", ran["content"]
        read_first, read_second = ran["results"]
        assert "Price £110" in read_first
        assert "Price £120" in read_second
        assert await _result_tabs(page, pages_server) == []
        assert (await _tool(agent, "tabs")).count("<tab ") == 1
