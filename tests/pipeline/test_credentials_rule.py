"""The one rule for credentials (``trimtab.pipeline.credentials``), as properties: a
name is a credential by what its last word says, in any spelling, and ordinary names
that only contain such a word are not; a credential's value never survives in a URL,
a header, text or JSON, whatever surrounds it; everything else is left exactly as
it was; what looks like a credential is shortened; hiding twice is hiding once."""

from __future__ import annotations

import random
import string
import urllib.parse

from hypothesis import example, given, settings
from hypothesis import strategies as st
from lxml import etree

from trimtab.browser._outcomes import text_outcome
from trimtab.pipeline import credentials, xml
from trimtab.tab import Held

HIDDEN = credentials.HIDDEN
# Words before the kind in real credentials' names (``X-Api-Key``, ``refresh_token``).
PREFIXES = ("x", "api", "access", "refresh", "client", "private", "my", "app", "amz", "goog")
KINDS = ("token", "secret", "auth", "session", "signature", "sig", "csrf", "password", "cookie")
TRAILING = ("", "id", "value")
# Ordinary words, some of which hold a kind inside them or come after one.
ORDINARY = (
    "content",
    "type",
    "user",
    "agent",
    "keyboard",
    "monkey",
    "author",
    "authority",
    "storage",
    "code",
    "name",
    "page",
    "count",
    "timeout",
    "url",
    "expires",
    "in",
    "request",
    "accept",
    "language",
    "signed",
    "hotkey",
)


def spell(words: list[str], style: str) -> str:
    """``words`` as a name in one of the spellings pages use."""
    if style == "snake":
        return "_".join(words)
    if style == "kebab":
        return "-".join(w.capitalize() for w in words)
    if style == "upper":
        return "_".join(words).upper()
    if style == "camel":
        return words[0] + "".join(w.capitalize() for w in words[1:])
    return "".join(w.capitalize() for w in words)  # Pascal


STYLES = st.sampled_from(["snake", "kebab", "upper", "camel", "pascal"])


@st.composite
def credential_names(draw: st.DrawFn) -> str:
    """A credential's name: some prefix words, a kind (``key`` after a prefix), and
    maybe a trailing ``id``/``value``."""
    prefix = draw(st.lists(st.sampled_from(PREFIXES), max_size=2))
    kind = draw(st.sampled_from(KINDS + (("key",) if prefix else ())))
    trailing = draw(st.sampled_from(TRAILING))
    return spell([*prefix, kind, *([trailing] if trailing else [])], draw(STYLES))


@st.composite
def ordinary_names(draw: st.DrawFn) -> str:
    """A name whose last word is ordinary, a kind perhaps before it (``sessionStorage``,
    ``token_type``, ``keyCode``)."""
    before = draw(st.lists(st.sampled_from(ORDINARY + KINDS + ("key",)), max_size=2))
    last = draw(st.sampled_from(ORDINARY))
    return spell([*before, last], draw(STYLES))


# A secret value: token characters, never one of the values that say nothing.
SECRET_VALUES = st.from_regex(r"[A-Za-z0-9._~-]{6,40}", fullmatch=True).filter(
    lambda v: v.lower() not in {"true", "false", "null", "undefined", "none"}
)
PLAIN_VALUES = st.from_regex(r"[a-z0-9]{1,12}", fullmatch=True)


@given(credential_names())
@example("Authorization")
@example("Proxy-Authorization")
@example("Set-Cookie")
@example("X-Api-Key")
@example("X-Auth-Token")
@example("Private-Token")
@example("X-CSRF-Token")
@example("X-Amz-Security-Token")
@example("access_token")
@example("PHPSESSID")
@example("JSESSIONID")
@example("csrfmiddlewaretoken")
@example("authenticity_token")
def test_credential_names_are_credentials(name: str) -> None:
    """Every spelling of a credential's name is one, in JSON and text too."""
    assert credentials.is_credential_name(name)
    assert credentials.is_credential_name(name, bare_key=False)


@given(ordinary_names())
@example("keyboard")
@example("sessionStorage")
@example("token_type")
@example("WWW-Authenticate")
@example("User-Agent")
@example("client_id")
def test_ordinary_names_are_not(name: str) -> None:
    """A name whose last word is ordinary is no credential, whatever comes before it."""
    assert not credentials.is_credential_name(name)


def test_a_bare_key_counts_only_where_it_is_one() -> None:
    """``key`` alone is a credential in a URL or header (``?key=AIza…``), not in JSON
    or text, where it is a keyboard's or a key-value pair's."""
    assert credentials.is_credential_name("key")
    assert not credentials.is_credential_name("key", bare_key=False)
    assert credentials.hide_url("https://maps.example/js?key=K123456&v=3") == (
        f"https://maps.example/js?key={HIDDEN}&v=3"
    )
    assert credentials.hide_value({"key": "Enter", "code": "Enter"}) == {
        "key": "Enter",
        "code": "Enter",
    }


