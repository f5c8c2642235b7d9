"""The link: the host's per-user endpoint for agents outside the browser, in-process
over a real headless page (the relay peer stands in for the extension's relay)."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio
import trio.testing
from mcp import Client
from mcp.shared.exceptions import MCPError

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.handlers_host import TAB
from tests.support.link_host import (
    TIMEOUT,
    ExtensionEnd,
    LinkHost,
    extension_request,
    open_link_host,
)
from tests.support.relay_peer import RelayPeer
from tests.support.transports import open_raw
from trimtab.browser import Toolbox, open_host_state
from trimtab.envelope import SidePanel
from trimtab.link import LinkAddress, LinkClient, LinkError, TcpAddress, connect, read_secret
from trimtab.link._paths import SECRET_FILE, ensure_private_dir, list_endpoints
from trimtab.link.server import Link, open_link
from trimtab.link.server import _server as link_server
from trimtab.link.server._events import shown_args
from trimtab.mcp import build_server, open_holder
from trimtab.wire import FrameDecoder, Outbox

pytestmark = pytest.mark.browser


@pytest.fixture
def folder() -> Iterator[Path]:
    """A short private folder: Unix socket paths are limited to ~100 bytes."""
    path = Path(tempfile.mkdtemp(prefix="tl-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@attrs.define
class Setup:
    link: Link
    panel: SidePanel
    extension: ExtensionEnd
    secret: str
    page: PageTarget

    @property
    def address(self) -> LinkAddress:
        assert self.link.address is not None, self.link.problem
        return self.link.address

    def client(self, name: str = "test-client") -> Any:
        return connect(self.address, self.secret, {"name": name, "version": "1"})


@pytest.fixture
async def setup(
    page: PageTarget, pages_server: StaticServer, nursery: trio.Nursery, folder: Path
) -> AsyncIterator[Setup]:
    """A host state and its link on the shop page, the tab shared with agents."""
    peer = RelayPeer(page, TAB)
    await nursery.start(peer.run)
    with trio.fail_after(30):
        await page.navigate(pages_server.url("handlers-shop.html"))
    send, receive = trio.testing.memory_stream_one_way_pair()
    extension = Outbox(send)
    panel = SidePanel(extension.send_message, timeout=5)
    async with (
        open_host_state(peer.hub, toolbox=Toolbox.load()) as state,
        open_link(
            state,
            panel,
            extension,
            "chrome-extension://x/",
            folder=folder / "run",
            secret_folder=folder / "state",
        ) as link,
    ):
        secret = read_secret(folder / "state" / SECRET_FILE)
        await link.handle_agents_tabs(
            extension_request(
                "agents_tabs", tabs=[{"id": TAB, "title": "Shop", "url": "http://x/"}]
            )
        )
        yield Setup(link, panel, ExtensionEnd(receive), secret, page)


async def _snapshot(client: LinkClient, tab: int = TAB) -> dict[str, Any]:
    with trio.fail_after(60):
        return await client.request("tool", tab=tab, name="capture_snapshot", args={})


async def test_shared_tab_listed_read_and_repeated_read_from_tracker(setup: Setup) -> None:
    """A client lists the shared tab, reads it as XML, and a repeat comes from the tracker."""
    async with setup.client() as client:
        tabs = await client.request("tabs")
        assert tabs["tabs"] == [{"id": TAB, "title": "Shop", "url": "http://x/"}]
        first = await _snapshot(client)
        assert "Outdoor shop" in first["content"]
        assert first["kind"] == "baseline"
        assert not first["cached"]
        second = await _snapshot(client)
        assert second["cached"]
        assert second["cached_from"] == first["call_id"]


async def test_the_tabs_reply_hides_credentials_in_its_urls_for_scripts_too(
    setup: Setup,
) -> None:
    """A shared tab whose URL carries a token is listed with it hidden in the reply's
    JSON (what ``trimtab tabs --json`` prints) as in its listing, title untouched."""
    token = "Zx9q7Lm2Vb8Rt4Yw1Kp6Hs3Nd5Qe0"
    await setup.link.handle_agents_tabs(
        extension_request(
            "agents_tabs",
            tabs=[{"id": TAB, "title": "Mail", "url": f"http://x/in?access_token={token}&a=1"}],
        )
    )
    async with setup.client() as client:
        tabs = await client.request("tabs")
    assert tabs["tabs"] == [
        {"id": TAB, "title": "Mail", "url": "http://x/in?access_token=(hidden)&a=1"}
    ]
    assert token not in tabs["content"]


async def test_each_client_has_its_own_memory_and_tracker(setup: Setup) -> None:
    """Two clients at once: each gets its own baseline, neither is served the other's cache."""
    async with setup.client("a") as first, setup.client("b") as second:
        one = await _snapshot(first)
        two = await _snapshot(second)
        assert one["kind"] == two["kind"] == "baseline"
        assert not two["cached"]
        assert first.session != second.session


