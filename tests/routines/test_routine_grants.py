"""The person's grants for a routine on real pages (the routines shop, tests/pages/routines/,
whose checkout form ``localStorage.perturb`` can send elsewhere): a granted site is not
asked about in the routine's run but is in another task; a step marked "don't ask
again" submits unasked only while its form goes where it went when recorded; grants
lapse when the routine's file changes; an outside agent can neither make grants nor
run with them.

Two sites without leaving the machine: every ``*.test`` name is 127.0.0.1, so the shop
is ``http://shop.test`` and the payment site ``http://pay.test`` (one server)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import trio

from pycdp_bridge import PageTarget
from tests.native.test_routines_panel import TASK, order_headlamps
from tests.routines.test_routines_link import eid, start_over, storage
from tests.routines.test_routines_mcp import order_headlamps as order_over_mcp
from tests.support import StaticServer
from tests.support.handlers_host import SESSION, TAB, Host, open_host
from tests.support.link_host import open_link_host
from tests.support.outside import call
from trimtab.link import LinkError
from trimtab.native import SidePanelDoor
from trimtab.routines import RoutineStore, SubmitForm
from trimtab.tab import Tab
from trimtab.tools import run_tool
from trimtab.wire import Request

pytestmark = pytest.mark.browser

NAME = "Order headlamps"
PLACE = 6  # the step that clicks "Place order"
PASSWORD = {"account_password": "hunter2"}


def shop(server: StaticServer, page: str = "shop.html") -> str:
    return f"http://shop.test:{server.port}/routines/{page}"


@pytest.fixture
async def host(
    page: PageTarget, pages_server: StaticServer, nursery: trio.Nursery, tmp_path: Path
) -> AsyncIterator[Host]:
    """The side panel's handlers on the shop (shop.test), an empty cart, routines kept
    in a folder of the test's and the grants beside it."""
    async with open_host(
        page, shop(pages_server), nursery, routines=RoutineStore(tmp_path / "routines")
    ) as host:
        await start_over(page)
        yield host


async def again(page: PageTarget, server: StaticServer, perturb: str = "") -> None:
    """The shop's first page, an empty cart, the site changed as ``perturb`` says."""
    await page.navigate(shop(server))
    await start_over(page, perturb)


async def run(host: Host, session: str) -> tuple[dict[str, Any], list[str]]:
    """Run the routine as the side panel does, as task ``session``: its answer, and the
    kinds of the questions the person was asked during it."""
    asked = len(host.person.asked)
    ran = await host.request("routine_run", session=session, tab=TAB, name=NAME, params=PASSWORD)
    return ran, [q["what"] for q in host.person.asked[asked:]]


def sent(server: StaticServer, path: str) -> int:
    """How many requests for ``path`` the shop's server received."""
    return sum(1 for line in server.requests if f" /routines/{path}" in line)


async def test_a_granted_site_is_not_asked_about_in_the_run_but_is_in_another_task(
    host: Host, page: PageTarget, pages_server: StaticServer
) -> None:
    """The order form sends the order to pay.test: the preview offers both sites; with
    pay.test granted the run goes there without a site question (the secret and the
    submit are still asked), and another task going there is asked about it."""
    await start_over(page, "offsite")
    await order_headlamps(host)
    asked = [q["what"] for q in host.person.asked]
    assert asked == ["secret", "submit", "site"], asked
    preview = await host.request(
        "routine_save", session=SESSION, name=NAME, task=TASK, preview=True
    )
    grantable = preview["routine"]["grantable"]
    assert grantable["sites"] == ["http://pay.test", "http://shop.test"]
    saved = await host.request(
        "routine_save", session=SESSION, name=NAME, task=TASK,
        grant={"sites": ["http://pay.test"], "unasked": []},
    )  # fmt: skip
    assert saved["routine"]["grants"] == {
        "state": "granted",
        "sites": ["http://pay.test"],
        "unasked": [],
    }

    await again(page, pages_server, "offsite")
    ran, asked = await run(host, "agent-run-1")
    assert ran["status"] == "done", ran["content"]
    assert asked == ["secret", "submit"]
    assert ran["unasked"] == []

    await again(page, pages_server)
    other = await host.tool(
        "navigate", session="agent-other", url=f"http://pay.test:{pages_server.port}/"
    )
    assert not other["is_error"], other["content"]
    assert [(q["what"], q["site"]) for q in host.person.asked[-1:]] == [("site", "http://pay.test")]