@settings(max_examples=200)
@given(
    st.lists(
        st.tuples(
            st.one_of(credential_names(), ordinary_names()),
            st.one_of(SECRET_VALUES, PLAIN_VALUES),
        ),
        min_size=1,
        max_size=6,
    ),
    st.sampled_from(["?", "#"]),
)
def test_a_url_hides_exactly_its_credential_parameters(
    parameters: list[tuple[str, str]], where: str
) -> None:
    """In a URL's query or fragment, each credential parameter's value reads (hidden)
    and every other parameter, the path and the host are as they were."""
    query = "&".join(f"{name}={value}" for name, value in parameters)
    url = f"https://app.example/v1/items{where}{query}"
    shown = credentials.hide_url(url)
    head, _, rest = shown.partition(where)
    assert head == "https://app.example/v1/items"
    assert [pair.partition("=")[0] for pair in rest.split("&")] == [n for n, _ in parameters]
    for (name, value), pair in zip(parameters, rest.split("&"), strict=True):
        expected = HIDDEN if credentials.is_credential_name(name) else value
        assert pair.partition("=")[2] == expected, (name, shown)
    assert credentials.hide_url(shown) == shown


TEXT_FORMS = (
    "{name}={value}",
    "{name}: {value}",
    '"{name}": "{value}"',
    "'{name}': '{value}'",
    '{{"{name}":"{value}","n":1}}',
    "a=1&{name}={value}&b=2",
    "{name}=Bearer {value}",
    "Set-Cookie: {name}={value}; Path=/",
    "GET https://api.example/x?{name}={value}&page=2 failed",
    '<input type="hidden" name="{name}" value="{value}">',
)
AROUND = ("", "fetch failed:", "state\n", "(", "{", "ok, ")


@settings(max_examples=300)
@given(
    credential_names(),
    SECRET_VALUES,
    st.sampled_from(TEXT_FORMS),
    st.sampled_from(AROUND),
    st.sampled_from(AROUND),
)
def test_a_credential_in_text_is_never_shown(
    name: str, value: str, form: str, before: str, after: str
) -> None:
    """Whatever form text gives a credential (a pair, JSON, a form body, a cookie, a
    URL, an HTML field) and whatever surrounds it, its value is not in the text shown,
    and hiding again changes nothing."""
    if name.lower() == "key" and "https://" not in form:
        name = "api_key"  # a bare key is a credential only in URLs and headers
    said = f"{before} {form.format(name=name, value=value)} {after}"
    shown = credentials.hide_text(said)
    assert value not in shown, shown
    assert HIDDEN in shown
    assert credentials.hide_text(shown) == shown


@settings(max_examples=100)
@given(credential_names(), SECRET_VALUES)
def test_a_credential_header_is_hidden(name: str, value: str) -> None:
    """A header named like a credential shows (hidden), its value nowhere."""
    assert credentials.hide_header(name, value) == HIDDEN
    assert credentials.hide_header(name, f"Bearer {value}") == HIDDEN


@settings(max_examples=300)
@given(
    st.lists(st.sampled_from((*ORDINARY, "the", "a", "is", "failed", "loaded", "ms")), max_size=30),
    st.sampled_from([" ", ", ", ". ", "\n", " - "]),
)
def test_ordinary_text_is_left_alone(words: list[str], joint: str) -> None:
    """Text of ordinary words and numbers, as a console message says it, is shown
    exactly as it was."""
    said = joint.join(words) + " 404 12.5 2024-11-27"
    assert credentials.hide_text(said) == said


JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), SECRET_VALUES, PLAIN_VALUES)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(credential_names(), ordinary_names()), inner, max_size=4),
    ),
    max_leaves=20,
)


def _leaks(value: object, shown: object, named: bool = False) -> list[object]:
    """The strings and numbers under a credential's name in ``value`` that ``shown``
    (its hidden copy, the same shape) still shows."""
    if isinstance(value, dict) and isinstance(shown, dict):
        return [
            leak
            for key in value
            for leak in _leaks(
                value[key], shown[key], credentials.is_credential_name(key, bare_key=False)
            )
        ]
    if isinstance(value, list) and isinstance(shown, list):
        return [leak for a, b in zip(value, shown, strict=True) for leak in _leaks(a, b, named)]
    plain = isinstance(value, str) and value.lower() in {"true", "false", "null", "none", ""}
    secret = isinstance(value, str | int) and not isinstance(value, bool) and not plain
    return [shown] if named and secret and shown != HIDDEN else []


@settings(max_examples=150)
@given(JSON_VALUES)
def test_a_json_value_hides_its_credential_fields(value: object) -> None:
    """``evaluate``'s value keeps its shape (same keys, same lengths), shows no field
    named like a credential, and is hidden once for all."""
    shown = credentials.hide_value(value)

    def same_shape(a: object, b: object) -> bool:
        if isinstance(a, dict):
            return (
                isinstance(b, dict)
                and list(a) == list(b)
                and all(same_shape(a[k], b[k]) for k in a)
            )
        if isinstance(a, list):
            return (
                isinstance(b, list)
                and len(a) == len(b)
                and all(same_shape(x, y) for x, y in zip(a, b, strict=True))
            )
        return not isinstance(b, dict | list)

    assert same_shape(value, shown)
    assert _leaks(value, shown) == []
    assert credentials.hide_value(shown) == shown


