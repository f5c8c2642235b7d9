"""One tool call in, one outcome out: the typed entry point both doors use."""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from typing import Any, Final

import attrs

from ..envelope import Consent, Question, QuestionKind
from ..pipeline import credentials
from ..routines import SubmitForm
from ..tab import DEFAULT_BUDGET, Download, Held, check_budget
from ..tools import PredictedForm, ToolImage
from ..wire import JSONObject, Request, RequestError

__all__ = ["MAX_TAB", "ToolCall", "ToolOutcome", "budget_of", "check_tab_id"]

# Tab ids are chrome.tabs ids: positive integers that JSON carries exactly.
MAX_TAB: Final = 2**53


def check_tab_id(value: object, where: str = "tab") -> int:
    """``value`` as a tab id, or ``bad_request`` naming it."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < MAX_TAB:
        raise RequestError("bad_request", f"{where} = {value!r:.60} is not a tab id")
    return value


def budget_of(request: Request) -> int | None:
    """The request's token budget for snapshots: ``budget`` (0: none), else the default."""
    budget = request.get("budget", int, default=DEFAULT_BUDGET)
    try:
        return check_budget(budget or None)
    except ValueError as exc:
        raise RequestError("bad_request", f"{request.type} field 'budget': {exc}") from None


def groups_of(request: Request) -> list[str] | None:
    """The tool groups a ``tools`` request asks for (``groups``: a list of names), or
    None for every group; the names are checked by `HostState.catalogue`."""
    groups = request.get("groups", list, default=None)
    if groups is None:
        return None
    if not all(isinstance(name, str) for name in groups):
        raise RequestError(
            "bad_request", f"tools field 'groups' = {groups!r:.80} is not a list of names"
        )
    return [str(name) for name in groups]


@attrs.frozen
class ToolCall:
    """One tool call: who calls, in which tab, which tool with which arguments."""

    session: str  # the call tracker's session: the panel agent's, or a link client's
    tab: int
    name: str
    args: Mapping[str, object] = attrs.field(factory=dict)
    client: str = ""  # who calls, as the person reads it in a question
    view: str | None = None  # a link client's own view of the tab; None: the panel agent's
    budget: int | None = None  # the snapshot token budget (None: no budget)
    ask_before_submit: bool = True  # the person's setting; outside clients always ask
    # Whether this client may call `evaluate` at all: the side panel's agent only when
    # the person turned it on (a setting, off by default); outside agents always,
    # through the same consent.
    may_evaluate: bool = True
    task: str = ""  # the task's name for its tab group (the side panel's: the person's words)
    # The call's number in the tracker's one sequence: given by a door that names the
    # call in an error reply (the link), else `HostState.call_tool` numbers it.
    id: int | None = None
    # The task a question about this call names, when it is not ``session``: a
    # routine's run, a task of its own, asks as the task that ran it.
    asks_as: str | None = None
    # A routine's step the person marked "don't ask again for this routine": the form
    # it submitted when recorded. A submit the host predicts goes there (and only such
    # a submission) is not asked about; any other question is.
    marked_submit: SubmitForm | None = None

    def question(self, what: QuestionKind, **facts: Any) -> Question:
        """A question to the person about this call (who asks, the tab, the tool and its
        arguments), with ``facts`` such as its reason, element or site."""
        return Question(
            client=self.client,
            session=self.asks_as or self.session,
            tab=self.tab,
            what=what,
            tool=self.name,
            args=self.args,
            **facts,
        )