@pytest.mark.long
async def test_a_marked_submit_is_not_asked_about_only_while_its_form_is_the_recorded_one(
    host: Host, page: PageTarget, pages_server: StaticServer
) -> None:
    """A grant the routine does not offer refuses the save; step 6 marked "don't ask
    again": the run places the order without its question
    (the password is still asked) and says so; when the form goes to another page, by
    POST or to another site, the question is asked and a no sends nothing; a form that
    the page sends elsewhere only as it submits is held and asked about."""
    await order_headlamps(host)
    preview = await host.request(
        "routine_save", session=SESSION, name=NAME, task=TASK, preview=True
    )
    [submit] = preview["routine"]["grantable"]["submits"]
    assert {k: submit[k] for k in ("step", "action", "site", "method")} == {
        "step": PLACE,
        "action": shop(pages_server, "done.html"),
        "site": "http://shop.test",
        "method": "GET",
    }
    assert submit["words"].startswith("click the button 'Place order'")
    for grant, said in [
        ({"sites": ["http://bank.test"], "unasked": []}, "does not act on http://bank.test"),
        ({"sites": [], "unasked": [1]}, "step 1 asked before no submit"),
        ({"sites": "http://shop.test", "unasked": []}, "must be lists of sites"),
    ]:
        refused = await host.error(
            "routine_save", session=SESSION, name=NAME, task=TASK, grant=grant
        )
        assert said in refused.message
        assert (await host.request("routines"))["routines"] == []  # nothing written
    saved = await host.request(
        "routine_save", session=SESSION, name=NAME, task=TASK,
        grant={"sites": [], "unasked": [PLACE]},
    )  # fmt: skip
    assert saved["routine"]["grants"]["unasked"] == [PLACE]

    await again(page, pages_server)
    placed = sent(pages_server, "done.html")
    ran, asked = await run(host, "agent-run-1")
    assert ran["status"] == "done", ran["content"]
    assert asked == ["secret"]
    assert ran["unasked"] == [PLACE]
    assert f"Step {PLACE} submitted without asking" in ran["content"]
    assert sent(pages_server, "done.html") == placed + 1
    assert (await storage(page, "placed"))["name"] == "Ada"

    host.person.refuse = frozenset({"submit"})
    for n, perturb in enumerate(("action", "method", "offsite"), start=2):
        await again(page, pages_server, perturb)
        ran, asked = await run(host, f"agent-run-{n}")
        assert (ran["status"], ran["at"]) == ("refused", PLACE), (perturb, ran["content"])
        assert asked == ["secret", "submit"], perturb
        assert ran["unasked"] == []
        assert await storage(page, "placed") is None, perturb
    assert sent(pages_server, "done.html") == placed + 1
    assert sent(pages_server, "receipt.html") == 0

    host.person.refuse = frozenset({"request"})
    await again(page, pages_server, "late")
    ran, asked = await run(host, "agent-run-5")
    assert asked == ["secret", "request"], ran["content"]
    assert ran["unasked"] == []
    assert sent(pages_server, "receipt.html") == 0


async def test_grants_lapse_when_the_routine_s_file_changes_and_are_confirmed_again(
    host: Host, page: PageTarget, pages_server: StaticServer, tmp_path: Path
) -> None:
    """A hand edit of the routine's file lapses its grants: the list says so and offers
    what still applies, the run asks again; a grant for the routine as it was shown
    before the edit is refused; confirmed for it as it is, the run is unasked again."""
    await order_headlamps(host)
    saved = await host.request(
        "routine_save", session=SESSION, name=NAME, task=TASK,
        grant={"sites": ["http://shop.test"], "unasked": [PLACE]},
    )  # fmt: skip
    [listed] = (await host.request("routines"))["routines"]
    assert listed["grants"]["state"] == "granted"
    file = tmp_path / "routines" / "order-headlamps.json"
    data = json.loads(file.read_text())
    data["task"] = "Order headlamps for Ada, edited"
    file.write_text(json.dumps(data))

    [listed] = (await host.request("routines"))["routines"]
    assert listed["grants"] == {"state": "lapsed", "sites": ["http://shop.test"], "unasked": [6]}
    await again(page, pages_server)
    ran, asked = await run(host, "agent-run-1")
    assert ran["status"] == "done", ran["content"]
    assert asked == ["secret", "submit"]

    stale = await host.error(
        "routine_grant", name=NAME, digest=saved["routine"]["digest"], sites=[],
        unasked=[PLACE],
    )  # fmt: skip
    assert "changed since it was shown" in stale.message
    confirmed = await host.request(
        "routine_grant", name=NAME, digest=listed["digest"], sites=[], unasked=[PLACE]
    )
    assert confirmed["grants"] == {"state": "granted", "sites": [], "unasked": [PLACE]}
    await again(page, pages_server)
    ran, asked = await run(host, "agent-run-2")
    assert (ran["status"], asked) == ("done", ["secret"]), ran["content"]
    revoked = await host.request(
        "routine_grant", name=NAME, digest=listed["digest"], sites=[], unasked=[]
    )
    assert revoked["grants"]["state"] == "none"


