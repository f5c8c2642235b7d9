"""Routines end to end through the link, on a real page: an outside agent does a task,
saves it, and runs it again without a model on the same pages and on pages that changed
(the shop's pages apply what ``localStorage.perturb`` lists: `tests/pages/routines/`)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
import trio

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.link_host import TAB, TIMEOUT, LinkHost, open_link_host
from tests.support.xmltree import listed_id
from trimtab.link import LinkClient, LinkError

pytestmark = pytest.mark.browser

TASK = "Order 2 headlamps for Ada"


def eid(xml: str, tag: str, text: str, *, row: str | None = None) -> str:
    """The id of the ``tag`` element whose text (a field: the label before it) is
    ``text``; with ``row``, the one on the line that starts with ``row``."""
    for line in xml.splitlines():
        if row is not None and not line.strip().startswith(row):
            continue
        found = re.search(rf'<{tag} id="([^"]+)"[^>]*>{re.escape(text)}<', line) or re.search(
            rf'{re.escape(text)} <{tag} id="([^"]+)"', line
        )
        if found:
            return found.group(1)
    if row is None and (listed := listed_id(xml, tag, text)) is not None:
        return listed
    raise AssertionError(f"no <{tag}> {text!r} in:\n{xml}")


async def tool(client: LinkClient, name: str, **args: Any) -> str:
    """Call tool ``name`` on the shop's tab; its answer's content (an error fails)."""
    with trio.fail_after(TIMEOUT):
        reply = await client.request("tool", tab=TAB, name=name, args=args)
    assert not reply["is_error"], reply["content"]
    return str(reply["content"])


async def run(client: LinkClient, name: str, **fields: Any) -> dict[str, Any]:
    """Run routine ``name`` on the shop's tab."""
    with trio.fail_after(TIMEOUT * 2):
        return await client.request("routine_run", tab=TAB, name=name, **fields)


async def storage(page: PageTarget, key: str) -> Any:
    """What the page's localStorage holds under ``key``, as JSON."""
    text = await page.evaluate(f"localStorage.getItem({json.dumps(key)})")
    return None if text is None else json.loads(text)


async def start_over(page: PageTarget, perturb: str = "") -> None:
    """An empty cart and nothing ordered, with the site changed as ``perturb`` says."""
    await page.evaluate(
        "localStorage.clear(); localStorage.setItem('perturb', " + json.dumps(perturb) + ")"
    )


@pytest.fixture
async def linked(page: PageTarget, pages_server: StaticServer) -> AsyncIterator[LinkHost]:
    """The host and its link on the shop, its tab shared, and a person who says yes to
    every question."""
    async with open_link_host(page, pages_server.url("routines/shop.html")) as host:
        await host.share(TAB)
        await start_over(page)
        yield host


@pytest.fixture
async def agent(linked: LinkHost) -> AsyncIterator[LinkClient]:
    """An outside agent's connection to the link."""
    async with linked.agent("agent", version="1") as c:
        yield c


async def say_yes(linked: LinkHost, asked: list[dict[str, Any]]) -> None:
    """The person: yes to every question, each kept in ``asked``."""
    while True:
        asked.append(await linked.answer(True))


async def order_headlamps(agent: LinkClient) -> str:
    """The task as a model would do it: two headlamps, checkout, Ada and her password,
    place the order, read the total."""
    xml = await tool(agent, "capture_snapshot")
    # A detour a model makes: a wrong quantity, mended at once.
    await tool(agent, "type", id=eid(xml, "input", "Quantity"), text="3")
    await tool(agent, "type", id=eid(xml, "input", "Quantity"), text="2")
    await tool(agent, "click", id=eid(xml, "button", "Add to cart", row="Headlamp"))
    xml = await tool(agent, "click", id=eid(xml, "a", "Checkout"))
    await tool(agent, "type", id=eid(xml, "input", "Name"), text="Ada")
    await tool(agent, "type", id=eid(xml, "input", "Account password"), text="hunter2")
    await tool(agent, "click", id=eid(xml, "button", "Place order"))
    return await tool(agent, "expand", region="main")


