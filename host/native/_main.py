"""``trimtab-host``: the process Chrome starts for native messaging.

Chrome runs the host with the caller's origin (``chrome-extension://<id>/``) as its
first argument, plus ``--parent-window=<handle>`` on Windows, and talks to it over
stdin/stdout. Before anything else runs, ``main`` moves the protocol channel off fds
0 and 1 onto private descriptors and points fd 1 at stderr, so nothing (a stray
``print``, a C library, a child process such as a launched browser) can write into
the channel or read from it.

Where new request types plug in: ``build_setup`` below. It receives a ``HostContext``
(with the ``Outbox`` the CDP relay sends its commands through) and yields the
handler registry and the relay hook; it is an async context manager so that
long-lived state (the relay, sessions, the call tracker) is closed when the host
stops.

Environment:

- ``TRIMTAB_LOG_DIR``: where ``host.log`` goes (see ``_logging.default_log_dir``).
- ``TRIMTAB_LOG_LEVEL``: log level name, default INFO.
- ``TRIMTAB_HOST_DEBUG=1``: also register the test-only ``debug_*`` request types.
- ``TRIMTAB_HOST_EOF_GRACE``: seconds in-flight requests get after stdin closes.
- ``TRIMTAB_ASK_TIMEOUT``: seconds a question waits for the person (default 50).
- ``TRIMTAB_PAGE_TIMEOUT``, ``TRIMTAB_TAB_WAIT``, ``TRIMTAB_MAX_TABS``: see
  ``trimtab.browser``. A bad value of any of them is logged and the default holds
  (``trimtab.wire.seconds_setting``).
- ``TRIMTAB_LINK``: the link's transport, ``unix``, ``tcp`` or ``tcp:PORT``
  (``trimtab.link``; default: the Unix socket, TCP on Windows).
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Final, TypeAlias

import attrs
import trio

from ..browser import TabRelayHub, open_host_state
from ..envelope import ASK_TIMEOUT, SidePanel, SitePolicy
from ..install import extension_id
from ..link import state_dir
from ..link.server import open_link
from ..routines import GRANTS_FILE, RoutineGrants, RoutineStore
from ..wire import (
    DEFAULT_EOF_GRACE,
    Handler,
    HostServer,
    HostStatistics,
    JSONObject,
    Outbox,
    RelayHook,
    collect_less_often,
    configure_logging,
    host_version,
    seconds_setting,
)
from ._debug_handlers import debug_handlers
from ._handlers import SidePanelDoor

__all__ = [
    "HostContext",
    "HostSetup",
    "SetupFactory",
    "allowed_origin",
    "build_setup",
    "main",
    "open_stdio_streams",
    "origin_refusal",
    "run_host",
]

log = logging.getLogger("trimtab.host")

_READ_SIZE: Final = 256 * 1024


@attrs.frozen
class HostContext:
    """What the host offers the code that builds its handlers."""

    origin: str | None  # chrome-extension://<id>/ of the caller, as Chrome passed it
    outbox: Outbox  # the relay's way to the extension: `await outbox.send_message(...)`
    debug: bool
    ask_timeout: float = ASK_TIMEOUT  # seconds a question waits for the person


@attrs.frozen
class HostSetup:
    """The pluggable part of the host: request handlers, the CDP relay hook, and what
    to do the moment the extension's input ends (`HostServer.on_eof`)."""

    handlers: Mapping[str, Handler] = attrs.field(factory=dict)
    on_relay_message: RelayHook | None = None
    on_eof: Callable[[], Awaitable[None]] | None = None


SetupFactory: TypeAlias = Callable[[HostContext], AbstractAsyncContextManager[HostSetup]]


