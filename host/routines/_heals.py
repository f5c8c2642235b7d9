"""Heals that wait for the person's yes, kept in a file so that they outlive the host.

A scheduled run heals while the person is away; they read its notification later,
often after Chrome (and with it the host) started again. So the heals waiting to be
kept are not the host's memory alone: they live in `HEALS_FILE` beside the routines'
folder (0600, written whole), each with the session whose run made it and its
number, which never repeats while the file is kept. A file that does not read waits
with no heal (and is logged): the person is asked to keep nothing a broken file says.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import attrs

from ._amend import Amendment, amendment_of
from ._edit import edited_amendment
from ._files import read_json, write_json
from ._format import Routine, RoutineError

__all__ = ["HEALS_FILE", "KEPT_HEALS", "Healed", "WaitingHeals"]

log = logging.getLogger("trimtab.routines")

# Beside the routines' folder, as the grants are: every JSON file in it is a routine.
HEALS_FILE: Final = "routine-heals.json"
# Heals waiting for the person's yes, all sessions together: the oldest go first.
KEPT_HEALS: Final = 20
_VERSION: Final = 1
_MAX_FILE: Final = 4 << 20


@attrs.frozen
class Healed:
    """What caller ``session`` did for the steps its run skipped, as the steps that
    would replace them (``number``: the heal's, for the person's yes)."""

    number: int
    session: str
    amendment: Amendment

    def to_json(self) -> dict[str, object]:
        """The heal as the person confirms it (`Amendment.to_json`), with its number."""
        return {"id": self.number, **self.amendment.to_json()}


@attrs.define
class WaitingHeals:
    """The heals waiting for the person's yes, by number, kept in ``file`` (None: in
    memory only)."""

    file: Path | None = None
    _waiting: dict[int, Healed] = attrs.field(factory=dict, init=False)
    _made: int = attrs.field(default=0, init=False)  # the last heal's number

    @classmethod
    def load(cls, file: Path | None) -> WaitingHeals:
        """The heals kept in ``file`` (none when it is absent or does not read)."""
        heals = cls(file)
        if file is None or not file.is_file():
            return heals
        try:
            heals._made, heals._waiting = _parse(read_json(file, _MAX_FILE))
        except RoutineError as exc:
            log.warning("the heals waiting in %s were not read: %s", file, exc)
        return heals

    def __len__(self) -> int:
        return len(self._waiting)

    def add(self, session: str, amendment: Amendment) -> Healed:
        """Keep ``amendment``, made by ``session``'s run, for the person's yes: the heal
        under its new number (the oldest heal goes past `KEPT_HEALS`)."""
        self._made += 1
        healed = Healed(self._made, session, amendment)
        self._waiting[healed.number] = healed
        while len(self._waiting) > KEPT_HEALS:
            del self._waiting[next(iter(self._waiting))]
        self.save()
        return healed

    def get(self, number: int, session: str) -> Healed | None:
        """Heal ``number`` when ``session``'s run made it and it still waits."""
        healed = self._waiting.get(number)
        return healed if healed is not None and healed.session == session else None

    def of_routine(self, name: str) -> list[Healed]:
        """The heals waiting for routine ``name``, oldest first."""
        return [h for h in self._waiting.values() if h.amendment.routine == name]

    def remove(self, number: int) -> None:
        """Heal ``number`` no longer waits (it was kept)."""
        if self._waiting.pop(number, None) is not None:
            self.save()

    def follow(self, before: Routine, after: Routine) -> None:
        """The person edited routine ``before`` into ``after``: its heals go with its
        name, and use its parameters by their new names (`edited_amendment`)."""
        followed = False
        for number, healed in self._waiting.items():
            if healed.amendment.routine == before.name:
                amendment = edited_amendment(healed.amendment, before, after)
                self._waiting[number] = attrs.evolve(healed, amendment=amendment)
                followed = True
        if followed:
            self.save()

    def save(self) -> None:
        """Write every waiting heal to ``file`` (`write_json`: whole, private)."""
        if self.file is None:
            return
        data = {
            "version": _VERSION,
            "made": self._made,
            "heals": [
                {"id": h.number, "session": h.session, **h.amendment.to_data()}
                for h in self._waiting.values()
            ],
        }
        write_json(self.file, data)


def _parse(data: object) -> tuple[int, dict[int, Healed]]:
    if not isinstance(data, Mapping) or data.get("version") != _VERSION:
        raise RoutineError(f"not a version {_VERSION} heals file")
    made, raw = data.get("made"), data.get("heals")
    if not isinstance(made, int) or isinstance(made, bool) or made < 0:
        raise RoutineError(f"field 'made' = {made!r:.40} is not a count")
    if not isinstance(raw, list):
        raise RoutineError("field 'heals' is not a list")
    waiting: dict[int, Healed] = {}
    for i, heal in enumerate(raw):
        where = f"heal {i + 1}"
        if not isinstance(heal, Mapping):
            raise RoutineError(f"{where}: {heal!r:.60} is not an object")
        number, session = heal.get("id"), heal.get("session")
        if not isinstance(number, int) or isinstance(number, bool) or not 0 < number <= made:
            raise RoutineError(f"{where}: field 'id' = {number!r:.40} is not a heal's number")
        if not isinstance(session, str) or not session:
            raise RoutineError(f"{where}: field 'session' = {session!r:.60} is not a session")
        waiting[number] = Healed(number, session, amendment_of(heal, where=where))
    return made, waiting
