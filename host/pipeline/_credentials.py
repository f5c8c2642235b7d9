"""Credentials: which names and values carry one, and how they are hidden.

An API key, a token, a session, a signature, a CSRF token, a password or a cookie
never reaches the model, whatever the page calls it. One rule decides, for every
place beside the page's visible text where page data reaches the model (``console``,
``network``, ``evaluate``'s value, error texts, the URLs tools show):

- **By name.** A header, query parameter, form or JSON field, an HTML field or meta
  tag, or ``name=value`` / ``name: value`` in text, whose name's last word says key,
  token, secret, auth, session, signature (``sig``), csrf, password or cookie: its
  value reads ``(hidden)``. Names are split into words (camelCase, snake_case, kebab-case), so
  ``keyboard``, ``author`` or ``sessionStorage`` are no credential; a trailing
  ``id`` or ``value`` is skipped (``session_id``). A bare ``key`` counts in URLs and
  headers only: a JSON ``{"key": "Enter"}`` is a keyboard's.
- **By look.** A JWT and a known vendor's key (``sk_live_…``, ``ghp_…``, ``AKIA…``)
  anywhere, and in text a long random token (24 or more characters mixing upper and
  lower case and digits), are shortened to their first four characters and ``…``;
  the credential after ``Bearer`` or ``Basic`` reads ``(hidden)``.

The page's visible text is not touched: what a person sees is the page (a password
field's value is hidden by `trimtab.pipeline` secret fields' own rule).

Pure and without I/O; hiding is idempotent (hiding twice is hiding once).
"""

from __future__ import annotations

import html
import itertools
import re
import urllib.parse
from typing import Final

from . import _xml as xml

__all__ = [
    "HIDDEN",
    "hide_attributes",
    "hide_header",
    "hide_text",
    "hide_url",
    "hide_value",
    "is_credential_name",
    "looks_like_credential",
    "shorten",
]

HIDDEN: Final = "(hidden)"
"""What a credential's value reads."""
_SHOWN: Final = 4
_ELLIPSIS: Final = "…"
_MIN_RANDOM: Final = 24
# Of a random token's neighbouring characters this share at least changes between
# upper case, lower case, digit and other; words (camelCase) change far less often.
_RANDOM_CHANGES: Final = 0.35
# Each case is at least this share of a random token's characters; in camelCase words
# the capitals are one a word.
_CASE_SHARE: Final = 0.2

# The last word of a credential's name.
_KINDS: Final = frozenset(
    {
        "key",
        "apikey",
        "token",
        "tokens",
        "secret",
        "secrets",
        "auth",
        "authorization",
        "session",
        "sessionid",
        "sessid",
        "sid",
        "signature",
        "sig",
        "csrf",
        "xsrf",
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "cookie",
        "cookies",
        "credential",
        "credentials",
        "jwt",
        "bearer",
        "otp",
        "hmac",
    }
)
# One-word names that end like one: ``csrfmiddlewaretoken``, ``PHPSESSID``.
_ENDINGS: Final = (
    "token",
    "tokens",
    "secret",
    "sessid",
    "sessionid",
    "password",
    "passwd",
    "apikey",
    "authkey",
    "accesskey",
    "secretkey",
    "privatekey",
)
_STARTS: Final = ("csrf", "xsrf")
# Words after the kind that name a part of it: ``session_id``, ``api_key_value``.
_TRAILING: Final = frozenset(
    {"id", "ids", "value", "data", "string", "str", "hash", "header", "param", "raw"}
    | {"b64", "base64", "hex", "encoded"}
)
# Values that say nothing secret whatever they are named (a flag, nothing set).
_PLAIN_VALUES: Final = frozenset({"", "true", "false", "null", "undefined", "none"})

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NOT_WORD = re.compile(r"[^a-z0-9]+")

