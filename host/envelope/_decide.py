"""The one host function that decides whether a call may act, and asks the person."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

import attrs

from ._question import Answer, Ask, Question

__all__ = ["Consent", "Decided", "act_with_consent"]

R = TypeVar("R")


@attrs.frozen
class Consent:
    """What the envelope did about consent for one call."""

    required: bool = False  # the call would have submitted or committed something
    granted: bool = False  # it ran with the person's yes (or their standing "don't ask")
    answer: Answer | None = None  # the person's answer, when they were asked


@attrs.frozen
class Decided(Generic[R]):
    """A call's result (the tool's answer, or the refusal) and the consent behind it."""

    result: R
    consent: Consent


async def act_with_consent(
    run: Callable[[bool], Awaitable[R]],
    needs: Callable[[R], Question | None],
    ask: Ask,
    *,
    ask_before_submit: bool = True,
) -> Decided[R]:
    """Run a call; when it stopped before acting because it needs consent, ask, then
    run it again with consent, within this one live call.

    ``run(granted)`` runs the call without (False) or with (True) the person's consent;
    a run without consent stops before its first input event when the action may
    submit or commit, and ``needs(result)`` then gives the question to ask. A yes acts
    for this call only: nothing of it outlives the call, so a call that was cancelled
    while it waited (its question withdrawn) can never act on a late yes.
    ``ask_before_submit`` is the person's own setting for the side panel's agent: off,
    they agreed to every such call beforehand (the host still decides which those are);
    it waives downloads too, and never a question of another kind (a secret field, a site).
    """
    first = await run(False)
    question = needs(first)
    if question is None:
        return Decided(first, Consent())
    # The setting ("ask before submitting or downloading") waives submit and download
    # questions only: typing a secret is always asked.
    waived = not ask_before_submit and question.what in ("submit", "download")
    answer = Answer.yes() if waived else await ask(question)
    if not answer.allow:
        return Decided(first, Consent(required=True, granted=False, answer=answer))
    again = await run(True)
    return Decided(again, Consent(required=True, granted=True, answer=answer))
