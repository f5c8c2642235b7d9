"""The sans-I/O CDP connection core and the async channel around it, without a browser."""

from __future__ import annotations

import itertools
from typing import Any

import cdp.page
import pytest
import trio
import trio.testing

from pycdp_bridge import (
    CDPConnection,
    CDPError,
    DialogOpenError,
    Event,
    PageCrashedError,
    TargetClosedError,
    protocol,
    traced_commands,
)
from pycdp_bridge._connection import Request
from pycdp_bridge._target import CommandChannel, SessionTarget


def test_commands_get_increasing_ids_and_wire_messages() -> None:
    """Each command gets the next id and encodes method, params and session."""
    conn = CDPConnection()
    first = conn.command("DOM.getDocument", {"depth": -1})
    second = conn.command("Page.enable", session_id="S1")
    assert (first.id, second.id) == (1, 2)
    assert first.to_message() == {"id": 1, "method": "DOM.getDocument", "params": {"depth": -1}}
    assert second.to_message() == {
        "id": 2,
        "method": "Page.enable",
        "params": {},
        "sessionId": "S1",
    }
    assert conn.statistics().pending == 2


def test_response_settles_its_command() -> None:
    """A result settles exactly the command with that id."""
    conn = CDPConnection()
    a = conn.command("A.a")
    b = conn.command("B.b")
    [reply] = conn.receive({"id": b.id, "result": {"x": 1}})
    assert reply.request is b
    assert reply.result == {"x": 1}
    assert reply.error is None
    assert conn.is_pending(a.id)
    assert not conn.is_pending(b.id)


def test_error_response_becomes_cdp_error() -> None:
    """A protocol error becomes a CDPError naming method, code and message."""
    conn = CDPConnection()
    request = conn.command("DOM.describeNode")
    [reply] = conn.receive({"id": request.id, "error": {"code": -32000, "message": "No node"}})
    assert isinstance(reply.error, CDPError)
    assert (reply.error.method, reply.error.code, reply.error.message) == (
        "DOM.describeNode",
        -32000,
        "No node",
    )
    assert "DOM.describeNode" in str(reply.error)
    assert "-32000" in str(reply.error)


def test_unknown_and_forgotten_replies_are_dropped_and_counted() -> None:
    """Replies nobody waits for (cancelled or foreign ids) settle nothing."""
    conn = CDPConnection()
    request = conn.command("A.a")
    conn.forget(request.id)
    assert conn.receive({"id": request.id, "result": {}}) == []
    assert conn.receive({"id": 999, "result": {}}) == []
    assert conn.statistics().unmatched_replies == 2


def test_malformed_message_is_rejected() -> None:
    """A message that is neither response nor event raises ValueError naming it."""
    with pytest.raises(ValueError, match="neither a response nor an event"):
        CDPConnection().receive({"params": {}})


def test_events_reach_subscribers_by_method_and_session_scope() -> None:
    """Events go to subscribers whose methods match and whose session is at or above theirs."""
    conn = CDPConnection()
    everything: list[Event] = []
    loads: list[Event] = []
    page_scope: list[Event] = []
    conn.subscribe(everything.append)
    conn.subscribe(loads.append, frozenset({"Page.loadEventFired"}))
    conn.receive(
        {"method": "Target.attachedToTarget", "params": {"sessionId": "PAGE", "targetInfo": {}}}
    )
    conn.receive(
        {
            "method": "Target.attachedToTarget",
            "params": {"sessionId": "FRAME", "targetInfo": {"type": "iframe"}},
            "sessionId": "PAGE",
        }
    )
    conn.subscribe(page_scope.append, session_id="PAGE")
    conn.receive({"method": "Page.loadEventFired", "params": {"t": 1}, "sessionId": "FRAME"})
    conn.receive({"method": "Runtime.consoleAPICalled", "params": {}, "sessionId": None})
    assert [e.method for e in loads] == ["Page.loadEventFired"]
    assert loads[0].session_id == "FRAME"
    assert [e.method for e in page_scope] == ["Page.loadEventFired"]
    assert len(everything) == 4
    assert conn.attached_under("PAGE") == {"FRAME": {"type": "iframe"}}
    assert set(conn.attached_under(None)) == {"PAGE", "FRAME"}