async def test_diff_after_action(setup: Setup) -> None:
    """A click answers with a diff against what this client saw before it."""
    async with setup.client() as client:
        xml = (await _snapshot(client))["content"]
        eid = next(
            line.split('id="')[1].split('"')[0] for line in xml.splitlines() if "Add to bag" in line
        )
        with trio.fail_after(60):
            clicked = await client.request("tool", tab=TAB, name="click", args={"id": eid})
        assert not clicked["is_error"], clicked["content"]
        assert clicked["kind"] == "diff", clicked["content"]
        assert "Clicks: 1" in clicked["content"]


async def test_wrong_or_missing_secret_refused(setup: Setup) -> None:
    """A hello with a wrong or no secret is refused and the connection closed."""
    for secret in ("0" * 64, ""):
        with pytest.raises(LinkError) as caught:
            async with connect(setup.address, secret):
                pass
        assert caught.value.code == "forbidden"
    # Requests before the hello are refused too.
    stream = await open_raw(setup.address)
    async with stream:
        from trimtab.wire import encode_frame

        await stream.send_all(encode_frame({"type": "tabs", "id": 1}))
        decoder = FrameDecoder()
        events: list[Any] = []
        while not events:
            events = decoder.feed(await stream.receive_some())
        assert events[0].message["error"]["code"] == "forbidden"
        assert await stream.receive_some() == b""


async def test_modes_and_the_transport_in_the_info_file(
    setup: Setup, folder: Path, link_transport: str
) -> None:
    """The folder is 0700, the secret and info file (and the socket) 0600, and the
    endpoint is listed with its transport: a socket beside the info file, or a port on
    127.0.0.1 and no socket at all."""
    assert stat.S_IMODE((folder / "run").stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "state" / SECRET_FILE).stat().st_mode) == 0o600
    [endpoint] = list_endpoints(folder / "run")
    assert stat.S_IMODE((folder / "run" / f"{endpoint.name}.json").stat().st_mode) == 0o600
    assert endpoint.address == setup.address
    assert endpoint.alive
    assert endpoint.info.pid == os.getpid()
    assert endpoint.info.transport == link_transport
    sockets = list((folder / "run").glob("*.sock"))
    if link_transport == "tcp":
        assert isinstance(setup.address, TcpAddress)
        assert endpoint.info.port == setup.address.port > 0
        assert sockets == []
    else:
        assert isinstance(setup.address, Path)
        assert stat.S_IMODE(setup.address.lstat().st_mode) == 0o600
        assert endpoint.info.port is None
        assert sockets == [setup.address]


def test_private_folder_refuses_others(folder: Path) -> None:
    """A folder left open to others is tightened to 0700; a file in its place is refused."""
    loose = folder / "loose"
    loose.mkdir(mode=0o755)
    os.chmod(loose, 0o755)
    ensure_private_dir(loose)
    assert stat.S_IMODE(loose.stat().st_mode) == 0o700
    squatted = folder / "squatted"
    squatted.write_text("x")
    with pytest.raises(Exception, match="not a folder"):
        ensure_private_dir(squatted)
    secret = folder / "secret"
    secret.write_text("a" * 64)
    os.chmod(secret, 0o644)
    with pytest.raises(Exception, match="mode 0644"):
        read_secret(secret)


