"""Opening the link: the endpoint socket and its info file, for as long as the host runs."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket as stdlib_socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import trio

from ..browser import HostState
from ..envelope import SidePanel
from ..wire import Outbox, host_version
from ._paths import (
    ENDPOINT_SUFFIX,
    INFO_SUFFIX,
    MAX_SOCKET_PATH,
    EndpointInfo,
    PermissionProblem,
    endpoint_dir,
    endpoint_name,
    ensure_private_dir,
    read_or_create_secret,
    state_dir,
)
from ._server import Link

__all__ = ["open_link"]

log = logging.getLogger("trimtab.link")


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


async def _bind(path: Path) -> trio.SocketListener:
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        raise PermissionProblem(f"socket path {path} is too long for a Unix socket")
    # A socket left by a host that crashed (or by the previous host of this
    # browser, which Chrome replaced) is taken over: this host is the live one.
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    sock = trio.socket.socket(stdlib_socket.AF_UNIX, stdlib_socket.SOCK_STREAM)
    try:
        await sock.bind(os.fspath(path))
        os.chmod(path, 0o600)
        sock.listen(16)
    except BaseException:
        sock.close()
        raise
    return trio.SocketListener(sock)


def _remove_if_ours(path: Path, inode: int) -> None:
    """Remove ``path`` unless a newer host has replaced it."""
    with contextlib.suppress(OSError):
        if path.lstat().st_ino == inode:
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
) -> AsyncIterator[Link]:
    """Listen on this browser's endpoint while the host runs.

    A link that cannot be opened (an unsafe folder, a path too long) is logged and
    left closed: the side panel's own agent must keep working regardless.
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
    if sys.platform == "win32":  # named pipes are not built yet (README)
        yield Link(state, panel, extension, info, secret="", socket_path=None)
        return
    folder = endpoint_dir() if folder is None else folder
    try:
        secret = read_or_create_secret(state_dir() if secret_folder is None else secret_folder)
        ensure_private_dir(folder)
        socket_path = folder / (name + ENDPOINT_SUFFIX)
        listener = await _bind(socket_path)
    except (OSError, PermissionProblem) as exc:
        log.warning("the link to outside agents is not open: %s", exc)
        yield Link(state, panel, extension, info, secret="", socket_path=None)
        return
    link = Link(state, panel, extension, info, secret=secret, socket_path=socket_path)
    socket_inode = socket_path.lstat().st_ino
    info_path = folder / (name + INFO_SUFFIX)
    info_tmp = info_path.with_suffix(".tmp")
    fd = os.open(info_tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        json.dump(info.to_json(), file)
    os.replace(info_tmp, info_path)
    info_inode = info_path.lstat().st_ino
    log.info("link listening on %s", socket_path)
    try:
        async with listener, trio.open_nursery() as nursery:
            await nursery.start(link.serve, listener)
            try:
                yield link
            finally:
                with trio.CancelScope(shield=True):
                    await link.stop_all("the browser's host is shutting down", "host_exit")
                nursery.cancel_scope.cancel()
    finally:
        _remove_if_ours(socket_path, socket_inode)
        _remove_if_ours(info_path, info_inode)
