"""The side panel's routine requests on a real page: a finished panel task previewed and
saved as a routine (its parameters renamed), listed with the files that do not read,
run again in a tab as a panel task that asks in the side panel, continued after the
step it could not do, and deleted."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import trio

from pycdp_bridge import PageTarget
from tests.routines.test_routines_link import eid, start_over, storage
from tests.support import StaticServer
from tests.support.handlers_host import SESSION, TAB, Host, open_host
from trimtab.browser import open_host_state
from trimtab.native._routines import ROUTINE_CLIENT
from trimtab.routines import RoutineStore

pytestmark = pytest.mark.browser

TASK = "Order 2 headlamps for Ada"


@pytest.fixture
async def host(
    page: PageTarget, pages_server: StaticServer, nursery: trio.Nursery, tmp_path: Path
) -> AsyncIterator[Host]:
    """The side panel's handlers on the routines shop, an empty cart, routines kept in a
    folder of the test's."""
    store = RoutineStore(tmp_path / "routines")
    async with open_host(
        page, pages_server.url("routines/shop.html"), nursery, routines=store
    ) as host:
        await start_over(page)
        yield host


async def tool(host: Host, name: str, **args: Any) -> str:
    """A panel agent's call on the shop's tab; its content (an error fails)."""
    reply = await host.tool(name, **args)
    assert not reply["is_error"], reply["content"]
    return str(reply["content"])


async def order_headlamps(host: Host) -> str:
    """The panel task as its model did it: two headlamps for Ada, with her password."""
    xml = await tool(host, "capture_snapshot")
    await tool(host, "type", id=eid(xml, "input", "Quantity"), text="2")
    await tool(host, "click", id=eid(xml, "button", "Add to cart", row="Headlamp"))
    xml = await tool(host, "click", id=eid(xml, "a", "Checkout"))
    await tool(host, "type", id=eid(xml, "input", "Name"), text="Ada")
    await tool(host, "type", id=eid(xml, "input", "Account password"), text="hunter2")
    await tool(host, "click", id=eid(xml, "button", "Place order"))
    return await tool(host, "expand", region="main")


async def test_a_panel_task_is_previewed_saved_listed_run_and_deleted(
    host: Host, page: PageTarget, tmp_path: Path
) -> None:
    """A preview shows the parameters the task's words named and the password as a
    secret without writing anything; the save renames a parameter; the list names a
    file that does not read; a run in the tab is a panel task that asks in the side
    panel as "Trimtab routine" and orders what the first run ordered; delete removes a
    routine by name and a broken file by its file's name."""
    assert "$48.00" in await order_headlamps(host)
    folder = tmp_path / "routines"
    preview = await host.request(
        "routine_save", session=SESSION, name="Order headlamps", task=TASK, preview=True
    )
    assert not folder.exists()
    assert (preview["file"], preview["exists"]) == ("order-headlamps.json", False)
    drafted = preview["routine"]
    assert [(p["name"], p["kind"], p["default"]) for p in drafted["parameters"]] == [
        ("quantity", "text", "2"),
        ("name", "text", "Ada"),
        ("account_password", "secret", None),
    ]
    assert drafted["steps"] == len(drafted["plan"]) == 7
    assert "Place order" in drafted["plan"][5]

    saved = await host.request(
        "routine_save", session=SESSION, name="Order headlamps", task=TASK,
        rename={"name": "customer"},
    )  # fmt: skip
    assert [p["name"] for p in saved["routine"]["parameters"]] == [
        "quantity", "customer", "account_password"
    ]  # fmt: skip
    assert "hunter2" not in Path(saved["file"]).read_text()
    again = await host.error("routine_save", session=SESSION, name="Order headlamps", task=TASK)
    assert "exists already" in again.message
    (folder / "broken.json").write_text(json.dumps({"version": 1, "name": "Broken"}))
    listed = await host.request("routines")
    assert [r["name"] for r in listed["routines"]] == ["Order headlamps"]
    assert listed["routines"][0]["file"] == "order-headlamps.json"
    assert listed["problems"] == [
        {"file": "broken.json", "problem": "broken.json: field 'steps' = None is not a list"}
    ]

    await start_over(page)
    asked = len(host.person.asked)
    ran = await host.request(
        "routine_run", session="agent-run-1", tab=TAB, name="Order headlamps",
        params={"account_password": "hunter2", "quantity": "3"}, task="Routine: Order headlamps",
    )  # fmt: skip
    assert ran["status"] == "done", ran["content"]
    assert (ran["done"], ran["steps"], ran["at"]) == (7, 7, None)
    assert "$72.00" in ran["results"][0]
    assert await storage(page, "placed") == {
        "cart": {"Headlamp": {"qty": 3, "price": 24}},
        "name": "Ada",
    }
    questions = host.person.asked[asked:]
    assert questions, "the run asked nothing before the order"
    assert {q["client"] for q in questions} == {ROUTINE_CLIENT}
    assert {q["session"] for q in questions} == {"agent-run-1"}

    missing = await host.error(
        "routine_run", session="agent-run-2", tab=TAB, name="Order headlamps"
    )
    assert "needs parameter 'account_password'" in missing.message
    outside = await host.error(
        "routine_run", session="link-1", tab=TAB, name="Order headlamps", params={}
    )
    assert "is no panel task" in outside.message

    assert await host.request("routine_delete", file="broken.json") == {"deleted": True}
    assert await host.request("routine_delete", name="Order headlamps") == {"deleted": True}
    assert await host.request("routine_delete", name="Order headlamps") == {"deleted": False}
    bad = await host.error("routine_delete", file="../sites.json")
    assert bad.code == "bad_request"
    assert (await host.request("routines")) == {"routines": [], "problems": []}


