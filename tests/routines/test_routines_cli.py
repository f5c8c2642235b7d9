"""Routines from a shell: real ``trimtab`` processes against a real host state and link on
the fixture shop (`tests/pages/routines/`): ``trimtab call``s of one session saved with
``trimtab routines save``, listed, and run again with ``trimtab run``, whose exit codes
say how it ended as ``call``'s do."""

from __future__ import annotations

import json
import math
import os
import pty
import subprocess
import sys
from collections.abc import AsyncIterator

import pytest
import trio

from pycdp_bridge import PageTarget
from tests.routines.test_routines_link import TASK, eid, order_headlamps, start_over, storage
from tests.support import StaticServer
from tests.support.link_host import TAB, TIMEOUT, LinkHost, open_link_host
from trimtab.link import connect, read_secret
from trimtab.link._paths import SECRET_FILE

pytestmark = pytest.mark.browser

NAME = "Order headlamps"
# How a shell is told of the routine `NAME` saved (`routines save`) and listed.
LISTED = (
    "Order headlamps: 7 steps; parameters quantity=2, name=Ada, account_password (secret, needed)"
)


@pytest.fixture
async def shop(page: PageTarget, pages_server: StaticServer) -> AsyncIterator[LinkHost]:
    """The host and its link on the shop, its tab shared, nothing in the cart."""
    async with open_link_host(page, pages_server.url("routines/shop.html")) as host:
        await host.share(TAB)
        await start_over(page)
        yield host


async def person(host: LinkHost, *, allow: bool = True) -> None:
    """The person: ``allow`` to every question."""
    while True:
        # A person at the browser waits for the next question as long as the test runs.
        await host.answer(allow, within=math.inf)


async def saved_by_an_agent(shop: LinkHost) -> None:
    """An outside agent orders two headlamps and saves that as the routine `NAME`."""
    assert shop.link.socket_path is not None
    secret = read_secret(shop.state / "trimtab" / SECRET_FILE)
    async with (
        trio.open_nursery() as nursery,
        connect(shop.link.socket_path, secret, {"name": "agent", "version": "1"}) as agent,
    ):
        nursery.start_soon(person, shop)
        await order_headlamps(agent)
        await agent.request("routine_save", name=NAME, task=TASK)
        nursery.cancel_scope.cancel()


async def ok(host: LinkHost, *args: str) -> str:
    """``trimtab ARGS``, which must succeed with nothing on stderr; its stdout."""
    code, out, err = await host.trimtab(*args)
    assert (code, err) == (0, ""), (args, err)
    return out


@pytest.mark.long
async def test_calls_of_one_session_are_saved_and_run_again(
    shop: LinkHost, page: PageTarget
) -> None:
    """A session's ``trimtab call``s (``--session``) are saved with ``routines save``,
    and ``trimtab run`` orders again with the parameters given as text after its
    options, printing the result."""
    session = ("--session", "shopper")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(person, shop)
        xml = await ok(shop, "snapshot", *session)
        quantity = f"id={eid(xml, 'input', 'Quantity')}"
        await ok(shop, "call", "type", quantity, "text=3", *session)
        await ok(shop, "call", "type", quantity, "text=2", *session)
        add = eid(xml, "button", "Add to cart", row="Headlamp")
        await ok(shop, "call", "click", f"id={add}", *session)
        xml = await ok(shop, "call", "click", f"id={eid(xml, 'a', 'Checkout')}", *session)
        await ok(shop, "call", "type", f"id={eid(xml, 'input', 'Name')}", "text=Ada", *session)
        password = f"id={eid(xml, 'input', 'Account password')}"
        await ok(shop, "call", "type", password, "text=hunter2", *session)
        await ok(shop, "call", "click", f"id={eid(xml, 'button', 'Place order')}", *session)
        assert "$48.00" in await ok(shop, "call", "expand", "region=main", *session)
        nursery.cancel_scope.cancel()

    out = await ok(shop, "routines", "save", NAME, "--task", TASK, *session)
    assert out.startswith("Saved routine 'Order headlamps' in ")
    assert LISTED in out

    await start_over(page)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(person, shop)
        out = await ok(
            shop, "run", NAME, "--tab", str(TAB), "account_password=hunter2", "quantity=3"
        )
        nursery.cancel_scope.cancel()
    assert "$72.00" in out
    assert "Routine 'Order headlamps' done" not in out  # the result alone
    assert await storage(page, "placed") == {
        "cart": {"Headlamp": {"qty": 3, "price": 24}},
        "name": "Ada",
    }