async def test_unshared_tab_asks_the_extension(setup: Setup) -> None:
    """A call on an unshared tab asks the extension, naming the client; yes and no are kept."""
    await setup.link.handle_agents_tabs(extension_request("agents_tabs", tabs=[]))
    async with setup.client("claude-code") as client, trio.open_nursery() as nursery:
        results: list[Any] = []

        async def call() -> None:
            try:
                results.append(await _snapshot(client))
            except LinkError as exc:
                results.append(exc)

        nursery.start_soon(call)
        ask = await setup.extension.next("ask")
        assert ask["client"] == "claude-code 1"
        assert ask["tab"] == TAB
        setup.panel.answer(ask["ask"], allow=False)
    assert isinstance(results[0], LinkError)
    assert results[0].code == "forbidden"
    async with setup.client("claude-code") as client, trio.open_nursery() as nursery:
        results.clear()
        nursery.start_soon(call)
        ask = await setup.extension.next("ask")
        setup.panel.answer(ask["ask"], allow=True)
    assert "Outdoor shop" in results[0]["content"]


async def test_stop_ends_every_session(setup: Setup) -> None:
    """Stop closes every client's session with a plain reason."""
    async with setup.client() as client:
        await _snapshot(client)
        connected = await setup.extension.next("agents_event")
        assert connected["event"] == "connected"
        await setup.link.handle_agents_stop(extension_request("agents_stop"))
        with trio.fail_after(10):
            while client.closed_reason is None:
                await trio.sleep(0.01)
        with pytest.raises(LinkError, match="stopped"):
            await client.request("tabs")


async def test_a_client_that_resets_its_connection_ends_only_its_own_session(
    setup: Setup,
) -> None:
    """A client that closes with replies unread resets its socket (ECONNRESET on the
    host's side): its session ends as if it had closed cleanly and the host serves on."""
    from trimtab.wire import encode_frame

    stream = await open_raw(setup.address)
    hello = {"type": "hello", "id": 0, "secret": setup.secret, "client": {"name": "rude"}}
    await stream.send_all(encode_frame(hello))
    decoder = FrameDecoder()
    with trio.fail_after(10):
        while not decoder.feed(await stream.receive_some()):
            pass
    for request_id in range(1, 40):  # replies it never reads
        await stream.send_all(encode_frame({"type": "tabs", "id": request_id}))
    with trio.fail_after(10):
        while (await setup.extension.next("agents_event"))["event"] != "connected":
            pass
    await trio.sleep(0.2)  # the replies are in its receive queue
    stream.socket.close()
    with trio.fail_after(10):
        while (await setup.extension.next("agents_event"))["event"] != "disconnected":
            pass
    async with setup.client("next") as client:
        assert (await _snapshot(client))["is_error"] is False


async def test_the_persons_log_names_the_element_an_outside_agent_acted_on(
    setup: Setup,
) -> None:
    """The extension hears each outside call with the elements it names as that client's
    view showed them (tag, type, name) and the arguments it may show, never what was
    typed; a click without an id is refused before it runs, as bad arguments."""
    async with setup.client() as client:
        xml = (await _snapshot(client))["content"]
        bag = xml.split(">Add to bag<")[0].rsplit('<button id="', 1)[1].split('"')[0]
        with trio.fail_after(60):
            await client.request("tool", tab=TAB, name="click", args={"id": bag})
            await client.request("tool", tab=TAB, name="type", args={"id": bag, "text": "hunter2"})
            with pytest.raises(LinkError) as refused:
                await client.request("tool", tab=TAB, name="click", args={})
        events = []
        with trio.fail_after(10):
            while len(events) < 3:
                event = await setup.extension.next("agents_event")
                if event["event"] == "call":
                    events.append(event)
    snapshot, click, typed = events
    assert (snapshot["tool"], snapshot["elements"], snapshot["tab"]) == (
        "capture_snapshot",
        {},
        TAB,
    )
    assert click["args"] == {"id": bag}
    assert click["elements"] == {bag: {"tag": "button", "type": "", "name": "Add to bag"}}
    assert typed["args"] == {"id": bag}
    assert "hunter2" not in str(typed)
    assert refused.value.code == "bad_request"
    assert "click needs the argument 'id'" in refused.value.message


