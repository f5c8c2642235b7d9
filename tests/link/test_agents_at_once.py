"""Many outside agents at once: each client's bounds (calls in flight, clients
connected), calls of a client that left never run, a tab closed under waiting calls,
a frozen tab that never delays another tab, and the person's Stop of one client."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import trio

from pycdp_bridge import PageTarget
from pycdp_bridge import protocol as cdp
from tests.support import StaticServer
from tests.support.frozen import frozen_site
from tests.support.link_host import TAB, TIMEOUT, LinkHost, extension_request, open_link_host
from tests.support.xmltree import id_matching
from trimtab.link import LinkClient, LinkError
from trimtab.link.server import MAX_CALLS_IN_FLIGHT, MAX_CLIENTS

pytestmark = pytest.mark.browser

# The turn's bound in these tests: short, so a call kept waiting is told soon.
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


async def tool(agent: LinkClient, name: str, tab: int = TAB, **args: Any) -> dict[str, Any]:
    with trio.fail_after(TIMEOUT):
        result: dict[str, Any] = await agent.request("tool", tab=tab, name=name, args=args)
        return result


Ended = list[dict[str, Any] | LinkError]


async def hold_with_question(
    linked: LinkHost,
    agent: LinkClient,
    nursery: trio.Nursery,
    tab: int = TAB,
    seen: str | None = None,
) -> tuple[Ended, str]:
    """``agent`` types an email and clicks Buy now in ``tab``: its call holds the tab's
    turn while the person is asked. Where its answer will be, and the question's id
    (once the question is shown). ``seen``: the page as ``agent`` saw it last, if it
    did."""
    page = seen or (await tool(agent, "capture_snapshot", tab))["content"]
    typed = await tool(agent, "type", tab, id=id_matching(page, r'[^>]*type="email"'), text="a@b.c")
    assert not typed["is_error"], typed["content"]
    buy = id_matching(page, "Buy now")
    ended: Ended = []

    async def submit() -> None:
        try:
            ended.append(await tool(agent, "click", tab, id=buy))
        except LinkError as exc:
            ended.append(exc)

    nursery.start_soon(submit)
    ask = await linked.extension.next("ask")
    return ended, str(ask["ask"])


async def add_buttons(page: PageTarget, *names: str) -> None:
    """Buttons whose presses the page notes in ``window.heard``."""
    await page.evaluate(
        """((names) => {
          window.heard = [];
          for (const name of names) {
            const button = document.createElement("button");
            button.type = "button";
            button.textContent = name;
            button.addEventListener("mousedown", () => window.heard.push(name));
            document.querySelector("main").append(button);
          }
          return true;
        })(NAMES)""".replace("NAMES", json.dumps(list(names)))
    )


async def test_a_client_past_its_calls_in_flight_is_told_at_once(linked: LinkHost) -> None:
    """A client that sends more calls than its bound while its tab is held gets "too
    many calls in flight" (code busy) at once for each call past the bound; the calls
    within it wait for the tab's turn as usual."""
    async with (
        linked.agent("Holder", version="1") as first,
        linked.agent("Flood", version="1") as flood,
    ):
        async with trio.open_nursery() as nursery:
            held, ask = await hold_with_question(linked, first, nursery)
            answers: list[tuple[float, dict[str, Any] | LinkError]] = []
            started = trio.current_time()

            async def snapshot() -> None:
                try:
                    result: dict[str, Any] | LinkError = await tool(flood, "capture_snapshot")
                except LinkError as exc:
                    result = exc
                answers.append((trio.current_time() - started, result))

            async with trio.open_nursery() as calls:
                for _ in range(MAX_CALLS_IN_FLIGHT + 4):
                    calls.start_soon(snapshot)
            refused = [(t, a) for t, a in answers if isinstance(a, LinkError)]
            waited = [(t, a) for t, a in answers if not isinstance(a, LinkError)]
            assert len(refused) == 4, answers
            for when, error in refused:
                assert isinstance(error, LinkError)
                assert error.code == "busy"
                assert "too many calls in flight" in str(error)
                assert f"at most {MAX_CALLS_IN_FLIGHT} per client" in str(error)
                assert when < 1.0, when
            assert len(waited) == MAX_CALLS_IN_FLIGHT
            for when, result in waited:
                assert isinstance(result, dict)
                assert result["is_error"]
                assert f"tab {TAB} is busy: Holder 1" in result["content"]
                assert when >= WAIT - 0.5, when
            assert linked.panel.answer(ask, allow=False)
        assert isinstance(held[0], dict)
        assert held[0]["is_error"]
        # The bound counts calls in flight: once they were answered, calls go in again.
        after = await tool(flood, "capture_snapshot")
        assert not after["is_error"], after["content"]