async def test_a_run_that_needs_help_goes_on_in_its_session_after_that_step(
    host: Host, page: PageTarget
) -> None:
    """The order button now says "Buy now": the run stops before that step with its
    number, why and the plan from there, having ordered nothing; the same session's own
    tool call does that step (as the panel's model does), and the run goes on from the
    next step to the result."""
    await order_headlamps(host)
    await host.request("routine_save", session=SESSION, name="Order headlamps", task=TASK)
    await start_over(page, "wording")
    run = {"session": "agent-heal", "tab": TAB, "name": "Order headlamps"}
    params = {"account_password": "hunter2"}
    ran = await host.request("routine_run", **run, params=params)
    assert ran["status"] == "needs_help", ran["content"]
    assert (ran["at"], ran["done"]) == (6, 5)
    assert ran["why"].startswith("the button 'Place order'")
    assert ran["why"].endswith("is not on the page")
    assert ran["plan"][0].startswith("click the button 'Place order'")
    assert len(ran["plan"]) == 2
    assert await storage(page, "placed") is None
    # The run's answers were not the session's own: it looks at the page first.
    await host.tool("capture_snapshot", session="agent-heal")
    found = await host.tool("find", session="agent-heal", text="Buy now")
    clicked = await host.tool(
        "click", session="agent-heal", id=eid(str(found["content"]), "button", "Buy now")
    )
    assert not clicked["is_error"], clicked["content"]
    rest = await host.request("routine_run", **run, params=params, start_at=7)
    assert rest["status"] == "done", rest["content"]
    assert (rest["done"], rest["steps"]) == (1, 7)
    assert "$48.00" in rest["results"][0]


async def heal_order(host: Host, session: str) -> dict[str, Any]:
    """What the panel's model does for the step with the renamed button: it looks,
    finds "Buy now" and presses it, in the run's session."""
    await host.tool("capture_snapshot", session=session)
    found = await host.tool("find", session=session, text="Buy now")
    return await host.tool(
        "click", session=session, id=eid(str(found["content"]), "button", "Buy now")
    )