async def panel(door: SidePanelDoor, kind: str, **fields: Any) -> dict[str, Any]:
    """A side panel request on ``door``, as the server calls its handler."""
    request = Request(kind, 1, {"type": kind, "id": 1, **fields})
    with trio.fail_after(30):
        return dict(await door.handlers()[kind](request))


async def test_an_outside_agent_can_neither_make_grants_nor_run_with_them(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A routine saved through trimtab mcp has no grants, and save_routine takes none;
    the link has no request that grants; the person's mark does not hold in a run an
    outside agent starts (the order is asked about); saved over by the agent, the
    routine's grants lapse."""
    async with open_link_host(page, shop(pages_server)) as linked:
        await linked.share(TAB)
        await start_over(page)
        door = SidePanelDoor(linked.link.state, linked.panel)
        asked: list[str] = []

        async def person() -> None:
            while True:
                asked.append((await linked.answer(True))["what"])

        async with linked.mcp_client() as client, trio.open_nursery() as nursery:
            nursery.start_soon(person)
            await order_over_mcp(client)
            text, is_error, _ = await call(
                client, "save_routine", name=NAME, task=TASK, grant={"sites": ["http://x.test"]}
            )
            assert is_error
            assert text.startswith("save_routine has no argument 'grant'"), text
            text, is_error, _ = await call(client, "save_routine", name=NAME, task=TASK)
            assert not is_error, text
            [listed] = (await panel(door, "routines"))["routines"]
            assert listed["grants"] == {"state": "none", "sites": [], "unasked": []}

            async with linked.agent("agent") as agent:
                with pytest.raises(LinkError) as refused:
                    await agent.request(
                        "routine_grant", name=NAME, digest=listed["digest"], sites=[],
                        unasked=[PLACE],
                    )  # fmt: skip
                assert refused.value.code == "unknown_type"
                granted = await panel(
                    door, "routine_grant", name=NAME, digest=listed["digest"], sites=[],
                    unasked=[PLACE],
                )  # fmt: skip
                assert granted["grants"]["state"] == "granted"

                await again(page, pages_server)
                before = len(asked)
                ran = await agent.request("routine_run", tab=TAB, name=NAME, params=PASSWORD)
                assert ran["status"] == "done", ran["content"]
                assert "submit" in asked[before:]

            text, is_error, _ = await call(client, "save_routine", name=NAME, replace=True)
            assert not is_error, text
            [listed] = (await panel(door, "routines"))["routines"]
            assert listed["grants"]["state"] == "lapsed"
            nursery.cancel_scope.cancel()


async def test_the_host_predicts_where_a_form_goes_past_the_page_s_own_names(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Before asking, the host reads where the form would go as the browser would send
    it: past fields named "action" and "method", a button's formaction and formmethod
    first, Enter in a field as its form's first submit button; nothing is sent."""
    tab = Tab.open(page)
    opened = await run_tool(tab, "navigate", {"url": shop(pages_server, "forms.html")})
    xml = opened.content
    pay = SubmitForm.predicted(shop(pages_server, "pay.html?step=confirm"), "post")
    refund = SubmitForm.predicted(shop(pages_server, "refund.html"), "get")
    cases = [
        ("click", {"id": eid(xml, "button", "Pay")}, pay),
        ("click", {"id": eid(xml, "button", "Refund")}, refund),
        ("type", {"id": eid(xml, "input", "Amount"), "text": "12", "submit": True}, pay),
    ]
    for name, args, form in cases:
        result = await run_tool(tab, name, args)
        assert result.consent is not None, result.content
        predicted = result.consent_form
        assert predicted is not None, (name, args)
        assert SubmitForm.predicted(predicted.action, predicted.method) == form, (name, args)
    assert await page.evaluate("location.pathname") == "/routines/forms.html"
