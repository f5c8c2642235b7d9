"""The relay's tab messages (``host/PROTOCOL.md``, "Tabs"), host side: what the
extension says of tabs coming and going, and the host's requests to open, close and
group tabs, as an extension that sends odd values would."""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing

from pycdp_bridge import CDPError, RelayHub, TargetClosedError
from trimtab.browser import GateTurn, TabEvent, TabRelayHub


class Worker:
    """The extension's end: keeps what the host sent, answers when told."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.hub = TabRelayHub(self.send)

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)


async def test_tab_events_reach_every_listener_and_odd_ones_are_dropped() -> None:
    """``tab_opened``, ``tab_closed`` and ``tab_left`` reach the listeners as `TabEvent`s;
    a message whose tab is not an integer (a string, a bool) is dropped and counted, and
    an opener that is not an integer is read as none."""
    worker = Worker()
    async with worker.hub.tab_events() as events:
        worker.hub.feed({"type": "tab_opened", "tab": "51", "opener": 42})
        worker.hub.feed({"type": "tab_opened", "tab": True, "opener": 42})
        worker.hub.feed(
            {"type": "tab_opened", "tab": 51, "opener": 42, "url": "https://x/", "popup": True}
        )
        worker.hub.feed({"type": "tab_opened", "tab": 52, "opener": "42", "waiting": "yes"})
        worker.hub.feed({"type": "tab_left", "tab": 52})
        worker.hub.feed({"type": "tab_closed", "tab": 51})
        got = [events.receive_nowait() for _ in range(4)]
    assert got == [
        TabEvent("opened", 51, opener=42, url="https://x/", popup=True),
        TabEvent("opened", 52),
        TabEvent("left", 52),
        TabEvent("closed", 51),
    ]
    assert worker.hub.statistics().unroutable == 2


async def test_a_closed_tab_ends_its_target() -> None:
    """``tab_closed`` fails the tab's pending commands as closed, like ``cdp_detached``."""
    worker = Worker()
    target = worker.hub.target(51)
    failed: list[BaseException] = []

    async def command() -> None:
        try:
            await target.send("Runtime.evaluate", {"expression": "1"})
        except TargetClosedError as exc:
            failed.append(exc)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(command)
        await trio.testing.wait_all_tasks_blocked()
        # The attach is pending: answer it, then the command waits.
        worker.hub.feed({"type": "cdp_result", "id": worker.sent[-1]["id"], "result": {}})
        await trio.testing.wait_all_tasks_blocked()
        worker.hub.feed({"type": "tab_closed", "tab": 51})
    assert len(failed) == 1
    assert target.closed


async def test_new_close_and_group_requests_follow_the_protocol() -> None:
    """The host's ``cdp_new_tab``, ``cdp_close_tab`` and ``tab_group`` go out shaped as
    in PROTOCOL.md and return what the extension answers; an answer without an integer
    tab is an error naming it."""
    worker = Worker()
    answers: dict[str, Any] = {}

    async def answer(result: dict[str, Any]) -> None:
        while not worker.sent:
            await trio.sleep(0)
        request = worker.sent.pop()
        answers.setdefault(request["type"], request)
        worker.hub.feed({"type": "cdp_result", "id": request["id"], "result": result})

    async with trio.open_nursery() as nursery:
        nursery.start_soon(answer, {"tab": 60})
        assert await worker.hub.new_tab("https://x/", opener=42, active=True) == 60
        nursery.start_soon(answer, {})
        await worker.hub.close_tab(60)
        nursery.start_soon(answer, {"group": 3})
        assert await worker.hub.tab_group([42, 60], "Trimtab agent") == 3
        nursery.start_soon(answer, {"tab": "60"})
        with pytest.raises(ValueError, match="'60'"):
            await worker.hub.new_tab("https://x/")
    new = answers["cdp_new_tab"]
    assert (new["url"], new["opener"], new["active"]) == ("https://x/", 42, True)
    assert new["id"].startswith("c")
    assert answers["cdp_close_tab"]["tab"] == 60
    assert answers["tab_group"]["tabs"] == [42, 60]


async def test_closing_the_hub_fails_a_pending_tab_request_and_ends_listeners() -> None:
    """When the extension disconnects, a request about tabs waiting for its answer fails
    as closed, and the listeners' channels end."""
    worker = Worker()
    async with worker.hub.tab_events() as events, trio.open_nursery() as nursery:
        failed: list[BaseException] = []

        async def open_one() -> None:
            try:
                await worker.hub.new_tab("https://x/")
            except TargetClosedError as exc:
                failed.append(exc)

        nursery.start_soon(open_one)
        await trio.testing.wait_all_tasks_blocked()
        worker.hub.close("the extension disconnected")
        assert [e async for e in events] == []
    assert len(failed) == 1


