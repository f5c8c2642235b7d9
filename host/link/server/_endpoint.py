"""Opening the link: its endpoint (a Unix socket or a port on 127.0.0.1) and its info
file, for as long as the host runs (put back when deleted meanwhile); the endpoints
crashed hosts left, removed first."""

from __future__ import annotations

import contextlib
import errno
import itertools
import json
import logging
import os
import socket as stdlib_socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Final

import attrs
import trio

from ...browser import HostState
from ...envelope import SidePanel
from ...wire import Outbox, host_version
from .._paths import (
    ENDPOINT_SUFFIX,
    INFO_SUFFIX,
    MAX_SOCKET_PATH,
    EndpointInfo,
    PermissionProblem,
    endpoint_dir,
    endpoint_name,
    ensure_private_dir,
    prune_stale,
    read_or_create_secret,
    state_dir,
)
from .._transport import (
    LINK_ENV,
    LOOPBACK,
    LinkAddress,
    TcpAddress,
    Transport,
    TransportProblem,
    transport_from,
)
from ._server import Link

__all__ = ["open_link"]

log = logging.getLogger("trimtab.link")

# What a bind that finds its port in use says: taken (EADDRINUSE), or on Windows also
# reserved for Hyper-V and WSL or otherwise forbidden (WSAEACCES).
_PORT_TAKEN = frozenset(
    code
    for code in (
        errno.EADDRINUSE,
        getattr(errno, "WSAEADDRINUSE", None),
        getattr(errno, "WSAEACCES", None),
        errno.EACCES,
    )
    if code is not None
)


def _parent_browser() -> tuple[str, str]:
    """The browser that started this host and its profile folder, where /proc tells."""
    parent = Path(f"/proc/{os.getppid()}")
    try:
        exe = os.readlink(parent / "exe")
        args = (parent / "cmdline").read_bytes().split(b"\0")
    except OSError:
        return "browser", "default"
    profile = "default"
    for arg in args:
        text = arg.decode("utf-8", "replace")
        if text.startswith("--user-data-dir="):
            profile = os.path.abspath(text.split("=", 1)[1])
    return Path(exe).name or "browser", profile


# Room for a burst of clients connecting at once (100 agents started together): past
# a full backlog a Unix socket's connect fails at once (EAGAIN), and the link's own
# limit (MAX_CLIENTS) must be what refuses them, in words.
_BACKLOG: Final = 128
# How often the host looks whether its endpoint's files are still in the folder (a
# clean-up script, or a person tidying /run/user, may delete them while it runs).
_REPUBLISH_EVERY: Final = 1.0


# Names a socket is bound under before it is renamed into place, unique in this process.
_unix_binds: Final = itertools.count()


async def _bind_unix(path: Path) -> trio.SocketListener:
    """Listen on a Unix socket at ``path``, replacing in one step whatever is there: a
    socket a crashed host left, or the previous host's, which Chrome replaced with this
    one (this host is the live one)."""
    # Bound under a name of its own, then renamed over the path: the path never lacks a
    # socket, so the previous host, which may run on for a while beside this one, never
    # finds it missing and puts its own back in the moment between (EADDRINUSE here).
    made = path.with_name(f".{os.getpid()}-{next(_unix_binds)}{ENDPOINT_SUFFIX}")
    if max(len(os.fsencode(path)), len(os.fsencode(made))) > MAX_SOCKET_PATH:
        raise PermissionProblem(f"socket path {path} is too long for a Unix socket")
    with contextlib.suppress(FileNotFoundError):
        made.unlink()
    sock = trio.socket.socket(stdlib_socket.AF_UNIX, stdlib_socket.SOCK_STREAM)
    try:
        await sock.bind(os.fspath(made))
        os.chmod(made, 0o600)
        sock.listen(_BACKLOG)
        os.replace(made, path)
    except BaseException:
        sock.close()
        with contextlib.suppress(FileNotFoundError):
            made.unlink()
        raise
    return trio.SocketListener(sock)