def test_detached_session_fails_its_commands_and_its_children() -> None:
    """Target.detachedFromTarget fails pending commands of that session and those below it."""
    conn = CDPConnection()
    for child, parent in (("PAGE", None), ("FRAME", "PAGE")):
        message: dict[str, Any] = {
            "method": "Target.attachedToTarget",
            "params": {"sessionId": child, "targetInfo": {}},
        }
        if parent is not None:
            message["sessionId"] = parent
        conn.receive(message)
    on_frame = conn.command("DOM.getDocument", session_id="FRAME")
    on_browser = conn.command("Browser.getVersion")
    settled = conn.receive({"method": "Target.detachedFromTarget", "params": {"sessionId": "PAGE"}})
    assert [r.request for r in settled] == [on_frame]
    assert isinstance(settled[0].error, TargetClosedError)
    assert conn.is_pending(on_browser.id)
    with pytest.raises(TargetClosedError, match=r"DOM\.focus"):
        conn.command("DOM.focus", session_id="PAGE")


def test_crashed_page_fails_its_commands_until_it_is_reloaded() -> None:
    """After Inspector.targetCrashed the session's pending commands fail, new ones are
    refused at once except a navigation or reload, and the reload event lifts that."""
    conn = CDPConnection()
    pending = conn.command("DOM.getDocument", session_id="S1")
    navigating = conn.command("Page.navigate", {"url": "about:blank"}, session_id="S1")
    other = conn.command("DOM.getDocument", session_id="S2")
    [failed] = conn.receive({"method": "Inspector.targetCrashed", "params": {}, "sessionId": "S1"})
    assert failed.request is pending
    assert isinstance(failed.error, PageCrashedError)
    assert isinstance(failed.error, TargetClosedError)  # callers that stop on closed stop here
    assert "DOM.getDocument: the page crashed" in str(failed.error)
    assert conn.is_pending(navigating.id)
    assert conn.is_pending(other.id)
    with pytest.raises(PageCrashedError, match=r"Runtime\.evaluate"):
        conn.command("Runtime.evaluate", session_id="S1")
    conn.command("Page.reload", session_id="S1")
    conn.command("Target.closeTarget", session_id="S1")
    conn.command("Runtime.evaluate", session_id="S2")
    conn.receive({"method": "Inspector.targetReloadedAfterCrash", "params": {}, "sessionId": "S1"})
    assert conn.command("Runtime.evaluate", session_id="S1").session_id == "S1"


def test_a_dialog_fails_waiting_commands_until_it_is_answered() -> None:
    """While the page shows a JavaScript dialog its waiting commands fail with the dialog,
    new ones are refused except those the browser answers, and closing it lifts that."""
    conn = CDPConnection()
    waiting = conn.command("Input.dispatchMouseEvent", session_id="S1")
    leaving = conn.command("Page.navigate", {"url": "about:blank"}, session_id="S1")
    other = conn.command("DOM.getDocument", session_id="S2")
    opened = {"type": "confirm", "message": "Sure?", "defaultPrompt": "", "url": "x"}
    settled = conn.receive(
        {"method": "Page.javascriptDialogOpening", "params": opened, "sessionId": "S1"}
    )
    assert [reply.request for reply in settled] == [waiting, leaving]
    for reply in settled:
        assert isinstance(reply.error, DialogOpenError)
        assert (reply.error.kind, reply.error.message) == ("confirm", "Sure?")
    assert conn.is_pending(other.id)
    assert conn.open_dialog("S1") == opened
    with pytest.raises(DialogOpenError, match="a confirm dialog"):
        conn.command("DOM.getDocument", session_id="S1")
    conn.command("Page.handleJavaScriptDialog", {"accept": True}, session_id="S1")
    conn.command("Page.navigate", {"url": "about:blank"}, session_id="S1")
    conn.receive({"method": "Page.javascriptDialogClosed", "params": {}, "sessionId": "S1"})
    assert conn.open_dialog("S1") is None
    assert conn.command("DOM.getDocument", session_id="S1").session_id == "S1"


