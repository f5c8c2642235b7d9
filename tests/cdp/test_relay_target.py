"""The relay transport, against a fake extension that runs commands on a real page."""

from __future__ import annotations

import pytest
import trio

from pycdp_bridge import (
    CDPError,
    PageTarget,
    TargetClosedError,
    capture,
)
from tests.support import StaticServer
from tests.support.relay_peer import HOLD, RelayPeer

pytestmark = pytest.mark.browser

TAB = 42


@pytest.fixture
async def extension(page: PageTarget, nursery: trio.Nursery) -> RelayPeer:
    """A fake extension relaying to the test's page, running in the test's nursery."""
    fake = RelayPeer(page, TAB)
    await nursery.start(fake.run)
    return fake


async def test_capture_through_relay_matches_direct(
    extension: RelayPeer,
    page: PageTarget,
    pages_server: StaticServer,
    second_server: StaticServer,
) -> None:
    """A capture over the relay equals the direct capture, out-of-process iframe included."""
    fragment = f"#sibling={second_server.origin}&cross=http://localhost:{second_server.port}"
    await page.navigate(pages_server.url("frames/index.html") + fragment)
    direct = await capture(page)
    relayed = await capture(extension.hub.target(TAB))
    assert relayed.missing == ()
    assert [(n.name, n.text, n.frame) for n in relayed.nodes] == [
        (n.name, n.text, n.frame) for n in direct.nodes
    ]
    assert [(f.url, f.owner, f.offset_x, f.offset_y) for f in relayed.frames] == [
        (f.url, f.owner, f.offset_x, f.offset_y) for f in direct.frames
    ]
    assert relayed.frames[-1].session_id is not None
    assert [n.ax.name if n.ax else None for n in relayed.nodes] == [
        n.ax.name if n.ax else None for n in direct.nodes
    ]
    assert [n.bounds for n in relayed.nodes] == [n.bounds for n in direct.nodes]


async def test_relay_messages_follow_the_protocol(extension: RelayPeer) -> None:
    """The hub attaches first, then sends cdp messages shaped as in host/PROTOCOL.md."""
    target = extension.hub.target(TAB)
    result = await target.send("Runtime.evaluate", {"expression": "1 + 1"})
    assert result["result"]["value"] == 2
    attach, command = extension.sent
    assert attach == {"type": "cdp_attach", "id": attach["id"], "tab": TAB}
    assert command == {
        "type": "cdp",
        "id": command["id"],
        "tab": TAB,
        "session": None,
        "method": "Runtime.evaluate",
        "params": {"expression": "1 + 1"},
    }
    assert attach["id"] != command["id"]
    assert all(isinstance(m["id"], str) for m in extension.sent)


async def test_relay_errors_and_events(extension: RelayPeer, page: PageTarget) -> None:
    """Browser errors arrive as CDPError; tab events arrive with session None."""
    target = extension.hub.target(TAB)
    with pytest.raises(CDPError) as refused:
        await target.send("Nope.nothing")
    assert refused.value.code == -32601
    assert refused.value.method == "Nope.nothing"
    async with target.listen("Runtime.consoleAPICalled") as events:
        await target.send("Runtime.enable")
        await target.send("Runtime.evaluate", {"expression": "console.log('relayed')"})
        event = await events.receive()
    assert event.session_id is None
    assert event.params["args"][0]["value"] == "relayed"


async def test_detach_fails_pending_and_a_new_target_reattaches(
    extension: RelayPeer,
) -> None:
    """cdp_detached fails pending commands; the next target() attaches afresh."""
    hub = extension.hub
    target = hub.target(TAB)
    failures: list[TargetClosedError] = []
    async with trio.open_nursery() as nursery:

        async def wait_forever() -> None:
            try:
                await target.send(HOLD)
            except TargetClosedError as error:
                failures.append(error)

        nursery.start_soon(wait_forever)
        await extension.attached.wait()
        while not any(m.get("method") == HOLD for m in extension.sent):
            await trio.sleep(0.01)
        extension.detach("canceled_by_user")
    assert target.closed
    assert "canceled_by_user" in str(failures[0])
    with pytest.raises(TargetClosedError):
        await target.send("Runtime.evaluate", {"expression": "1"})
    fresh = hub.target(TAB)
    assert fresh is not target
    result = await fresh.send("Runtime.evaluate", {"expression": "3"})
    assert result["result"]["value"] == 3
    assert [m["type"] for m in extension.sent].count("cdp_attach") == 2


async def test_hub_close_and_unroutable_messages(extension: RelayPeer) -> None:
    """Closing the hub fails every tab; stray results are counted, bad types rejected."""
    hub = extension.hub
    target = hub.target(TAB)
    await target.send("Runtime.evaluate", {"expression": "0"})
    hub.feed({"type": "cdp_result", "id": "c999", "result": {}})
    hub.feed({"type": "cdp_event", "tab": 7, "session": None, "method": "X.y", "params": {}})
    assert hub.statistics().unroutable == 2
    with pytest.raises(ValueError, match="not a CDP relay message"):
        hub.feed({"type": "pong"})
    hub.close("port closed")
    assert target.closed
    with pytest.raises(TargetClosedError, match="port closed"):
        await target.send("Runtime.evaluate", {"expression": "0"})
