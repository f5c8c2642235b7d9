"""A question for the person, and their answer."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Final, Literal, TypeAlias

import attrs

__all__ = [
    "ONCE_OR_NO",
    "PANEL_AGENT",
    "SITE_CHOICES",
    "Answer",
    "Ask",
    "Question",
    "QuestionKind",
]

# Who asks, as the person reads it, when the side panel's own agent asks.
PANEL_AGENT = "Trimtab agent"

QuestionKind: TypeAlias = Literal[
    "submit", "secret", "download", "evaluate", "tab", "site", "request"
]
# What the person may answer a question about a site: this task, every task, no.
SITE_CHOICES: Final = ("once", "always", "no")
# What a question offers where an "always" could not hold (an evaluate without a site
# of its own, or with code too long to be shown whole).
ONCE_OR_NO: Final = ("once", "no")


@attrs.frozen
class Question:
    """What the person is asked: who wants to do what, in which tab, and why Trimtab asks.

    ``reason`` is Trimtab's own words; ``element`` is the element as the model sees it
    (page strings escaped), or None when there is none; ``site`` (Trimtab's words) is
    the site a what="site" question is about, as `site_of` names it; ``request``: for
    a held request (``what="request"``), its ``method``, ``url`` (the page's, as data)
    and ``site``.
    """

    client: str  # who asks: PANEL_AGENT or an outside client's name
    session: str  # the asking session's key (the panel agent's, or ``link-N``)
    tab: int
    # "submit": may this call act? "tab": may this client use this tab? "site": may
    # this task act on (or go to) this site? "request": may this request, which the
    # call's action makes the page send, leave the browser? "evaluate": may this call
    # run its JavaScript (``args["expression"]``) in the page on ``site``?
    what: QuestionKind
    tool: str | None = None
    args: Mapping[str, object] = attrs.field(factory=dict)
    reason: str = ""
    element: str | None = None
    site: str | None = None
    request: Mapping[str, str] | None = None
    # The id of the element asked about when the call's ``id`` does not name it (the
    # field of a `fill` call that needs the question).
    element_id: str | None = None
    # The answers offered, when fewer than a site or evaluate question's usual ones.
    choices: tuple[str, ...] | None = None
    # Asked about a request the page sends after the action that set it off ended (a
    # trailing window's): the call may have answered already.
    after: bool = False

    @property
    def eid(self) -> str | None:
        """The id of the element the call acts on, for the side panel to highlight."""
        eid = self.element_id or self.args.get("id")
        return eid if isinstance(eid, str) else None

    def to_json(self) -> dict[str, object]:
        found: dict[str, object] = {
            "client": self.client,
            "session": self.session,
            "tab": self.tab,
            "what": self.what,
            "tool": self.tool,
            "args": dict(self.args),
            "reason": self.reason,
            "element": self.element,
            "eid": self.eid,
            "site": self.site,
            "request": None if self.request is None else dict(self.request),
        }
        if self.after:
            found["after"] = True
        if self.choices is not None:
            found["choices"] = list(self.choices)
        elif self.what in ("site", "evaluate"):
            # evaluate: once (this call), always (this code on this site), no.
            found["choices"] = list(SITE_CHOICES)
        return found


@attrs.frozen
class Answer:
    """The person's answer; ``allow`` is False also when nobody answered or could be asked."""

    allow: bool
    # Whether a person answered: False when the wait ran out.
    answered: bool = True
    # Why nobody could be asked (no side panel open, the browser unreachable), if so.
    why: str | None = None
    # How long Trimtab waited, for "nobody answered within N s".
    waited: float = 0.0
    # A yes about a site for every task ("always"), not only this one ("once"); for
    # evaluate, a yes to this code on this site from then on.
    always: bool = False
    # The site on the person's never list that refused the call without asking.
    never: str | None = None
    # A yes the person gave beforehand: their "don't ask again for this routine" mark
    # on the step of a routine's run, for a submit that matched its recording.
    marked: bool = False

    @classmethod
    def yes(cls) -> Answer:
        return cls(allow=True)

    @classmethod
    def by_mark(cls) -> Answer:
        """Yes, unasked: the person marked this routine's step "don't ask again"."""
        return cls(allow=True, answered=False, marked=True)

    @classmethod
    def no(cls) -> Answer:
        return cls(allow=False)

    @classmethod
    def unanswered(cls, waited: float) -> Answer:
        return cls(allow=False, answered=False, waited=waited)

    @classmethod
    def unaskable(cls, why: str) -> Answer:
        return cls(allow=False, answered=False, why=why)

    @classmethod
    def listed(cls, site: object) -> Answer:
        """The person's never list refused ``site``: nobody was asked."""
        return cls(allow=False, answered=False, never=str(site))

    def refusal(self) -> str:
        """Why the call was not done, in words for the model and the person."""
        if self.never is not None:
            return f"the person's settings never allow the agent on {self.never}"
        if self.why is not None:
            return f"the person could not be asked: {self.why[:200]}"
        if not self.answered:
            return (
                f"nobody answered in the browser within {self.waited:g} s (the person answers "
                "in the Trimtab side panel, which must be open)"
            )
        return "the person refused when asked in the browser"


# Asks the person one question and waits for the answer. Cancelling the wait (the call
# that asked ended) withdraws the question: a later answer does nothing.
Ask: TypeAlias = Callable[[Question], Awaitable[Answer]]