@given(st.text(max_size=200))
def test_hiding_twice_is_hiding_once(said: str) -> None:
    """Any text hidden again is unchanged: a hidden value is never hidden anew."""
    once = credentials.hide_text(said)
    assert credentials.hide_text(once) == once


def _jwt(rng: random.Random) -> str:
    alphabet = string.ascii_letters + string.digits + "-_"
    signature = "".join(rng.choice(alphabet) for _ in range(43))
    return "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhZGEiLCJpYXQiOjE3MDB9." + signature


def test_what_looks_like_a_credential_is_shortened() -> None:
    """A JWT, vendors' keys and random tokens anywhere in text are shortened to their
    first 4 characters and …; all but a few in a hundred random 32-character tokens
    are recognised; hex hashes, UUIDs and camelCase identifiers are not touched."""
    rng = random.Random(20261127)
    token = _jwt(rng)
    assert credentials.hide_text(f"auth ok {token}") == "auth ok eyJh…"
    for key in (
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "AKIAIOSFODNN7EXAMPLE",
        "AIzaSyA-1234567890abcdefghijklmnopqrstu",
    ):
        assert credentials.looks_like_credential(key), key
        assert credentials.hide_text(f"using {key} now") == f"using {key[:4]}… now"
    alphabet = string.ascii_letters + string.digits
    tokens = ["".join(rng.choice(alphabet) for _ in range(32)) for _ in range(1000)]
    missed = [t for t in tokens if credentials.hide_text(t) == t]
    assert len(missed) < 30, missed[:5]
    for ordinary in (
        "da39a3ee5e6b4b0d3255bfef95601890afd80709",
        "123e4567-e89b-12d3-a456-426614174000",
        "getElementById2024VersionNumbers",
        "XMLHttpRequestUploadProgressEvent2",
        "Basic authentication is required",
    ):
        assert credentials.hide_text(ordinary) == ordinary


def test_a_urls_password_and_path_session_are_hidden() -> None:
    """A URL's password, a path's ``;jsessionid=`` and a JWT in its path are hidden; the
    user name and the rest stay."""
    jwt = _jwt(random.Random(1))
    url = f"https://ada:pw-123@app.example/reset/{jwt}/go;jsessionid=ABC123?page=2"
    assert credentials.hide_url(url) == (
        f"https://ada:{HIDDEN}@app.example/reset/eyJh…/go;jsessionid={HIDDEN}?page=2"
    )


def test_attributes_hide_urls_and_leave_the_visible_text() -> None:
    """In XML Trimtab wrote, the page's URL and a link's href lose their credentials,
    escaped as before, while the text a person sees stays whole; it still parses."""
    page_url = "https://app.example/cb?code=1&access_token=TOKEN-1&state=x"
    written = (
        xml.start_tag("page", {"url": page_url, "title": "Done"})
        + "\n"
        + xml.element("read", {"tag": "a", "href": "https://y.example/?sig=SIG-2"})
        + "\n"
        + xml.text("Your link: https://y.example/?sig=SIG-2")
        + "\n</page>"
    )
    shown = credentials.hide_attributes(written)
    assert "TOKEN-1" not in shown
    root = etree.fromstring(shown.encode())
    assert root.get("url") == f"https://app.example/cb?code=1&access_token={HIDDEN}&state=x"
    assert root[0].get("href") == f"https://y.example/?sig={HIDDEN}"
    assert "Your link: https://y.example/?sig=SIG-2" in shown
    assert urllib.parse.urlsplit(root.get("url")).netloc == "app.example"


def test_every_outcome_hides_its_error_text() -> None:
    """An outcome the host builds itself (an error, a refusal, the tabs listing) has
    its credentials hidden whoever built it."""
    said = "navigate failed for https://a.example/?access_token=TOK-3: token=TOK-4"
    failed = text_outcome(said, is_error=True)
    assert "TOK-3" not in failed.content
    assert "TOK-4" not in failed.content
    listing = text_outcome('<tabs>\n<tab id="1" url="https://a.example/?sid=S-5">A</tab>\n</tabs>')
    assert "S-5" not in listing.content


def test_a_held_request_in_a_reply_shows_its_url_with_credentials_hidden() -> None:
    """A request the guard held is told to clients (and ``--json`` scripts) with the
    credentials in its URL hidden, the rest of the URL as it was."""
    held = Held(
        method="GET",
        url="https://ads.test/p?q=hello&api_key=Zx9q7Lm2Vb8Rt4Yw1Kp6",
        sent=False,
        form=False,
        why="carries typed text",
    )
    assert held.to_json()["url"] == f"https://ads.test/p?q=hello&api_key={HIDDEN}"
