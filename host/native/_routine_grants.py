"""The person's grants for a routine, made in the side panel: the sites its runs may act
on without asking, and the steps whose submit they need not ask about.

Only this door makes them (the person is at the side panel): the link, ``trimtab
mcp`` and the command line have no request that grants anything. A grant is made as
the routine is saved (``routine_save``'s ``grant``, bound to the very routine written)
or from the Routines list (``routine_grant``, which names the routine's ``digest`` as
the panel showed it: a routine that changed since is refused, never granted unseen).
What is offered (`grant_facts`) is what the routine's steps show: their sites, and the
submits the host predicted when it was recorded.
"""

from __future__ import annotations

from typing import TypeVar

from ..browser import HostState
from ..routines import Routine, RoutineError, RoutineGrants, grantable, routine_digest
from ..wire import Handler, JSONObject, Request, RequestError

__all__ = ["grant_facts", "grant_from", "grant_handlers"]

T = TypeVar("T")


def grant_handlers(state: HostState) -> dict[str, Handler]:
    """The ``routine_grant`` request of the side panel."""

    async def routine_grant(request: Request) -> JSONObject:
        name: str = request.get("name", str)
        digest: str = request.get("digest", str)
        try:
            routine = state.routine_store().load(name)
        except RoutineError as exc:
            raise RequestError("bad_request", str(exc)) from None
        grant_from(state, routine, request.get("sites", list), request.get("unasked", list), digest)
        return grant_facts(state, routine)

    return {"routine_grant": routine_grant}


def grant_from(
    state: HostState,
    routine: Routine,
    sites: object,
    unasked: object,
    digest: str | None = None,
    *,
    keep: bool = True,
) -> None:
    """Grant ``routine`` the ``sites`` and the steps ``unasked`` (numbered from 1) the
    person confirmed (none of either: revoke); without ``keep``, only check that it
    could be. ``bad_request`` naming what it cannot be granted."""
    grants = _grants(state)
    names = _all(sites, str)
    steps = _all(unasked, int)
    if names is None or steps is None:
        raise RequestError(
            "bad_request",
            f"routine grant: sites = {sites!r:.60} and unasked = {unasked!r:.60} must be "
            "lists of sites and of step numbers",
        )
    try:
        if keep:
            grants.grant(routine, names, [n - 1 for n in steps], digest=digest)
        else:
            grants.check(routine, names, [n - 1 for n in steps])
    except RoutineError as exc:
        raise RequestError("bad_request", str(exc)) from None


def _all(raw: object, kind: type[T]) -> list[T] | None:
    """``raw`` when it is a list of ``kind`` (not of booleans), else None."""
    if not isinstance(raw, list):
        return None
    found = [item for item in raw if isinstance(item, kind) and not isinstance(item, bool)]
    return found if len(found) == len(raw) else None


def grant_facts(state: HostState, routine: Routine) -> JSONObject:
    """What the panel shows of a routine's grants: its digest, what it can be granted
    (its sites; the steps that asked before a submit, with where it went) and what the
    person granted (``state``: granted, lapsed when the file changed since, or none;
    with the choices that still apply, to confirm again)."""
    can = grantable(routine)
    grants = state.grants
    chosen = grants.chosen(routine) if grants is not None else None
    return {
        "digest": routine_digest(routine),
        "grantable": {
            "sites": list(can.sites),
            "submits": [
                {
                    "step": i + 1,
                    "action": form.action,
                    "site": form.site,
                    "method": form.method,
                    "words": routine.steps[i].words(),
                }
                for i, form in sorted(can.submits.items())
            ],
        },
        "grants": {
            "state": grants.state(routine) if grants is not None else "none",
            "sites": list(chosen.sites) if chosen is not None else [],
            "unasked": sorted(i + 1 for i in chosen.unasked) if chosen is not None else [],
        },
    }


def _grants(state: HostState) -> RoutineGrants:
    if state.grants is None:
        raise RequestError("bad_request", "this host keeps no routines (no state folder)")
    return state.grants
