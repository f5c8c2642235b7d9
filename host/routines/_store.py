"""The routines folder: one JSON file per routine, in the host's state folder.

A file is named for its routine (``Weekly timesheet`` → ``weekly-timesheet.json``),
written whole or not at all (a temporary file renamed over it), readable by its owner
only. A file a person edited is read like any other, and one that does not parse is
listed with what is wrong with it instead of hiding the others.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

import attrs

from ._files import read_json, write_json
from ._format import Routine, RoutineError, parse_routine

__all__ = ["Listed", "RoutineStore"]

_MAX_FILE: Final = 1 << 20


def file_stem(name: str) -> str:
    """The file name a routine called ``name`` is kept under (without ``.json``)."""
    stem = "-".join(re.findall(r"[a-z0-9]+", name.casefold()))[:60]
    if not stem:
        raise RoutineError(f"routine name {name!r:.60} has no letter or digit to name its file")
    return stem


@attrs.frozen
class Listed:
    """One routine file: the routine, or what is wrong with the file."""

    file: Path
    routine: Routine | None
    problem: str = ""


@attrs.frozen
class RoutineStore:
    """The routines kept in ``folder``."""

    folder: Path

    def path(self, name: str) -> Path:
        return self.folder / f"{file_stem(name)}.json"

    def list(self) -> list[Listed]:
        """Every routine file, by name; a file that cannot be read says why."""
        listed: list[Listed] = []
        if not self.folder.is_dir():
            return listed
        for file in sorted(self.folder.glob("*.json")):
            try:
                listed.append(Listed(file, self._read(file)))
            except RoutineError as exc:
                listed.append(Listed(file, None, str(exc)))
        return listed

    def load(self, name: str) -> Routine:
        """The routine called ``name``; `RoutineError` naming it when there is none or
        its file is wrong."""
        path = self.path(name)
        if not path.is_file():
            known = ", ".join(repr(r.routine.name) for r in self.list() if r.routine) or "none"
            raise RoutineError(f"there is no routine {name!r} (routines: {known})")
        return self._read(path)

    def save(self, routine: Routine, *, replace: bool = False) -> Path:
        """Write ``routine`` to its file; `RoutineError` when one of that name exists
        and ``replace`` is false."""
        path = self.path(routine.name)
        if path.exists() and not replace:
            raise RoutineError(f"a routine {routine.name!r} exists already ({path.name})")
        write_json(path, routine.to_json())
        return path

    def rewrite(self, name: str, routine: Routine) -> Path:
        """Write ``routine``, which was the routine called ``name``, to its file: a
        new name moves it to that name's file; `RoutineError` when another routine
        has that file, or there is no routine ``name``."""
        old = self.path(name)
        if not old.is_file():
            raise RoutineError(f"there is no routine {name!r}")
        new = self.path(routine.name)
        if new != old and new.exists():
            raise RoutineError(
                f"routine name {routine.name!r} is taken: a routine exists already ({new.name})"
            )
        saved = self.save(routine, replace=True)
        if new != old:
            old.unlink(missing_ok=True)
        return saved

    def delete(self, name: str) -> bool:
        """Remove the routine called ``name``; False when there was none."""
        path = self.path(name)
        if not path.is_file():
            return False
        path.unlink()
        return True

    def _read(self, path: Path) -> Routine:
        return parse_routine(read_json(path, _MAX_FILE), where=path.name)
