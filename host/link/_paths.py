"""Where the link lives: a private folder, the endpoints in it, the per-install secret.

The folder is ``$XDG_RUNTIME_DIR/trimtab`` when that variable names an absolute
path (the per-user, per-boot folder systemd makes 0700), else the user's state
folder (``$XDG_STATE_HOME/trimtab``, default ``~/.local/state/trimtab``); on macOS
``~/Library/Application Support/trimtab``. It is never derived from ``TMPDIR``:
a shared temporary folder is where another user could plant a socket first. The
folder is made (or tightened) to 0700 and refused if another user owns it.

One endpoint per browser profile and extension: ``<browser>-<hash>.json``, the info
file, says which browser, profile and host process it belongs to and how to reach it
(`_transport`): beside it the Unix socket ``<browser>-<hash>.sock``, or a port on
127.0.0.1; so that clients can list the browsers they could drive. A host that could
not open its link says why there (``problem``), for clients to tell the person.

A host that crashed leaves its files behind: `prune_stale` (called by each host as
it opens its link) removes those whose process is gone or whose socket or port no
longer answers, and clients pick live endpoints only. On Windows the folder is the
user's own (``%LOCALAPPDATA%``): its permissions are Windows', not a mode.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import socket
import stat
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import attrs

from ._transport import LinkAddress, TcpAddress

__all__ = [
    "ENDPOINT_SUFFIX",
    "Endpoint",
    "EndpointInfo",
    "PermissionProblem",
    "SecretMissing",
    "endpoint_dir",
    "endpoint_name",
    "ensure_private_dir",
    "list_endpoints",
    "prune_stale",
    "read_or_create_secret",
    "read_secret",
    "secret_of",
    "secret_path",
    "state_dir",
]

ENDPOINT_SUFFIX: Final = ".sock"
INFO_SUFFIX: Final = ".json"
SECRET_FILE: Final = "link-secret"
# Unix socket paths are limited to 108 bytes on Linux, 104 on macOS.
MAX_SOCKET_PATH: Final = 100
# A socket with no info file beside it may be a host between its bind and its info
# file: one is taken for a crash's leftover only once it is this old.
ORPHAN_AGE: Final = 30.0
# How long a look at whether an endpoint still answers may take.
_PROBE_TIMEOUT: Final = 1.0


class PermissionProblem(Exception):
    """A link folder or file that others could read or write, or that another user owns."""


class SecretMissing(FileNotFoundError):
    """No secret file: no host has started for this user yet, or it was removed."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"no link secret at {path}; the browser's host writes it when it starts: open "
            "the browser with the Trimtab extension loaded"
        )
        self.path = path


def state_dir(environ: Mapping[str, str] | None = None, platform: str | None = None) -> Path:
    """The host's state folder, where the secret is kept."""
    env = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    if platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "trimtab"
    if platform == "win32":
        local = env.get("LOCALAPPDATA")
        return (Path(local) if local else Path.home() / "AppData" / "Local") / "trimtab"
    state = env.get("XDG_STATE_HOME")
    # The XDG spec says a relative path there is invalid and must be ignored.
    base = Path(state) if state and os.path.isabs(state) else Path.home() / ".local" / "state"
    return base / "trimtab"


def endpoint_dir(environ: Mapping[str, str] | None = None, platform: str | None = None) -> Path:
    """The private folder the endpoints are made in (never under ``TMPDIR``)."""
    env = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    runtime = env.get("XDG_RUNTIME_DIR")
    if platform not in ("darwin", "win32") and runtime and os.path.isabs(runtime):
        return Path(runtime) / "trimtab"
    return state_dir(env, platform)


def secret_path(environ: Mapping[str, str] | None = None) -> Path:
    return state_dir(environ) / SECRET_FILE


