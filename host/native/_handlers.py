"""The side panel's requests: the inspector, the tools, the agent's calls, the answers.

`SidePanelDoor` turns each request type of ``host/PROTOCOL.md`` that the side panel
sends (``snapshot``, ``tools``, ``tool``, ``forget_views``, ``tab_shown``, ``highlight``,
``release``, ``answer``, ``sites``, ``sites_set``, ``evaluate_always``, ``evaluate_always_remove``,
``task_stop``, and the routines' ``routines``, ``routine_save``, ``routine_delete``,
``routine_run``, ``routine_amend`` and ``routine_edit``: ``_routines``; the person's
grants for one, ``routine_grant``: ``_routine_grants``) into a typed call on the host's
`HostState`. The panel agent's ``tool`` calls are asked about in the side panel itself
(`SidePanel`), during the call;
``sites``/``sites_set`` read and replace the person's always and never site lists,
``evaluate_always`` lists the codes `evaluate` runs unasked (each on one site) and
``evaluate_always_remove`` takes one off: nothing the panel sends can add one.
``forget_views`` comes from the panel's agent when it compacted its history: the
host forgets what that agent saw of the task's tabs (`forget_seen`). ``tab_shown`` gives
the panel's agent its tab's title and URL as the tools show them (credentials hidden),
for its first message. ``task_stop``
(the person's Stop) ends what the task's last action left held after it (its trailing
windows: their requests are failed, their questions withdrawn).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from ..browser import (
    HostState,
    ToolCall,
    budget_of,
    check_tab_id,
    forget_seen,
    groups_of,
    shown_tab,
)
from ..envelope import PANEL_AGENT, SidePanel
from ..sites import SiteError
from ..wire import Handler, JSONObject, Request, RequestError
from ._routine_grants import grant_handlers
from ._routines import routine_handlers

__all__ = ["SidePanelDoor"]

#: The longest tab group title the host passes on (Chrome shows a few words of it).
GROUP_TITLE_CHARS = 60


@attrs.define(eq=False)
class SidePanelDoor:
    """The request handlers the extension's side panel and service worker call."""

    state: HostState
    panel: SidePanel

    def handlers(self) -> dict[str, Handler]:
        return {
            "snapshot": self.handle_snapshot,
            "tools": self.handle_tools,
            "tool": self.handle_tool,
            "forget_views": self.handle_forget_views,
            "tab_shown": self.handle_tab_shown,
            "highlight": self.handle_highlight,
            "release": self.handle_release,
            "answer": self.handle_answer,
            "sites": self.handle_sites,
            "sites_set": self.handle_sites_set,
            "evaluate_always": self.handle_evaluate_always,
            "evaluate_always_remove": self.handle_evaluate_always_remove,
            "task_stop": self.handle_task_stop,
            **routine_handlers(self.state, self.panel),
            **grant_handlers(self.state),
        }

    async def handle_snapshot(self, request: Request) -> JSONObject:
        return await self.state.inspect(_tab_of(request), budget_of(request))

    async def handle_tools(self, request: Request) -> JSONObject:
        return self.state.catalogue(groups_of(request))

    async def handle_tool(self, request: Request) -> JSONObject:
        session = request.get("session", str)
        if not session:
            raise RequestError("bad_request", "tool field 'session' is empty")
        args: Mapping[str, object] = request.get("args", dict, default={})
        call = ToolCall(
            session=session,
            tab=_tab_of(request),
            name=request.get("name", str),
            args=args,
            client=PANEL_AGENT,
            budget=budget_of(request),
            ask_before_submit=request.get("ask_before_submit", bool, default=True),
            # The person's setting: off unless the side panel says it is on.
            may_evaluate=request.get("allow_evaluate", bool, default=False),
            # The person's own words for the task: its tab group's title (cut, one line).
            task=" ".join(request.get("task", str, default="").split())[:GROUP_TITLE_CHARS],
        )
        outcome = await self.state.call_tool(call, self.panel.ask)
        return outcome.to_json()

    async def handle_forget_views(self, request: Request) -> JSONObject:
        session = request.get("session", str)
        if not session:
            raise RequestError("bad_request", "forget_views field 'session' is empty")
        return {"tabs": await forget_seen(self.state, session, _tab_of(request))}

    async def handle_tab_shown(self, request: Request) -> JSONObject:
        return shown_tab(request.get("title", str), request.get("url", str))

    async def handle_task_stop(self, request: Request) -> JSONObject:
        session = request.get("session", str)
        if not session or session.startswith("link-"):
            raise RequestError(
                "bad_request", f"task_stop field 'session' = {session!r:.60} is no panel task"
            )
        return {"ended": self.state.set_off.end(session)}

    async def handle_highlight(self, request: Request) -> JSONObject:
        found = await self.state.highlight(_tab_of(request), request.get("eid", (str, type(None))))
        return {"found": found}

    async def handle_release(self, request: Request) -> JSONObject:
        await self.state.release(_tab_of(request))
        return {}

    async def handle_answer(self, request: Request) -> JSONObject:
        waiting = self.panel.answer(
            request.get("ask", str),
            allow=request.get("allow", bool),
            always=request.get("always", bool, default=False),
            why=request.get("why", (str, type(None)), default=None),
        )
        return {"waiting": waiting}

    async def handle_sites(self, request: Request) -> JSONObject:
        del request
        return dict(self.state.sites.lists())

    async def handle_sites_set(self, request: Request) -> JSONObject:
        always = request.get("always", list)
        never = request.get("never", list)
        try:
            self.state.sites.set_lists(always, never)
        except SiteError as exc:
            raise RequestError("bad_request", f"sites_set: {exc}") from None
        except OSError as exc:
            raise RequestError(
                "internal", f"sites_set: the site lists could not be saved ({exc})"
            ) from None
        return dict(self.state.sites.lists())

    async def handle_evaluate_always(self, request: Request) -> JSONObject:
        del request
        return dict(self.state.sites.evaluate.listed())

    async def handle_evaluate_always_remove(self, request: Request) -> JSONObject:
        # Only a removal: an "always" is added by the person's answer to a question
        # that showed its code, never by a request that names one.
        try:
            self.state.sites.evaluate.remove(request.get("site", str), request.get("sha256", str))
        except ValueError as exc:
            raise RequestError("bad_request", f"evaluate_always_remove: {exc}") from None
        except OSError as exc:
            raise RequestError(
                "internal", f"evaluate_always_remove: the list could not be saved ({exc})"
            ) from None
        return dict(self.state.sites.evaluate.listed())


def _tab_of(request: Request) -> int:
    return check_tab_id(request.get("tab", int), f"{request.type} field 'tab'")
