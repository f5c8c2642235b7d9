"""Routines through ``trimtab mcp``: a real server process under the ``mcp`` SDK's client,
against a real host state and link on the fixture shop (`tests/pages/routines/`): a
session recorded with tool calls, saved with ``save_routine``, listed and run again
with ``run_routine``; its arguments checked; the group left out with ``--tools``."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from typing import Any

import pytest
import trio
from mcp import Client

from pycdp_bridge import PageTarget
from tests.routines.test_routines_link import TASK, eid, start_over, storage
from tests.support import StaticServer
from tests.support.link_host import TAB, TIMEOUT, LinkHost, open_link_host
from tests.support.outside import call

pytestmark = pytest.mark.browser

ROUTINE_TOOLS = {"routines", "run_routine", "save_routine"}


@pytest.fixture
async def shop(page: PageTarget, pages_server: StaticServer) -> AsyncIterator[LinkHost]:
    """The host and its link on the shop, its tab shared, nothing in the cart."""
    async with open_link_host(page, pages_server.url("routines/shop.html")) as host:
        await host.share(TAB)
        await start_over(page)
        yield host


async def person(host: LinkHost, gate: trio.Event | None = None) -> None:
    """The person: yes to every question, once ``gate`` (when given) is set."""
    if gate is not None:
        await gate.wait()
    while True:
        # A person at the browser waits for the next question as long as the test runs.
        await host.answer(True, within=math.inf)


async def tool(client: Client, name: str, **args: Any) -> str:
    """Call the catalogue tool ``name``; its text (an error fails)."""
    text, is_error, _ = await call(client, name, **args)
    assert not is_error, text
    return text


async def order_headlamps(client: Client) -> str:
    """The task as a model does it over MCP: two headlamps (after a wrong quantity),
    checkout, Ada and her password, the order, the total read."""
    xml = await tool(client, "capture_snapshot")
    await tool(client, "type", id=eid(xml, "input", "Quantity"), text="3")
    await tool(client, "type", id=eid(xml, "input", "Quantity"), text="2")
    await tool(client, "click", id=eid(xml, "button", "Add to cart", row="Headlamp"))
    xml = await tool(client, "click", id=eid(xml, "a", "Checkout"))
    await tool(client, "type", id=eid(xml, "input", "Name"), text="Ada")
    await tool(client, "type", id=eid(xml, "input", "Account password"), text="hunter2")
    await tool(client, "click", id=eid(xml, "button", "Place order"))
    return await tool(client, "expand", region="main")


async def test_an_mcp_client_saves_its_session_and_runs_it_again_hearing_progress(
    shop: LinkHost, page: PageTarget, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tool calls saved with save_routine (the task's values parameters, the password a
    needed secret) are listed by routines and run again by run_routine to the same
    order with another quantity sent as a number, while the client hears progress; a
    list for a parameter is refused naming it, before anything runs."""
    # The link tells a running routine's client at once instead of every 10 s.
    monkeypatch.setattr("trimtab.link.server._routines.RUN_PROGRESS_INTERVAL", 0.05)
    async with shop.mcp_client() as client, trio.open_nursery() as nursery:
        nursery.start_soon(person, shop)
        assert "$48.00" in await order_headlamps(client)
        text, is_error, meta = await call(client, "save_routine", name="Order headlamps", task=TASK)
        assert not is_error, text
        assert text.startswith("Saved routine 'Order headlamps' in ")
        line = "Order headlamps: 7 steps; parameters quantity=2, name=Ada, account_password "
        assert line + "(secret, needed)" in text
        assert meta["file"].endswith("order-headlamps.json")
        text, is_error, meta = await call(client, "routines")
        assert not is_error, text
        assert "- " + line in text
        assert [r["name"] for r in meta["routines"]] == ["Order headlamps"]
        nursery.cancel_scope.cancel()

    await start_over(page)
    heard: list[str] = []
    running = trio.Event()

    async def progress(done: float, total: float | None, message: str | None) -> None:
        del done, total
        heard.append(str(message))
        if "is running" in str(message):
            running.set()

    async with shop.mcp_client() as client, trio.open_nursery() as nursery:
        # The person answers the run's first question only once the client heard that
        # the routine runs: its news reach an MCP client while it waits.
        nursery.start_soon(person, shop, running)
        params = {"account_password": "hunter2", "quantity": 3}
        with trio.fail_after(TIMEOUT * 2):
            result = await client.call_tool(
                "run_routine",
                {"name": "Order headlamps", "params": params},
                progress_callback=progress,
            )
        text = "".join(getattr(part, "text", "") for part in result.content)
        assert not result.is_error, text
        assert "Routine 'Order headlamps' done: 7 of 7 steps, no model." in text
        assert "$72.00" in text
        assert (result.meta or {})["trimtab"] == {
            "tab": TAB,
            "status": "done",
            "steps": 7,
            "done": 7,
            "at": None,
        }
        assert "routine 'Order headlamps' is running" in heard
        assert await storage(page, "placed") == {
            "cart": {"Headlamp": {"qty": 3, "price": 24}},
            "name": "Ada",
        }
        nursery.cancel_scope.cancel()

        await start_over(page)
        text, is_error, meta = await call(
            client,
            "run_routine",
            name="Order headlamps",
            params={"account_password": "hunter2", "quantity": [2]},
        )
        assert is_error
        assert text == "run_routine's params.quantity must be text, not [2]"
        assert meta == {"tab": None}
        text, is_error, _ = await call(client, "run_routine", name="Order headlamps", speed=2)
        assert is_error
        assert text == (
            "run_routine has no argument 'speed'; it takes: name, params, start_at, "
            "keep_healed, tab"
        )
        assert await storage(page, "placed") is None


