"""The routines' files on disk, read and written one way: each JSON, bounded in size
when read, and written whole and private (0600 in a 0700 folder; a temporary file
renamed over the old one, so a crash leaves the old file or the new, never half)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ._format import RoutineError

__all__ = ["read_json", "write_json"]


def read_json(path: Path, limit: int) -> object:
    """The JSON of the file at ``path``; `RoutineError` naming the file when it cannot
    be read, is larger than ``limit`` bytes or is not JSON."""
    try:
        with path.open("rb") as file:
            raw = file.read(limit + 1)
    except OSError as exc:
        raise RoutineError(f"{path.name}: cannot be read ({exc.strerror})") from None
    if len(raw) > limit:
        raise RoutineError(f"{path.name}: is larger than {limit} bytes")
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RoutineError(f"{path.name}: is not JSON ({exc})") from None


def write_json(path: Path, data: object) -> None:
    """Write ``data`` to ``path`` as indented JSON, whole and readable by its owner
    alone."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_name(path.name + ".tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    os.replace(temporary, path)