async def test_an_allowed_submit_is_logged_with_the_button_it_clicked(
    setup: Setup, pages_server: StaticServer
) -> None:
    """A click on a submit button that the person allowed, which leaves the page, is
    heard with the button as the client saw it before the page went."""
    async with setup.client("claude-code") as client:
        with trio.fail_after(60):
            shop = pages_server.url("consent-shop.html")
            xml = (await client.request("tool", tab=TAB, name="navigate", args={"url": shop}))[
                "content"
            ]
        buy = xml.split(">Buy now<")[0].rsplit('<button id="', 1)[1].split('"')[0]
        results: list[dict[str, Any]] = []
        async with trio.open_nursery() as nursery:

            async def click() -> None:
                results.append(
                    await client.request("tool", tab=TAB, name="click", args={"id": buy})
                )

            nursery.start_soon(click)
            ask = await setup.extension.next("ask")
            assert ask["what"] == "submit"
            setup.panel.answer(ask["ask"], allow=True)
    assert results[0]["submitted"], results[0]["content"]
    assert "tools-done.html" in await setup.page.evaluate("location.href")
    with trio.fail_after(10):
        while True:
            event = await setup.extension.next("agents_event")
            if event["event"] == "call" and event["tool"] == "click":
                break
    assert event["args"] == {"id": buy}
    assert event["elements"] == {buy: {"tag": "button", "type": "submit", "name": "Buy now"}}
    assert event["error"] is None


def test_the_log_shows_what_was_aimed_at_never_what_was_typed() -> None:
    """The arguments the person's log is sent: what a call aims at and chooses, but not
    the text typed into a field or a prompt, fill's values, a script, or file paths."""
    assert shown_args("type", {"id": "f1", "text": "hunter2", "submit": True}) == {"id": "f1"}
    assert shown_args("answer_dialog", {"accept": True, "text": "secret"}) == {"accept": True}
    assert shown_args("click", {"text": "Add to bag", "x": 3, "y": 4}) == {
        "text": "Add to bag",
        "x": 3,
        "y": 4,
    }
    fill = {"fields": [{"id": "a", "value": "pw"}, {"id": "b", "value": True}, "odd"]}
    assert shown_args("fill", fill) == {"fields": [{"id": "a"}, {"id": "b"}]}
    assert shown_args("upload", {"id": "u", "paths": ["/home/me/a.pdf", "/b"]}) == {
        "id": "u",
        "files": 2,
    }
    assert shown_args("evaluate", {"expression": "document.cookie"}) == {}
    assert shown_args("navigate", {"url": "https://x.test/" + "a" * 400})["url"] == (
        "https://x.test/" + "a" * 285
    )


async def _submit_asked(setup: Setup, pages_server: StaticServer, allow: bool) -> dict[str, Any]:
    """Type an email in the consent shop and press Enter; answer the person's question."""
    async with setup.client("claude-code") as client:
        with trio.fail_after(60):
            shop = pages_server.url("consent-shop.html")
            navigated = await client.request("tool", tab=TAB, name="navigate", args={"url": shop})
            xml = navigated["content"]
            email = next(
                line.split('id="')[1].split('"')[0]
                for line in xml.splitlines()
                if 'type="email"' in line
            )
            typed = await client.request(
                "tool", tab=TAB, name="type", args={"id": email, "text": "a@b.c"}
            )
            assert not typed["is_error"], typed["content"]
        results: list[dict[str, Any]] = []
        async with trio.open_nursery() as nursery:

            async def press() -> None:
                results.append(
                    await client.request(
                        "tool", tab=TAB, name="press", args={"key": "Enter"}, consent="forged"
                    )
                )

            nursery.start_soon(press)
            ask = await setup.extension.next("ask")
            assert ask["what"] == "submit"
            assert "submits the form" in ask["reason"]
            setup.panel.answer(ask["ask"], allow=allow)
        assert "token" not in results[0]["consent"]
        return results[0]


