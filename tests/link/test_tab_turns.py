"""Two outside agents on one tab: their calls run one at a time in arrival order, and a
call that would wait past the bound is told at once who holds the tab."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
import trio

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.link_host import TAB, TIMEOUT, LinkHost, open_link_host
from tests.support.xmltree import id_matching
from trimtab.browser import TabTurns, ToolCall
from trimtab.link import LinkClient

pytestmark = pytest.mark.browser

# The bound of these tests: short, so a test of it does not wait ten seconds.
WAIT = 2.0


@pytest.fixture
async def linked(
    page: PageTarget, pages_server: StaticServer, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[LinkHost]:
    """The host and its link on the consent shop, its tab shared, the tab wait 2 s."""
    monkeypatch.setenv("TRIMTAB_TAB_WAIT", str(WAIT))
    async with open_link_host(page, pages_server.url("consent-shop.html")) as host:
        await host.share(TAB)
        yield host


async def tool(agent: LinkClient, name: str, **args: Any) -> dict[str, Any]:
    with trio.fail_after(TIMEOUT):
        result: dict[str, Any] = await agent.request("tool", tab=TAB, name=name, args=args)
        return result


async def test_a_call_behind_a_question_is_told_who_holds_the_tab(linked: LinkHost) -> None:
    """While one agent's submit waits for the person, another agent's call on the same
    tab is answered within the bound with who holds the tab and that it waits for the
    person, instead of acting between the question and the submit; after the answer the
    second agent's call runs."""
    async with (
        linked.agent("Claude Code", version="1") as first,
        linked.agent("Cursor", version="1") as second,
    ):
        page = (await tool(first, "capture_snapshot"))["content"]
        email = id_matching(page, r'[^>]*type="email"')
        typed = await tool(first, "type", id=email, text="a@b.c")
        assert not typed["is_error"], typed["content"]
        buy = id_matching(page, "Buy now")
        async with trio.open_nursery() as nursery:
            results: list[dict[str, Any]] = []

            async def submit() -> None:
                results.append(await tool(first, "click", id=buy))

            nursery.start_soon(submit)
            ask = await linked.extension.next("ask")
            started = trio.current_time()
            busy = await tool(second, "capture_snapshot")
            waited = trio.current_time() - started
            assert busy["is_error"]
            words = busy["content"]
            assert re.search(rf"tab {TAB} is busy: Claude Code( \d+)? is running click on", words)
            assert "Buy now" in words
            assert "waiting for the person's answer" in words
            assert WAIT - 0.5 <= waited < WAIT + 10, waited
            # Nothing of the second call reached the page: the question still stands.
            assert linked.panel.answer(ask["ask"], allow=False)
        assert results[0]["is_error"]
        assert "refused" in results[0]["content"]
        after = await tool(second, "capture_snapshot")
        assert not after["is_error"], after["content"]
        assert "Buy now" in after["content"]


async def test_calls_on_one_tab_run_one_at_a_time_in_arrival_order(linked: LinkHost) -> None:
    """Calls of three agents sent together on one tab run one after another in the order
    they came, each one's action complete before the next starts."""
    linked.link.state.turns.wait = TIMEOUT  # the last waits for two clicks: no bound here
    page = linked.page
    await page.evaluate(
        """(() => {
          window.heard = [];
          for (const name of ["Red", "Green", "Blue"]) {
            const button = document.createElement("button");
            button.type = "button";
            button.textContent = name;
            button.addEventListener("mousedown", () => window.heard.push(name + ":down"));
            button.addEventListener("click", () => window.heard.push(name + ":click"));
            document.querySelector("main").append(button);
          }
          return true;
        })()"""
    )
    agents = [linked.agent(f"agent-{n}", version="1") for n in range(3)]
    async with agents[0] as a, agents[1] as b, agents[2] as c:
        xml = (await tool(a, "capture_snapshot"))["content"]
        for each in (b, c):
            await tool(each, "capture_snapshot")
        targets = [
            (a, id_matching(xml, "Red")),
            (b, id_matching(xml, "Green")),
            (c, id_matching(xml, "Blue")),
        ]
        answered: list[int] = []
        async with trio.open_nursery() as nursery:
            for n, (agent, target) in enumerate(targets):

                async def press(
                    agent: LinkClient = agent, target: str = target, n: int = n
                ) -> None:
                    result = await tool(agent, "click", id=target)
                    assert not result["is_error"], result["content"]
                    answered.append(n)

                nursery.start_soon(press)
                # Each request reaches the host before the next is sent.
                await trio.sleep(0.05)
    heard = await page.evaluate("window.heard")
    assert heard == [
        f"{name}:{event}" for name in ("Red", "Green", "Blue") for event in ("down", "click")
    ], heard
    assert answered == [0, 1, 2]


async def test_tab_turns_are_per_tab_and_the_turn_ends_with_the_call() -> None:
    """A turn held in one tab does not delay a call in another; a released turn goes to
    the next caller at once, and an idle tab keeps no entry."""
    turns = TabTurns(wait=0.5)
    one = ToolCall(session="s1", tab=1, name="click", client="A")
    two = ToolCall(session="s2", tab=2, name="click", client="B")
    async with turns.turn(one, {"e1": {"name": "Pay"}}) as held:
        assert turns.holder(1) is held
        with trio.fail_after(0.2):
            async with turns.turn(two, {}):
                assert turns.holder(2) is not None
    assert turns.holder(1) is None
    assert turns.holder(2) is None