async def _bind_tcp(port: int) -> trio.SocketListener:
    """Listen on 127.0.0.1:``port`` (0: a free port the system picks); a port another
    program holds is a `TransportProblem` naming it."""
    sock = trio.socket.socket(stdlib_socket.AF_INET, stdlib_socket.SOCK_STREAM)
    try:
        if sys.platform == "win32":
            # Windows' SO_REUSEADDR would let this socket steal a port in use.
            sock.setsockopt(stdlib_socket.SOL_SOCKET, stdlib_socket.SO_EXCLUSIVEADDRUSE, 1)
        else:
            # A port the previous host left in TIME_WAIT may be taken again; one another
            # program listens on may not (Linux and macOS refuse that bind regardless).
            sock.setsockopt(stdlib_socket.SOL_SOCKET, stdlib_socket.SO_REUSEADDR, 1)
        try:
            await sock.bind((LOOPBACK, port))
        except OSError as exc:
            if exc.errno not in _PORT_TAKEN:
                raise
            raise TransportProblem(
                f"port {port} on {LOOPBACK} is taken by another program or not allowed "
                f"({exc.strerror or exc}); free it, set {LINK_ENV}=tcp:PORT with another "
                f"port, or {LINK_ENV}=tcp for any free one, and restart the browser"
            ) from exc
        sock.listen(_BACKLOG)
    except BaseException:
        sock.close()
        raise
    return trio.SocketListener(sock)


async def _listen(
    transport: Transport, folder: Path, name: str
) -> tuple[trio.SocketListener, LinkAddress]:
    socket_path = folder / (name + ENDPOINT_SUFFIX)
    if transport.kind == "tcp":
        listener = await _bind_tcp(transport.port)
        # The socket this browser's previous host made, on the Unix transport, is gone.
        with contextlib.suppress(FileNotFoundError):
            socket_path.unlink()
        return listener, TcpAddress(listener.socket.getsockname()[1])
    return await _bind_unix(socket_path), socket_path


