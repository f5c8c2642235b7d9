"""The person's grants for a routine: sites its runs may act on without asking, and the
steps whose submit they need not ask about ("don't ask again for this routine").

Grants are the person's: the side panel alone makes them, never a routine's file nor
whoever wrote it. They are kept apart from the routines, in a file of the host's
(`GRANTS_FILE`: 0600, written whole), each bound to the routine as it was when the
person granted it (`routine_digest`: a digest of everything its file says). When the
file changes in any way (edited by hand, saved over by an outside agent, a healed step
written back), the digest no longer matches: its grants lapse (`RoutineGrants.valid`
is None) and the Routines list says they need confirming again.

What can be granted is what the routine's steps show (`grantable`): the sites of the
pages they act on and leave, and of the frames of other sites they acted in; and, for
a step that asked before a submit when it was recorded, that submit, as the host
predicted it then (`SubmitForm`). A run skips that step's question only when the
host's prediction of this submit matches it.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Final, Literal

import attrs

from ..sites import Site, SiteError, parse_site, site_of
from ._files import read_json, write_json
from ._format import Routine, RoutineError
from ._pages import SubmitForm

__all__ = [
    "GRANTS_FILE",
    "Grant",
    "GrantState",
    "Grantable",
    "RoutineGrants",
    "grantable",
    "routine_digest",
]

log = logging.getLogger("trimtab.routines")

# Beside the routines' folder, not in it: a routine named "Grants" would be saved over
# a file in it, and every JSON file there is listed as a routine.
GRANTS_FILE: Final = "routine-grants.json"
_VERSION: Final = 1
_MAX_FILE: Final = 1 << 20

GrantState = Literal["none", "granted", "lapsed"]


def routine_digest(routine: Routine) -> str:
    """A digest of everything the routine's file says (its name, start page,
    parameters and steps), which any change to the file changes."""
    text = json.dumps(routine.to_json(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@attrs.frozen
class Grantable:
    """What the person may grant a routine: the sites its steps act on, and the steps
    (0-based) that asked before a submit when it was recorded, with that submit."""

    sites: tuple[str, ...]
    submits: Mapping[int, SubmitForm]


def grantable(routine: Routine) -> Grantable:
    """The sites of the routine's start page, of each step's page and the page it
    left, and of the frames of other sites it acted in; the steps that submitted a
    form the host predicted."""
    sites: set[str] = set()
    for url in (routine.start, *(u for step in routine.steps for u in (step.page, step.after))):
        site = site_of(url) if url else None
        if site is not None and not site.opaque:
            sites.add(str(site))
    sites.update(frame for step in routine.steps for frame in step.frames)
    submits = {i: step.submits for i, step in enumerate(routine.steps) if step.submits}
    return Grantable(tuple(sorted(sites)), submits)


@attrs.frozen
class Grant:
    """The person's grants for one routine as its file was (``digest``): the sites its
    run may act on, and the steps (0-based) that may submit unasked, each with the
    submit it was marked for."""

    digest: str
    sites: tuple[str, ...] = ()
    unasked: Mapping[int, SubmitForm] = attrs.field(factory=dict)

    def allowed_sites(self) -> frozenset[Site]:
        return frozenset(parse_site(site) for site in self.sites)

    def to_json(self) -> dict[str, object]:
        return {
            "digest": self.digest,
            "sites": list(self.sites),
            "unasked": [
                {"step": i + 1, "action": form.action, "method": form.method}
                for i, form in sorted(self.unasked.items())
            ],
        }


@attrs.define
class RoutineGrants:
    """The grants of every routine, by its name, kept in ``file`` (None: in memory)."""

    file: Path | None = None
    _grants: dict[str, Grant] = attrs.field(factory=dict, init=False)

    @classmethod
    def load(cls, file: Path | None) -> RoutineGrants:
        """The grants kept in ``file``; a file that does not read grants nothing (and is
        logged): the person grants again, nothing is allowed by a file gone wrong."""
        grants = cls(file)
        if file is None or not file.is_file():
            return grants
        try:
            grants._grants = _parse(read_json(file, _MAX_FILE))
        except RoutineError as exc:
            log.warning("the routines' grants in %s were not read: %s", file, exc)
        return grants

    def state(self, routine: Routine) -> GrantState:
        """Whether ``routine`` has grants that hold, grants that lapsed when its file
        changed, or none."""
        grant = self._grants.get(routine.name)
        if grant is None:
            return "none"
        return "granted" if grant.digest == routine_digest(routine) else "lapsed"

    def valid(self, routine: Routine) -> Grant | None:
        """The grants a run of ``routine`` as its file is now may use, if any."""
        grant = self._grants.get(routine.name)
        return grant if grant is not None and grant.digest == routine_digest(routine) else None

    def chosen(self, routine: Routine) -> Grant | None:
        """What the person granted ``routine`` last, whether it holds or lapsed, less what
        the routine as it is now could not be granted (a site it no longer acts on, a
        mark on a step that now submits elsewhere): what the panel offers to confirm."""
        grant = self._grants.get(routine.name)
        if grant is None:
            return None
        can = grantable(routine)
        return Grant(
            grant.digest,
            tuple(site for site in grant.sites if site in can.sites),
            {i: form for i, form in grant.unasked.items() if can.submits.get(i) == form},
        )

    def grant(
        self,
        routine: Routine,
        sites: Iterable[str],
        unasked: Iterable[int],
        *,
        digest: str | None = None,
    ) -> Grant | None:
        """The person's grants for ``routine`` as its file is now: ``sites`` its runs may
        act on, and the steps (0-based) in ``unasked`` whose submit they need not ask
        about. Nothing in both: the grants are revoked (None). `RoutineError` naming a
        site or step the routine cannot be granted, or when ``digest`` (the routine as
        the person saw it) is not the routine's now."""
        now = routine_digest(routine)
        if digest is not None and digest != now:
            raise RoutineError(
                f"routine {routine.name!r} changed since it was shown; look at it again "
                "before you allow anything"
            )
        grant = self.check(routine, sites, unasked)
        if not grant.sites and not grant.unasked:
            self.revoke(routine.name)
            return None
        self._grants[routine.name] = grant
        self.save()
        return grant

    def check(self, routine: Routine, sites: Iterable[str], unasked: Iterable[int]) -> Grant:
        """The grant ``sites`` and ``unasked`` make for ``routine``, kept nowhere;
        `RoutineError` naming a site or step the routine cannot be granted."""
        can = grantable(routine)
        chosen: list[str] = []
        for raw in sites:
            try:
                site = str(parse_site(raw))
            except SiteError as exc:
                raise RoutineError(f"routine {routine.name!r}: {exc}") from None
            if site not in can.sites:
                raise RoutineError(
                    f"routine {routine.name!r} does not act on {site} "
                    f"(its sites: {', '.join(can.sites) or 'none'})"
                )
            chosen.append(site)
        marked: dict[int, SubmitForm] = {}
        for index in unasked:
            form = can.submits.get(index)
            if form is None:
                raise RoutineError(
                    f"routine {routine.name!r}: step {index + 1} asked before no submit when "
                    "it was recorded; only such a step can skip its question"
                )
            marked[index] = form
        return Grant(routine_digest(routine), tuple(sorted(set(chosen))), marked)

    def rename(self, old: str, new: str) -> None:
        """The routine called ``old`` is now called ``new``: its grants go with it
        (lapsed, as its file changed: the person confirms them again)."""
        grant = self._grants.pop(old, None)
        if grant is not None:
            self._grants[new] = grant
            self.save()

    def revoke(self, name: str) -> bool:
        """Drop the grants of the routine called ``name``; False when it had none."""
        if self._grants.pop(name, None) is None:
            return False
        self.save()
        return True

    def save(self) -> None:
        """Write every grant to ``file`` (`write_json`: whole, private)."""
        if self.file is None:
            return
        data = {
            "version": _VERSION,
            "routines": {name: grant.to_json() for name, grant in sorted(self._grants.items())},
        }
        write_json(self.file, data)


