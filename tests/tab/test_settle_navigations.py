"""A navigation the page begins after an action's input, seen by the page observer
before the browser reports it: the wait for quiet does not end as settled."""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing

from pycdp_bridge import PageTarget, evaluate
from tests.support import StaticServer
from trimtab.tab import PageRevisions, main_frame_id

pytestmark = pytest.mark.browser


async def _answer_never(nursery: trio.Nursery) -> str:
    """The origin of a server on 127.0.0.1 that accepts requests and never answers: a
    navigation to it stays pending for as long as the test looks."""

    async def hold(stream: trio.SocketStream) -> None:
        async with stream:
            await trio.sleep_forever()

    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    nursery.start_soon(trio.serve_listeners, hold, listeners)
    return f"http://127.0.0.1:{listeners[0].socket.getsockname()[1]}"


async def test_a_form_submitted_during_the_wait_ends_it_as_leaving(
    page: PageTarget, pages_server: StaticServer, nursery: trio.Nursery
) -> None:
    """A form the page submits while `settle` waits for quiet (a hover's handler, a task
    later) ends the wait as `leaving`, long before its quiet window or its cap: the DOM
    did not change, but the page is on its way to another document."""
    never = await _answer_never(nursery)
    with trio.fail_after(30):
        await page.navigate(pages_server.url("handlers-shop.html"))
        revisions = PageRevisions(page, lambda reason: None)
        assert await revisions.install()
        frame = await main_frame_id(page)
        waited: list[Any] = []

        async def wait() -> None:
            waited.append(await revisions.quiet(frame, 10_000, 20_000, (), 1000.0))

        async with trio.open_nursery() as waiting:
            waiting.start_soon(wait)
            # The wait's first command is in flight before the page arms its form: once
            # the navigation begins, the browser holds the tab's commands until the
            # never-answering server replies, so a wait sent after it would never start.
            await trio.testing.wait_all_tasks_blocked()
            await evaluate(
                page,
                f"""(() => {{ const form = document.createElement('form');
                    form.action = '{never}/order'; document.body.append(form);
                    setTimeout(() => form.submit(), 1000); return 0; }})()""",
            )
    quiet = waited[0]
    assert quiet is not None
    assert quiet.leaving
    assert not quiet.settled