def test_close_fails_everything_pending_and_refuses_new_commands() -> None:
    """Closing fails every pending command and later commands raise TargetClosedError."""
    conn = CDPConnection()
    requests = [conn.command("A.a"), conn.command("B.b", session_id="S")]
    failed = conn.close("pipe closed")
    assert [r.request for r in failed] == requests
    assert all(isinstance(r.error, TargetClosedError) for r in failed)
    assert "pipe closed" in str(failed[0].error)
    with pytest.raises(TargetClosedError, match="pipe closed"):
        conn.command("C.c")
    assert conn.statistics().closed


def test_shared_id_space() -> None:
    """Connections built on one id iterator never reuse each other's ids."""
    ids = itertools.count(1)
    one, two = CDPConnection(ids), CDPConnection(ids)
    assert [one.command("A.a").id, two.command("A.a").id, one.command("A.a").id] == [1, 2, 3]


class _EchoPeer:
    """A fake browser: answers every request by echoing its method and params."""

    def __init__(self) -> None:
        self.channel = CommandChannel(self.transmit)
        self.sent: list[Request] = []

    async def transmit(self, request: Request) -> None:
        self.sent.append(request)
        result: dict[str, Any] = {"method": request.method, **request.params}
        if request.method == "Page.navigate":
            result = {"frameId": "F1", "loaderId": "L1"}
        self.channel.feed({"id": request.id, "result": result})


async def test_execute_runs_our_generators_and_the_cdp_packages() -> None:
    """Target.execute drives our command generators and the cdp package's alike."""
    peer = _EchoPeer()
    target = SessionTarget(peer.channel, "S1")
    echoed = await target.execute(protocol.dom_get_document(3, pierce=False))
    frame_id, loader_id, error = await target.execute(cdp.page.navigate("http://127.0.0.1/"))
    assert echoed == {"method": "DOM.getDocument", "depth": 3, "pierce": False}
    assert (str(frame_id), str(loader_id), error) == ("F1", "L1", None)
    assert [r.session_id for r in peer.sent] == ["S1", "S1"]


async def test_channel_close_wakes_waiters_and_ends_listeners() -> None:
    """Closing a channel fails a command in flight and ends every event listener."""
    sent: list[Request] = []

    async def transmit(request: Request) -> None:
        sent.append(request)

    channel = CommandChannel(transmit)
    target = SessionTarget(channel)
    received: list[Event] = []
    async with trio.open_nursery() as nursery:

        async def listen() -> None:
            async with target.listen("Page.loadEventFired") as events:
                async for event in events:
                    received.append(event)

        async def call() -> None:
            with pytest.raises(TargetClosedError, match="went away"):
                await target.send("Page.enable")

        nursery.start_soon(listen)
        nursery.start_soon(call)
        await trio.testing.wait_all_tasks_blocked()
        channel.feed({"method": "Page.loadEventFired", "params": {"timestamp": 1}})
        channel.close("went away")
    assert [e.params for e in received] == [{"timestamp": 1}]
    assert target.closed


async def test_cancelled_command_is_forgotten() -> None:
    """A command whose caller was cancelled leaves nothing pending behind."""

    async def transmit(request: Request) -> None:
        pass

    channel = CommandChannel(transmit)
    with trio.move_on_after(0.01):
        await channel.call("Page.enable")
    assert channel.statistics().connection.pending == 0
    channel.feed({"id": 1, "result": {}})
    assert channel.statistics().connection.unmatched_replies == 1


async def test_follow_delivers_every_event_of_its_own_session_as_it_comes() -> None:
    """`follow` hands over each event of the target's own session at once, far more
    than a listener's buffer holds, none dropped, and none of another session; after
    the block nothing more is delivered."""

    async def transmit(request: Request) -> None:
        pass

    channel = CommandChannel(transmit)
    target = SessionTarget(channel, "S1")
    seen: list[Event] = []
    with target.follow(seen.append, "Runtime.consoleAPICalled"):
        for n in range(5000):
            channel.feed(
                {"method": "Runtime.consoleAPICalled", "params": {"n": n}, "sessionId": "S1"}
            )
        channel.feed({"method": "Runtime.consoleAPICalled", "params": {"n": -1}, "sessionId": "S2"})
        channel.feed({"method": "Page.loadEventFired", "params": {}, "sessionId": "S1"})
    channel.feed({"method": "Runtime.consoleAPICalled", "params": {"n": -2}, "sessionId": "S1"})
    assert [e.params["n"] for e in seen] == list(range(5000))
    assert all(e.session_id is None for e in seen)
    assert channel.statistics().events_dropped == 0


