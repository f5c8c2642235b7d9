"""Where the link lives: a private folder, the endpoints in it, the per-install secret.

The folder is ``$XDG_RUNTIME_DIR/trimtab`` when that variable names an absolute
path (the per-user, per-boot folder systemd makes 0700), else the user's state
folder (``$XDG_STATE_HOME/trimtab``, default ``~/.local/state/trimtab``); on macOS
``~/Library/Application Support/trimtab``. It is never derived from ``TMPDIR``:
a shared temporary folder is where another user could plant a socket first. The
folder is made (or tightened) to 0700 and refused if another user owns it.

One endpoint per browser profile and extension: ``<browser>-<hash>.sock`` with an
``<browser>-<hash>.json`` beside it saying which browser, profile and host process
it belongs to, so that clients can list the browsers they could drive.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import stat
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import attrs

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
    "read_or_create_secret",
    "read_secret",
    "secret_path",
    "state_dir",
]

ENDPOINT_SUFFIX: Final = ".sock"
INFO_SUFFIX: Final = ".json"
SECRET_FILE: Final = "link-secret"
# Unix socket paths are limited to 108 bytes on Linux, 104 on macOS.
MAX_SOCKET_PATH: Final = 100


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


def read_secret(path: Path | None = None) -> str:
    """Read the secret a client presents; it must be a private file of this user."""
    path = secret_path() if path is None else path
    try:
        check_private_file(path)
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
    """What the host writes beside its socket, for clients listing browsers."""

    name: str
    browser: str
    profile: str
    origin: str | None
    pid: int
    version: str

    def to_json(self) -> dict[str, object]:
        return attrs.asdict(self)


@attrs.frozen
class Endpoint:
    """One endpoint found in the folder."""

    socket: Path
    info: EndpointInfo
    alive: bool  # the host process that made it is still running

    @property
    def name(self) -> str:
        return self.info.name


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def list_endpoints(folder: Path | None = None) -> list[Endpoint]:
    """The endpoints in ``folder`` (default `endpoint_dir`), live ones first."""
    folder = endpoint_dir() if folder is None else folder
    found: list[Endpoint] = []
    if not folder.is_dir():
        return found
    for info_path in sorted(folder.glob("*" + INFO_SUFFIX)):
        socket = info_path.with_suffix(ENDPOINT_SUFFIX)
        try:
            raw = json.loads(info_path.read_text(encoding="utf-8"))
            info = EndpointInfo(
                name=str(raw["name"]),
                browser=str(raw["browser"]),
                profile=str(raw["profile"]),
                origin=None if raw.get("origin") is None else str(raw["origin"]),
                pid=int(raw["pid"]),
                version=str(raw.get("version", "")),
            )
        except (OSError, ValueError, KeyError, TypeError):
            continue  # half-written or foreign: not an endpoint we can use
        if not socket.exists():
            continue
        found.append(Endpoint(socket=socket, info=info, alive=_pid_alive(info.pid)))
    found.sort(key=lambda endpoint: (not endpoint.alive, endpoint.name))
    return found
