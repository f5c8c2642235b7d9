"""The profile folders ``trimtab install --user-data-dir`` registered the host in.

A browser started with ``--user-data-dir=DIR`` reads native-messaging manifests from
``DIR/NativeMessagingHosts`` only, not from the browser's own config folder, so
``trimtab doctor`` must look there. While the browser runs, the host's endpoint says
which profile it is; when it does not, this record, kept in the host's state folder
(``installed-profiles.json``), still does.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Final

from ..link import state_dir

__all__ = ["forget_profile", "installed_profiles", "remember_profile"]

_RECORD: Final = "installed-profiles.json"


def _record() -> Path:
    return state_dir() / _RECORD


def installed_profiles() -> list[Path]:
    """The profile folders recorded, in the order they were installed; an unreadable
    record is none (it only ever adds checks)."""
    try:
        data = json.loads(_record().read_text(encoding="utf-8"))
        return [Path(str(folder)) for folder in data["profiles"]]
    except (OSError, ValueError, KeyError, TypeError):
        return []


def _write(profiles: list[Path]) -> None:
    path = _record()
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_name(path.name + ".tmp")
        text = json.dumps({"profiles": [str(folder) for folder in profiles]}, indent=1)
        tmp.write_text(text + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        # The manifest is written: only doctor's hint is lost.
        print(f"trimtab: could not record the profile in {path}: {exc}", file=sys.stderr)


def remember_profile(profile: Path) -> None:
    """Record ``profile`` (resolved, as the installer wrote it) after an install."""
    folder = profile.resolve()
    known = installed_profiles()
    if folder not in known:
        _write([*known, folder])


def forget_profile(profile: Path) -> None:
    """Drop ``profile`` from the record after an uninstall."""
    folder = profile.resolve()
    known = installed_profiles()
    if folder in known:
        _write([entry for entry in known if entry != folder])
