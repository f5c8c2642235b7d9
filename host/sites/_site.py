"""Sites: what "the same site" means for the envelope (scheme + registrable domain).

`site_of` reads a URL the way the browser's URL parser does where it matters for
safety (backslashes and missing slashes after ``https:``, user info before ``@``,
percent-escapes and IDN in the host, the many spellings of an IPv4 address), so that
no spelling of a URL lands on one site while Trimtab checks another. The registrable
domain comes from the public suffix list that the ``publicsuffixlist`` package ships
(offline: Trimtab never fetches a list), so ``evil.example.com.attacker.net`` is
``attacker.net`` and ``a.github.io`` is a site of its own.

A site that is no place a person can be logged in (``data:``, ``javascript:``, an
``about:blank`` whose creator is unknown) is *opaque*: it is never on a list and never
allowed for a task.
"""

from __future__ import annotations

import contextlib
import functools
import ipaddress
import re
import unicodedata
from typing import Final
from urllib.parse import unquote

import attrs
from publicsuffixlist import PublicSuffixList

__all__ = ["Site", "SiteError", "parse_site", "site_note", "site_of"]

# Schemes whose URLs have a host the browser parses (the URL standard's "special").
_SPECIAL: Final = frozenset({"http", "https", "ws", "wss", "ftp"})
_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
# The URL standard removes these anywhere in a URL, and trims C0 controls and spaces.
_TAB_OR_NEWLINE: Final = re.compile(r"[\t\n\r]")
_C0_OR_SPACE: Final = "".join(chr(c) for c in range(0x21))
# Characters a host may not hold (the URL standard's forbidden domain code points).
_FORBIDDEN: Final = frozenset("\x00\t\n\r #/:<>?@[\\]^|%") | frozenset(map(chr, range(0x20)))
# Letters of other scripts that look like Latin ones, for the note that names the
# Latin look-alike of an internationalised name (not exhaustive: the note only helps;
# the decision is by the punycode name, which differs whatever the letters look like).
_LOOK_ALIKES: Final = str.maketrans(
    "аеорсухіјѕԁһӏԛԝвкмнтАВЕКМНОРСТХІЈЅαεοκνρτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdhlqwbkmhtABEKMHOPCTXIJSaeokvptuxABEZHIKMNOPTYX",
)


class SiteError(ValueError):
    """A text that is not a site (``parse_site``)."""


@attrs.frozen(order=True)
class Site:
    """A scheme and a registrable domain (or an IP address, or a host of its own).

    ``str(site)`` is how Trimtab names it: ``https://example.com``; an opaque site
    (``data:``, ``javascript:``, an ``about:blank`` of unknown creator) is its scheme
    and a colon, and text that is no URL at all is "(no site)".
    """

    scheme: str
    host: str = ""
    opaque: bool = False

    def __str__(self) -> str:
        if self.opaque:
            return f"{self.scheme}:" if self.scheme else "(no site)"
        return f"{self.scheme}://{self.host}"

    @classmethod
    def none(cls, scheme: str) -> Site:
        """The opaque site of a URL with this scheme."""
        return cls(scheme=scheme, host="", opaque=True)


def site_of(url: str, *, creator: Site | None = None) -> Site:
    """The site of ``url``; ``about:blank`` and ``about:srcdoc`` take ``creator``'s
    site when it is known (a pop-up its opener writes into is its opener's site)."""
    text = _TAB_OR_NEWLINE.sub("", url.strip(_C0_OR_SPACE))
    match = _SCHEME.match(text)
    if match is None:
        return Site.none("")
    scheme = match.group()[:-1].lower()
    rest = text[match.end() :]
    if scheme == "about":
        return creator if creator is not None else Site.none("about")
    if scheme == "blob":
        # A blob's URL holds the origin of the document that made it.
        inner = site_of(rest)
        return inner if inner.scheme in _SPECIAL | {"file"} else Site.none("blob")
    if scheme == "file":
        # file://server/share names a server; file:///path (and file:/path) none.
        rest = rest.replace("\\", "/")
        authority = _authority(rest, special=False) if rest.startswith("//") else ""
        return Site("file", _host(authority).lower() if authority else "")
    if scheme in _SPECIAL:
        return Site(scheme, _registrable(_host(_authority(rest, special=True))))
    if not rest.startswith("//"):
        # data:, javascript:, mailto: and the like: no host, so no site.
        return Site.none(scheme)
    # chrome://settings, chrome-extension://<id>: each host a site of its own.
    return Site(scheme, _host(_authority(rest, special=False)).lower())


def parse_site(text: str) -> Site:
    """The site a person wrote (``https://example.com``, or any URL of it), for the
    always and never lists; `SiteError` naming the text when it names no site."""
    if not isinstance(text, str) or not text.strip():
        raise SiteError(f"{text!r:.80} is not a site")
    site = site_of(text)
    if site.opaque or not site.scheme or (site.scheme != "file" and not site.host):
        raise SiteError(
            f"{text[:80]!r} is not a site: write one like https://example.com "
            "(a scheme and a domain or an IP address)"
        )
    return site


