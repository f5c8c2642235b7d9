"""From WSL to the browser on Windows: where the Windows host keeps its endpoints.

A coding agent in WSL often drives a Chrome that runs on Windows. The Windows host
listens on loopback TCP and keeps its endpoint info files and the secret in
``%LOCALAPPDATA%\\trimtab``, which WSL sees under the Windows drive's mount
(``/mnt/c/Users/NAME/AppData/Local/trimtab``). The folder is found in this order:

1. ``$LOCALAPPDATA``, when ``WSLENV`` passes it into WSL (``WSLENV=LOCALAPPDATA/p``
   gives a Linux path; without ``/p`` the Windows path ``C:\\Users\\NAME\\AppData\\Local``
   is translated here): ``<it>/trimtab``, and only it;
2. else ``$USERPROFILE`` passed the same way: ``<it>/AppData/Local/trimtab``, and only it;
3. else every ``<mount>/c/Users/NAME/AppData/Local/trimtab`` that holds a link secret;
   when several do, those whose NAME is ``$USER`` (in any case), if one is.

``<mount>`` is ``/etc/wsl.conf``'s ``[automount] root``, ``/mnt/`` by default. The
Windows user name is not asked of Windows (``cmd.exe /c echo %USERNAME%``): that starts
a Windows process on every call, prints a warning from a Linux folder, and fails where
interop is turned off.

The Windows host's process id means nothing in WSL, so whether it still runs is found
by connecting to its port (`_paths`); and the files' modes on the Windows drive mean
nothing either (every file shows as the WSL user's): the Windows folder's own
permissions guard the secret. The connection goes to 127.0.0.1, which reaches Windows
from WSL 1, and from WSL 2 with ``networkingMode=mirrored`` in ``%USERPROFILE%\\.wslconfig``
(WSL 2's default NAT mode keeps its own loopback: `WSL_LOOPBACK_HINT`).

Sans-I/O but for `wsl_state_dirs`, which reads ``/proc`` and ``/etc/wsl.conf``.
"""

from __future__ import annotations

import configparser
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from ._paths import SECRET_FILE

__all__ = [
    "WSL_LOOPBACK_HINT",
    "is_wsl",
    "mount_root",
    "windows_path",
    "windows_state_dirs",
    "wsl_state_dirs",
]

WSL_LOOPBACK_HINT: Final = (
    "WSL 2 reaches Windows' 127.0.0.1 only with networkingMode=mirrored under [wsl2] in "
    "%USERPROFILE%\\.wslconfig (then `wsl --shutdown`); WSL 1 always does"
)
_DEFAULT_MOUNT: Final = Path("/mnt")
# Folders in C:\Users that are no person's.
_NOT_PEOPLE: Final = frozenset({"all users", "default", "default user", "public", "defaultapppool"})
_STATE: Final = ("AppData", "Local", "trimtab")


def is_wsl(environ: Mapping[str, str], osrelease: str) -> bool:
    """Whether this Linux runs in WSL: WSL sets ``WSL_DISTRO_NAME``, and its kernels
    say ``microsoft`` in their release (``5.15.153.1-microsoft-standard-WSL2``)."""
    return bool(environ.get("WSL_DISTRO_NAME")) or "microsoft" in osrelease.lower()


def mount_root(wsl_conf: str | None) -> Path:
    """Where WSL mounts the Windows drives: ``[automount] root`` of ``/etc/wsl.conf``."""
    if not wsl_conf:
        return _DEFAULT_MOUNT
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(wsl_conf)
        root = parser.get("automount", "root", fallback="")
    except configparser.Error:
        return _DEFAULT_MOUNT
    root = root.split("#", 1)[0].strip().strip("\"'")
    return Path(root) if root.startswith("/") else _DEFAULT_MOUNT


def windows_path(text: str, root: Path) -> Path | None:
    """``text`` as a path in WSL: a Linux path as it is (``WSLENV``'s ``/p`` made it
    one), ``C:\\Users\\Ann`` as ``<root>/c/Users/Ann``; None for anything else."""
    if text.startswith("/"):
        return Path(text)
    found = re.fullmatch(r"([A-Za-z]):[\\/]*(.*)", text.strip())
    if found is None:
        return None
    parts = [part for part in re.split(r"[\\/]+", found.group(2)) if part]
    return root.joinpath(found.group(1).lower(), *parts)


def windows_state_dirs(environ: Mapping[str, str], root: Path) -> list[Path]:
    """The Windows host's state folders to look in, in the order of the module's
    docstring (``root``: the drives' mount, `mount_root`)."""
    local = windows_path(environ.get("LOCALAPPDATA", ""), root)
    if local is not None:
        return [local / "trimtab"]
    profile = windows_path(environ.get("USERPROFILE", ""), root)
    if profile is not None:
        return [profile.joinpath(*_STATE)]
    users = root / "c" / "Users"
    try:
        people = sorted(users.iterdir())
    except OSError:
        return []
    found = []
    for person in people:
        if person.name.lower() in _NOT_PEOPLE:
            continue
        folder = person.joinpath(*_STATE)
        try:
            if (folder / SECRET_FILE).is_file():
                found.append(folder)
        except OSError:
            continue  # another Windows user's folder, closed to this one
    user = environ.get("USER", "").lower()
    mine = [folder for folder in found if folder.parents[2].name.lower() == user]
    return mine if len(found) > 1 and mine else found


def wsl_state_dirs(environ: Mapping[str, str] | None = None) -> list[Path]:
    """`windows_state_dirs` when this process runs in WSL, else nothing."""
    if not sys.platform.startswith("linux"):
        return []
    env = os.environ if environ is None else environ
    try:
        osrelease = Path("/proc/sys/kernel/osrelease").read_text(encoding="utf-8")
    except OSError:
        osrelease = ""
    if not is_wsl(env, osrelease):
        return []
    try:
        conf: str | None = Path("/etc/wsl.conf").read_text(encoding="utf-8", errors="replace")
    except OSError:
        conf = None
    return windows_state_dirs(env, mount_root(conf))