async def test_calls_queued_by_a_client_that_left_never_run(linked: LinkHost) -> None:
    """Calls a client queued behind another client's held turn are dropped when it
    disconnects: after the turn is released the page never receives them."""
    linked.link.state.turns.wait = TIMEOUT  # they would wait as long as the question
    await add_buttons(linked.page, "Left-1", "Left-2", "Left-3")
    turns = linked.link.state.turns
    async with linked.agent("Holder", version="1") as first:
        async with trio.open_nursery() as nursery:
            async with linked.agent("Leaver", version="1") as leaver:
                xml = (await tool(leaver, "capture_snapshot"))["content"]
                presses = [id_matching(xml, f"Left-{n}") for n in (1, 2, 3)]
                held, ask = await hold_with_question(linked, first, nursery)
                async with trio.open_nursery() as queued:
                    for target in presses:

                        async def press(target: str = target) -> None:
                            # Its link closes under it.
                            with contextlib.suppress(LinkError):
                                await tool(leaver, "click", id=target)

                        queued.start_soon(press)
                    with trio.fail_after(TIMEOUT):
                        while turns.waiting(TAB) < len(presses):
                            await trio.sleep(0.02)
                    queued.cancel_scope.cancel()
            # The client left: the host dropped its waiting calls.
            with trio.fail_after(5):
                while turns.waiting(TAB):
                    await trio.sleep(0.02)
            assert linked.panel.answer(ask, allow=False)
        assert isinstance(held[0], dict)
        assert held[0]["is_error"]
        # The tab is free again, and nothing of the leaver's reached the page.
        after = await tool(first, "capture_snapshot")
        assert not after["is_error"], after["content"]
    await trio.sleep(0.5)
    assert await linked.page.evaluate("window.heard") == []


async def test_a_hundred_clients_at_once_are_served_or_told_the_limit(linked: LinkHost) -> None:
    """100 clients connecting at the same moment are each either served (up to the
    limit) or refused at once with a busy error naming the limit; none hangs, and once
    they left a new client is served."""
    served: list[int] = []
    refused: list[LinkError] = []
    everyone_tried = trio.Event()
    tried = 0

    async def one(n: int) -> None:
        nonlocal tried
        try:
            async with linked.agent(f"agent-{n}", version="1") as agent:
                listed = await agent.request("tabs")
                assert listed["tabs"][0]["id"] == TAB
                served.append(n)
                tried += 1
                if tried == 100:
                    everyone_tried.set()
                await everyone_tried.wait()  # all stay connected until all have tried
        except LinkError as exc:
            refused.append(exc)
            tried += 1
            if tried == 100:
                everyone_tried.set()

    with trio.fail_after(TIMEOUT):
        async with trio.open_nursery() as nursery:
            for n in range(100):
                nursery.start_soon(one, n)
    assert len(served) == MAX_CLIENTS, (len(served), refused[:3])
    assert len(refused) == 100 - MAX_CLIENTS
    for error in refused:
        assert error.code == "busy", error
        assert f"too many clients connected: {MAX_CLIENTS} (at most {MAX_CLIENTS} at once)" in str(
            error
        )
    with trio.fail_after(5):
        while linked.link.sessions:  # the host hears each leave
            await trio.sleep(0.02)
    async with linked.agent("after", version="1") as agent:
        assert (await agent.request("tabs"))["tabs"]


async def new_tab(linked: LinkHost, agent: LinkClient, url: str) -> tuple[int, str]:
    """A tab ``agent`` opened at ``url`` (a site question, if any, allowed), shared, and
    its page as the answer showed it to ``agent``."""
    opened: list[dict[str, Any]] = []
    async with trio.open_nursery() as nursery:

        async def open_it() -> None:
            opened.append(await tool(agent, "new_tab", url=url))
            nursery.cancel_scope.cancel()

        nursery.start_soon(open_it)
        while True:
            await linked.answer(True)
    [reply] = opened
    assert not reply["is_error"], reply["content"]
    tab = int(reply["tab"])
    assert tab != TAB
    await linked.share(TAB, tab)
    return tab, str(reply["content"])


async def close_target_of(linked: LinkHost, path: str) -> None:
    """Close the page at ``path`` (not the test's own page), as the person closes a tab."""
    browser = linked.page.browser
    targets = (await browser.execute(cdp.target_get_targets()))["targetInfos"]
    [target] = [
        t
        for t in targets
        if t["type"] == "page" and path in t["url"] and t["targetId"] != linked.page.target_id
    ]
    await browser.execute(cdp.target_close_target(target["targetId"]))