async def test_a_needed_step_is_handed_to_the_model_with_what_to_do(
    shop: LinkHost, page: PageTarget
) -> None:
    """On a shop whose order button now says "Buy now", run_routine answers an error
    that names the step, tells the model to do it with the tools and to run again with
    start_at, and gives the plan; done so, the rest runs to the order, and keep_healed
    writes the press into the routine so the next run needs no help."""
    async with shop.mcp_client() as client, trio.open_nursery() as nursery:
        nursery.start_soon(person, shop)
        await order_headlamps(client)
        await call(client, "save_routine", name="Order headlamps", task=TASK)
        await start_over(page, "wording")
        text, is_error, meta = await call(
            client, "run_routine", name="Order headlamps", params={"account_password": "pw"}
        )
        assert is_error
        assert (meta["status"], meta["at"], meta["done"]) == ("needs_help", 6, 5)
        assert "needs help at step 6 of 7" in text
        assert "Do that step with the tools, then run the routine again with start_at=7" in text
        assert "Place order" in text
        assert await storage(page, "placed") is None
        # The run's answers were not the client's: it looks at the page first.
        await tool(client, "capture_snapshot")
        found = await tool(client, "find", text="Buy now")
        await tool(client, "click", id=eid(found, "button", "Buy now"))
        text, is_error, meta = await call(
            client,
            "run_routine",
            name="Order headlamps",
            start_at=7,
            params={"account_password": "pw"},
            tab=TAB,
            keep_healed=True,
        )
        assert not is_error, text
        assert meta["status"] == "done"
        assert meta["kept"].endswith("order-headlamps.json")
        assert text.startswith("Kept in routine 'Order headlamps' (")
        assert "$48.00" in text

        # Kept: the next run on that site needs no help.
        await start_over(page, "wording")
        text, is_error, meta = await call(
            client, "run_routine", name="Order headlamps", params={"account_password": "pw"}
        )
        assert not is_error, text
        assert (meta["status"], meta["done"]) == ("done", 7)
        nursery.cancel_scope.cancel()


async def test_tools_core_leaves_the_routine_tools_out_and_says_which_group_to_add(
    shop: LinkHost,
) -> None:
    """By default the server offers the routine tools; ``--tools core`` lists none of
    them and a call to one says it is in the routines group and how to add it; an
    unknown group's error names routines among the groups."""
    async with shop.mcp_client() as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        assert listed >= ROUTINE_TOOLS
    async with shop.mcp_client(tools="core") as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        assert "click" in listed
        assert not listed & ROUTINE_TOOLS
        text, is_error, _ = await call(client, "run_routine", name="Order headlamps")
        assert is_error
        assert text == (
            "run_routine is in the routines tool group, which this server does not offer "
            "(started with --tools core); the person can add it: trimtab mcp --tools "
            "core,routines"
        )
    code, _, err = await shop.trimtab("mcp", "--tools", "core,routine")
    assert code == 2
    assert "unknown tool group 'routine'; the groups are core, pixels, devtools, routines" in err