def _publish(folder: Path, info: EndpointInfo) -> tuple[Path, int]:
    """Write the info file (whole, then renamed into place): its path and inode."""
    info_path = folder / (info.name + INFO_SUFFIX)
    info_tmp = info_path.with_suffix(".tmp")
    fd = os.open(info_tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        json.dump(info.to_json(), file)
    os.replace(info_tmp, info_path)
    return info_path, info_path.lstat().st_ino


@attrs.define
class _Published:
    """The files that make this host's endpoint findable, with the inodes it made, so
    that it removes (or puts back) only its own."""

    info_path: Path
    info_inode: int
    socket_path: Path | None = None
    socket_inode: int | None = None

    def remove(self) -> None:
        if self.socket_path is not None and self.socket_inode is not None:
            _remove_if_ours(self.socket_path, self.socket_inode)
        _remove_if_ours(self.info_path, self.info_inode)


async def _keep_published(
    link: Link,
    folder: Path,
    info: EndpointInfo,
    published: _Published,
    nursery: trio.Nursery,
    *,
    task_status: trio.TaskStatus[trio.CancelScope] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Put the endpoint's files back when they go missing while the host runs: a new
    socket at the same path (served beside the old one, whose clients stay connected)
    and the info file. Stops for good once a newer host of the same browser has taken
    the name over (the info file is there and not ours); the scope it starts with
    stops it when the host begins to shut down."""
    with trio.CancelScope() as keeping:
        task_status.started(keeping)
        while True:
            await trio.sleep(_REPUBLISH_EVERY)
            if _replaced(published.info_path, published.info_inode):
                log.info("a newer host took the endpoint %s over", info.name)
                return
            path = published.socket_path
            if path is not None and not os.path.lexists(path):
                try:
                    listener = await _bind_unix(path)
                except (OSError, PermissionProblem) as exc:
                    log.warning("could not make the link's socket %s again: %s", path, exc)
                else:
                    published.socket_inode = path.lstat().st_ino
                    nursery.start_soon(_serve_closing, link, listener)
                    log.info("the link's socket %s was deleted: listening there again", path)
            if not os.path.lexists(published.info_path):
                try:
                    ensure_private_dir(folder)
                    published.info_path, published.info_inode = _publish(folder, info)
                except (OSError, PermissionProblem) as exc:
                    log.warning("could not write the link's endpoint file again: %s", exc)
                else:
                    log.info("the link's endpoint file was deleted: written again")


def _replaced(path: Path, inode: int) -> bool:
    """Whether ``path`` is there and no longer the file this host made."""
    found = _inode_of(path)
    return found is not None and found != inode


def _inode_of(path: Path) -> int | None:
    """The inode at ``path`` (not followed), or None when nothing is there."""
    try:
        return path.lstat().st_ino
    except OSError:
        return None


async def _serve_closing(link: Link, listener: trio.SocketListener) -> None:
    async with listener:
        await link.serve(listener)


def _remove_if_ours(path: Path, inode: int) -> None:
    """Remove ``path`` unless a newer host has replaced it."""
    if _inode_of(path) == inode:
        with contextlib.suppress(OSError):
            path.unlink()


@contextlib.asynccontextmanager
async def open_link(
    state: HostState,
    panel: SidePanel,
    extension: Outbox,
    origin: str | None,
    *,
    folder: Path | None = None,
    secret_folder: Path | None = None,
    transport: Transport | None = None,
) -> AsyncIterator[Link]:
    """Listen on this browser's endpoint while the host runs: on ``transport``, by
    default the one ``TRIMTAB_LINK`` names (`_transport`).

    Endpoints of hosts that are gone are removed from the folder first. A link that
    cannot be opened (an unsafe folder, a path too long, a port taken) is logged,
    said in the info file when the folder is usable (``problem``, for clients to tell
    the person) and left closed: the side panel's own agent must keep working
    regardless.
    """
    browser, profile = _parent_browser()
    name = endpoint_name(browser, profile, origin)
    info = EndpointInfo(
        name=name,
        browser=browser,
        profile=profile,
        origin=origin,
        pid=os.getpid(),
        version=host_version(),
    )
    folder = endpoint_dir() if folder is None else folder
    published: tuple[Path, int] | None = None
    try:
        secret = read_or_create_secret(state_dir() if secret_folder is None else secret_folder)
        ensure_private_dir(folder)
        removed = prune_stale(folder, keep=name)
        if removed:
            log.info("removed endpoints of hosts that are gone: %s", ", ".join(removed))
        chosen = (
            transport_from(os.environ.get(LINK_ENV), sys.platform)
            if transport is None
            else transport
        )
        info = attrs.evolve(info, transport=chosen.kind)
        listener, address = await _listen(chosen, folder, name)
    except (OSError, PermissionProblem, TransportProblem) as exc:
        log.warning("the link to outside agents is not open: %s", exc)
        problem = str(exc)
        with contextlib.suppress(OSError, PermissionProblem):
            ensure_private_dir(folder)
            published = _publish(folder, attrs.evolve(info, problem=problem))
        try:
            yield Link(state, panel, extension, info, secret="", address=None, problem=problem)
        finally:
            if published is not None:
                _remove_if_ours(*published)
        return
    if isinstance(address, TcpAddress):
        info = attrs.evolve(info, port=address.port)
    link = Link(state, panel, extension, info, secret=secret, address=address)
    kept = _Published(*_publish(folder, info))
    if isinstance(address, Path):
        kept.socket_path, kept.socket_inode = address, address.lstat().st_ino
    log.info("link listening on %s", address)
    try:
        async with listener, trio.open_nursery() as nursery:
            await nursery.start(link.serve, listener)
            keeping = await nursery.start(_keep_published, link, folder, info, kept, nursery)
            try:
                yield link
            finally:
                # A host shutting down no longer puts its endpoint back: a newer host
                # of this browser may be taking it over already.
                keeping.cancel()
                with trio.CancelScope(shield=True):
                    await link.host_exiting()
                nursery.cancel_scope.cancel()
    finally:
        kept.remove()
