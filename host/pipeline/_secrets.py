"""Secret fields: which fields hold the person's secrets, and how their values are shown.

A password, a card's number, security code or expiry date, and a one-time code are
secrets: the model is told that such a field is filled, never what it holds, except
the last four digits of a card number (``•••• 4242``), which tell cards apart as a
person reads them on a receipt. One rule decides for every place a value could leave
the host towards the model: the XML (`_encode`), ``read``, the tools' notes and the
consent question (``trimtab.tools``, from the hints ``js/helpers.js`` ``secrets``
reads in the page).

The page marks a field with ``autocomplete`` (its tokens may start with
``section-…``, ``shipping``/``billing`` and a contact kind: the last token is the
field's kind), or names it (``name``, ``id``, its label): both are read.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable

__all__ = ["Secret", "mask", "secret_kind"]


class Secret(enum.Enum):
    """The kinds of secret field, by what a person would call them."""

    PASSWORD = "password"
    CARD_NUMBER = "card number"
    CARD_CODE = "card security code"
    CARD_EXPIRY = "card expiry date"
    ONE_TIME_CODE = "one-time code"

    @property
    def field(self) -> str:
        """How the person is told what is typed into: "a password field"."""
        return f"a {self.value} field"


# Autocomplete field names (the last token) that mark a secret.
_AUTOCOMPLETE = {
    "current-password": Secret.PASSWORD,
    "new-password": Secret.PASSWORD,
    "cc-number": Secret.CARD_NUMBER,
    "cc-csc": Secret.CARD_CODE,
    "cc-exp": Secret.CARD_EXPIRY,
    "cc-exp-month": Secret.CARD_EXPIRY,
    "cc-exp-year": Secret.CARD_EXPIRY,
    "one-time-code": Secret.ONE_TIME_CODE,
}
# What a field's name, id or label says, matched on its words (camelCase, snake_case
# and kebab-case split, lower case). A card's holder name or type is no secret:
# only these words are.
_NAMED = (
    (
        re.compile(
            r"\b(card ?(number|num|no)|cc ?(number|num|no)|credit ?card ?(number|num|no))\b"
        ),
        Secret.CARD_NUMBER,
    ),
    (
        re.compile(r"\b(cvc2?|cvv2?|cvn|csc|security ?code|card ?(code|verification))\b"),
        Secret.CARD_CODE,
    ),
    (
        re.compile(
            r"\b(expiry|expiration|expires?|exp ?(date|month|year|mm|yy)|cc ?exp"
            r"|mm ?/ ?yy(yy)?|valid ?(thru|through|until))\b"
        ),
        Secret.CARD_EXPIRY,
    ),
    (re.compile(r"\b(otp|one ?time ?(pass ?)?code|one ?time ?password)\b"), Secret.ONE_TIME_CODE),
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEPARATORS = re.compile(r"[\s_\-.:\[\]()]+")
_DIGIT = re.compile(r"\d")
# A value with more digits than this shows its last four: fewer would show it whole.
_SHOWN_DIGITS = 4
_BULLET = "•"
_MAX_BULLETS = 8


def _words(text: str) -> str:
    return _SEPARATORS.sub(" ", _CAMEL.sub(" ", text)).strip().lower()


def secret_kind(input_type: str, autocomplete: str, names: Iterable[str]) -> Secret | None:
    """The kind of secret a field holds, or None: from its type (``password``), its
    ``autocomplete`` tokens, then what its name, id or label says."""
    if input_type.strip().lower() == "password":
        return Secret.PASSWORD
    tokens = autocomplete.lower().split()
    if tokens and tokens[-1] == "webauthn":
        tokens.pop()
    if tokens and tokens[-1] in _AUTOCOMPLETE:
        return _AUTOCOMPLETE[tokens[-1]]
    words = [_words(name) for name in names if name]
    for pattern, kind in _NAMED:
        if any(pattern.search(said) for said in words):
            return kind
    return None


def mask(kind: Secret, value: str) -> str:
    """What the model is shown of a secret field's value: that it is filled (a bullet a
    character, at most eight), and for a card number its last four digits."""
    if not value:
        return ""
    if kind is Secret.CARD_NUMBER:
        digits = _DIGIT.findall(value)
        if len(digits) > _SHOWN_DIGITS:
            return _BULLET * 4 + " " + "".join(digits[-_SHOWN_DIGITS:])
    return _BULLET * min(len(value), _MAX_BULLETS)