def ensure_private_dir(path: Path) -> Path:
    """Make ``path`` (and its parents) and leave it 0700 and ours, or refuse it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode):
        raise PermissionProblem(f"{path} is not a folder (a symlink or a file is in its place)")
    if sys.platform == "win32":
        return path  # inside the user's own %LOCALAPPDATA%: Windows' permissions guard it
    if info.st_uid != os.getuid():
        raise PermissionProblem(f"{path} belongs to user id {info.st_uid}, not to this user")
    if stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(path, 0o700)
    return path


def check_private_file(path: Path, mode: int = 0o600) -> None:
    """Refuse a file that is not ours, or that others may read or write."""
    info = path.lstat()
    if not stat.S_ISREG(info.st_mode) and not stat.S_ISSOCK(info.st_mode):
        raise PermissionProblem(f"{path} is not a regular file or socket")
    if sys.platform == "win32":
        return
    if info.st_uid != os.getuid():
        raise PermissionProblem(f"{path} belongs to user id {info.st_uid}, not to this user")
    actual = stat.S_IMODE(info.st_mode)
    if actual & ~mode:
        raise PermissionProblem(f"{path} has mode {actual:04o}; it must be {mode:04o}")


def read_or_create_secret(folder: Path) -> str:
    """The per-install secret in ``folder`` (created 0600 on first use)."""
    ensure_private_dir(folder)
    path = folder / SECRET_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return read_secret(path)
    with os.fdopen(fd, "w", encoding="ascii") as file:
        file.write(secrets.token_hex(32))
    return read_secret(path)


def read_secret(path: Path | None = None, *, private: bool = True) -> str:
    """Read the secret a client presents; it must be a private file of this user
    (``private=False``: a Windows host's, read from WSL, where modes mean nothing)."""
    path = secret_path() if path is None else path
    try:
        if private:
            check_private_file(path)
        elif not path.is_file():
            raise FileNotFoundError(path)
    except FileNotFoundError:
        raise SecretMissing(path) from None
    text = path.read_text(encoding="ascii").strip()
    if not re.fullmatch(r"[0-9a-f]{64}", text):
        raise PermissionProblem(f"{path} does not hold a secret of 64 hex digits")
    return text


def endpoint_name(browser: str, profile: str, origin: str | None) -> str:
    """``<browser>-<8 hex>``: one name per browser, profile and extension."""
    safe = re.sub(r"[^a-z0-9]+", "-", browser.lower()).strip("-")[:24] or "browser"
    digest = hashlib.sha256(f"{profile}\0{origin or ''}".encode()).hexdigest()[:8]
    return f"{safe}-{digest}"


@attrs.frozen
class EndpointInfo:
    """What the host writes in its info file, for clients listing browsers."""

    name: str
    browser: str
    profile: str
    origin: str | None
    pid: int
    version: str
    transport: str = "unix"  # "unix": the socket beside the file; "tcp": `port` on 127.0.0.1
    port: int | None = None
    problem: str | None = None  # why the host could not open its link (then no address)

    def to_json(self) -> dict[str, object]:
        return attrs.asdict(self)


@attrs.frozen
class Endpoint:
    """One endpoint found in a folder."""

    info: EndpointInfo
    address: LinkAddress | None  # None: its host could not open it (``info.problem``)
    alive: bool  # the host process that made it is still running (or its port answers)
    secret_file: Path  # the secret its host checks
    windows: bool = False  # a Windows host's, found from WSL (`_wsl`)

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def socket(self) -> LinkAddress | None:
        """The address (a Unix socket's path before TCP came), for older callers."""
        return self.address


def secret_of(endpoint: Endpoint, path: Path | None = None) -> str:
    """The secret to present to ``endpoint`` (read from ``path`` when given)."""
    return read_secret(path or endpoint.secret_file, private=not endpoint.windows)


def _pid_alive(pid: int) -> bool:
    if sys.platform == "win32":
        return _windows_pid_alive(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _windows_pid_alive(pid: int) -> bool:
    """On Windows ``os.kill(pid, 0)`` would send CTRL_C_EVENT: ask the kernel instead."""
    if sys.platform == "win32":
        import ctypes
        from ctypes import wintypes

        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        kernel32.OpenProcess.restype = wintypes.HANDLE
        kernel32.OpenProcess.argtypes = (wintypes.DWORD, wintypes.BOOL, wintypes.DWORD)
        # PROCESS_QUERY_LIMITED_INFORMATION: enough to read the exit code.
        handle = kernel32.OpenProcess(0x1000, False, pid)
        if not handle:
            return ctypes.get_last_error() == 5  # ERROR_ACCESS_DENIED: it runs, as another user
        try:
            code = wintypes.DWORD()
            if not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)):
                return True
            return code.value == 259  # STILL_ACTIVE: it runs
        finally:
            kernel32.CloseHandle(handle)
    raise OSError("a Windows process id is looked up on Windows only")


def _refuses(address: LinkAddress) -> bool:
    """Whether nothing listens at ``address`` any more (a connection is refused, or the
    socket file is gone); anything else (it answers, a timeout) is taken as alive."""
    target: tuple[str, int] | str
    if isinstance(address, TcpAddress):
        probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        target = (address.host, address.port)
    else:
        unix = getattr(socket, "AF_UNIX", None)
        if unix is None:
            return False  # no Unix sockets here (Windows): nothing to tell
        probe = socket.socket(unix, socket.SOCK_STREAM)
        target = os.fspath(address)
    with probe:
        probe.settimeout(_PROBE_TIMEOUT)
        try:
            probe.connect(target)
        except (ConnectionRefusedError, FileNotFoundError):
            return True
        except OSError:
            return False
    return False


