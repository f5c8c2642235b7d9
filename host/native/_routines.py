"""The side panel's routine requests: list, save (or preview) a finished task as one,
delete one, run one in a tab, keep what was done where a run needed help, edit one's
names and parameters.

A run is a side panel task like any other (`HostState.run_routine`): its steps are
tool calls of the panel's session through the envelope, asked about in the side
panel during the call. The panel shows what it gets through ``textContent`` and puts
page words in its own untrusted block before a model reads them, so the answers here
are plain fields: a step's words (``plan``, ``why``) and a read's ``results`` quote
pages.

A run that goes on after the step it stopped at answers with ``healed``: what the
run's session did for that step, as the steps that would replace it; nothing is
written until the person says to keep it (``routine_amend``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ..browser import HostState, ToolCall, budget_of, check_tab_id
from ..envelope import SidePanel
from ..routines import Routine, RoutineError, routine_of
from ..wire import Handler, JSONObject, Request, RequestError
from ._routine_grants import grant_facts, grant_from

__all__ = ["ROUTINE_CLIENT", "routine_handlers"]

#: Who asks, in a run's questions: Trimtab's words, never the routine's own name.
ROUTINE_CLIENT: Final = "Trimtab routine"
#: The longest routine name the panel may give (the link's limit too).
MAX_NAME: Final = 100
#: The longest tab group title the host passes on (as for the panel's `tool`).
GROUP_TITLE_CHARS: Final = 60


def routine_handlers(state: HostState, panel: SidePanel) -> dict[str, Handler]:
    """The ``routines``, ``routine_save``, ``routine_delete``, ``routine_run``,
    ``routine_amend`` and ``routine_edit`` requests of the side panel."""

    async def routines(request: Request) -> JSONObject:
        del request
        listed: list[JSONObject] = []
        problems: list[JSONObject] = []
        for entry in state.routine_store().list():
            if entry.routine is None:
                problems.append({"file": entry.file.name, "problem": entry.problem})
            else:
                listed.append(
                    {
                        **described(entry.routine),
                        "file": entry.file.name,
                        **grant_facts(state, entry.routine),
                    }
                )
        return {"routines": listed, "problems": problems}

    async def routine_save(request: Request) -> JSONObject:
        session = _panel_session(request)
        name = _name(request)
        task = request.get("task", str, default="")
        rename = request.get("rename", dict, default={})
        if not all(isinstance(v, str) and v.strip() for v in rename.values()):
            raise RequestError("bad_request", f"routine_save field 'rename' = {rename!r:.80}")
        rename = {str(old): new.strip() for old, new in rename.items()}
        store = state.routine_store()
        if request.get("preview", bool, default=False):
            # What would be saved, and whether it would replace a routine: nothing written.
            try:
                routine = routine_of(state.recording.of(session), name, task, rename)
                path = store.path(name)
            except RoutineError as exc:
                raise RequestError("bad_request", str(exc)) from None
            return {
                "routine": {**described(routine), **grant_facts(state, routine)},
                "file": path.name,
                "exists": path.exists(),
            }
        replace = request.get("replace", bool, default=False)
        grant = request.get("grant", dict, default=None)
        if grant is not None:
            # A grant it could not take refuses the save: nothing is written.
            try:
                draft = routine_of(state.recording.of(session), name, task, rename)
            except RoutineError as exc:
                raise RequestError("bad_request", str(exc)) from None
            grant_from(state, draft, grant.get("sites", []), grant.get("unasked", []), keep=False)
        saved = state.save_routine(session, name, task, rename, replace=replace)
        routine = store.load(name)
        if grant is not None:
            # The person's grants, confirmed with the preview: bound to this routine as
            # just written (nothing runs between the write and this).
            grant_from(state, routine, grant.get("sites", []), grant.get("unasked", []))
        elif state.grants is not None:
            state.grants.revoke(routine.name)  # a routine saved anew is granted anew
        return {
            "routine": {**described(routine), **grant_facts(state, routine)},
            "file": str(saved["file"]),
        }

    async def routine_delete(request: Request) -> JSONObject:
        store = state.routine_store()
        file = request.get("file", str, default="")
        if file:
            # A file that does not read has no name to go by: it goes by its file's.
            path = store.folder / file
            if path.name != file or path.suffix != ".json":
                raise RequestError("bad_request", f"routine_delete field 'file' = {file!r:.60}")
            deleted = path.is_file()
            path.unlink(missing_ok=True)
            return {"deleted": deleted}
        try:
            name = _name(request)
            if state.grants is not None:
                state.grants.revoke(name)
            return {"deleted": store.delete(name)}
        except RoutineError as exc:
            raise RequestError("bad_request", str(exc)) from None

    async def routine_run(request: Request) -> JSONObject:
        session = _panel_session(request)
        name = _name(request)
        tab = check_tab_id(request.get("tab", int), "routine_run field 'tab'")
        given: Mapping[str, object] = request.get("params", dict, default={})
        start_at = request.get("start_at", int, default=1)
        if start_at < 1:
            raise RequestError("bad_request", f"routine_run field 'start_at' = {start_at} < 1")
        base = ToolCall(
            session=session,
            tab=tab,
            name="capture_snapshot",
            client=ROUTINE_CLIENT,
            budget=budget_of(request),
            ask_before_submit=request.get("ask_before_submit", bool, default=True),
            task=" ".join(request.get("task", str, default=name).split())[:GROUP_TITLE_CHARS],
        )
        # The person started it (here or by its schedule): their grants apply.
        ran = await state.run_routine(
            base, name, dict(given), panel.ask, start_at=start_at - 1, granted=True
        )
        run = ran.run
        return {
            "status": run.status,
            "steps": run.steps,
            "done": run.done,
            "at": None if run.at is None else run.at + 1,
            "why": run.why,
            "plan": list(run.plan),
            "results": list(run.results),
            # The steps that submitted unasked, by the person's "don't ask again" mark.
            "unasked": [step + 1 for step in run.unasked],
            "content": run.words(),
            "healed": None if ran.healed is None else ran.healed.to_json(),
            "heal_problem": ran.heal_problem,
        }

    async def routine_amend(request: Request) -> JSONObject:
        session = _panel_session(request)
        heal = request.get("heal", int)
        routine, path = state.keep_heal(session, heal)
        return {"routine": described(routine), "file": path}

    async def routine_edit(request: Request) -> JSONObject:
        name = _name(request)
        new_name = request.get("new_name", str, default=None)
        changes = request.get("parameters", dict, default={})
        # Its grants lapse as its file changed: the list offers them to confirm again.
        routine, edited, file = state.edit_routine(name, new_name, changes)
        renamed = {
            old.name: new.name
            for old, new in zip(routine.parameters, edited.parameters, strict=True)
            if old.name != new.name
        }
        # Its waiting heals as they now read (the parameters' new names), for the
        # side panel, which shows them until the person keeps them or not.
        heals = [
            {**h.to_json(), "session": h.session}
            for h in state.routine_runs.heals.of_routine(edited.name)
        ]
        return {"routine": described(edited), "file": file, "renamed": renamed, "heals": heals}

    return {
        "routines": routines,
        "routine_save": routine_save,
        "routine_delete": routine_delete,
        "routine_run": routine_run,
        "routine_amend": routine_amend,
        "routine_edit": routine_edit,
    }


def described(routine: Routine) -> JSONObject:
    """A routine as the panel lists it: its words, parameters and steps in words."""
    return {
        "name": routine.name,
        "task": routine.task,
        "start": routine.start,
        "steps": len(routine.steps),
        "plan": [step.words() for step in routine.steps],
        "parameters": [
            {"name": p.name, "kind": p.kind, "default": p.default, "about": p.about}
            for p in routine.parameters
        ],
    }


def _panel_session(request: Request) -> str:
    session: str = request.get("session", str)
    if not session or session.startswith("link-"):
        raise RequestError(
            "bad_request", f"{request.type} field 'session' = {session!r:.60} is no panel task"
        )
    return session


def _name(request: Request) -> str:
    name: str = request.get("name", str)
    if not name.strip() or len(name) > MAX_NAME:
        raise RequestError("bad_request", f"{request.type} field 'name' = {name!r:.60}")
    return name
