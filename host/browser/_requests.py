"""The request guard's judge for one call: the envelope's decision on what the call's
action makes the page send (`RequestJudge`), on the task's sites as the site policy
has them (`TaskSites`)."""

from __future__ import annotations

import attrs

from ..envelope import Answer, Ask, RequestJudge, SentRequest, SitePolicy
from ..sites import site_of
from ..tab import Judge, PausedRequest, Ruling
from ._call import ToolCall
from ._sites import site_allowed

__all__ = ["TaskSites", "request_judge"]


@attrs.frozen
class TaskSites:
    """The sites the call's task may use (the envelope's `Sites`): those the site
    policy allows it now; a navigation of the tab anywhere else is the policy's to
    decide, and to ask about (`site_allowed`, what="site")."""

    policy: SitePolicy
    call: ToolCall
    ask: Ask

    def name(self, url: str) -> str:
        return str(site_of(url))

    def allows(self, url: str) -> bool:
        site = site_of(url)
        return not site.opaque and self.policy.verdict(self.call.session, site) == "allow"

    async def enter(self, url: str, doing: str | None = None) -> Answer:
        site = site_of(url)
        if site.opaque and site.scheme in ("about", ""):
            return Answer.yes()  # a page with no site: nobody is logged in there
        doing = doing or f"the {self.call.name} takes the tab to"
        return await site_allowed(self.policy, self.call, site, self.ask, doing)


def request_judge(
    policy: SitePolicy, call: ToolCall, ask: Ask, *, granted: bool, granted_download: bool = False
) -> Judge:
    """The judge of one run of ``call`` (``granted``: with the person's yes for a
    predicted submit; ``granted_download``: for a predicted download), asking through
    ``ask``."""
    judge = RequestJudge(
        question=call.question("request"),
        ask=ask,
        sites=TaskSites(policy, call, ask),
        granted=granted,
        ask_before_submit=call.ask_before_submit,
        granted_download=granted_download,
    )

    async def decide(paused: PausedRequest, element: str | None) -> Ruling:
        sent = SentRequest(
            method=paused.method,
            url=paused.url,
            kind=paused.kind,
            navigation=paused.navigation,
            form=paused.form,
            redirect_of_sent=paused.redirect_of_sent,
            opened=paused.opened,
            download=None if paused.download is None else paused.download.element(),
        )
        ruling = await judge(sent, element)
        return Ruling(send=ruling.send, held=ruling.held, why=ruling.why)

    return decide