def site_note(site: Site) -> str | None:
    """What a person should know about a site beyond its name, in Trimtab's words, or
    None: an internationalised name and its look-alike, an IP address, plain http."""
    notes: list[str] = []
    shown = _unicode(site.host)
    if shown != site.host:
        note = f"its name is written {shown!r} with letters of other alphabets"
        latin = unicodedata.normalize("NFKC", shown).translate(_LOOK_ALIKES)
        if latin.isascii() and latin != shown:
            note += f"; it is not {latin} (Latin letters), which it may look like"
        notes.append(note)
    if _is_ip(site.host):
        notes.append("it is an IP address, not a named site")
    if site.scheme == "http":
        notes.append(f"it is plain http (not encrypted), a different site from https://{site.host}")
    if site.scheme == "file":
        notes.append("it is a file on this computer")
    if site.opaque:
        notes.append("it is a page with no site of its own")
    return "; ".join(notes) or None


# --- the host -------------------------------------------------------------------------


def _authority(rest: str, *, special: bool) -> str:
    """The authority after ``scheme:``: backslashes count as slashes for special
    schemes, and any number of them may (or may not) precede it, as the browser reads
    ``https:\\\\attacker.net`` or ``https:attacker.net``."""
    rest = rest.replace("\\", "/").lstrip("/") if special else rest[2:]
    end = len(rest)
    for stop in "/?#":
        found = rest.find(stop)
        if found != -1:
            end = min(end, found)
    authority = rest[:end]
    # User info ("user:password@") comes before the last @.
    return authority.rpartition("@")[2]


def _host(authority: str) -> str:
    """The host of an authority, canonical: no port, lower case, punycode, IPv4 in
    dotted decimal, IPv6 compressed in brackets; a host the browser would refuse is
    returned as written (lower case), which no list or task holds."""
    if authority.startswith("["):
        inside, _, _ = authority[1:].partition("]")
        try:
            return f"[{ipaddress.IPv6Address(inside).compressed}]"
        except ValueError:
            return authority.lower()
    host = authority.partition(":")[0]
    try:
        decoded = unquote(host, errors="strict")
    except UnicodeDecodeError:
        return host.lower()
    decoded = decoded.rstrip(".") if decoded.strip(".") else decoded
    if not decoded or any(ch in _FORBIDDEN for ch in decoded):
        return host.lower()
    ipv4 = _ipv4(decoded)
    if ipv4 is not None:
        return ipv4
    try:
        return decoded.encode("idna").decode("ascii").lower()
    except UnicodeError:
        # A label the codec refuses (too long, an empty label): punycode each label,
        # so that two spellings never collapse into one name.
        return ".".join(_punycode(label) for label in decoded.lower().split("."))


def _punycode(label: str) -> str:
    return label if label.isascii() else "xn--" + label.encode("punycode").decode("ascii")


def _ipv4(host: str) -> str | None:
    """The URL standard's IPv4 parser: ``0x7f.1``, ``2130706433`` and ``0177.0.0.1``
    are all 127.0.0.1; None when the host is a domain name."""
    parts = host.split(".")
    if not parts[-1] or not _numeric(parts[-1]):
        return None
    if len(parts) > 4:
        return None
    numbers: list[int] = []
    for part in parts:
        if not _numeric(part):
            return None
        numbers.append(_number(part))
    if any(n > 255 for n in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        return None
    value = numbers[-1]
    for index, number in enumerate(numbers[:-1]):
        value += number * 256 ** (3 - index)
    return str(ipaddress.IPv4Address(value))


def _numeric(part: str) -> bool:
    if part[:2].lower() == "0x":
        return all(ch in "0123456789abcdefABCDEF" for ch in part[2:])
    return part.isascii() and part.isdigit()


def _number(part: str) -> int:
    if part[:2].lower() == "0x":
        return int(part[2:] or "0", 16)
    if len(part) > 1 and part.startswith("0"):
        return int(part, 8) if all(ch in "01234567" for ch in part) else 256**4
    return int(part)


def _is_ip(host: str) -> bool:
    return host.startswith("[") or _ipv4(host) == host


@functools.cache
def _suffixes() -> PublicSuffixList:
    # The list the package ships (ICANN and private sections, as browsers use it).
    return PublicSuffixList()


def _registrable(host: str) -> str:
    """The registrable domain of a canonical host; an IP address, a single label
    (``localhost``) or a public suffix itself (``github.io``) stands for itself."""
    if not host or _is_ip(host) or any(ch in _FORBIDDEN for ch in host):
        return host
    found = _suffixes().privatesuffix(host)
    return found if found is not None else host


def _unicode(host: str) -> str:
    """The host as a person reads it (punycode labels decoded), for the notes."""
    labels = []
    for label in host.split("."):
        if label.startswith("xn--"):
            with contextlib.suppress(UnicodeError):
                label = label[4:].encode("ascii").decode("punycode")
        labels.append(label)
    return ".".join(labels)
