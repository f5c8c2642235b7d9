"""A link client's routine requests: list the routines, save its session as one, run one.

A run that needed help at a step goes on from a later step once the client did that
step with its own calls; with ``keep_healed`` those calls are written into the routine
in place of the steps skipped (``HostState.run_routine``), so the next run needs no
help there.

A run is the client's own task in a tab it may use (asked like any call's tab), its
steps tool calls of its session through the envelope; the client hears ``progress``
while it runs, as while the person is asked, so clients that give up after 60 s
without news keep waiting. Routine files are the person's (their names, tasks and
parameters), but a step's words and a read's result quote pages: every text a model
reads is in the client's untrusted block.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

import trio

from ...browser import ToolCall, budget_of, check_tab_id
from ...wire import Handler, JSONObject, OutboxClosed, Request, RequestError
from ._events import call_event
from ._untrusted import page_data

if TYPE_CHECKING:
    from ._server import Link, LinkSession

__all__ = ["routine_handlers"]

# How often a client hears that its routine still runs.
RUN_PROGRESS_INTERVAL: Final = 10.0
_MAX_NAME: Final = 100


def routine_handlers(link: Link, session: LinkSession) -> dict[str, Handler]:
    """The ``routines``, ``routine_save`` and ``routine_run`` requests of one client."""
    state = link.state

    async def routines(request: Request) -> JSONObject:
        del request
        listed: list[JSONObject] = []
        lines: list[str] = []
        for entry in state.routine_store().list():
            routine = entry.routine
            if routine is None:
                listed.append({"file": entry.file.name, "problem": entry.problem})
                lines.append(f"- {entry.file.name}: cannot be run: {entry.problem}")
                continue
            parameters = [
                {"name": p.name, "kind": p.kind, "default": p.default, "about": p.about}
                for p in routine.parameters
            ]
            listed.append(
                {
                    "name": routine.name,
                    "task": routine.task,
                    "start": routine.start,
                    "steps": len(routine.steps),
                    "parameters": parameters,
                    "file": entry.file.name,
                }
            )
            lines.append(f"- {_line(routine.to_json())}")
        text = "\n".join(lines) if lines else "No routines are saved."
        return {"routines": listed, "content": page_data(text, session.marker)}

    async def routine_save(request: Request) -> JSONObject:
        name = _name(request)
        task = request.get("task", str, default="")
        rename = request.get("rename", dict, default={})
        if not all(isinstance(v, str) for v in rename.values()):
            raise RequestError("bad_request", f"routine_save field 'rename' = {rename!r:.80}")
        replace = request.get("replace", bool, default=False)
        saved = state.save_routine(session.key, name, task, rename, replace=replace)
        # What it takes, for the caller to check or rename: its values were typed by
        # the agent, maybe copied from a page.
        line = page_data(_line(saved["routine"]), session.marker)
        return {**saved, "content": f"Saved routine {name!r} in {saved['file']}:\n{line}"}

    async def routine_run(request: Request) -> JSONObject:
        name = _name(request)
        tab = check_tab_id(request.get("tab", int), "routine_run field 'tab'")
        given = request.get("params", dict, default={})
        start_at = request.get("start_at", int, default=1)
        if start_at < 1:
            raise RequestError("bad_request", f"routine_run field 'start_at' = {start_at} < 1")
        keep_healed = request.get("keep_healed", bool, default=False)
        ask = link.asking(session, request)
        await link.check_access(session, tab, ask)
        base = ToolCall(
            session=session.key,
            tab=tab,
            name="capture_snapshot",
            client=session.client,
            view=session.key,
            budget=budget_of(request),
        )

        async def watch(
            call: ToolCall, elements: Mapping[str, JSONObject], error: str | None
        ) -> None:
            # The person's log shows a routine's steps as the client's own calls.
            event = call_event(
                session.number,
                session.client,
                call.tab,
                call.name,
                call.args,
                elements,
                error=error,
            )
            await link.tell_extension(event)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(_tell_while_running, session, request.id, name)
            # Never with the person's grants for the routine: this agent chose the tab
            # and could have steered its pages (host/ROUTINES.md).
            ran = await state.run_routine(
                base, name, _given(given), ask, link.panel.ask,
                start_at=start_at - 1, watch=watch, keep_healed=keep_healed,
            )  # fmt: skip
            nursery.cancel_scope.cancel()
        run = ran.run
        content = page_data(run.words(), session.marker)
        if ran.kept is not None and ran.healed is not None:
            # The steps' words quote the pages they were done on.
            amendment = ran.healed.amendment
            new = "\n".join(step.words() for step in amendment.new) or "(none: it is not needed)"
            content = (
                f"Kept in routine {name!r} ({ran.kept}): in place of step {amendment.at + 1}, "
                f"the steps:\n{page_data(new, session.marker)}\n{content}"
            )
        return {
            "status": run.status,
            "steps": run.steps,
            "done": run.done,
            "at": None if run.at is None else run.at + 1,
            "results": [page_data(result, session.marker) for result in run.results],
            "content": content,
            "kept": None if ran.kept is None else str(ran.kept),
            "is_error": run.status != "done",
        }

    return {"routines": routines, "routine_save": routine_save, "routine_run": routine_run}


def _line(routine: JSONObject) -> str:
    """A routine (its file's JSON) in one line: its name, steps and parameters
    (``name=default``; one without a default must be given, a secret always)."""
    parameters = routine.get("parameters") or []
    takes = ", ".join(
        f"{p['name']}={p['default']}"
        if p.get("default") is not None
        else f"{p['name']} ({p['kind']}, needed)"
        for p in parameters
    )
    steps = routine.get("steps") or []
    return f"{routine['name']}: {len(steps)} steps" + (f"; parameters {takes}" if takes else "")


def _name(request: Request) -> str:
    name: str = request.get("name", str)
    if not name.strip() or len(name) > _MAX_NAME:
        raise RequestError("bad_request", f"{request.type} field 'name' = {name!r:.60}")
    return name


def _given(raw: Mapping[str, object]) -> dict[str, object]:
    return {str(key): value for key, value in raw.items()}


async def _tell_while_running(session: LinkSession, request_id: object, name: str) -> None:
    waited = 0.0
    while True:
        await trio.sleep(RUN_PROGRESS_INTERVAL)
        waited += RUN_PROGRESS_INTERVAL
        with contextlib.suppress(OutboxClosed, ValueError):
            await session.outbox.send_message(
                {
                    "type": "progress",
                    "id": request_id,
                    "message": f"routine {name!r} is running",
                    "waited": waited,
                    "timeout": 0,
                }
            )