def _read_info(path: Path) -> EndpointInfo | None:
    """The info file at ``path``, or None for one half-written or not an endpoint's
    (on macOS and Windows the folder also holds the state's other JSON files)."""
    try:
        raw: Any = json.loads(path.read_text(encoding="utf-8"))
        info = EndpointInfo(
            name=str(raw["name"]),
            browser=str(raw["browser"]),
            profile=str(raw["profile"]),
            origin=None if raw.get("origin") is None else str(raw["origin"]),
            pid=int(raw["pid"]),
            version=str(raw.get("version", "")),
            transport=str(raw.get("transport") or "unix"),
            port=None if raw.get("port") is None else int(raw["port"]),
            problem=None if raw.get("problem") is None else str(raw["problem"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if info.name != path.stem or info.transport not in ("unix", "tcp"):
        return None
    return info


def _address_of(info: EndpointInfo, folder: Path) -> LinkAddress | None:
    """Where the endpoint of ``info`` is reached, or None when there is nothing to reach."""
    if info.problem is not None:
        return None
    if info.transport == "tcp":
        return TcpAddress(info.port) if info.port is not None and 0 < info.port < 65536 else None
    socket_path = folder / (info.name + ENDPOINT_SUFFIX)
    return socket_path if socket_path.exists() else None


def list_endpoints(
    folder: Path | None = None, *, secret_file: Path | None = None, windows: bool = False
) -> list[Endpoint]:
    """The endpoints in ``folder`` (default `endpoint_dir`), live ones first; their
    secret is ``secret_file`` (default `secret_path`). ``windows``: the folder is a
    Windows host's seen from WSL, where a process id tells nothing: an endpoint is
    alive while its port answers."""
    folder = endpoint_dir() if folder is None else folder
    secret_file = secret_path() if secret_file is None else secret_file
    found: list[Endpoint] = []
    if not folder.is_dir():
        return found
    for info_path in sorted(folder.glob("*" + INFO_SUFFIX)):
        info = _read_info(info_path)
        if info is None:
            continue
        address = _address_of(info, folder)
        if address is None and info.problem is None:
            continue  # its socket is gone: nothing to reach
        if windows:
            if not isinstance(address, TcpAddress) and info.problem is None:
                continue  # a Unix socket on the Windows drive: not reachable from here
            alive = address is None or not _refuses(address)
        else:
            alive = _pid_alive(info.pid)
        found.append(Endpoint(info, address, alive, secret_file, windows))
    found.sort(key=lambda endpoint: (not endpoint.alive, endpoint.name))
    return found


def prune_stale(folder: Path, *, keep: str, now: float | None = None) -> list[str]:
    """Remove the endpoints in ``folder`` whose host is gone (a crash leaves them):
    an info file whose process no longer runs, or whose socket or port no longer
    answers (its process id went to another program), with its socket; and a socket
    with no info file, once `ORPHAN_AGE` old, that refuses connections. ``keep`` (the
    caller's own name) is left alone. Returns the names removed."""
    now = time.time() if now is None else now
    removed: set[str] = set()
    for info_path in sorted(folder.glob("*" + INFO_SUFFIX)):
        info = _read_info(info_path)
        if info is None or info.name == keep:
            continue
        address = _address_of(info, folder)
        if _pid_alive(info.pid) and (address is None or not _refuses(address)):
            continue
        with contextlib.suppress(FileNotFoundError):
            info_path.unlink()
        with contextlib.suppress(FileNotFoundError):
            (folder / (info.name + ENDPOINT_SUFFIX)).unlink()
        removed.add(info.name)
    for socket_path in sorted(folder.glob("*" + ENDPOINT_SUFFIX)):
        name = socket_path.stem
        if name == keep or name in removed or socket_path.with_suffix(INFO_SUFFIX).exists():
            continue
        try:
            made = socket_path.lstat()
        except FileNotFoundError:
            continue
        if not stat.S_ISSOCK(made.st_mode) or now - made.st_mtime < ORPHAN_AGE:
            continue
        if _refuses(socket_path):
            with contextlib.suppress(FileNotFoundError):
                socket_path.unlink()
            removed.add(name)
    return sorted(removed)
