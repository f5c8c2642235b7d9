"""Another site's frame, which the browser runs out of process (a CDP session of its
own), is watched as the page is: whatever changes inside it is in the next answer,
never a cached one, and while nothing changes the cache still answers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import trio

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.handlers_host import SESSION, Host, open_host
from tests.support.xmltree import control_id
from trimtab.sites import site_of

pytestmark = pytest.mark.browser

PARTNER = "partner.test"


@pytest.fixture
async def host(
    page: PageTarget, pages_server: StaticServer, nursery: trio.Nursery
) -> AsyncIterator[Host]:
    """Handlers of a host on the shop's page that embeds the partner's widget."""
    async with open_host(page, pages_server.url("partner-offers.html"), nursery) as host:
        yield host


async def snapshot(host: Host) -> dict[str, Any]:
    return await host.tool("capture_snapshot")


async def watched(host: Host) -> str:
    """The page read until the cache answers (a capture reaches the frame first, and
    its observer goes in at the next read): the first answer, in full."""
    first = str((await snapshot(host))["content"])
    with trio.fail_after(30):
        while not (await snapshot(host))["cached"]:
            await trio.sleep(0.2)
    return first


async def in_frame(host: Host, expression: str) -> Any:
    """Run the partner's own script: what its page does by itself; its value."""
    (session,) = host.page.child_sessions()
    with trio.fail_after(10):
        reply = await host.page.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True},
            session_id=session,
        )
    return reply.get("result", {}).get("value")


async def test_a_text_the_frame_changes_by_itself_is_in_the_next_answer(host: Host) -> None:
    """A text the partner's script changes inside its frame makes the next read run
    again and show it."""
    assert "Ten percent off tents" in await watched(host)
    await in_frame(host, "document.getElementById('offer').textContent = 'Twenty percent off'")
    answer = await snapshot(host)
    assert answer["cached"] is False
    assert "Twenty percent off" in answer["content"]


async def test_a_value_the_frames_script_sets_is_in_the_next_answer(host: Host) -> None:
    """A field's value set by the frame's script (no event, no DOM mutation) makes the
    next read run again and show it."""
    await watched(host)
    await in_frame(host, "document.getElementById('voucher').value = 'SPRING'")
    answer = await snapshot(host)
    assert answer["cached"] is False
    assert "SPRING" in answer["content"]


async def test_a_frame_gone_to_another_page_is_in_the_next_answer(
    host: Host, pages_server: StaticServer
) -> None:
    """The frame gone to another page of its site (the same process, the same session)
    is seen at the next read."""
    await watched(host)
    widget = f"http://{PARTNER}:{pages_server.port}/guard-widget.html"
    await in_frame(host, f"location.href = {widget!r}")
    # Until the new page is in, the frame is as it was, and a cached read is right.
    with trio.fail_after(30):
        while await in_frame(host, "location.pathname + ' ' + document.readyState") != (
            "/guard-widget.html complete"
        ):
            await trio.sleep(0.05)
    answer = await snapshot(host)
    assert answer["cached"] is False
    assert "Claim the reward" in answer["content"]


async def test_a_frame_removed_is_in_the_next_answer(host: Host) -> None:
    """The shop removing the partner's frame is seen at the next read."""
    await watched(host)
    await host.evaluate("document.getElementById('partner').remove()")
    answer = await snapshot(host)
    assert answer["cached"] is False
    assert "Ten percent off tents" not in answer["content"]


async def test_a_click_in_the_frame_answers_with_what_it_did(host: Host) -> None:
    """A click inside the frame whose widget answers a moment later has that answer in
    the click's own answer."""
    reveal = control_id(await watched(host), "button", "Reveal the code")
    # Acting inside the partner's frame is acting on its site: the task may.
    host.state.sites.remember(SESSION, site_of(f"http://{PARTNER}/"), always=False)
    answer = await host.tool("click", id=reveal)
    assert answer["is_error"] is False, answer["content"]
    assert "Code TENT10" in answer["content"]