_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*")
_VENDOR = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    r"(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{10,}"  # Stripe
    r"|sk-[A-Za-z0-9_-]{20,}"  # OpenAI, Anthropic
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"  # GitHub
    r"|glpat-[A-Za-z0-9_-]{20,}"  # GitLab
    r"|xox[abposr]-[A-Za-z0-9-]{10,}"  # Slack
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"  # AWS
    r"|AIza[0-9A-Za-z_-]{35}|ya29\.[0-9A-Za-z_-]{20,}"  # Google
    r"|hf_[A-Za-z0-9]{30,}|npm_[A-Za-z0-9]{36}"
    r")"
)
_RUN = re.compile(rf"(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{{{_MIN_RANDOM},}}(?![A-Za-z0-9_-])")
# The credential after an Authorization scheme: 8 or more token characters, not a
# plain word ("Basic authentication").
_SCHEME_CREDENTIAL = re.compile(
    r"\b(Bearer|Basic|bearer|basic)([ \t]+)(?!\(hidden\))"
    r"(?=[A-Za-z0-9._~+/=-]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{8,}"
)
# A URL in text: it is hidden as a URL (parameters by name, a bare ``key`` too).
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]{1,15}://[^\s\"'<>`]+")
# A parameter in a URL: in its query, its fragment, or a path's ``;jsessionid=``.
_URL_PARAMETER = re.compile(r"(?P<lead>[?&;#])(?P<name>[^=&;#?/\s]+)=(?P<value>[^&;#?\s]*)")
_USERINFO = re.compile(r"^(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^/?#@:]*):(?P<pw>[^/?#@]*)@")
# ``name=value``, ``name: value``, ``"name": "value"`` in text (a cookie, a form body,
# JSON, an object a console message previews).
_PAIR = re.compile(
    r"""(?<![\w$.-])(?P<name>[A-Za-z_$][\w$.-]{0,80})
        (?P<separator>["']?[ \t]*[:=][ \t]*)
        (?![=>]|\(hidden\))
        (?P<value>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'
            |(?:(?i:bearer|basic)[ \t]+)?[^\s&;,"'<>()\[\]{}]+)""",
    re.VERBOSE,
)
# An HTML field or meta tag named like a credential, in a body: ``<meta
# name="csrf-token" content="…">``, ``<input name="authenticity_token" value="…">``.
_HTML_NAMED = re.compile(
    r"""\b(?:name|id|property)[ \t]*=[ \t]*(?P<q1>["'])(?P<name>[^"'<>]{1,80})(?P=q1)
        (?P<between>[^<>]*?\b(?:content|value)[ \t]*=[ \t]*)
        (?P<q2>["'])(?P<value>[^"'<>]*)(?P=q2)""",
    re.VERBOSE,
)
_URL_ATTRIBUTE = re.compile(r'(?P<head>\s(?:url|href|src|action)=")(?P<value>[^"]*)"')


def _words(name: str) -> list[str]:
    return [word for word in _NOT_WORD.split(_CAMEL.sub(" ", name).lower()) if word]


def is_credential_name(name: str, *, bare_key: bool = True) -> bool:
    """Whether a header, parameter or field called `name` holds a credential: its last
    word (a trailing ``id``, ``value``, … skipped) says key, token, secret, auth,
    session, signature, csrf, password or cookie. `bare_key`: whether ``key`` alone
    counts (in URLs and headers; not in JSON or text, where it is a keyboard's or a
    key-value pair's)."""
    words = _words(name)
    while len(words) > 1 and words[-1] in _TRAILING:
        words.pop()
    if not words:
        return False
    last = words[-1]
    if words == ["key"]:
        return bare_key
    return last in _KINDS or last.endswith(_ENDINGS) or last.startswith(_STARTS)


def _kind(char: str) -> int:
    if "a" <= char <= "z":
        return 0
    if "A" <= char <= "Z":
        return 1
    if "0" <= char <= "9":
        return 2
    return 3


def _random(run: str) -> bool:
    """Whether a run of token characters looks random: long, with digits, as many
    capitals as small letters give or take, and changing between them as often as
    chance does (camelCase words have few capitals and change seldom)."""
    if len(run) < _MIN_RANDOM:
        return False
    kinds = [_kind(char) for char in run]
    if 2 not in kinds or min(kinds.count(0), kinds.count(1)) < _CASE_SHARE * len(run):
        return False
    changes = sum(a != b for a, b in itertools.pairwise(kinds))
    return changes >= _RANDOM_CHANGES * (len(run) - 1)


def looks_like_credential(value: str) -> bool:
    """Whether `value` as a whole looks like a credential: a JWT, a known vendor's key,
    a long random token, or one after ``Bearer``/``Basic``."""
    value = value.strip()
    return bool(
        _JWT.fullmatch(value)
        or _VENDOR.fullmatch(value)
        or (_RUN.fullmatch(value) and _random(value))
        or _SCHEME_CREDENTIAL.fullmatch(value)
    )


def shorten(value: str) -> str:
    """A credential found by its look: its first characters and ``…`` (enough to tell
    two apart, nothing to use)."""
    return value[:_SHOWN] + _ELLIPSIS


def _strong(text: str) -> str:
    """JWTs and known vendors' keys in `text` shortened: they are credentials wherever
    they stand, a URL's path included."""
    text = _JWT.sub(lambda m: shorten(m[0]), text)
    return _VENDOR.sub(lambda m: shorten(m[0]), text)


def hide_url(url: str) -> str:
    """`url` with the values of its credential parameters (query, fragment, a path's
    ``;jsessionid=``) and its password hidden, and JWTs and vendors' keys in it
    shortened; everything else as it was."""

    def parameter(match: re.Match[str]) -> str:
        name = urllib.parse.unquote_plus(match["name"])
        value = match["value"]
        if value and value != HIDDEN and is_credential_name(name):
            value = HIDDEN
        return f"{match['lead']}{match['name']}={value}"

    url = _USERINFO.sub(lambda m: f"{m['head']}:{HIDDEN}@" if m["pw"] else m[0], url)
    return _strong(_URL_PARAMETER.sub(parameter, url))


