"""A real host state and its link on one headless page, without the extension: the
relay peer stands in for the extension's CDP relay, and the test answers the
questions the side panel is asked (``ask``). Outside clients (``trimtab`` commands,
``trimtab mcp``) run as processes with `LinkHost.env` and find it as a user's would."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs
import trio
import trio.testing
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import Implementation

from pycdp_bridge import PageTarget
from tests.support.handlers_host import TAB
from tests.support.relay_peer import RelayPeer
from trimtab.browser import Toolbox, open_host_state
from trimtab.envelope import SidePanel
from trimtab.link import LinkClient, connect, read_secret
from trimtab.link._paths import SECRET_FILE
from trimtab.link.server import Link, open_link
from trimtab.routines import RoutineStore
from trimtab.tab import Downloads
from trimtab.wire import DecodedMessage, FrameDecoder, Outbox, Request

__all__ = ["TAB", "TIMEOUT", "ExtensionEnd", "LinkHost", "extension_request", "open_link_host"]

TIMEOUT = 60


@attrs.define
class ExtensionEnd:
    """The extension's end of the native port: what the link tells it."""

    receive: trio.abc.ReceiveStream
    decoder: FrameDecoder = attrs.field(factory=FrameDecoder)
    pending: list[dict[str, Any]] = attrs.field(factory=list)

    async def next(self, *kinds: str, within: float = TIMEOUT) -> dict[str, Any]:
        """The next message of a type in ``kinds`` the host sent to the extension
        (others before it are dropped), within `within` seconds."""
        with trio.fail_after(within):
            while True:
                while self.pending:
                    message = self.pending.pop(0)
                    if message.get("type") in kinds:
                        return message
                data = await self.receive.receive_some()
                self.pending += [
                    e.message for e in self.decoder.feed(data) if isinstance(e, DecodedMessage)
                ]


def extension_request(kind: str, **fields: Any) -> Request:
    """A request of the extension to the host, as the native port delivers it."""
    return Request(kind, 1, {"type": kind, "id": 1, **fields})


@attrs.define
class LinkHost:
    """The running link, the extension's end, and where clients find them."""

    link: Link
    panel: SidePanel
    extension: ExtensionEnd
    page: PageTarget
    runtime: Path  # XDG_RUNTIME_DIR of the clients: the endpoint is in runtime/trimtab
    state: Path  # XDG_STATE_HOME of the clients: the secret is in state/trimtab
    closed: trio.CancelScope  # cancel it to end the host, as when the browser quits

    def env(self) -> dict[str, str]:
        return {"XDG_RUNTIME_DIR": str(self.runtime), "XDG_STATE_HOME": str(self.state)}

    async def share(self, *tabs: int) -> None:
        """Share ``tabs`` with agents, as the side panel's button does."""
        listed = [{"id": tab, "title": "Shop", "url": "http://x/"} for tab in tabs]
        await self.link.handle_agents_tabs(extension_request("agents_tabs", tabs=listed))

    async def answer(self, allow: bool, *, within: float = TIMEOUT) -> dict[str, Any]:
        """Answer the next question the person is asked (asked within `within`
        seconds); return the question."""
        ask = await self.extension.next("ask", within=within)
        assert self.panel.answer(ask["ask"], allow=allow), f"{ask} was withdrawn"
        return ask

    async def trimtab(self, *args: str, stdin: bytes = b"") -> tuple[int, str, str]:
        """Run ``python -m trimtab ARGS`` against this link, ``stdin`` its input (never
        a terminal): exit code, stdout, stderr."""
        with trio.fail_after(TIMEOUT):
            done = await trio.run_process(
                [sys.executable, "-m", "trimtab", *args],
                stdin=stdin,
                env=dict(os.environ, **self.env()),
                capture_stdout=True,
                capture_stderr=True,
                check=False,
            )
        return done.returncode, done.stdout.decode(), done.stderr.decode()

    def agent(self, name: str, **more: str) -> contextlib.AbstractAsyncContextManager[LinkClient]:
        """An outside agent's connection to the link, as ``name`` (``more``: the other
        fields of its client info, such as ``version``), with the secret where clients
        read it."""
        assert self.link.address is not None, "the link is closed"
        secret = read_secret(self.state / "trimtab" / SECRET_FILE)
        return connect(self.link.address, secret, {"name": name, **more})

    def mcp_client(self, name: str = "link-agent", *, tools: str | None = None) -> Client:
        """A real ``trimtab mcp`` process (``--tools`` when given) behind the ``mcp``
        SDK's client."""
        chosen = ["--tools", tools] if tools is not None else []
        server = StdioServerParameters(
            command=sys.executable, args=["-m", "trimtab", "mcp", *chosen], env=self.env()
        )
        return Client(server, client_info=Implementation(name=name, version="1.0"))


@contextlib.asynccontextmanager
async def open_link_host(
    page: PageTarget,
    url: str,
    *,
    before_command: Callable[[str], Awaitable[None]] | None = None,
    listed: bool = True,
) -> AsyncIterator[LinkHost]:
    """A host state and its link on ``page`` (tab `TAB`, at ``url``), nothing shared;
    ``before_command`` is the relay peer's (`RelayPeer`). Not ``listed``: the
    extension has not yet told the host which tabs are shared."""
    # Unix socket paths are short: the runtime folder is a short temporary one.
    runtime = Path(tempfile.mkdtemp(prefix="tc-"))
    os.chmod(runtime, 0o700)
    state = runtime / "state"
    try:
        async with trio.open_nursery() as nursery:
            peer = RelayPeer(page, TAB, follow_opened=True, before_command=before_command)
            await nursery.start(peer.run)
            with trio.fail_after(TIMEOUT):
                await page.navigate(url)
            send, receive = trio.testing.memory_stream_one_way_pair()
            extension = Outbox(send)
            panel = SidePanel(extension.send_message, timeout=TIMEOUT)
            closed = trio.CancelScope()
            opened: list[Link] = []
            ready = trio.Event()
            ended = trio.Event()

            async def serve() -> None:
                try:
                    with closed:
                        async with (
                            open_host_state(
                                peer.hub,
                                toolbox=Toolbox.load(),
                                downloads=Downloads(folder=page.browser.downloads),
                                routines=RoutineStore(state / "trimtab" / "routines"),
                            ) as host_state,
                            open_link(
                                host_state,
                                panel,
                                extension,
                                "chrome-extension://x/",
                                folder=runtime / "trimtab",
                                secret_folder=state / "trimtab",
                            ) as link,
                        ):
                            if listed:
                                # The extension lists the shared tabs (none) once connected.
                                await link.handle_agents_tabs(
                                    extension_request("agents_tabs", tabs=[])
                                )
                            opened.append(link)
                            ready.set()
                            await trio.sleep_forever()
                finally:
                    ended.set()

            nursery.start_soon(serve)
            await ready.wait()
            yield LinkHost(opened[0], panel, ExtensionEnd(receive), page, runtime, state, closed)
            closed.cancel()
            await ended.wait()
            nursery.cancel_scope.cancel()
    finally:
        shutil.rmtree(runtime, ignore_errors=True)