def _parse(data: object) -> dict[str, Grant]:
    if not isinstance(data, Mapping) or data.get("version") != _VERSION:
        raise RoutineError(f"not a version {_VERSION} grants file")
    routines = data.get("routines")
    if not isinstance(routines, Mapping):
        raise RoutineError("field 'routines' is not an object")
    return {str(name): _grant(raw, str(name)) for name, raw in routines.items()}


def _grant(raw: object, name: str) -> Grant:
    if not isinstance(raw, Mapping):
        raise RoutineError(f"routine {name!r}: {raw!r:.60} is not an object")
    digest, sites, unasked = raw.get("digest"), raw.get("sites"), raw.get("unasked")
    if not isinstance(digest, str) or not isinstance(sites, list) or not isinstance(unasked, list):
        raise RoutineError(f"routine {name!r}: digest, sites or unasked is missing")
    marked: dict[int, SubmitForm] = {}
    for mark in unasked:
        step = mark.get("step") if isinstance(mark, Mapping) else None
        action = mark.get("action") if isinstance(mark, Mapping) else None
        method = mark.get("method") if isinstance(mark, Mapping) else None
        if not isinstance(step, int) or step < 1 or not isinstance(action, str):
            raise RoutineError(f"routine {name!r}: {mark!r:.60} is not a step's mark")
        if not isinstance(method, str):
            raise RoutineError(f"routine {name!r}: {mark!r:.60} names no method")
        marked[step - 1] = SubmitForm(action, method)
    try:
        allowed = tuple(str(parse_site(site)) for site in sites)
    except SiteError as exc:
        raise RoutineError(f"routine {name!r}: {exc}") from None
    return Grant(digest, allowed, marked)