async def test_submit_asks_the_person_and_a_refusal_is_the_result(
    setup: Setup, pages_server: StaticServer
) -> None:
    """Enter that would submit asks through the extension; no means nothing is submitted."""
    result = await _submit_asked(setup, pages_server, allow=False)
    assert result["is_error"]
    assert "refused" in result["content"]
    assert await setup.page.evaluate("location.search") == ""


async def test_submit_allowed_by_the_person_submits(
    setup: Setup, pages_server: StaticServer
) -> None:
    """Enter that would submit, allowed by the person, submits the form."""
    result = await _submit_asked(setup, pages_server, allow=True)
    assert not result["is_error"], result["content"]
    assert result["submitted"]


async def test_no_one_to_ask_is_refused_at_once_with_the_reason(setup: Setup) -> None:
    """When the extension answers no without asking (no side panel open), the client is
    told why."""
    await setup.link.handle_agents_tabs(extension_request("agents_tabs", tabs=[]))
    async with setup.client() as client, trio.open_nursery() as nursery:
        caught: list[LinkError] = []

        async def call() -> None:
            try:
                await _snapshot(client)
            except LinkError as exc:
                caught.append(exc)

        nursery.start_soon(call)
        ask = await setup.extension.next("ask")
        setup.panel.answer(ask["ask"], allow=False, why="no panel is open")
    assert caught[0].code == "forbidden"
    assert "no panel is open" in caught[0].message


async def _type_email_in_the_consent_shop(client: LinkClient, pages_server: StaticServer) -> None:
    with trio.fail_after(60):
        shop = pages_server.url("consent-shop.html")
        navigated = await client.request("tool", tab=TAB, name="navigate", args={"url": shop})
        email = next(
            line.split('id="')[1].split('"')[0]
            for line in navigated["content"].splitlines()
            if 'type="email"' in line
        )
        typed = await client.request(
            "tool", tab=TAB, name="type", args={"id": email, "text": "a@b.c"}
        )
        assert not typed["is_error"], typed["content"]


async def test_a_cancelled_call_withdraws_its_question_and_a_late_allow_submits_nothing(
    setup: Setup, pages_server: StaticServer
) -> None:
    """A client that gives up on a submit while the person is asked cancels the call: the
    question is withdrawn at once, and the person's Allow afterwards submits nothing."""
    async with setup.client("claude-code") as client:
        await _type_email_in_the_consent_shop(client, pages_server)
        with trio.move_on_after(30) as waited:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(
                    lambda: client.request("tool", tab=TAB, name="press", args={"key": "Enter"})
                )
                ask = await setup.extension.next("ask")
                nursery.cancel_scope.cancel()  # the client's own timeout or abort
        assert not waited.cancelled_caught
        withdrawn = await setup.extension.next("withdraw")
        assert withdrawn["ask"] == ask["ask"]
        assert setup.panel.answer(ask["ask"], allow=True) is False
        # The link is still usable, and the page never submitted.
        assert (await client.request("tabs"))["tabs"]
    await trio.sleep(1)
    assert await setup.page.evaluate("location.search") == ""


async def test_a_call_waiting_for_the_person_sends_progress_then_says_nobody_answered(
    setup: Setup, pages_server: StaticServer
) -> None:
    """While a submit waits for the person the client hears progress naming the side panel,
    and when nobody answers within the host's wait the result says so; nothing submits."""
    async with setup.client("claude-code") as client:
        await _type_email_in_the_consent_shop(client, pages_server)
        heard: list[dict[str, Any]] = []

        async def progress(message: dict[str, Any]) -> None:
            heard.append(message)

        with trio.fail_after(30):
            result = await client.request(
                "tool", tab=TAB, name="press", args={"key": "Enter"}, on_progress=progress
            )
    assert result["is_error"]
    assert result["consent"] == {"required": True, "granted": False}
    assert "nobody answered in the browser within 5 s" in result["content"]
    assert heard, "no progress while the person was asked"
    assert "Trimtab side panel" in heard[0]["message"]
    assert heard[0]["timeout"] == 5
    assert (await setup.extension.next("withdraw"))["why"] == "nobody answered within 5 s"
    assert await setup.page.evaluate("location.search") == ""


