"""Consent tokens: the one-time permission the person gives for one exact tool call."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Mapping
from typing import Final

import attrs

from ..wire import RequestError

__all__ = ["CONSENT_LIFETIME", "ConsentBook", "ToolCall", "args_key"]

# How long the person has to answer a consent question before its token lapses.
CONSENT_LIFETIME: Final = 600.0
_MAX_PENDING_CONSENTS: Final = 64


@attrs.frozen
class ToolCall:
    """One exact tool call: who asks, in which tab, which tool, which arguments."""

    session: str
    tab: int
    name: str
    args: str  # canonical JSON


def args_key(args: Mapping[str, object]) -> str:
    try:
        return json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise RequestError("bad_request", f"tool field 'args' is not plain JSON: {exc}") from exc


@attrs.define
class ConsentBook:
    """Consent tokens the host issued: each one lets exactly one call run, once.

    The host issues a token when a call needs the person's consent; the side panel
    asks the person and, on yes, sends the same call again with the token. A token
    is bound to the session, tab, tool and arguments of the call it was issued for,
    is spent by its first use (matching or not), and lapses after
    `CONSENT_LIFETIME` seconds.
    """

    clock: Callable[[], float] = time.monotonic
    _pending: dict[str, tuple[ToolCall, float]] = attrs.field(factory=dict, init=False)

    def issue(self, call: ToolCall) -> str:
        now = self.clock()
        for token, (_, expires) in list(self._pending.items()):
            if expires <= now:
                del self._pending[token]
        while len(self._pending) >= _MAX_PENDING_CONSENTS:
            del self._pending[next(iter(self._pending))]
        token = secrets.token_urlsafe(18)
        self._pending[token] = (call, now + CONSENT_LIFETIME)
        return token

    def redeem(self, token: str, call: ToolCall) -> bool:
        """True when `token` was issued for exactly `call` and is still valid;
        ``bad_consent`` otherwise. Either way the token is spent."""
        pending = self._pending.pop(token, None)
        if pending is None:
            raise RequestError(
                "bad_consent",
                "the consent token is unknown, already used or expired; send the call "
                "without one to be asked again",
            )
        issued, expires = pending
        if expires <= self.clock():
            raise RequestError("bad_consent", "the consent token expired; ask the person again")
        if issued != call:
            raise RequestError(
                "bad_consent",
                f"the consent token was issued for another call ({issued.name} in tab "
                f"{issued.tab}); it is spent, ask the person again",
            )
        return True