@contextlib.asynccontextmanager
async def build_setup(context: HostContext) -> AsyncIterator[HostSetup]:
    """The handlers of the production host: add new request types here.

    The CDP relay is connected here: ``TabRelayHub`` sends its commands through the
    outbox and receives every ``cdp_result``/``cdp_event``/``cdp_detached`` and the
    extension's tab messages (``tab_opened``, ``tab_closed``, ...). The side
    panel's requests (``snapshot``, ``tools``, ``tool``, ``highlight``, ``release``,
    ``answer``, ``sites``, ``sites_set``) are `SidePanelDoor`'s; ``ping`` and ``cancel``
    are built into the server and, with ``TRIMTAB_HOST_DEBUG=1``, the test-only
    ``debug_*`` types exist.
    Both doors ask the person in one place, the side panel (`SidePanel`).
    """
    relay = TabRelayHub(context.outbox.send_message)
    # The person's always/never site lists live beside the link's secret.
    sites = SitePolicy.load(state_dir())
    # And the person's routines, one file each, and their grants for them (beside).
    routines = RoutineStore(state_dir() / "routines")
    grants = RoutineGrants.load(state_dir() / GRANTS_FILE)
    panel = SidePanel(context.outbox.send_message, timeout=context.ask_timeout)
    handlers: dict[str, Handler] = {}
    if context.debug:
        handlers.update(debug_handlers(context.outbox))
    try:
        async with (
            open_host_state(relay, sites=sites, routines=routines, grants=grants) as state,
            open_link(state, panel, context.outbox, context.origin) as link,
        ):
            handlers.update(SidePanelDoor(state, panel).handlers())
            # Agents outside the browser (trimtab mcp, the command line) reach the
            # host through the link; the extension tells it what they may touch.
            handlers.update(link.handlers())

            def relayed(message: JSONObject) -> None:
                if message.get("type") in ("download", "download_held"):
                    state.note_download(message)
                else:
                    relay.feed(message)

            # Outside agents hear at once that the host is going: their calls cannot
            # end otherwise, and Chrome kills the host two seconds after it let go.
            yield HostSetup(handlers=handlers, on_relay_message=relayed, on_eof=link.host_exiting)
    finally:
        # Commands still waiting on the extension fail with target_closed.
        relay.close("the extension disconnected")


async def run_host(
    inbound: trio.abc.ReceiveStream,
    outbound: trio.abc.SendStream,
    *,
    origin: str | None = None,
    debug: bool = False,
    eof_grace: float = DEFAULT_EOF_GRACE,
    ask_timeout: float = ASK_TIMEOUT,
    setup: SetupFactory = build_setup,
) -> HostStatistics:
    """Serve the protocol on the two streams until ``inbound`` ends."""
    outbox = Outbox(outbound)
    context = HostContext(origin=origin, outbox=outbox, debug=debug, ask_timeout=ask_timeout)
    async with setup(context) as plugins:
        server = HostServer(
            outbox=outbox,
            handlers=plugins.handlers,
            on_relay_message=plugins.on_relay_message,
            on_eof=plugins.on_eof,
            eof_grace=eof_grace,
        )
        await server.serve(inbound)
    return server.statistics()


# --------------------------------------------------------------------------- stdio


@attrs.define
class _ThreadedReceiveStream(trio.abc.ReceiveStream):
    """Blocking reads in a worker thread, for descriptors trio cannot poll."""

    fd: int

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        size = _READ_SIZE if max_bytes is None else max_bytes
        # A cancelled read leaves its thread blocked until input or EOF arrives;
        # acceptable for the few cases this class serves (Windows, regular files).
        return await trio.to_thread.run_sync(os.read, self.fd, size, abandon_on_cancel=True)

    async def aclose(self) -> None:
        os.close(self.fd)
        await trio.lowlevel.checkpoint()


@attrs.define
class _ThreadedSendStream(trio.abc.SendStream):
    """Blocking writes in a worker thread, for descriptors trio cannot poll."""

    fd: int

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await trio.to_thread.run_sync(self._write_all, bytes(data))

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                written = os.write(self.fd, view)
            except BrokenPipeError as exc:
                raise trio.BrokenResourceError("the reader of the protocol output left") from exc
            view = view[written:]

    async def wait_send_all_might_not_block(self) -> None:
        await trio.lowlevel.checkpoint()

    async def aclose(self) -> None:
        os.close(self.fd)
        await trio.lowlevel.checkpoint()


def _pollable(fd: int) -> bool:
    # Pipes and sockets work with epoll/kqueue; regular files do not, and a terminal
    # would be left non-blocking for the shell after we exit.
    mode = os.fstat(fd).st_mode
    return sys.platform != "win32" and (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode))