async def test_a_task_saved_as_a_routine_runs_again_without_a_model(
    linked: LinkHost, agent: LinkClient, page: PageTarget
) -> None:
    """A session saved as a routine keeps its actions and its final read, makes the
    values the task named parameters and the password a parameter it never stores, and
    runs again to the same result, asking before the order as the first run did."""
    asked: list[dict[str, Any]] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(say_yes, linked, asked)
        first = await order_headlamps(agent)
        assert "$48.00" in first
        saved = await agent.request("routine_save", name="Order headlamps", task=TASK)
        text = (linked.state / "trimtab" / "routines" / "order-headlamps.json").read_text()
        assert "hunter2" not in text
        routine = saved["routine"]
        assert [s["tool"] for s in routine["steps"]] == [
            "type", "click", "click", "type", "type", "click", "expand"
        ]  # fmt: skip
        parameters = {p["name"]: p for p in routine["parameters"]}
        assert parameters["quantity"]["default"] == "2"
        assert parameters["name"]["default"] == "Ada"
        assert parameters["account_password"] == {
            "name": "account_password",
            "kind": "secret",
            "about": parameters["account_password"]["about"],
        }
        questions = len(asked)

        await start_over(page)
        ran = await run(agent, "Order headlamps", params={"account_password": "hunter2"})
        assert ran["status"] == "done", ran["content"]
        assert "$48.00" in ran["results"][0]
        assert await storage(page, "placed") == {
            "cart": {"Headlamp": {"qty": 2, "price": 24}},
            "name": "Ada",
        }
        assert len(asked) == 2 * questions  # the order was asked about again
        nursery.cancel_scope.cancel()


async def test_a_routine_finds_its_elements_on_a_changed_site_by_what_a_person_sees(
    linked: LinkHost, agent: LinkClient, page: PageTarget
) -> None:
    """Ids and classes renamed, rows reordered, one more row, a cookie banner and the
    buttons' text in capitals: the routine still presses the headlamp's button (its row,
    not its place) and orders what the first run ordered, with another quantity."""
    async with trio.open_nursery() as nursery:
        nursery.start_soon(say_yes, linked, [])
        await order_headlamps(agent)
        await agent.request("routine_save", name="Order headlamps", task=TASK)
        await start_over(page, "rename,reorder,row,banner,case")
        ran = await run(
            agent, "Order headlamps", params={"account_password": "hunter2", "quantity": 3}
        )
        assert ran["status"] == "done", ran["content"]
        assert "$72.00" in ran["results"][0]
        assert await storage(page, "placed") == {
            "cart": {"Headlamp": {"qty": 3, "price": 24}},
            "name": "Ada",
        }
        nursery.cancel_scope.cancel()


async def test_a_step_whose_button_was_renamed_is_handed_back_and_the_rest_runs_after(
    linked: LinkHost, agent: LinkClient, page: PageTarget
) -> None:
    """The order button now says "Buy now": the run stops before that step, presses
    nothing, says which step needs help and the plan from there; the agent does that
    step and runs the rest from the next one, still without a model."""
    async with trio.open_nursery() as nursery:
        nursery.start_soon(say_yes, linked, [])
        await order_headlamps(agent)
        await agent.request("routine_save", name="Order headlamps", task=TASK)
        await start_over(page, "wording")
        ran = await run(agent, "Order headlamps", params={"account_password": "hunter2"})
        assert ran["status"] == "needs_help", ran["content"]
        assert ran["at"] == 6
        assert ran["done"] == 5
        assert "Place order" in ran["content"]
        assert "start_at=7" in ran["content"]
        assert await storage(page, "placed") is None  # nothing was submitted
        # The run's answers were not the agent's: it looks at the page first.
        await tool(agent, "capture_snapshot")
        found = await tool(agent, "find", text="Buy now")
        await tool(agent, "click", id=eid(found, "button", "Buy now"))
        rest = await run(agent, "Order headlamps", start_at=7, params={"account_password": "x"})
        assert rest["status"] == "done", rest["content"]
        assert "$48.00" in rest["results"][0]
        nursery.cancel_scope.cancel()


async def test_bad_runs_are_refused_naming_what_is_wrong(
    linked: LinkHost, agent: LinkClient
) -> None:
    """An unknown routine, a missing secret, an unknown parameter, a parameter that is
    no text, a step that is not there: each refused with what is wrong, nothing run."""
    async with trio.open_nursery() as nursery:
        nursery.start_soon(say_yes, linked, [])
        await order_headlamps(agent)
        await agent.request("routine_save", name="Order headlamps", task=TASK)
        nursery.cancel_scope.cancel()
    cases = [
        ({"name": "Nope"}, "there is no routine 'Nope' (routines: 'Order headlamps')"),
        ({"name": "Order headlamps"}, "needs parameter 'account_password'"),
        ({"name": "Order headlamps", "params": {"colour": "red"}}, "no parameter 'colour'"),
        ({"name": "Order headlamps", "params": {"quantity": [2]}}, "is not a text or a number"),
        (
            {"name": "Order headlamps", "start_at": 9, "params": {"account_password": "x"}},
            "start_at = 9 is not a step",
        ),
    ]
    for fields, said in cases:
        with pytest.raises(LinkError) as refused:
            await run(agent, **fields)
        assert refused.value.code == "bad_request"
        assert said in refused.value.message
    with pytest.raises(LinkError) as twice:
        await agent.request("routine_save", name="Order headlamps", task=TASK)
    assert "exists already" in twice.value.message