async def test_saved_routines_are_listed_as_lines_and_as_json(shop: LinkHost) -> None:
    """``trimtab routines`` lists each saved routine on a line of its own with its steps
    and parameters, and ``--json`` gives the same as data."""
    await saved_by_an_agent(shop)
    assert f"- {LISTED}" in await ok(shop, "routines")
    listed = json.loads(await ok(shop, "routines", "--json"))
    assert [(r["name"], r["steps"]) for r in listed["routines"]] == [(NAME, 7)]


async def test_bad_usage_of_run_and_save_exits_2_with_one_line(
    shop: LinkHost, page: PageTarget
) -> None:
    """Saving a session that did nothing a routine repeats, and running with a missing
    secret (stdin no terminal), a pair that is no key=value, a run from step 0 or a
    routine that does not exist are bad usage (2), each said in one line on stderr,
    and nothing is ordered."""
    code, out, err = await shop.trimtab("routines", "save", NAME, "--session", "idle")
    assert (code, out) == (2, "")
    assert err == (
        "trimtab: bad_request: routine 'Order headlamps': the session did nothing a routine "
        "can repeat (no action or read succeeded)\n"
    )
    await saved_by_an_agent(shop)
    await start_over(page)
    for args, said in (
        (
            (NAME,),
            "trimtab: usage: routine 'Order headlamps' needs its secret parameter "
            "'account_password' (never kept): give account_password=- and its value on stdin",
        ),
        ((NAME, "quantity"), "trimtab: usage: parameter 'quantity' is not key=value"),
        (
            (NAME, "--start-at", "0", "account_password=x"),
            "trimtab: usage: --start-at 0 is not a step (they count from 1)",
        ),
        (
            ("Nope",),
            "trimtab: bad_request: there is no routine 'Nope' (routines: 'Order headlamps')",
        ),
    ):
        code, out, err = await shop.trimtab("run", *args)
        assert (code, out) == (2, ""), (args, err)
        assert err.startswith(said), (args, err)
        assert err.count("\n") == 1, err
    assert "or run it from a terminal to be asked" in (await shop.trimtab("run", NAME))[2]
    assert await storage(page, "placed") is None


async def test_a_run_that_needs_help_exits_1_and_one_the_person_refuses_exits_4(
    shop: LinkHost, page: PageTarget
) -> None:
    """On a shop whose order button now says "Buy now", ``trimtab run`` exits 1 with a
    line saying to do that step and the command that goes on, then the run's words and
    plan, ordering nothing; done so, ``--start-at`` runs the rest; a run whose question
    the person refuses exits 4."""
    await saved_by_an_agent(shop)

    await start_over(page, "wording")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(person, shop)
        code, out, err = await shop.trimtab("run", NAME, "account_password=hunter2")
        assert (code, out) == (1, ""), err
        first, _, words = err.partition("\n")
        assert first == (
            "trimtab: needs_help: do step 6 with trimtab call, then go on with "
            "trimtab run 'Order headlamps' --start-at 7 and the same parameters "
            "(--keep-healed keeps what you did in the routine):"
        )
        assert "needs help at step 6 of 7" in words
        assert "Place order" in words
        assert await storage(page, "placed") is None
        # The run's answers were not this session's: it looks at the page first.
        await ok(shop, "call", "capture_snapshot")
        found = await ok(shop, "call", "find", "text=Buy now")
        await ok(shop, "call", "click", f"id={eid(found, 'button', 'Buy now')}")
        out = await ok(shop, "run", NAME, "--start-at", "7", "account_password=hunter2")
        assert "$48.00" in out
        nursery.cancel_scope.cancel()
    assert (await storage(page, "placed"))["name"] == "Ada"

    await start_over(page)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: person(shop, allow=False))
        code, out, err = await shop.trimtab("run", NAME, "account_password=hunter2")
        nursery.cancel_scope.cancel()
    assert (code, out) == (4, ""), err
    assert err.startswith("trimtab: refused: ")
    assert "the person said no" in err
    assert await storage(page, "placed") is None