async def test_after_stop_no_client_is_asked_for_a_tab_until_one_is_shared(setup: Setup) -> None:
    """After the person's Stop, a client's call on an unshared tab is refused at once
    (not asked again); sharing a tab again lifts that."""
    await setup.link.handle_agents_stop(extension_request("agents_stop"))
    await setup.link.handle_agents_tabs(extension_request("agents_tabs", tabs=[]))
    async with setup.client() as client:
        with pytest.raises(LinkError, match="stopped outside agents") as refused:
            await _snapshot(client)
        assert refused.value.code == "forbidden"
        assert (await client.request("tabs"))["stopped"] is True
    await setup.link.handle_agents_tabs(
        extension_request("agents_tabs", tabs=[{"id": TAB, "title": "Shop", "url": "http://x/"}])
    )
    async with setup.client() as client:
        assert "Outdoor shop" in (await _snapshot(client))["content"]


async def test_a_tab_the_person_allowed_is_listed_for_that_client(setup: Setup) -> None:
    """A tab allowed through the side panel's question appears in the client's tabs, with
    the browser's title and URL, and only for that client."""
    await setup.link.handle_agents_tabs(extension_request("agents_tabs", tabs=[]))
    async with setup.client("claude-code") as client:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_snapshot, client)
            ask = await setup.extension.next("ask")
            assert ask["what"] == "tab"
            assert setup.panel.answer(ask["ask"], allow=True)
        (listed,) = (await client.request("tabs"))["tabs"]
        assert listed["id"] == TAB
        assert listed["allowed"] is True
        assert listed["title"] == "Handlers shop"
        assert listed["url"].endswith("/handlers-shop.html")
    async with setup.client("claude-code") as other:
        assert (await other.request("tabs"))["tabs"] == []


async def test_a_named_session_gets_diffs_across_connections(setup: Setup) -> None:
    """Two connections under one session name share what the first saw: the second's
    click is answered with a diff, and the name is refused while it is in use."""
    session = {"name": "cli", "version": "1"}
    async with connect(setup.address, setup.secret, session) as first:
        del first
    async with _named(setup, "shell") as client:
        snapshot = await _snapshot(client)
        assert snapshot["kind"] == "baseline"
        with pytest.raises(LinkError, match="in use"):
            async with _named(setup, "shell"):
                pass
    async with _named(setup, "shell") as client:
        add = next(
            line.split('id="')[1].split('"')[0]
            for line in snapshot["content"].splitlines()
            if "Add to bag" in line
        )
        with trio.fail_after(60):
            clicked = await client.request("tool", tab=TAB, name="click", args={"id": add})
        assert clicked["kind"] == "diff", clicked["content"]


def _named(setup: Setup, name: str) -> Any:
    return connect(setup.address, setup.secret, {"name": "cli", "version": "1"}, session=name)


async def test_an_mcp_client_that_times_out_cancels_the_submit_and_heard_progress(
    setup: Setup, pages_server: StaticServer, folder: Path
) -> None:
    """Through the MCP server and the official SDK's client: a submit that waits for the
    person sends progress; when the client times out and cancels, the question is
    withdrawn and a late Allow submits nothing."""
    async with setup.client() as client:
        await _type_email_in_the_consent_shop(client, pages_server)
    heard: list[str | None] = []
    progress = _progress_into(heard)
    async with _mcp_client(folder) as mcp:
        with trio.fail_after(30), pytest.raises(MCPError, match=r"[Tt]imed out"):
            await mcp.call_tool(
                "press",
                {"tab": TAB, "key": "Enter"},
                read_timeout_seconds=2,
                progress_callback=progress,
            )
        ask = await setup.extension.next("ask")
        withdrawn = await setup.extension.next("withdraw")
        assert withdrawn["ask"] == ask["ask"]
        assert setup.panel.answer(ask["ask"], allow=True) is False
    assert heard
    assert "Trimtab side panel" in str(heard[0])
    await trio.sleep(1)
    assert await setup.page.evaluate("location.search") == ""