async def test_the_persons_log_shows_each_step_of_a_routine_an_agent_runs(
    linked: LinkHost, agent: LinkClient, page: PageTarget
) -> None:
    """A routine an outside agent runs is no blind spot: the side panel's log of that
    agent hears each of its steps as it hears the agent's own calls, with the element
    named as the page showed it, and never the password typed."""
    heard: list[dict[str, Any]] = []

    async def person() -> None:
        # Yes to every question, and every call the log hears kept.
        while True:
            message = await linked.extension.next("ask", "agents_event")
            if message["type"] == "ask":
                assert linked.panel.answer(message["ask"], allow=True)
            elif message.get("event") == "call":
                heard.append(message)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(person)
        await order_headlamps(agent)
        await agent.request("routine_save", name="Order headlamps", task=TASK)
        await start_over(page)
        async with linked.agent("again") as again:
            ran = await run(again, "Order headlamps", params={"account_password": "hunter2"})
            assert ran["status"] == "done", ran["content"]
            with trio.fail_after(TIMEOUT):
                while not any(e["tool"] == "expand" and e["client"] == "again" for e in heard):
                    await trio.sleep(0.05)
        nursery.cancel_scope.cancel()
    acted = [e for e in heard if e["client"] == "again" and e["tool"] != "capture_snapshot"]
    assert [e["tool"] for e in acted] == [
        "navigate", "type", "click", "click", "type", "type", "click", "expand"
    ]  # fmt: skip
    assert {e["name"] for e in acted[6]["elements"].values()} == {"Place order"}
    assert all(e["session"] == again.session and e["error"] is None for e in acted)
    assert "hunter2" not in json.dumps(heard)


async def test_an_agent_keeps_the_step_it_did_and_the_next_run_needs_no_help(
    linked: LinkHost, agent: LinkClient, page: PageTarget
) -> None:
    """After a run stopped at the renamed button, the agent's press on "Buy now" is
    written into the routine when it goes on with keep_healed (the answer says where
    and what); the next run on that site is done without help. keep_healed with
    nothing done since the stop (the stop stands), or with no stop, is refused before
    anything runs."""
    file = linked.state / "trimtab" / "routines" / "order-headlamps.json"
    params = {"account_password": "hunter2"}
    async with trio.open_nursery() as nursery:
        nursery.start_soon(say_yes, linked, [])
        await order_headlamps(agent)
        await agent.request("routine_save", name="Order headlamps", task=TASK)
        with pytest.raises(LinkError) as nothing:
            await run(agent, "Order headlamps", start_at=7, params=params, keep_healed=True)
        assert "keep_healed: no run of routine 'Order headlamps' in this session" in (
            nothing.value.message
        )
        await start_over(page, "wording")
        ran = await run(agent, "Order headlamps", params=params)
        assert (ran["status"], ran["at"]) == ("needs_help", 6)
        assert "with keep_healed, what you did is kept in the routine" in ran["content"]
        with pytest.raises(LinkError) as idle:
            await run(agent, "Order headlamps", start_at=7, params=params, keep_healed=True)
        assert "no call was made in this session since the run stopped before step 6" in (
            idle.value.message
        )
        assert await storage(page, "placed") is None  # refused before it ran

        # The stop stands: the agent does the step and asks again.
        await tool(agent, "capture_snapshot")
        found = await tool(agent, "find", text="Buy now")
        await tool(agent, "click", id=eid(found, "button", "Buy now"))
        rest = await run(agent, "Order headlamps", start_at=7, params=params, keep_healed=True)
        assert rest["status"] == "done", rest["content"]
        assert rest["kept"] == str(file)
        assert rest["content"].startswith(
            f"Kept in routine 'Order headlamps' ({file}): in place of step 6, the steps:\n"
        )
        assert "click the button 'Buy now'" in rest["content"]
        steps = json.loads(file.read_text())["steps"]
        assert steps[5]["target"]["name"] == "Buy now"
        assert len(steps) == 7
        assert "hunter2" not in file.read_text()

        await start_over(page, "wording")
        again = await run(agent, "Order headlamps", params=params)
        assert (again["status"], again["done"]) == ("done", 7), again["content"]
        assert "$48.00" in again["results"][0]
        nursery.cancel_scope.cancel()
