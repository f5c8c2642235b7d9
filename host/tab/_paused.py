"""What the request guard pauses and decides, as records: the paused request, the
judge's ruling, what was held; and the Fetch patterns the guard pauses with."""

from __future__ import annotations

import base64
import binascii
import contextlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final
from urllib.parse import quote, quote_plus

import attrs
import trio

from pycdp_bridge import Event

from ..pipeline import credentials
from ._downloads import DownloadFile

__all__ = [
    "GUARDED_TYPES",
    "Held",
    "Judge",
    "OpenedTab",
    "PausedKey",
    "PausedRequest",
    "Ruling",
    "body_of",
    "patterns_for",
    "paused_key",
]

# The resource types the guard pauses: every kind that can send a body or go to a site
# as a document. Images, scripts, styles, fonts and media only ever GET.
GUARDED_TYPES: Final = ("Document", "XHR", "Fetch", "Ping", "Other")
PATTERNS: Final = (
    *(
        {"urlPattern": "*", "resourceType": kind, "requestStage": "Request"}
        for kind in GUARDED_TYPES
    ),
    # A download starts as a document response: it is held before the browser saves it.
    {"urlPattern": "*", "resourceType": "Document", "requestStage": "Response"},
)
FORM_REASONS: Final = frozenset({"formSubmissionGet", "formSubmissionPost"})
# Response codes that send a load on to another URL (with Location): it has not landed.
REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
# Round trips to the browser after it stopped pausing, each followed by taking the
# paused requests reported so far: the browser reports a request paused just before
# it stopped from another thread, and the report may come a moment after its reply.
FLUSHES: Final = 2
# Seconds letting one paused request go (or turning the guard off) may take.
LET_GO_TIMEOUT: Final = 2.0
# The most of a request's body looked at for what the agent typed.
_BODY_LOOKED_AT: Final = 256 * 1024
# A paused request as the browser reports it: its id and whether at the response stage.
PausedKey = tuple[str, bool]


def patterns_for(watched: Sequence[str]) -> list[dict[str, str]]:
    """The Fetch patterns of a guard: the kinds that can send something, and requests of
    any kind whose address holds one of the ``watched`` texts as the browser writes it."""
    found: list[dict[str, str]] = [dict(pattern) for pattern in PATTERNS]
    forms: set[str] = set()
    for text in watched:
        for form in (text, quote(text, safe=""), quote(text), quote_plus(text)):
            forms.update((form, form.lower()))
    for form in sorted(forms):
        # The pattern's wildcards are * and ?, and backslash escapes them.
        glob = form.replace("\\", "\\\\").replace("*", "\\*").replace("?", "\\?")
        found.append({"urlPattern": f"*{glob}*", "requestStage": "Request"})
    return found


def paused_key(event: Event) -> PausedKey:
    """Which paused request (and stage) an event of ``Fetch.requestPaused`` reports."""
    params = event.params
    response = "responseStatusCode" in params or "responseErrorReason" in params
    return str(params.get("requestId")), response


def body_of(request: Mapping[str, Any]) -> str:
    """The request's body as text, as far as the browser reports it (lossy, for matching)."""
    entries = request.get("postDataEntries")
    if isinstance(entries, list) and entries:
        parts: list[bytes] = []
        for entry in entries:
            with contextlib.suppress(binascii.Error, TypeError, ValueError):
                parts.append(base64.b64decode(str(entry.get("bytes", ""))))
        return b"".join(parts)[:_BODY_LOOKED_AT].decode("utf-8", "replace")
    return str(request.get("postData") or "")[:_BODY_LOOKED_AT]


@attrs.frozen
class PausedRequest:
    """One request the page sends during an action, as the browser reports it (facts the
    page cannot fake: the browser's own method, URL and resource type)."""

    method: str
    url: str
    kind: str  # Fetch's resourceType: Document, XHR, Fetch, Ping, Other
    navigation: bool  # the tab's main frame loads a document (a navigation of the tab)
    form: bool  # the browser reported a form submission for this document request
    redirect_of_sent: bool = False  # a redirect of a request the person let go
    response: bool = False  # paused at the response stage
    # At the response stage: the file the browser will save the response as, or None
    # (a response that is no download never reaches the judge).
    download: DownloadFile | None = None
    opened: bool = False  # the first document of a tab or pop-up the action opened
    # The response that ends the load of a tab the action opened (no redirect).
    lands: bool = False
    body: str = ""  # the request's body, as far as the browser reports it


@attrs.define(eq=False)
class OpenedTab:
    """A tab the action opened, as its guard saw it: its first document request and
    what became of it (`decided` is set once it was sent or failed), and whether its
    load landed (`landed`: its redirects were all judged, or it was refused)."""

    url: str = ""
    sent: bool | None = None  # None: no document request was decided (yet)
    why: str = ""
    decided: trio.Event = attrs.field(factory=trio.Event)
    landed: trio.Event = attrs.field(factory=trio.Event)

    def ruled(self, url: str, send: bool, why: str) -> None:
        """A document request of the tab's load was decided: the first decides what the
        answer says, and a later refusal (a redirect elsewhere) overrides it."""
        if not self.decided.is_set() or not send:
            self.url, self.sent, self.why = url, send, why
            self.decided.set()
        if not send:
            self.landed.set()  # the load ends here: nothing more of it is sent


@attrs.frozen
class Ruling:
    """The judge's decision on one paused request."""

    send: bool
    held: bool = False  # it was held for a decision: asked about, or refused by policy
    why: str = ""  # for a held request: what became of it, in Trimtab's words


# Decides on a paused request; the second argument names the element acted on.
Judge = Callable[[PausedRequest, str | None], Awaitable[Ruling]]


@attrs.frozen
class Held:
    """A request the guard held during the call, and what became of it."""

    method: str
    url: str
    sent: bool
    form: bool
    why: str
    download: DownloadFile | None = None  # the file the response would be saved as

    def to_json(self) -> dict[str, object]:
        found: dict[str, object] = {
            "method": self.method,
            # A reply reaches clients and scripts (``--json``): credentials hidden.
            "url": credentials.hide_url(self.url),
            "sent": self.sent,
            "form": self.form,
        }
        if self.download is not None:
            file = self.download
            found["download"] = {"name": file.name, "size": file.size, "type": file.mime}
        return found

    def note(self) -> str:
        """What the tool's answer says about it (the URL is the page's, shortened, its
        credentials hidden)."""
        url = credentials.hide_url(self.url)[:200]
        if self.download is not None:
            file = self.download
            facts = ", ".join(filter(None, (f"{file.size} bytes" if file.size else "", file.mime)))
            name = file.name[:200] + (f" ({facts})" if facts else "")
            return f"The download of {name} from {url} was held: {self.why}"
        return f"{self.method} {url} was held: {self.why}"
