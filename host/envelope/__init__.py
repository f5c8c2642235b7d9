"""The envelope: what the agent may do, decided by the host, and the one place that asks.

Every tool call of the side panel's agent and of outside agents passes
`act_with_consent`: the tools predict, from facts the page cannot fake, whether an
action would submit or commit something (``trimtab.tools``' consent rules) and stop
before acting; the envelope then asks the person (`Ask`) and runs the call again with
their yes, within the same live call. What an action then makes the page send is
decided by `RequestJudge` (held by the tab's request guard, asked about when it may
change something on the task's sites). The person is asked in one place, the side panel
(`SidePanel`), whose questions live exactly as long as the call that asks.

May import ``trimtab.wire``; nothing else of the host.
"""

from ._decide import Consent, Decided, act_with_consent
from ._question import PANEL_AGENT, Answer, Ask, Question, QuestionKind
from ._requests import (
    SAFE_METHODS,
    RequestJudge,
    RequestRuling,
    SentRequest,
    Sites,
    StartSite,
    request_verdict,
)
from ._side_panel import ASK_TIMEOUT, SidePanel

__all__ = [
    "ASK_TIMEOUT",
    "PANEL_AGENT",
    "SAFE_METHODS",
    "Answer",
    "Ask",
    "Consent",
    "Decided",
    "Question",
    "QuestionKind",
    "RequestJudge",
    "RequestRuling",
    "SentRequest",
    "SidePanel",
    "Sites",
    "StartSite",
    "act_with_consent",
    "request_verdict",
]