@attrs.frozen
class ToolOutcome:
    """What one tool call did, as both doors report it."""

    content: str
    is_error: bool
    kind: str
    consent: Consent
    submitted: bool
    dialog: Mapping[str, Any] | None
    call_id: int | None
    cached: bool
    cached_from: int | None
    cached_at: float | None
    note: str | None
    side_effects: bool
    submits: bool
    # The page's URL in the caller's latest snapshot (after an action: the page it left).
    url: str | None = None
    # Why the person was asked (Trimtab's words) and about what (the element, which
    # quotes the page), if they were.
    reason: str | None = None
    # Requests the request guard held during the action, and what became of them.
    held: tuple[Held, ...] = ()
    # The tab the call acted in (a task's tab: not always the one the door named).
    tab: int | None = None
    # The downloads the action started, as the browser reported them when it answered.
    downloads: tuple[Download, ...] = ()
    # The picture `content` describes (`screenshot`); the page's pixels, data like its text.
    image: ToolImage | None = None
    # Whether `content` may hold the page's words (most answers do); False when it is
    # Trimtab's alone, such as arguments refused, which a door shows as its own words.
    quotes_page: bool = True
    # Where the form goes that the call's submit question was about, as the host
    # predicted it (None: no such question, or a form it could not read).
    submit_form: PredictedForm | None = None
    # The title of the tab switch_tab went to or close_tab closed: a routine names a
    # tab by its title and page, never by its number.
    tab_title: str = ""
    # The page the call acted on when it is not the one the caller last looked at:
    # the tab close_tab closed, read before it was gone.
    acted_on: str | None = None

    def __attrs_post_init__(self) -> None:
        # Every outcome both doors send passes here, whoever built it: an error's text
        # has its credentials hidden, and the URLs any answer shows in attributes
        # (the page's address, a link's, a tab's) have theirs, and so does `url`, which
        # the side panel's agent quotes to its model. A page's visible text (a
        # snapshot, an open dialog's message: XML) is what the person sees and stays
        # whole. Hiding is idempotent, so an evolved outcome is hidden the same.
        plain_error = self.is_error and self.kind == "text" and not self.content.startswith("<")
        hidden = (
            credentials.hide_text(self.content)
            if plain_error
            else credentials.hide_attributes(self.content)
        )
        if hidden != self.content:
            object.__setattr__(self, "content", hidden)
        if self.url is not None:
            object.__setattr__(self, "url", credentials.hide_url(self.url))

    @property
    def marked(self) -> bool:
        """It submitted without asking: the person marked the routine's step "don't ask
        again" and the submit matched its recording."""
        answer = self.consent.answer
        return self.consent.granted and answer is not None and answer.marked

    @property
    def refused(self) -> bool:
        """The call needed the person's yes and did not get it: nothing was done."""
        return self.consent.required and not self.consent.granted

    def for_model(self, page_data: Callable[[str], str]) -> str:
        """The content as a model reads it: what the tool answered (page text, or an
        error that may quote it) through ``page_data``, the untrusted block; a refused
        call's outcome, and content that is Trimtab's alone, in its own words outside it."""
        if not self.refused or self.consent.answer is None:
            return page_data(self.content) if self.quotes_page else self.content
        refusal = self.consent.answer.refusal()
        said = f"Not done: {refusal}. Do not retry it; ask the person or stop."
        return f"{said} The question was about:\n{page_data(self.reason or '')}"

    def to_json(self) -> JSONObject:
        """The ``tool`` reply of ``host/PROTOCOL.md``."""
        return {
            "consent": {
                "required": self.consent.required,
                "granted": self.consent.granted,
                # Granted unasked: the person marked this routine's step beforehand.
                **({"marked": True} if self.marked else {}),
            },
            "submitted": self.submitted,
            # It submitted although nobody was asked: the side panel tells the person.
            "unasked_submit": self.submitted
            and not self.consent.granted
            and not any(h.form for h in self.held),
            "dialog": None if self.dialog is None else dict(self.dialog),
            "content": self.content,
            "is_error": self.is_error,
            "kind": self.kind,
            "call_id": self.call_id,
            "cached": self.cached,
            "cached_from": self.cached_from,
            "cached_at": self.cached_at,
            "note": self.note,
            "side_effects": self.side_effects,
            "submits": self.submits,
            "url": self.url,
            "held": [h.to_json() for h in self.held],
            "tab": self.tab,
            "downloads": [
                {
                    "name": d.name,
                    "size": d.size,
                    "type": d.mime,
                    "path": d.path,
                    "state": d.state,
                }
                for d in self.downloads
            ],
            **({} if self.image is None else {"image": image_json(self.image)}),
        }


def image_json(image: ToolImage) -> JSONObject:
    """A tool's image as a reply carries it: its type, size and base64 bytes."""
    return {
        "mime": image.mime,
        "width": image.width,
        "height": image.height,
        "data": base64.b64encode(image.data).decode("ascii"),
    }
