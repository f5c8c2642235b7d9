"""The request guard's judge for one call: the envelope's decision on what the call's
action makes the page send (`RequestJudge`), on the task's sites as the site policy
has them (`TaskSites`), knowing what the agent typed in the task and the secret
fields' values (a request that carries one of them is no read: `carried`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import attrs

from ..envelope import Answer, Ask, RequestJudge, SentRequest, SitePolicy, carried
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
    after: bool = False  # a trailing window's: the site question says the action is over

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
        return await site_allowed(self.policy, self.call, site, self.ask, doing, after=self.after)


def request_judge(
    policy: SitePolicy,
    call: ToolCall,
    ask: Ask,
    *,
    granted: bool,
    granted_download: bool = False,
    granted_only: Callable[[str, str], bool] | None = None,
    after: bool = False,
    typed: Callable[[], Sequence[str]] = tuple,
    secrets: Callable[[], Sequence[str]] = tuple,
) -> Judge:
    """The judge of one run of ``call`` (``granted``: with the person's yes for a
    predicted submit; ``granted_download``: for a predicted download; ``granted_only``:
    the one submission, by method and URL, a yes given beforehand covers), asking
    through ``ask``; ``after``: a trailing window's, once the action is over. ``typed``
    and ``secrets`` give what the agent typed in the task and the secret fields' values."""
    sites = TaskSites(policy, call, ask, after=after)
    judge = RequestJudge(
        question=call.question("request"),
        ask=ask,
        sites=sites,
        granted=granted,
        ask_before_submit=call.ask_before_submit,
        granted_download=granted_download,
        granted_only=granted_only,
        after=after,
    )

    async def decide(paused: PausedRequest, element: str | None) -> Ruling:
        carries: Literal["typed", "secret", ""] = ""
        if not sites.allows(paused.url):
            # Looked for only where it matters: on the way to a site not allowed.
            if carried(typed(), paused.url, paused.body):
                carries = "typed"
            elif carried(secrets(), paused.url, paused.body):
                carries = "secret"
        sent = SentRequest(
            method=paused.method,
            url=paused.url,
            kind=paused.kind,
            navigation=paused.navigation,
            form=paused.form,
            redirect_of_sent=paused.redirect_of_sent,
            opened=paused.opened,
            download=None if paused.download is None else paused.download.element(),
            carries=carries,
        )
        ruling = await judge(sent, element)
        return Ruling(send=ruling.send, held=ruling.held, why=ruling.why)

    return decide
