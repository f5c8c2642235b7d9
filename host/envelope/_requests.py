"""What an action sends: the envelope's one decision on each request the guard holds.

While an agent's action and its settle run, the tab's request guard
(``trimtab.tab``) holds every request the page sends and asks `RequestJudge`, the one
place that decides and asks about them:

* a navigation of the tab to a site the task may not use goes to the site policy
  (`Sites.enter`);
* a request to another site that only reads (GET, HEAD, OPTIONS) is sent: the page
  loads its telemetry pixels, ads and fonts whatever the agent does;
* a request that carries something to another site (a POST, a beacon, a form) goes
  to the site policy like a navigation: the agent's action must not become the way a
  page's text reaches a site the task was not allowed (a ``javascript:`` link that
  beacons the page to an attacker), so the person is asked once per site per task,
  and their always and never lists apply;
* to the task's sites, a request that can change something (a method other than
  GET, HEAD and OPTIONS: a form's POST, a script's POST, PUT, PATCH or DELETE, a
  beacon) and a form's submission of any method are asked about; a no fails them (the
  page sees them fail), a yes sends that one request once;
* the person's yes for a predicted submit sends that one submission without a
  second question: the form's own, or, for a form that submits through its own
  script, the first request it would ask about in its place; anything more the
  action sends is asked about. A yes the person gave beforehand (a routine's step
  marked "don't ask again") holds only for a submission ``granted_only`` says goes
  where the recorded one went (its method and address): any other is asked about;
* a response the browser would save as a file (a download) is asked about
  (what="download"), wherever it comes from, unless the call runs with the person's
  yes for a predicted download (a link with a ``download`` attribute);
* after a no, the call's further requests that would ask are refused without asking;
* a request to another site that carries text the agent typed in this task, or a
  secret field's value (`carried`), is not a read whatever its method: it goes to the
  site policy like a POST (a keystroke logger or an ad network's "instant search"
  would otherwise take what the agent typed along in a GET's address).

After an action that typed, changed a field or clicked, the tab's request guard stays
on for a trailing window (``trimtab.tab``'s `Trailing`): a judge made with ``after``
decides what the page sends then, in the same way, and its questions say the page
sends it after the action ("After the agent typed into it, the page sends ...").

The sites a task may use come from one parameter, `Sites` (the browser builds it
on the site policy, `SitePolicy`, and asks about a site with `decide_site`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Final, Literal, Protocol
from urllib.parse import unquote, unquote_plus

import attrs
import trio

from ._question import Answer, Ask, Question

__all__ = [
    "MIN_CARRIED",
    "SAFE_METHODS",
    "RequestJudge",
    "RequestRuling",
    "SentRequest",
    "Sites",
    "carried",
    "request_verdict",
]

# Methods that only read (RFC 9110's safe methods, TRACE aside: browsers refuse it).
SAFE_METHODS: Final = frozenset({"GET", "HEAD", "OPTIONS"})
# Methods a question names in Trimtab's words; any other is the page's own token.
_NAMED_METHODS: Final = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# The shortest typed text (or secret) looked for in what a page sends to another site.
# Shorter strings (a quantity "2", "yes", a country code, a 3-digit number) turn up by
# chance in nearly every tracking address (ids, counters, hashes), so matching them
# would ask about ordinary traffic; from 4 characters on a chance match is rare.
MIN_CARRIED: Final = 4
# What the action was, once it is over, in the words of a question, by tool.
_DONE: Final = {
    "click": "clicked it",
    "double_click": "double-clicked it",
    "type": "typed into it",
    "press": "pressed the key",
    "select": "chose the option",
    "check": "checked it",
    "drag": "dragged it",
    "answer_dialog": "answered the page's dialog",
    "upload": "gave it the file",
    "fill": "filled in the fields",
}
# What the action is, in the words of a question, by tool.
_DOING: Final = {
    "click": "Clicking it",
    "double_click": "Double-clicking it",
    "type": "Typing into it",
    "press": "Pressing the key",
    "select": "Choosing the option",
    "check": "Checking it",
    "hover": "Moving the mouse over it",
    "scroll": "Scrolling",
    "drag": "Dragging it",
    "answer_dialog": "Answering the page's dialog",
    "upload": "Giving it the file",
    "fill": "Filling in the fields",
    "evaluate": "Running the agent's JavaScript",
}


@attrs.frozen
class SentRequest:
    """One request the page sends during an action, as the browser reports it."""

    method: str
    url: str
    kind: str  # the browser's resource type: Document, XHR, Fetch, Ping, Other
    navigation: bool = False  # the tab's main frame loads a document
    form: bool = False  # a form's submission (the browser reported it)
    redirect_of_sent: bool = False  # a redirect of a request the person let go
    opened: bool = False  # the first document of a tab or pop-up the action opened
    # A response the browser would save as a file: the file as a question shows it
    # (one element, the site's strings escaped), else None.
    download: str | None = None
    # What of the agent's the request carries (`carried`): "typed" (text the agent
    # typed in this task), "secret" (a secret field's value), or "".
    carries: Literal["typed", "secret", ""] = ""


def carried(texts: Iterable[str], url: str, body: str = "") -> bool:
    """Whether the URL or body of a request holds one of ``texts`` (each whole, at least
    `MIN_CARRIED` characters): as is, URL-encoded (``%20`` or ``+``) or JSON-escaped,
    in any letter case (an "instant search" may lower it)."""
    hay = [url, body, unquote_plus(url), unquote(url), unquote_plus(body)]
    hay = [h.casefold() for h in hay if h]
    for text in texts:
        if len(text.strip()) < MIN_CARRIED:
            continue
        forms = {text, json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1]}
        if any(form.casefold() in h for form in forms for h in hay):
            return True
    return False


class Sites(Protocol):
    """The sites the task may use, as the site policy decides them (one parameter)."""

    def name(self, url: str) -> str:
        """The site of `url`, as a question names it."""

    def allows(self, url: str) -> bool:
        """Whether the task may use the site of `url` without asking (its own sites)."""

    async def enter(self, url: str, doing: str | None = None) -> Answer:
        """Whether the tab may go to `url` (or, with `doing`, the action may send to it:
        "Clicking it sends a beacon to"), a site the task may not use yet: the site
        policy decides, and may ask the person."""


Verdict = Literal["send", "ask", "site"]


def request_verdict(
    request: SentRequest, sites: Sites, *, granted: bool = False, granted_download: bool = False
) -> Verdict:
    """Whether a request goes on (send), needs the person's yes (ask), or is a navigation
    the site policy decides (site). ``granted``: the call runs with the person's yes;
    ``granted_download``: that yes was for a download."""
    if request.download is not None:
        # Saving a file on this computer is asked about whichever site it comes from.
        return "send" if granted_download or request.redirect_of_sent else "ask"
    if not sites.allows(request.url):
        # Another site: the tab going there, or the action sending something there, is
        # the site policy's; what the page only reads from there (pixels, ads) is not.
        carries = (
            request.form
            or request.kind == "Ping"
            or request.method not in SAFE_METHODS
            # What the agent typed (or a secret) does not leave by a read either.
            or bool(request.carries)
        )
        return "site" if request.navigation or carries else "send"
    if request.redirect_of_sent:
        return "send"  # the request the person let go, redirected within the task's sites
    if request.form:
        return "send" if granted else "ask"
    return "send" if request.method in SAFE_METHODS else "ask"


@attrs.frozen
class RequestRuling:
    """The decision on one request: sent or not, and whether it was held for it."""

    send: bool
    held: bool = False  # asked about, or refused without asking
    why: str = ""  # what became of a held request, in Trimtab's words


@attrs.define(eq=False)
class RequestJudge:
    """The envelope's decision on what one call's action sends (see the module).

    ``question``: the call's own question (client, session, tab, tool, arguments), which
    each request's question completes; ``ask``: the call's `Ask`; ``granted``: the call
    runs with the person's yes for a predicted submit; ``ask_before_submit``: the
    person's own setting (off: what the host would ask about is sent without asking).
    """

    question: Question
    ask: Ask
    sites: Sites
    granted: bool = False
    ask_before_submit: bool = True
    granted_download: bool = False  # the call's yes was for a download it predicted
    # The yes came from a routine step's mark: it covers only a request (method, URL)
    # this accepts (the recorded form's); None: the person's yes covers the submission.
    granted_only: Callable[[str, str], bool] | None = None
    # A trailing window's judge: the action is over, and what the page sends now is
    # asked about as sent after it.
    after: bool = False
    # The person is asked one question at a time; after a no, nothing more is asked.
    _asking: trio.Lock = attrs.field(factory=trio.Lock, init=False)
    _refused: Answer | None = attrs.field(default=None, init=False)
    # Whether the one submission the call's yes allowed has been sent.
    _submitted: bool = attrs.field(default=False, init=False)

    async def __call__(self, request: SentRequest, element: str | None) -> RequestRuling:
        """Decide on `request`, asking the person when it needs their yes. `element`
        names what the action acts on (escaped page text), or None."""
        granted = self._grants(request)
        verdict = request_verdict(
            request, self.sites, granted=granted, granted_download=self.granted_download
        )
        # Decided before any wait: a request paused as the action ends is decided
        # without one (see the request guard).
        if verdict == "send":
            if request.form and granted:
                self._submitted = True
            return RequestRuling(send=True)
        if verdict == "ask" and self._covered(request):
            # A form that submits through its own script: its request is the submission
            # the person allowed (asked again, they would answer the same question twice).
            self._submitted = True
            return RequestRuling(
                send=True, held=True, why="sent once: the submission the person allowed"
            )
        if verdict == "site":
            site = self.sites.name(request.url)
            if request.opened:
                doing = f"{self._doing(element)} opens a new tab or pop-up on"
                answer = await self.sites.enter(request.url, doing)
                refused = f"not opened: the new tab may not go to {site}"
            elif request.navigation and not self.after:
                answer = await self.sites.enter(request.url)
                refused = f"not sent: the tab may not go to {site}"
            else:
                doing = f"{self._doing(element)} {_sending(request)} to"
                if request.navigation:
                    doing = f"{self._doing(element)} takes the tab to"
                answer = await self.sites.enter(request.url, doing)
                refused = f"not sent: this action may not send to {site}"
            if answer.allow:
                return RequestRuling(send=True, held=not request.navigation, why="sent")
            return RequestRuling(
                send=False, held=True, why=f"{refused} ({answer.refusal()}); the page saw it fail"
            )
        sent, unsent, doing = (
            ("saved", "not saved", "download") if request.download else ("sent", "not sent", "send")
        )
        if not self.ask_before_submit:
            return RequestRuling(
                send=True,
                held=True,
                why=f"{sent}: the person's setting lets actions {doing} unasked",
            )
        async with self._asking:
            if self._refused is not None:
                return RequestRuling(
                    send=False,
                    held=True,
                    why=f"{unsent}: the person refused what this action sends; "
                    "the page saw it fail",
                )
            answer = await self.ask(self._question(request, element))
            if not answer.allow:
                self._refused = answer
                why = f"{unsent}: {answer.refusal()}; the page saw it fail"
                return RequestRuling(send=False, held=True, why=why)
        return RequestRuling(send=True, held=True, why=f"{sent} once, with the person's yes")

    def _covered(self, request: SentRequest) -> bool:
        """Whether the call's yes for a predicted submit covers this request: the first
        that would be asked about, to the task's sites, not a download."""
        return (
            self._grants(request)
            and not self.granted_download
            and not self._submitted
            and request.download is None
            and self.sites.allows(request.url)
        )

    def _grants(self, request: SentRequest) -> bool:
        """Whether the call's yes may cover ``request`` (a yes given beforehand: only
        the submission it was given for)."""
        if not self.granted:
            return False
        return self.granted_only is None or self.granted_only(request.method, request.url)

    def _question(self, request: SentRequest, element: str | None) -> Question:
        site = self.sites.name(request.url)
        if request.download is not None:
            # A file the page made itself comes from no server: the page's site made it.
            if request.url.startswith("data:"):
                source = "a file the page made"
            elif request.url.startswith("blob:"):
                source = f"a file the page on {site} made"
            else:
                source = f"a file from {site}"
            return attrs.evolve(
                self.question,
                what="download",
                reason=f"{self._doing(element)} saves {source} on this computer",
                element=request.download,
                request={"method": request.method[:40], "url": request.url[:2000], "site": site},
            )
        return attrs.evolve(
            self.question,
            what="request",
            reason=f"{self._doing(element)} {_sends(request, site)}",
            element=element,
            request={"method": request.method[:40], "url": request.url[:2000], "site": site},
            after=self.after,
        )

    def _doing(self, element: str | None) -> str:
        tool = self.question.tool or ""
        if self.after:
            # The action is over: the page sends this on its own timer (an autosave, a
            # delayed beacon), set off by what the agent did.
            done = _DONE.get(tool, "acted")
            if element is None and done.endswith(" it"):
                done = f"used {tool}" if tool else "acted"
            return f"After the agent {done}, the page"
        doing = _DOING.get(tool, f"This {tool} action" if tool else "This action")
        if element is None and doing.endswith(" it"):
            return f"This {tool} action"
        return doing


def _sends(request: SentRequest, site: str) -> str:
    """What the request does on the task's `site`, in Trimtab's words."""
    if request.form or request.kind == "Ping":
        return f"{_sending(request)} to {site}"
    return f"{_sending(request)} to {site}, where it may change something"


def _sending(request: SentRequest) -> str:
    """What kind of request it is, in Trimtab's words (a page's own method token is not
    repeated): "submits a form (POST)", "sends a beacon", "sends a DELETE request"."""
    method = request.method if request.method in _NAMED_METHODS else None
    named = f" ({method})" if method else ""
    if request.carries:
        what = "text the agent typed" if request.carries == "typed" else "a secret field's value"
        how = request.method if request.method in (*_NAMED_METHODS, *SAFE_METHODS) else None
        return f"sends {what} in a {how} request" if how else f"sends {what}"
    if request.form:
        return f"submits a form{named}"
    if request.kind == "Ping":
        return f"sends a beacon{named}"
    what = f"a {method} request" if method else "a request with a method of the page's own"
    return f"sends {what}"
