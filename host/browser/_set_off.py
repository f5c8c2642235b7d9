"""What the agent's input sets off: the text it typed, and what the page sends after.

Two facts the page cannot fake feed the request guard beyond one action:

* what the agent typed in each task (the ``text`` of `type`, the text values of
  `fill`), with the secret fields' values the agent's latest snapshot showed masked:
  a request that carries one of them to a site the task was not allowed is no read
  (``trimtab.envelope.carried``), and the guard pauses requests of every kind whose
  address holds one (`watched`);
* after an action that typed, changed a field or clicked (`SETS_OFF`), the guard stays
  on for a trailing window (``trimtab.tab``'s `Trailing`), whose judge asks as after the
  action; what it held is told to the client with its next answer (`SetOff.told`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

import attrs
import trio

from ..envelope import MIN_CARRIED, Ask, SitePolicy
from ..pipeline import xml
from ..tab import (
    TRAILING_SECONDS,
    Downloads,
    Guarding,
    Held,
    Judge,
    Tab,
    Trailing,
    end_trailing,
)
from ._call import ToolCall
from ._requests import request_judge

__all__ = ["SETS_OFF", "SetOff"]

# The tools whose input may set off what a page sends later: typing, changing a field,
# clicking (a scroll, a hover or a read does not).
SETS_OFF: Final = frozenset(
    {
        "click",
        "double_click",
        "type",
        "press",
        "select",
        "check",
        "drag",
        "upload",
        "fill",
        "answer_dialog",
    }
)
# Typed texts kept per task: the latest ones (a long task types many).
_TYPED_KEPT: Final = 50


def typed_in(call: ToolCall) -> list[str]:
    """The texts a call types (`type`'s text, `fill`'s text values), long enough to be
    looked for (`MIN_CARRIED`)."""
    found: list[str] = []
    if call.name == "type" and isinstance(text := call.args.get("text"), str):
        found.append(text)
    elif call.name == "fill" and isinstance(fields := call.args.get("fields"), Sequence):
        for field in fields:
            value = field.get("value") if isinstance(field, dict) else None
            if isinstance(value, str):
                found.append(value)
    return [text for text in found if len(text.strip()) >= MIN_CARRIED]


def secrets_of(tab: Tab) -> list[str]:
    """The values of the secret fields the tab's latest snapshot (of this view) showed
    masked, long enough to be looked for."""
    latest = tab.latest
    if latest is None:
        return []
    return [
        control.secret
        for control in latest.controls.values()
        if len(control.secret.strip()) >= MIN_CARRIED
    ]


@attrs.define(eq=False)
class SetOff:
    """Per task (tracker session): what the agent typed, and what the trailing windows
    held that its next answer tells."""

    _typed: dict[str, list[str]] = attrs.field(factory=dict)
    _later: dict[str, list[Held]] = attrs.field(factory=dict)

    def note(self, call: ToolCall) -> None:
        """Remember what the call types (before it acts: its own action is judged with it)."""
        texts = typed_in(call)
        if texts:
            kept = self._typed.setdefault(call.session, [])
            kept[:] = [t for t in kept if t not in texts][-(_TYPED_KEPT - len(texts)) :] + texts

    def typed(self, session: str) -> tuple[str, ...]:
        return tuple(self._typed.get(session, ()))

    def watched(self, call: ToolCall, tab: Tab) -> tuple[str, ...]:
        """What the call's guard looks for in what the page sends."""
        return tuple(dict.fromkeys((*self.typed(call.session), *secrets_of(tab))))

    def judge(
        self,
        sites: SitePolicy,
        call: ToolCall,
        ask: Ask,
        tab: Tab,
        *,
        granted: bool,
        granted_download: bool,
        granted_only: Callable[[str, str], bool] | None = None,
    ) -> Judge:
        """The judge of one run of the call's action (`request_judge`), knowing what the
        task typed and the secret fields ``tab``'s latest snapshot showed masked."""
        return request_judge(
            sites,
            call,
            ask,
            granted=granted,
            granted_download=granted_download,
            granted_only=granted_only,
            typed=lambda: self.typed(call.session),
            secrets=lambda: secrets_of(tab),
        )

    def guarding(
        self,
        judge: Judge,
        sites: SitePolicy,
        call: ToolCall,
        later: Ask,
        nursery: trio.Nursery,
        tab: Tab,
        downloads: Downloads,
    ) -> Guarding:
        """The call's request guard (`Guarding`): ``judge``, looking for what the task
        typed and the secrets, staying on after the action as `trailing` says (asking
        with ``later``, its windows run in ``nursery``), holding the downloads the action
        starts in ``downloads``."""
        trailing = self.trailing(sites, call, later, nursery, tab)
        watched = self.watched(call, tab)
        return Guarding(judge, watched=watched, trailing=trailing, downloads=downloads)

    def trailing(
        self, sites: SitePolicy, call: ToolCall, ask: Ask, nursery: trio.Nursery, tab: Tab
    ) -> Trailing | None:
        """The trailing window a call's action leaves behind, if its tool sets one off."""
        if call.name not in SETS_OFF:
            return None
        judge = request_judge(
            sites,
            call,
            ask,
            granted=False,
            after=True,
            typed=lambda: self.typed(call.session),
            secrets=lambda: secrets_of(tab),
        )
        held = self._later.setdefault(call.session, [])
        return Trailing(TRAILING_SECONDS, nursery, judge, call.session, held, tab=call.tab)

    def told(self, session: str) -> tuple[str, tuple[Held, ...]]:
        """What trailing windows of the task held since its last answer: the notes its
        answer adds, and the requests."""
        held = self._later.get(session)
        if not held:
            return "", ()
        taken = tuple(held)
        held.clear()
        notes = "".join(
            "\n" + xml.element("note", content=f"After your earlier action: {h.note()}")
            for h in taken
        )
        return notes, taken

    def end(self, session: str | None = None, *, when: Callable[[str], bool] | None = None) -> int:
        """End the task's trailing windows at once (Stop): what they hold is failed and
        their questions withdrawn."""
        return end_trailing(session, when=when)

    def forget(self, session: str) -> None:
        """Forget a task that ended (a client that left for good)."""
        self._typed.pop(session, None)
        self._later.pop(session, None)