def hide_header(name: str, value: str) -> str:
    """A header's value as shown: ``(hidden)`` for a credential's name (``Cookie``,
    ``X-Api-Key``), else the value with what looks like one hidden (`hide_text`)."""
    if is_credential_name(name) and value.strip().lower() not in _PLAIN_VALUES:
        return HIDDEN
    return hide_text(value)


def _hide_pair(match: re.Match[str]) -> str:
    value = match["value"]
    quote = value[0] if value[:1] in ('"', "'") else ""
    bare = value[1:-1] if quote else value
    if bare.strip().lower() in _PLAIN_VALUES or not is_credential_name(
        match["name"], bare_key=False
    ):
        return match[0]
    return f"{match['name']}{match['separator']}{quote}{HIDDEN}{quote}"


def _hide_html_named(match: re.Match[str]) -> str:
    value = match["value"]
    if value.strip().lower() in _PLAIN_VALUES or not is_credential_name(
        match["name"], bare_key=False
    ):
        return match[0]
    start, end = match.span("value")
    whole = match.start()
    return match[0][: start - whole] + HIDDEN + match[0][end - whole :]


def _hide_pairs(text: str) -> str:
    """Every credential pair of `text` hidden. A pair that is none (``failed:
    token=…``) gives back its value, to be read again: it may begin another pair."""
    parts: list[str] = []
    at = 0
    while (match := _PAIR.search(text, at)) is not None:
        hidden = _hide_pair(match)
        if hidden == match[0]:
            parts.append(text[at : match.start("value")])
            at = match.start("value")
        else:
            parts += [text[at : match.start()], hidden]
            at = match.end()
    parts.append(text[at:])
    return "".join(parts)


def _hide_prose(text: str) -> str:
    text = _hide_pairs(text)
    text = _HTML_NAMED.sub(_hide_html_named, text)
    text = _SCHEME_CREDENTIAL.sub(lambda m: f"{m[1]}{m[2]}{HIDDEN}", text)
    text = _strong(text)
    return _RUN.sub(lambda m: shorten(m[0]) if _random(m[0]) else m[0], text)


def hide_text(text: str) -> str:
    """Free text (a console message, a body, an error) with every credential hidden:
    URLs in it by `hide_url`, ``name=value`` and ``name: value`` pairs (JSON and
    form bodies, cookies) by name, and what looks like a credential shortened."""
    parts: list[str] = []
    last = 0
    for match in _URL.finditer(text):
        parts += [_hide_prose(text[last : match.start()]), hide_url(match[0])]
        last = match.end()
    parts.append(_hide_prose(text[last:]))
    return "".join(parts)


def _hidden_leaf(value: object, name: str) -> object:
    """A value under a credential's name: a string or number reads ``(hidden)``; in a
    list each one does; an object's own fields are judged by their names, read on from
    this one (``session``'s ``id``)."""
    if isinstance(value, str):
        return value if value.strip().lower() in _PLAIN_VALUES else HIDDEN
    if isinstance(value, int | float) and not isinstance(value, bool):
        return HIDDEN
    if isinstance(value, list):
        return [_hidden_leaf(item, name) for item in value]
    return _hide_json(value, name)


def _hide_json(value: object, within: str) -> object:
    if isinstance(value, str):
        return hide_text(value)
    if isinstance(value, list):
        return [_hide_json(item, within) for item in value]
    if not isinstance(value, dict):
        return value
    said = value.get("name", value.get("key"))
    named = isinstance(said, str) and is_credential_name(said, bare_key=False)
    shown: dict[object, object] = {}
    for key, item in value.items():
        name = str(key)
        # A field of a credential's object is named on from it: session.id.
        credential = is_credential_name(name, bare_key=False) or (
            within != "" and is_credential_name(f"{within}_{name}", bare_key=False)
        )
        if credential or (named and name == "value"):
            shown[key] = _hidden_leaf(item, name)
        else:
            shown[key] = _hide_json(item, "")
    return shown


def hide_value(value: object) -> object:
    """A JSON value (``evaluate``'s) with every credential hidden: fields by their
    names (a credential's object's fields named on from it, ``session.id``; and
    ``{"name": "X-Api-Key", "value": …}`` pairs by theirs), strings as text
    (`hide_text`)."""
    return _hide_json(value, "")


def hide_attributes(written: str) -> str:
    """XML Trimtab wrote with the URLs of its ``url``, ``href``, ``src`` and ``action``
    attributes hidden (`hide_url`): the page's own address, a link's target, a tab's
    address. Element text, which a person sees on the page, is left alone."""

    def attribute(match: re.Match[str]) -> str:
        url = html.unescape(match["value"])
        hidden = hide_url(url)
        if hidden == url:
            return match[0]
        return f'{match["head"]}{xml.attr(hidden)}"'

    return _URL_ATTRIBUTE.sub(attribute, written)