async def test_the_step_done_for_a_stopped_run_is_kept_only_once_the_person_says_so(
    host: Host, page: PageTarget, tmp_path: Path
) -> None:
    """The run that goes on after the renamed button's step answers with that step as
    recorded and the press the session made instead, writing nothing; kept with
    routine_amend, the file presses "Buy now" there and the next run on that site needs
    no help; the same heal is not kept twice, nor by another session."""
    await order_headlamps(host)
    await host.request("routine_save", session=SESSION, name="Order headlamps", task=TASK)
    file = tmp_path / "routines" / "order-headlamps.json"
    written = file.read_text()
    await start_over(page, "wording")
    run = {"session": "agent-heal", "tab": TAB, "name": "Order headlamps"}
    params = {"account_password": "hunter2"}
    stopped = await host.request("routine_run", **run, params=params)
    assert (stopped["status"], stopped["at"], stopped["healed"]) == ("needs_help", 6, None)
    await heal_order(host, "agent-heal")
    rest = await host.request("routine_run", **run, params=params, start_at=7)
    assert rest["status"] == "done", rest["content"]
    healed = rest["healed"]
    assert healed["at"] == 6
    assert healed["old"] == [stopped["plan"][0]]
    assert [words.split(" (")[0] for words in healed["new"]] == ["click the button 'Buy now'"]
    assert (healed["parameters"], rest["heal_problem"]) == ([], "")
    assert file.read_text() == written  # nothing written without the person

    other = await host.error("routine_amend", session="agent-other", heal=healed["id"])
    assert "is not waiting to be kept" in other.message
    kept = await host.request("routine_amend", session="agent-heal", heal=healed["id"])
    assert kept["routine"]["plan"][5].startswith("click the button 'Buy now'")
    assert kept["routine"]["steps"] == 7
    assert "hunter2" not in file.read_text()
    again = await host.error("routine_amend", session="agent-heal", heal=healed["id"])
    assert f"heal {healed['id']} of this session is not waiting" in again.message

    await start_over(page, "wording")
    clean = await host.request(
        "routine_run", session="agent-next", tab=TAB, name="Order headlamps", params=params
    )
    assert (clean["status"], clean["done"]) == ("done", 7), clean["content"]
    assert "$48.00" in clean["results"][0]
    assert (await storage(page, "placed"))["name"] == "Ada"


async def test_a_step_done_for_a_stopped_run_waits_through_a_host_restart_and_a_rename(
    host: Host, page: PageTarget, tmp_path: Path
) -> None:
    """The heal a run made waits in a file beside the routines: a host started afresh
    on that folder (Chrome started again) keeps it when the person says so, after they
    renamed the routine (the edit's answer lists it under the new name); the file then
    presses "Buy now" and the heal waits no more."""
    await order_headlamps(host)
    await host.request("routine_save", session=SESSION, name="Order headlamps", task=TASK)
    await start_over(page, "wording")
    run = {"session": "agent-heal", "tab": TAB, "name": "Order headlamps"}
    params = {"account_password": "hunter2"}
    await host.request("routine_run", **run, params=params)
    await heal_order(host, "agent-heal")
    healed = (await host.request("routine_run", **run, params=params, start_at=7))["healed"]
    waiting = json.loads((tmp_path / "routine-heals.json").read_text())
    assert [(h["id"], h["session"], h["routine"]) for h in waiting["heals"]] == [
        (healed["id"], "agent-heal", "Order headlamps")
    ]
    assert "hunter2" not in json.dumps(waiting)

    store = RoutineStore(tmp_path / "routines")
    async with open_host_state(host.peer.hub, routines=store) as state:
        again = Host.serving(state, host.peer, page)
        edited = await again.request("routine_edit", name="Order headlamps", new_name="Order lamps")
        assert [(h["id"], h["session"], h["routine"]) for h in edited["heals"]] == [
            (healed["id"], "agent-heal", "Order lamps")
        ]
        assert edited["heals"][0]["new"] == healed["new"]
        kept = await again.request("routine_amend", session="agent-heal", heal=healed["id"])
        assert kept["routine"]["name"] == "Order lamps"
        assert kept["routine"]["plan"][5].startswith("click the button 'Buy now'")
        steps = json.loads((tmp_path / "routines" / "order-lamps.json").read_text())["steps"]
        assert steps[5]["target"]["name"] == "Buy now"
        twice = await again.error("routine_amend", session="agent-heal", heal=healed["id"])
        assert "is not waiting to be kept" in twice.message
    assert json.loads((tmp_path / "routine-heals.json").read_text())["heals"] == []