async def test_a_traced_block_records_its_commands_and_its_tasks_but_nothing_after() -> None:
    """`traced_commands` records each command the block and the tasks it starts send
    (method, session, a duration), in the order of their answers; a task the block
    started that outlives it adds nothing more, and outside the block nothing is
    recorded."""
    peer = _EchoPeer()
    target = SessionTarget(peer.channel, "S1")
    go_on = trio.Event()
    async with trio.open_nursery() as nursery:
        with traced_commands() as sent:

            async def later() -> None:
                await target.send("Runtime.evaluate", {"expression": "1"})
                await go_on.wait()
                await target.send("Page.reload")  # the block is over by now

            await target.send("Page.enable", session_id="S2")
            nursery.start_soon(later)
            await trio.testing.wait_all_tasks_blocked()
        go_on.set()
    await target.send("Page.disable")
    assert [(c.method, c.session) for c in sent] == [
        ("Page.enable", "S2"),
        ("Runtime.evaluate", "S1"),
    ]
    assert all(c.ms >= 0 for c in sent)
    assert len(peer.sent) == 4


class _GroupPeer:
    """A fake browser that answers at once, but holds each ``Runtime.releaseObjectGroup``
    until told, and fails those of the session ``blocked`` (a dialog holds it)."""

    def __init__(self) -> None:
        self.channel = CommandChannel(self.transmit)
        self.releases: list[Request] = []
        self.blocked: str | None = None

    async def transmit(self, request: Request) -> None:
        if request.method != "Runtime.releaseObjectGroup":
            self.channel.feed({"id": request.id, "result": {}})
        elif request.session_id == self.blocked:
            error = {"code": -32000, "message": "a dialog is open"}
            self.channel.feed({"id": request.id, "error": error})
        else:
            self.releases.append(request)

    def answer_releases(self) -> None:
        for request in self.releases:
            self.channel.feed({"id": request.id, "result": {}})
        self.releases.clear()


async def test_an_object_group_is_released_only_where_commands_put_objects() -> None:
    """`holding` names the sessions whose commands asked for remote objects in a group,
    and none other; a release forgets its session unless it fails, objects put there
    while a release is in flight are held again, and a child session that went away
    is dropped."""
    peer = _GroupPeer()
    target = SessionTarget(peer.channel)
    for child in ("C1", "C2"):
        peer.channel.feed(
            {
                "method": "Target.attachedToTarget",
                "params": {"sessionId": child, "targetInfo": {"type": "iframe"}},
            }
        )
    release = {"objectGroup": "g"}
    await target.send("Runtime.evaluate", {"expression": "1"})
    await target.send("Runtime.evaluate", {"expression": "1", "objectGroup": "other"})
    assert target.holding("g") == ()
    await target.send("DOM.resolveNode", {"backendNodeId": 1, "objectGroup": "g"}, session_id="C1")
    await target.send("Runtime.evaluate", {"expression": "1", "objectGroup": "g"})
    assert target.holding("g") == (None, "C1")
    # A release that fails keeps its session; one that goes forgets it.
    peer.blocked = "C1"
    with pytest.raises(CDPError, match="dialog"):
        await target.send("Runtime.releaseObjectGroup", release, session_id="C1")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(target.send, "Runtime.releaseObjectGroup", release)
        await trio.testing.wait_all_tasks_blocked()
        assert target.holding("g") == ("C1",)
        # Put there while the release is on its way: held again after it.
        await target.send("Runtime.evaluate", {"expression": "2", "objectGroup": "g"})
        peer.answer_releases()
    assert target.holding("g") == (None, "C1")
    await target.send("DOM.resolveNode", {"backendNodeId": 2, "objectGroup": "g"}, session_id="C2")
    peer.channel.feed({"method": "Target.detachedFromTarget", "params": {"sessionId": "C2"}})
    assert target.holding("g") == (None, "C1")
