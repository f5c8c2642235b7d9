"""The envelope: what the agent may do, decided by the host, and the one place that asks.

Every tool call of the side panel's agent and of outside agents passes
`act_with_consent`: the tools predict, from facts the page cannot fake, whether an
action would submit or commit something (``trimtab.tools``' consent rules) and stop
before acting; the envelope then asks the person (`Ask`) and runs the call again with
their yes, within the same live call. The person is asked in one place, the side panel
(`SidePanel`), whose questions live exactly as long as the call that asks.

May import ``trimtab.wire``; nothing else of the host.
"""

from ._decide import Consent, Decided, act_with_consent
from ._question import PANEL_AGENT, Answer, Ask, Question, QuestionKind
from ._side_panel import ASK_TIMEOUT, SidePanel

__all__ = [
    "ASK_TIMEOUT",
    "PANEL_AGENT",
    "Answer",
    "Ask",
    "Consent",
    "Decided",
    "Question",
    "QuestionKind",
    "SidePanel",
    "act_with_consent",
]