async def test_a_tab_closed_while_two_clients_wait_on_it(
    linked: LinkHost, pages_server: StaticServer
) -> None:
    """A tab closed while one client's call waits for the person in it and two other
    clients' calls wait for its turn: each gets a clear error within seconds (the two
    waiting: the tab closed while they waited, nothing done), the question is
    withdrawn, and nothing hangs."""
    linked.link.state.turns.wait = TIMEOUT
    async with (
        linked.agent("Holder", version="1") as first,
        linked.agent("Waiter", version="1") as second,
        linked.agent("Another", version="1") as third,
    ):
        tab, seen = await new_tab(linked, first, pages_server.url("consent-shop.html?closing"))
        waited: list[dict[str, Any] | LinkError] = []
        started = 0.0
        async with trio.open_nursery() as nursery:
            held, ask = await hold_with_question(linked, first, nursery, tab, seen)
            for agent in (second, third):

                async def wait_turn(agent: LinkClient = agent) -> None:
                    try:
                        waited.append(await tool(agent, "capture_snapshot", tab))
                    except LinkError as exc:
                        waited.append(exc)

                nursery.start_soon(wait_turn)
            with trio.fail_after(TIMEOUT):
                while linked.link.state.turns.waiting(tab) < 2:
                    await trio.sleep(0.02)
            started = trio.current_time()
            await close_target_of(linked, "consent-shop.html?closing")
            with trio.fail_after(TIMEOUT / 2):
                withdrawn = await linked.extension.next("withdraw")
        assert withdrawn["ask"] == ask
        # Ended by the close, not by the turn's wait (TIMEOUT): well before it.
        took = trio.current_time() - started
        assert took < TIMEOUT / 2, took
        [ended] = held
        words = str(ended) if isinstance(ended, LinkError) else ended["content"]
        assert "closed" in words, words
        assert len(waited) == 2
        for turned in waited:
            assert isinstance(turned, LinkError)
            assert turned.code == "target_closed", turned
            assert f"tab {tab} closed while this call waited for its turn" in str(turned)
        # The other tab serves every client as before.
        for agent in (first, second, third):
            assert not (await tool(agent, "capture_snapshot"))["is_error"]


async def test_a_frozen_tab_never_delays_another_tabs_calls(linked: LinkHost) -> None:
    """While one client's click waits on a page whose script keeps it busy (another
    site, another renderer), another client's snapshots, types and clicks in another
    tab all end: nothing global is held across the frozen tab's wait. (How fast they
    are beside it is for the concurrency bench: a timed bound here would be a race
    against the machine's load.)"""
    async with (
        frozen_site() as site,
        linked.agent("Freezer", version="1") as freezer,
        linked.agent("Worker", version="1") as worker,
    ):
        frozen, xml = await new_tab(linked, freezer, site.url)
        freeze = id_matching(xml, "Freeze the page")
        await add_buttons(linked.page, "Work")

        page = (await tool(worker, "capture_snapshot"))["content"]
        email, work = id_matching(page, r'[^>]*type="email"'), id_matching(page, "Work")
        clicked: list[dict[str, Any]] = []
        async with trio.open_nursery() as frozen_calls:

            async def click_frozen() -> None:
                clicked.append(await tool(freezer, "click", frozen, id=freeze))

            frozen_calls.start_soon(click_frozen)
            await site.frozen()
            with trio.move_on_after(TIMEOUT) as waited:
                for n in range(3):
                    for name, args in (
                        ("capture_snapshot", {}),
                        ("type", {"id": email, "text": f"n{n}@b.c"}),
                        ("click", {"id": work}),
                    ):
                        result = await tool(worker, name, **args)
                        assert not result["is_error"], result["content"]
            assert not waited.cancelled_caught, "the worker's calls waited on the frozen tab"
            assert not clicked, f"the frozen click ended before the worker's calls: {clicked}"
            site.release()
        [answer] = clicked
        assert not answer["is_error"], answer["content"]


async def test_stopping_one_client_leaves_the_others_running(linked: LinkHost) -> None:
    """The person's Stop of one client (``agents_stop`` with its session) cancels its
    call waiting for the person (the question withdrawn), ends its session with a
    ``stopped`` reason, and another client's calls go on; the tabs stay shared."""
    async with (
        linked.agent("Stopped", version="1") as stopped,
        linked.agent("Other", version="1") as other,
    ):
        number = int(stopped.hello["session"])
        async with trio.open_nursery() as nursery:
            held, ask = await hold_with_question(linked, stopped, nursery)
            reply = await linked.link.handle_agents_stop(
                extension_request("agents_stop", session=number)
            )
            assert reply == {"stopped": 1}
            withdrawn = await linked.extension.next("withdraw")
            assert withdrawn["ask"] == ask
        [ended] = held
        assert isinstance(ended, LinkError)
        assert ended.code == "stopped", ended
        assert "the person stopped this agent" in str(ended)
        result = await tool(other, "capture_snapshot")
        assert not result["is_error"], result["content"]
        assert TAB in linked.link.shared
        assert [s.client for s in linked.link.sessions.values()] == ["Other 1"]
        again = await linked.link.handle_agents_stop(
            extension_request("agents_stop", session=number)
        )
        assert again == {"stopped": 0}