async def trimtab_at_a_terminal(
    host: LinkHost, *args: str, typed: str, prompt: str
) -> tuple[int, str, str, bytes]:
    """``trimtab ARGS`` with a terminal (a pseudo-terminal) as stdin and no controlling
    terminal, as a person types at: ``typed`` once ``prompt`` shows on stderr. Its exit
    code, stdout, stderr, and what the terminal echoed."""
    master, terminal = pty.openpty()
    try:
        process = await trio.lowlevel.open_process(
            [sys.executable, "-m", "trimtab", *args],
            stdin=terminal,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(os.environ, **host.env()),
            start_new_session=True,
        )
        os.close(terminal)
        terminal = -1
        assert process.stdout is not None
        assert process.stderr is not None
        out, err = bytearray(), bytearray()

        async def read(stream: trio.abc.ReceiveStream, into: bytearray) -> None:
            while chunk := await stream.receive_some():
                into.extend(chunk)

        with trio.fail_after(TIMEOUT):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(read, process.stdout, out)
                nursery.start_soon(read, process.stderr, err)
                while prompt.encode() not in err:
                    await trio.sleep(0.05)
                os.write(master, typed.encode() + b"\n")
                code = await process.wait()
        os.set_blocking(master, False)
        try:
            echoed = os.read(master, 4096)
        except (BlockingIOError, OSError):
            echoed = b""
        return code, out.decode(), err.decode(), echoed
    finally:
        os.close(master)
        if terminal >= 0:
            os.close(terminal)


@pytest.mark.long
async def test_a_secret_is_asked_at_a_terminal_or_read_from_stdin_never_the_command_line(
    shop: LinkHost, page: PageTarget
) -> None:
    """At a terminal, ``trimtab run`` asks for the secret it was not given, without
    echo, and the run types it; ``key=-`` reads it from stdin, also when going on after
    a step done by hand with ``--keep-healed``, which keeps that step so the next run
    needs no help; stdin that ends before the value is bad usage."""
    await saved_by_an_agent(shop)

    await start_over(page)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(person, shop)
        code, out, err, echoed = await trimtab_at_a_terminal(
            shop, "run", NAME, "quantity=3", typed="hunter2",
            prompt="account_password (secret, for routine 'Order headlamps'; not shown): ",
        )  # fmt: skip
        nursery.cancel_scope.cancel()
    assert (code, "$72.00" in out) == (0, True), (code, out, err)
    assert b"hunter2" not in echoed
    assert "hunter2" not in out + err
    assert await storage(page, "password") == "hunter2"

    await start_over(page, "wording")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(person, shop)
        stdin = b"hunter2\n"
        code, out, err = await shop.trimtab("run", NAME, "account_password=-", stdin=stdin)
        assert code == 1, err
        await ok(shop, "call", "capture_snapshot")
        found = await ok(shop, "call", "find", "text=Buy now")
        await ok(shop, "call", "click", f"id={eid(found, 'button', 'Buy now')}")
        code, out, err = await shop.trimtab(
            "run", NAME, "--start-at", "7", "--keep-healed", "account_password=-", stdin=stdin
        )
        assert (code, "$48.00" in out) == (0, True), (code, out, err)
        file = shop.state / "trimtab" / "routines" / "order-headlamps.json"
        assert err == f"trimtab: kept in routine 'Order headlamps' ({file})\n"
        assert await storage(page, "password") == "hunter2"

        await start_over(page, "wording")
        code, out, err = await shop.trimtab("run", NAME, "account_password=-", stdin=stdin)
        assert (code, err, "$48.00" in out) == (0, "", True)
        nursery.cancel_scope.cancel()
    code, out, err = await shop.trimtab("run", NAME, "account_password=-", stdin=b"")
    assert (code, out) == (2, "")
    assert err == (
        "trimtab: usage: parameter 'account_password' is to be read from stdin (-), "
        "but stdin ended\n"
    )