async def test_the_bare_relay_knows_no_tab_message_and_routes_what_it_is_given() -> None:
    """pycdp_bridge's RelayHub refuses a tab message as not CDP; given a handler for a
    type it hands that type's messages to it, counts the deliveries the handler reports
    failed as unroutable, and answers `request` from a ``cdp_result`` of the same id."""
    sent: list[dict[str, Any]] = []
    handled: list[Any] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    bare = RelayHub(send)
    with pytest.raises(ValueError, match="not a CDP relay message: type 'tab_opened'"):
        bare.feed({"type": "tab_opened", "tab": 5})
    hub = RelayHub(send, handlers={"ping_tab": lambda m: handled.append(m["tab"]) or 2})
    hub.feed({"type": "ping_tab", "tab": 5})
    assert handled == [5]
    assert hub.statistics().unroutable == 2
    async with trio.open_nursery() as nursery:
        answers: list[dict[str, Any]] = []

        async def ask() -> None:
            answers.append(await hub.request("tab_things", {"tab": 5}))

        nursery.start_soon(ask)
        await trio.testing.wait_all_tasks_blocked()
        assert sent == [{"type": "tab_things", "id": sent[0]["id"], "tab": 5}]
        hub.feed({"type": "cdp_result", "id": sent[0]["id"], "result": {"ok": True}})
    assert answers == [{"ok": True}]


async def test_a_tabs_gate_requests_go_out_one_at_a_time_in_the_order_taken() -> None:
    """Gate requests of one tab go out in the order their turns were taken, each once
    the one before it was answered: a lift whose turn was taken before the next gate
    goes first and the gate waits for its answer (it would otherwise take the new gate
    away); an error answer or a turn given up lets the next go; another tab's gate does
    not wait."""
    worker = Worker()
    answered: set[str] = set()

    def gates(tab: int) -> list[object]:
        return [m["domains"] for m in worker.sent if m["type"] == "tab_gate" and m["tab"] == tab]

    def answer(tab: int, error: bool = False) -> None:
        """Answer the tab's one gate request waiting for its answer."""
        [request] = [
            m
            for m in worker.sent
            if m["type"] == "tab_gate" and m["tab"] == tab and m["id"] not in answered
        ]
        answered.add(request["id"])
        reply: dict[str, Any] = {"type": "cdp_result", "id": request["id"]}
        if error:
            reply["error"] = {"code": -32000, "message": f"No tab with id: {tab}."}
        else:
            reply["result"] = {}
        worker.hub.feed(reply)

    hub = worker.hub
    failed: list[CDPError] = []

    async def lift_failing(turn: GateTurn) -> None:
        try:
            await turn.send(None)
        except CDPError as exc:
            failed.append(exc)

    async with trio.open_nursery() as nursery:
        first, lift, second = hub.gate_turn(42), hub.gate_turn(42), hub.gate_turn(42)
        # Started in reverse: the order is that of the turns, not of the tasks.
        nursery.start_soon(second.send, ["b.test"])
        nursery.start_soon(lift_failing, lift)
        nursery.start_soon(first.send, ["a.test"])
        nursery.start_soon(hub.gate, 43, ["c.test"])
        await trio.testing.wait_all_tasks_blocked()
        assert (gates(42), gates(43)) == ([["a.test"]], [["c.test"]])
        answer(42)
        await trio.testing.wait_all_tasks_blocked()
        assert gates(42) == [["a.test"], None]
        answer(42, error=True)  # the tab is gone: the next turn goes all the same
        await trio.testing.wait_all_tasks_blocked()
        assert gates(42) == [["a.test"], None, ["b.test"]]
        answer(42)
        answer(43)
        given_up, after = hub.gate_turn(42), hub.gate_turn(42)
        given_up.give_up()  # never sent (the host went away before it could be)
        nursery.start_soon(after.send, None)
        await trio.testing.wait_all_tasks_blocked()
        assert gates(42) == [["a.test"], None, ["b.test"], None]
        answer(42)
    assert [str(e) for e in failed] == [
        "tab_gate failed with CDP error -32000: No tab with id: 42."
    ]