async def test_an_mcp_client_gets_a_plain_result_when_nobody_answers_in_time(
    setup: Setup, pages_server: StaticServer, folder: Path
) -> None:
    """Through the MCP server and the official SDK's client: a submit nobody answers ends,
    at the host's wait (5 s here, 50 s by default, under the SDK's 60 s), as a tool
    result that says nobody answered, after progress the client heard."""
    async with setup.client() as client:
        await _type_email_in_the_consent_shop(client, pages_server)
    heard: list[str | None] = []
    progress = _progress_into(heard)
    async with _mcp_client(folder) as mcp:
        with trio.fail_after(30):
            result = await mcp.call_tool(
                "press", {"tab": TAB, "key": "Enter"}, progress_callback=progress
            )
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "nobody answered in the browser within 5 s" in text
    assert heard
    assert await setup.page.evaluate("location.search") == ""


def _progress_into(heard: list[str | None]) -> Any:
    """An MCP progress callback that keeps each notification's message in ``heard``."""

    async def progress(done: float, total: float | None, message: str | None) -> None:
        del done, total
        heard.append(message)

    return progress


@contextlib.asynccontextmanager
async def _mcp_client(folder: Path) -> AsyncIterator[Client]:
    """The official SDK's client on ``trimtab mcp``'s server, over the test's link."""
    async with (
        open_holder(
            endpoint_folder=folder / "run", secret_file=folder / "state" / SECRET_FILE
        ) as holder,
        Client(build_server(holder)) as mcp,
    ):
        yield mcp


def _read_soon(nursery: trio.Nursery, host: LinkHost) -> list[tuple[int, str, str]]:
    """`trimtab snapshot --tab TAB` started in ``nursery``: its exit code, stdout and
    stderr land in the list returned."""
    said: list[tuple[int, str, str]] = []

    async def read() -> None:
        said.append(await host.trimtab("snapshot", "--tab", str(TAB)))

    nursery.start_soon(read)
    return said


async def test_a_call_sent_before_the_extension_lists_the_shared_tabs_waits_for_the_list(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A host that just started (Chrome woke the extension's worker) knows the shared
    tabs only once the extension lists them: a read of a shared tab sent before then
    waits for the list and is answered, and the person is not asked about the tab."""
    async with open_link_host(page, pages_server.url("handlers-shop.html"), listed=False) as host:
        async with trio.open_nursery() as nursery:
            said = _read_soon(nursery, host)
            with trio.fail_after(TIMEOUT):
                while not any(s.in_flight for s in host.link.sessions.values()):
                    await trio.sleep(0.02)
            await trio.sleep(0.2)  # (it waits for the list, not for the person)
            await host.share(TAB)
        [(code, out, err)] = said
        assert code == 0, err
        assert "Outdoor shop" in out
        with trio.move_on_after(0.5):
            asked = await host.extension.next("ask")
            raise AssertionError(f"the person was asked: {asked}")


async def test_a_host_the_extension_never_lists_shares_to_still_asks_the_person(
    page: PageTarget, pages_server: StaticServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the extension's list of shared tabs does not come within `SHARES_WAIT`, a
    call on a tab asks the person as for any unshared tab, and goes on with their yes."""
    monkeypatch.setattr(link_server, "SHARES_WAIT", 0.5)
    async with open_link_host(page, pages_server.url("handlers-shop.html"), listed=False) as host:
        async with trio.open_nursery() as nursery:
            said = _read_soon(nursery, host)
            question = await host.answer(allow=True)
        assert question["what"] == "tab"
        [(code, out, err)] = said
        assert code == 0, err
        assert "Outdoor shop" in out
