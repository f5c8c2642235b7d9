"""The person's lists as files in the host's state folder: written whole, read or set aside."""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

__all__ = ["read_or_set_aside", "write_whole"]

log = logging.getLogger("trimtab.envelope")

T = TypeVar("T")


def write_whole(folder: Path, name: str, data: object) -> None:
    """``data`` as JSON in ``folder/name``: 0600, to a temporary file renamed over the
    old one, so a reader (or a crash) never leaves half of it."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / name
    temporary = path.with_name(f".{name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            json.dump(data, file, indent=1)
            file.write("\n")
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def read_or_set_aside(path: Path, parse: Callable[[object], T], what: str) -> T | None:
    """``parse`` of the JSON in ``path``; None when there is no such file. A file that
    cannot be read or parsed is renamed to ``*.unreadable`` (and logged), so the person
    starts with empty lists rather than no host."""
    try:
        return parse(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:  # SiteError is a ValueError
        log.warning("the %s in %s cannot be read (%s); starting empty", what, path, exc)
        with contextlib.suppress(OSError):
            os.replace(path, path.with_name(path.name + ".unreadable"))
        return None
