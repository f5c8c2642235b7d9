"""Where `evaluate` runs without asking: the person's "always" for one code on one site.

"Always" to an `evaluate` question covers the code the person was shown, on the page's
site, and nothing else: the host keeps the pair (site, SHA-256 of the exact code text)
and a later call runs unasked only when its site and its code are that pair. The code
is compared as the exact text that runs: no trimming, no whitespace, case or Unicode
normalisation, so one different character (a space, a zero-width one, another quote)
is other code, and asks again, showing it. The key is computed by the host from the
very text the call runs and the question showed; it only ever grows by the person's
answer to such a question, so nothing a page or the model sends can widen it (the
side panel's settings can only take an entry off).

"Always" is offered only where it can hold: on a page with a site of its own, and for
code the side panel shows whole (`ALWAYS_CODE_MAX`, its ``CODE_SHOWN``; longer code is
cut there, and a person cannot say always to code they did not see). Otherwise the
question offers once and no, and an "always" answer counts as once.

Kept in ``evaluate.json`` beside ``sites.json`` (0600, written whole), each entry with
its code, so that the person reads in the settings what runs unasked where.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import attrs

from ..sites import Site, SiteError, parse_site
from ._files import read_or_set_aside, write_whole

__all__ = [
    "ALWAYS_CODE_MAX",
    "EVALUATE_FILE",
    "MAX_ALWAYS",
    "AlwaysCode",
    "EvaluateAlways",
    "code_digest",
]

log = logging.getLogger("trimtab.envelope")

EVALUATE_FILE: Final = "evaluate.json"
# The side panel shows an evaluate question's code whole up to this many characters
# (``CODE_SHOWN`` in extension/shared/questions.js) and cuts longer code: "always" is
# offered only for code shown whole.
ALWAYS_CODE_MAX: Final = 4000
# More codes than a person allows by hand; a bigger file is not theirs.
MAX_ALWAYS: Final = 1000
_DIGEST: Final = re.compile(r"[0-9a-f]{64}")


def code_digest(code: str) -> str:
    """The SHA-256 of ``code``'s exact text (UTF-8; a lone surrogate kept as it is, so
    two different texts never share a digest), as 64 hex digits."""
    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()


def shown_length(code: str) -> int:
    """``code``'s length as the side panel counts it (JavaScript's, in UTF-16 units: a
    character beyond the BMP counts two), for `ALWAYS_CODE_MAX`."""
    return len(code.encode("utf-16-le", "surrogatepass")) // 2


@attrs.frozen
class AlwaysCode:
    """One "always": this code (``sha256`` of ``code``) runs unasked on ``site``."""

    site: Site
    code: str
    # Computed from ``code``, never given: the digest is always the code's own.
    sha256: str = attrs.field(init=False)

    @sha256.default
    def _digest(self) -> str:
        return code_digest(self.code)

    def to_json(self) -> dict[str, str]:
        return {"site": str(self.site), "sha256": self.sha256, "code": self.code}


@attrs.define(eq=False)
class EvaluateAlways:
    """The person's "always" answers to `evaluate` questions, by site and exact code.

    ``folder`` is where ``evaluate.json`` lives (the host's state folder); None keeps
    the list in memory only.
    """

    folder: Path | None = None
    _entries: dict[tuple[Site, str], AlwaysCode] = attrs.field(factory=dict)

    @classmethod
    def load(cls, folder: Path | None) -> EvaluateAlways:
        """The list kept in ``folder``; a file that cannot be read (an earlier version's
        list of whole sites among them) is set aside, so nothing runs unasked."""
        found = None
        if folder is not None:
            found = read_or_set_aside(folder / EVALUATE_FILE, _entries_of, "evaluate list")
        return cls(folder, {(e.site, e.sha256): e for e in found or ()})

    def allows(self, site: Site | None, code: str) -> bool:
        """Whether ``code``, exactly this text, may run unasked on ``site``."""
        if site is None or site.opaque:
            return False
        entry = self._entries.get((site, code_digest(code)))
        # The text itself too: the digest finds the entry, the exact text decides.
        return entry is not None and entry.code == code

    @staticmethod
    def can_remember(site: Site | None, code: str) -> bool:
        """Whether an "always" for ``code`` on ``site`` can be kept: a site of its own,
        and code the question showed whole."""
        return site is not None and not site.opaque and shown_length(code) <= ALWAYS_CODE_MAX

    def remember(self, site: Site, code: str) -> None:
        """The person's "always" to ``code`` on ``site`` (which `can_remember`); saved."""
        if not self.can_remember(site, code):
            raise ValueError(
                f"an always for {shown_length(code)} characters of code on {site} cannot hold"
            )
        entry = AlwaysCode(site, code)
        if (site, entry.sha256) in self._entries:
            return
        if len(self._entries) >= MAX_ALWAYS:
            # The oldest goes: it is asked about again, never allowed more widely.
            oldest = self._entries.pop(next(iter(self._entries)))
            log.info("the evaluate list is full: an oldest code (%s) asks again", oldest.site)
        self._entries[site, entry.sha256] = entry
        try:
            self.save()
        except OSError as exc:
            # The yes still holds while the host runs; the person sees the list.
            log.warning("the evaluate list could not be saved: %s", exc)

    def remove(self, site: object, sha256: object) -> None:
        """Take one entry off (the person's Remove in the settings), saved; an entry
        that is not there is no error. `ValueError` naming a bad site or digest."""
        if not isinstance(site, str):
            raise SiteError(f"{site!r:.80} is not a site")
        if not isinstance(sha256, str) or not _DIGEST.fullmatch(sha256):
            raise ValueError(f"sha256 must be 64 lowercase hex digits; got {sha256!r:.80}")
        key = (parse_site(site), sha256)
        if key in self._entries:
            # Saved first: a list that could not be saved is not changed either.
            kept = {k: entry for k, entry in self._entries.items() if k != key}
            self.save(kept)
            self._entries = kept

    def listed(self) -> dict[str, list[dict[str, str]]]:
        """The entries as the side panel shows them: site, digest and code each."""
        return _listed(self._entries)

    def save(self, entries: Mapping[tuple[Site, str], AlwaysCode] | None = None) -> None:
        """Write these entries, or the list's own, to ``evaluate.json`` (0600, whole)."""
        if self.folder is not None:
            kept = self._entries if entries is None else entries
            write_whole(self.folder, EVALUATE_FILE, _listed(kept))


def _listed(entries: Mapping[tuple[Site, str], AlwaysCode]) -> dict[str, list[dict[str, str]]]:
    ordered = sorted(entries.values(), key=lambda e: (str(e.site), e.code))
    return {"always": [entry.to_json() for entry in ordered]}


def _entries_of(raw: object) -> list[AlwaysCode]:
    if isinstance(raw, Mapping) and "sites" in raw:
        raise SiteError(
            "it is an earlier version's list of whole sites; always now covers one code "
            "on one site, so those sites ask again"
        )
    entries = raw.get("always") if isinstance(raw, Mapping) else None
    if not isinstance(entries, list):
        raise SiteError(f"the evaluate list must be {{'always': [...]}}; got {raw!r:.80}")
    if len(entries) > MAX_ALWAYS:
        raise SiteError(f"the evaluate list holds {len(entries)} entries; at most {MAX_ALWAYS}")
    return [_entry_of(entry) for entry in entries]


def _entry_of(raw: object) -> AlwaysCode:
    if not isinstance(raw, Mapping):
        raise SiteError(f"an evaluate entry must be an object; got {raw!r:.80}")
    site, code, sha256 = raw.get("site"), raw.get("code"), raw.get("sha256")
    if not isinstance(site, str):
        raise SiteError(f"{site!r:.80} is not a site")
    if not isinstance(code, str) or shown_length(code) > ALWAYS_CODE_MAX:
        raise SiteError(f"the code of the entry for {site[:80]!r} is no code shown whole")
    entry = AlwaysCode(parse_site(site), code)
    if sha256 != entry.sha256:
        # Edited by hand: the digest must be the code's, or the entry says one thing
        # to the person and allows another.
        raise SiteError(f"the entry for {site[:80]!r} has sha256 {sha256!r:.80}, not its code's")
    return entry