def open_stdio_streams(
    in_fd: int, out_fd: int
) -> tuple[trio.abc.ReceiveStream, trio.abc.SendStream]:
    """Trio streams over the protocol descriptors (taking ownership of both).

    On POSIX pipes, which is how Chrome connects the host, we use
    ``trio.lowlevel.FdStream``: reads and writes are non-blocking and driven by the
    event loop, cancellation is immediate, and there is no thread hop per frame.
    ``trio.wrap_file`` would run every read in a worker thread, and a cancelled read
    would leave that thread blocked on the pipe. FdStream does not exist on Windows
    and cannot poll regular files, so there we fall back to threaded blocking I/O.
    """
    if sys.platform == "win32":
        import msvcrt

        # Text mode would turn \n into \r\n inside frames.
        msvcrt.setmode(in_fd, os.O_BINARY)
        msvcrt.setmode(out_fd, os.O_BINARY)
    receive: trio.abc.ReceiveStream = (
        trio.lowlevel.FdStream(in_fd) if _pollable(in_fd) else _ThreadedReceiveStream(in_fd)
    )
    send: trio.abc.SendStream = (
        trio.lowlevel.FdStream(out_fd) if _pollable(out_fd) else _ThreadedSendStream(out_fd)
    )
    return receive, send


def _claim_stdio() -> tuple[int, int]:
    """Move the protocol channel to private fds; fd 1 becomes stderr, fd 0 /dev/null."""
    sys.stdout.flush()
    # os.dup makes non-inheritable descriptors, so child processes never see them.
    protocol_in = os.dup(0)
    protocol_out = os.dup(1)
    try:
        os.dup2(2, 1)
    except OSError:  # no stderr at all: send strays nowhere rather than into frames
        devnull_out = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull_out, 1)
        os.close(devnull_out)
    devnull_in = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull_in, 0)
    os.close(devnull_in)
    sys.stdout = sys.stderr
    return protocol_in, protocol_out


def _parse_args(argv: Sequence[str]) -> tuple[str | None, list[str]]:
    """The caller origin Chrome passes, and any other arguments (logged, not used)."""
    origin: str | None = None
    others: list[str] = []
    for arg in argv:
        if origin is None and not arg.startswith("--"):
            origin = arg
        else:
            others.append(arg)  # e.g. --parent-window=<HWND> on Windows
    return origin, others


def allowed_origin() -> str:
    """The one caller origin the host serves: the installed extension's."""
    return f"chrome-extension://{extension_id()}/"


def origin_refusal(origin: str | None) -> str | None:
    """Why the host will not serve a caller with this origin, or None when it may."""
    try:
        allowed = allowed_origin()
    except (OSError, ValueError) as exc:
        return f"the installed extension id cannot be read ({exc})"
    if origin is None:
        return f"no caller origin was given; the host serves only {allowed}"
    if origin != allowed:
        return f"caller origin {origin[:200]!r} is not the installed extension {allowed}"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``trimtab-host``; returns the process exit code."""
    args = sys.argv[1:] if argv is None else list(argv)
    protocol_in, protocol_out = _claim_stdio()
    collect_less_often()
    log_path = configure_logging()
    origin, others = _parse_args(args)
    debug = os.environ.get("TRIMTAB_HOST_DEBUG") == "1"
    eof_grace = seconds_setting("TRIMTAB_HOST_EOF_GRACE", DEFAULT_EOF_GRACE, positive=False)
    ask_timeout = seconds_setting("TRIMTAB_ASK_TIMEOUT", ASK_TIMEOUT)
    log.info(
        "trimtab-host %s starting: pid=%d origin=%s other_args=%s debug=%s log=%s",
        host_version(),
        os.getpid(),
        origin,
        others,
        debug,
        log_path,
    )
    refusal = origin_refusal(origin)
    if refusal is not None:
        # Only the installed extension may drive the person's tabs through this host.
        log.error("refusing to serve: %s", refusal)
        print(f"trimtab-host: {refusal}", file=sys.stderr)
        return 2

    async def serve() -> HostStatistics:
        receive, send = open_stdio_streams(protocol_in, protocol_out)
        async with receive, send:
            return await run_host(
                receive,
                send,
                origin=origin,
                debug=debug,
                eof_grace=eof_grace,
                ask_timeout=ask_timeout,
            )

    try:
        statistics = trio.run(serve)
    except KeyboardInterrupt:
        log.info("interrupted")
        return 130
    except BaseException:
        log.exception("the host crashed")
        return 1
    log.info(
        "trimtab-host exiting: %d request(s), %d error reply(ies), %d internal",
        statistics.requests_received,
        statistics.errors_sent,
        statistics.internal_errors,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
