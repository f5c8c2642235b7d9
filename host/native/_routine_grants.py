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

from collections.abc import Sequence

from ..browser import HostState
from ..routines import Routine, RoutineError, RoutineGrants, grantable, routine_digest
from ..wire import Handler, JSONObject, Request, RequestError

__all__ = ["grant_facts", "grant_from", "grant_handlers"]


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
    sites: Sequence[object],
    unasked: Sequence[object],
    digest: str | None = None,
) -> None:
    """Grant ``routine`` the ``sites`` and the steps ``unasked`` (numbered from 1) the
    person confirmed (none of either: revoke); ``bad_request`` naming what it cannot be
    granted."""
    grants = _grants(state)
    names = [site for site in sites if isinstance(site, str)]
    steps = [n for n in unasked if isinstance(n, int) and not isinstance(n, bool)]
    if len(names) != len(sites) or len(steps) != len(unasked):
        raise RequestError("bad_request", "routine grant: sites are texts, steps are numbers")
    try:
        grants.grant(routine, names, [n - 1 for n in steps], digest=digest)
    except RoutineError as exc:
        raise RequestError("bad_request", str(exc)) from None


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
