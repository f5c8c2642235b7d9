"""The envelope: what the agent may do, decided by the host, and the one place that asks.

Every tool call of the side panel's agent and of outside agents passes
`act_with_consent`: the tools predict, from facts the page cannot fake, whether an
action would submit or commit something (``trimtab.tools``' consent rules) and stop
before acting; the envelope then asks the person (`Ask`) and runs the call again with
their yes, within the same live call. What an action then makes the page send is
decided by `RequestJudge` (held by the tab's request guard, asked about when it may
change something on the task's sites). The person is asked in one place, the side panel
(`SidePanel`), whose questions live exactly as long as the call that asks.

Sites per task (`_site_policy`): a task may act on the site where it started
(``trimtab.sites``: scheme + registrable domain) and the sites the person allowed; any other
site asks once per task, and the person's never list refuses it (`decide_site`, the one
function that decides and asks about sites; `SitePolicy` holds the lists). `evaluate`
is asked about every time, showing the code, unless the person said "always" to that
exact code on the page's site (`decide_evaluate`; `EvaluateAlways` keeps site and code).

May import ``trimtab.sites`` and ``trimtab.wire``; nothing else of the host.
"""

from ._decide import Consent, Decided, act_with_consent
from ._evaluate_always import (
    ALWAYS_CODE_MAX,
    EVALUATE_FILE,
    AlwaysCode,
    EvaluateAlways,
    code_digest,
)
from ._question import (
    ONCE_OR_NO,
    PANEL_AGENT,
    SITE_CHOICES,
    Answer,
    Ask,
    Question,
    QuestionKind,
)
from ._requests import (
    MIN_CARRIED,
    SAFE_METHODS,
    RequestJudge,
    RequestRuling,
    SentRequest,
    Sites,
    carried,
    request_verdict,
)
from ._side_panel import ASK_TIMEOUT, SidePanel
from ._site_policy import (
    SITES_FILE,
    SitePolicy,
    Verdict,
    decide_evaluate,
    decide_site,
)

__all__ = [
    "ALWAYS_CODE_MAX",
    "ASK_TIMEOUT",
    "EVALUATE_FILE",
    "MIN_CARRIED",
    "ONCE_OR_NO",
    "PANEL_AGENT",
    "SAFE_METHODS",
    "SITES_FILE",
    "SITE_CHOICES",
    "AlwaysCode",
    "Answer",
    "Ask",
    "Consent",
    "Decided",
    "EvaluateAlways",
    "Question",
    "QuestionKind",
    "RequestJudge",
    "RequestRuling",
    "SentRequest",
    "SidePanel",
    "SitePolicy",
    "Sites",
    "Verdict",
    "act_with_consent",
    "carried",
    "code_digest",
    "decide_evaluate",
    "decide_site",
    "request_verdict",
]