async def test_a_last_step_done_for_a_stopped_run_is_closed_past_the_last_step(
    host: Host, page: PageTarget
) -> None:
    """A routine that ends with the order: done for it, the run goes on past its last
    step, running nothing, and answers with the heal and the end page; past the last
    step without a stopped run is no step."""
    xml = await tool(host, "capture_snapshot")
    await tool(host, "click", id=eid(xml, "button", "Add to cart", row="Headlamp"))
    xml = await tool(host, "click", id=eid(xml, "a", "Checkout"))
    await tool(host, "type", id=eid(xml, "input", "Name"), text="Ada")
    await tool(host, "type", id=eid(xml, "input", "Account password"), text="hunter2")
    await tool(host, "click", id=eid(xml, "button", "Place order"))
    await host.request("routine_save", session=SESSION, name="Order", task=TASK)
    params = {"account_password": "hunter2"}
    early = await host.error(
        "routine_run", session="agent-x", tab=TAB, name="Order", params=params, start_at=6
    )
    assert "start_at = 6 is not a step of routine 'Order' (1 to 5)" in early.message
    await start_over(page, "wording")
    run = {"session": "agent-last", "tab": TAB, "name": "Order", "params": params}
    stopped = await host.request("routine_run", **run)
    assert (stopped["status"], stopped["at"], stopped["steps"]) == ("needs_help", 5, 5)
    await heal_order(host, "agent-last")
    closed = await host.request("routine_run", **run, start_at=6)
    assert (closed["status"], closed["done"], closed["steps"]) == ("done", 0, 5)
    assert "Total: $24.00" in closed["results"][0]  # its end page, as when it runs through
    assert closed["healed"]["at"] == 5
    kept = await host.request("routine_amend", session="agent-last", heal=closed["healed"]["id"])
    assert kept["routine"]["plan"][-1].startswith("click the button 'Buy now'")


async def test_the_person_edits_a_routines_names_and_parameters(host: Host, tmp_path: Path) -> None:
    """routine_edit renames the routine (its file follows) and a parameter (the steps
    follow, and the answer says which), sets a default and a description; a secret's
    default, a taken name and an unknown routine are refused naming the value."""
    await order_headlamps(host)
    await host.request("routine_save", session=SESSION, name="Order headlamps", task=TASK)
    await host.request("routine_save", session=SESSION, name="Other", task=TASK)
    folder = tmp_path / "routines"
    edited = await host.request(
        "routine_edit",
        name="Order headlamps",
        new_name="Order lamps",
        parameters={"quantity": {"name": "count", "default": "3", "about": "how many"}},
    )
    assert (edited["file"], edited["renamed"]) == ("order-lamps.json", {"quantity": "count"})
    assert edited["routine"]["parameters"][0] == {
        "name": "count", "kind": "text", "default": "3", "about": "how many"
    }  # fmt: skip
    assert not (folder / "order-headlamps.json").exists()
    steps = json.loads((folder / "order-lamps.json").read_text())["steps"]
    assert steps[0]["args"] == {"text": {"param": "count"}}
    for fields, said in (
        (
            {"name": "Order lamps", "parameters": {"account_password": {"default": "pw"}}},
            "parameter 'account_password' is a secret: it never has a default",
        ),
        ({"name": "Order lamps", "new_name": "Other"}, "routine name 'Other' is taken"),
        ({"name": "Nope", "new_name": "Yes"}, "there is no routine 'Nope'"),
        ({"name": "Order lamps", "parameters": []}, "routine_edit field 'parameters'"),
    ):
        refused = await host.error("routine_edit", **fields)
        assert refused.code == "bad_request"
        assert said in refused.message, refused.message
    assert json.loads((folder / "order-lamps.json").read_text())["parameters"][0]["name"] == (
        "count"
    )
