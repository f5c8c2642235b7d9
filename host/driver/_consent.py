"""Consent: the host decides, before acting, whether an action may submit or commit.

Every action that may submit a form or commit something the person did not see
(a click on a submit button, Enter or Space on whatever has the focus, a change of a
control whose form a script acts on, OK on a confirm) needs the person's consent.
A tool finds the reason with the helpers below and calls its call context's
`CallContext.require` right before its first input event: without consent
`ConsentNeeded` stops it there, nothing was done, and the caller (the browser's tool
call) asks the person and runs the call again with their consent, in a new context
whose ``consented`` is true for that one call. When Trimtab cannot tell (an element in a
frame it cannot see into, a page that does not answer), the answer is to ask.

The facts are read in an isolated world of the element's frame, where the page's own
scripts cannot patch the DOM accessors they rely on; which scripts listen on the
element's event path comes from the browser (``DOMDebugger.getEventListeners``), not
from the page. That takes a few round trips per node of the path, so it is read only
when a rule asks (`CommitFacts.hears`): a click outside any form never does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import Any, Final, Literal, TypeAlias

import attrs

from pycdp_bridge import CDPError, JavaScriptError, Target, call_on, evaluate
from pycdp_bridge import protocol as cdp

from ..pipeline import Secret, xml
from ._element import OWN_WORLD, Located, own_object, secret_of
from ._keyboard import KeyDef
from ._listeners import OBJECT_GROUP, listener_types
from ._scripts import script

__all__ = [
    "CommitFacts",
    "ConsentKind",
    "ConsentNeeded",
    "DownloadReason",
    "EvaluateReason",
    "FormReason",
    "ListenersUnread",
    "PredictedForm",
    "SecretReason",
    "activation_reason",
    "change_reason",
    "click_reason",
    "control_change_reason",
    "dialog_element",
    "dialog_reason",
    "enter_reason",
    "key_reason",
    "secret_reason",
    "submit_after_typing_reason",
    "typing_reason",
]

# Listener types through which a script may act on a click, a change, a key.
_CLICK_EVENTS: Final = frozenset(
    {"click", "mousedown", "mouseup", "pointerdown", "pointerup", "touchstart", "touchend"}
)
_CHANGE_EVENTS: Final = frozenset({"change", "input", "click"})
_KEY_EVENTS: Final = frozenset({"keydown", "keypress", "keyup", "beforeinput"})
# Keys that only move the focus or close something: never a commit.
_MOVING_KEYS: Final = frozenset({"Tab", "Escape"})
# Modifiers with which a character key is a shortcut rather than typed: Alt, Control, Meta.
_NOT_TYPING: Final = 1 | 2 | 4

# What a consent question is about: a submit or commit (which the person's "ask
# before submitting" setting may waive), typing into a secret field, a download, or
# running the agent's JavaScript in the page (`evaluate`).
ConsentKind: TypeAlias = Literal["submit", "secret", "download", "evaluate"]


class SecretReason(str):
    """A reason that is about the person's secret (typing into a password or card
    field), not a submit: the person's "ask before submitting" setting never waives it."""


class DownloadReason(str):
    """A reason that is about a download (a file saved on the person's computer), not
    a submit: the person's "ask before submitting" setting never waives it."""


class EvaluateReason(str):
    """A reason that is about running the agent's own JavaScript in the page: never
    waived by the "ask before submitting" setting; the person may allow it per site."""


@attrs.frozen
class PredictedForm:
    """Where the form an action would submit goes, as the browser would send it (read
    in Trimtab's isolated world): its action URL and method (``GET``, ``POST``,
    ``DIALOG``), its submitter's ``formaction`` and ``formmethod`` first."""

    action: str
    method: str

    @classmethod
    def from_page(cls, raw: object) -> PredictedForm | None:
        if not isinstance(raw, Mapping):
            return None
        action, method = raw.get("action"), raw.get("method")
        if not isinstance(action, str) or not action or not isinstance(method, str):
            return None
        return cls(action, method.upper() or "GET")


class FormReason(str):
    """A reason about an action that may submit a form, with where the form goes
    (`PredictedForm`): a routine's step the person marked "don't ask again" skips its
    question only when this matches what was recorded."""

    form: PredictedForm | None

    def __new__(cls, reason: str, form: PredictedForm | None = None) -> FormReason:
        made = super().__new__(cls, reason)
        made.form = form
        return made


def _with_form(reason: str | None, facts: CommitFacts) -> str | None:
    """``reason`` with the form ``facts`` name, when it is a submit's reason (not a
    secret's, a download's or code's) and the element is in a form."""
    if reason is None or type(reason) is not str or facts.form is None or facts.unknown:
        return reason
    return FormReason(reason, facts.form)


class ConsentNeeded(Exception):
    """The action may submit or commit something and the person has not agreed yet.

    Raised before any input was sent: nothing was done. ``reason`` says why, for the
    person; ``element`` names what would be acted on (escaped, for display), if known;
    ``what`` says what the question is about, from the reason's kind (`ConsentKind`).
    """

    def __init__(self, reason: str, element: str | None = None, eid: str | None = None) -> None:
        super().__init__(reason)
        self.reason = str(reason)
        self.element = element
        # The id of the element asked about when it is not the call's own ``id`` (one
        # of `fill`'s fields), for the side panel to highlight it.
        self.eid = eid
        # Where the form it would submit goes, when Trimtab could read it.
        self.form = reason.form if isinstance(reason, FormReason) else None
        self.what: ConsentKind = (
            "secret"
            if isinstance(reason, SecretReason)
            else "download"
            if isinstance(reason, DownloadReason)
            else "evaluate"
            if isinstance(reason, EvaluateReason)
            else "submit"
        )


class ListenersUnread(Exception):
    """A rule asked `CommitFacts.hears` of facts whose listeners were not read yet."""


@attrs.frozen
class CommitFacts:
    """What acting on one element may commit (``js/commit-facts.js``), and the types
    of the listeners on its event path (from the browser; None until read)."""

    tag: str = ""
    unknown: bool = False
    submit_button: bool = False
    in_form: bool = False
    implicit_submit: bool = False
    change_script: bool = False
    toggles: bool = False
    select: bool = False
    editable: bool = False
    activates: bool = False
    script_href: bool = False
    downloads: bool = False  # a link with a download attribute: a click saves a file
    secret: Secret | None = None  # the kind of secret the field holds (`secret_of`)
    listeners: frozenset[str] | None = None
    form: PredictedForm | None = None  # where the element's form would go

    def hears(self, types: frozenset[str]) -> bool:
        """Whether a page script listens to one of `types` on the element's event path;
        ListenersUnread before the listeners are read (the rules ask only this)."""
        if self.listeners is None:
            raise ListenersUnread
        return not self.listeners.isdisjoint(types)

    @classmethod
    def from_page(cls, facts: Mapping[str, Any]) -> CommitFacts:
        """The facts ``js/commit-facts.js`` read, without the listeners (`hears`)."""
        return cls(
            tag=str(facts.get("tag", "")),
            unknown=bool(facts.get("unknown")),
            submit_button=bool(facts.get("submitButton")),
            in_form=bool(facts.get("inForm")),
            implicit_submit=bool(facts.get("implicitSubmit")),
            change_script=bool(facts.get("changeScript")),
            toggles=bool(facts.get("toggles")),
            select=bool(facts.get("select")),
            editable=bool(facts.get("editable")),
            activates=bool(facts.get("activates")),
            script_href=bool(facts.get("scriptHref")),
            downloads=bool(facts.get("downloads")),
            secret=secret_of(facts.get("hints")),
            form=PredictedForm.from_page(facts.get("form")),
        )


# --- the rules (pure) ---------------------------------------------------------------------

_UNSEEN = "the focus is in a frame Trimtab cannot see into, so it cannot tell what this does"


def change_reason(facts: CommitFacts) -> str | None:
    """Why changing this control (a select, a checkbox, a radio) may commit, or None."""
    if facts.unknown:
        return _UNSEEN
    if facts.change_script:
        return "changing it runs the page's onchange handler, which may submit its form"
    if facts.in_form and facts.hears(_CHANGE_EVENTS):
        return "a page script handles changes in its form; the change may submit it"
    return None


def activation_reason(facts: CommitFacts) -> str | None:
    """Why a click on this element (or Enter/Space that activates it) may commit."""
    if facts.unknown:
        return _UNSEEN
    if facts.downloads:
        return DownloadReason("it clicks a link that downloads a file to this computer")
    if facts.submit_button:
        return "it clicks a button that submits a form"
    if facts.toggles or facts.select:
        return change_reason(facts)
    if facts.in_form and facts.script_href:
        return "it clicks a javascript: link inside a form; the script may submit it"
    if facts.in_form and facts.hears(_CLICK_EVENTS):
        return "it clicks an element inside a form that a page script handles; it may submit"
    return None


def enter_reason(facts: CommitFacts, modifiers: int = 0) -> str | None:
    """Why Enter pressed in this element may submit or send, or None."""
    if facts.unknown:
        return _UNSEEN
    if facts.implicit_submit:
        return "Enter in a form's field submits the form"
    if facts.activates and not facts.editable:
        reason = activation_reason(facts)
        if reason is not None:
            return reason
    if modifiers and (facts.in_form or facts.editable):
        return "Enter with a modifier sends or submits in many editors and forms"
    if facts.hears(_KEY_EVENTS):
        return "a page script handles Enter here; it may send or submit"
    if facts.in_form and not facts.editable:
        return "Enter inside a form may submit it"
    return None


def secret_reason(secret: Secret | None, action: str = "types into") -> str | None:
    """Why typing into (or choosing in) a field needs consent: it holds a secret of the
    person's."""
    return None if secret is None else SecretReason(f"it {action} {secret.field}")


def typing_reason(facts: CommitFacts, *, submit: bool) -> str | None:
    """Why typing into this field (then Enter, with `submit`) needs consent, or None."""
    return secret_reason(facts.secret) or (enter_reason(facts) if submit else None)


def key_reason_for(facts: CommitFacts, key: KeyDef, modifiers: int) -> str | None:
    """Why pressing `key` with this element focused may commit, or None."""
    if key.text and key.key != "Enter" and not modifiers & _NOT_TYPING and facts.secret:
        # A character pressed in a secret field types into it.
        return secret_reason(facts.secret)
    if key.key == "Enter":
        return enter_reason(facts, modifiers)
    if key.key in _MOVING_KEYS:
        return None
    if key.key == " ":
        if facts.unknown:
            return _UNSEEN
        if facts.editable:
            return None  # it types a space
        if facts.activates or facts.toggles or facts.select:
            return activation_reason(facts)
        return None
    if facts.unknown:
        return _UNSEEN
    if facts.select or facts.toggles:
        # Arrows, Home/End and letters change a select's or a radio group's choice.
        return change_reason(facts)
    return None


def dialog_reason(dialog: Mapping[str, Any] | None, accept: bool) -> str | None:
    """Why answering the page's JavaScript dialog may commit: OK on a question.

    Trimtab's words only: the page's message goes in `dialog_element`, which the
    person is shown as quoted page text.
    """
    if dialog is None or not accept:
        return None
    kind = str(dialog.get("type", ""))
    if kind == "confirm":
        return "it answers OK to the page's confirm dialog"
    if kind == "beforeunload":
        return "it leaves a page that warns of unsaved changes"
    if kind == "prompt":
        return "it answers the page's prompt"
    return None


def dialog_element(dialog: Mapping[str, Any] | None) -> str | None:
    """The dialog a consent question is about, with the page's message escaped:
    ``<js-dialog type="confirm">Delete the draft?</js-dialog>``."""
    if dialog is None:
        return None
    kind = str(dialog.get("type", ""))
    message = str(dialog.get("message", ""))
    return xml.element(
        "js-dialog",
        {"type": kind if kind in _DIALOG_TYPES else None},
        content=message or None,
    )


_DIALOG_TYPES: Final = frozenset({"alert", "confirm", "prompt", "beforeunload"})


# --- reading the facts from the page ------------------------------------------------------


async def click_reason(target: Target, element: Located) -> str | None:
    """Why a click on `element` may commit (unknown: a reason to ask)."""
    return await _decide(target, element, activation_reason)


async def control_change_reason(target: Target, element: Located) -> str | None:
    """Why changing the select, checkbox or radio `element` may commit."""
    return await _decide(target, element, change_reason)


async def submit_after_typing_reason(target: Target, element: Located) -> str | None:
    """Why typing into `element` and then Enter may need consent (`type(submit=true)`):
    a secret field, or an Enter that may commit."""
    return await _decide(target, element, partial(typing_reason, submit=True))


async def key_reason(
    target: Target, main_frame: Callable[[], Awaitable[str]], key: KeyDef, modifiers: int
) -> str | None:
    """Why pressing `key` now (on whatever has the focus in the tab's main frame, whose
    id `main_frame` gives: `Tab.main_frame_id`) may commit, or None."""
    if key.key in _MOVING_KEYS:
        return None
    try:
        world = await target.execute(
            cdp.page_create_isolated_world(await main_frame(), world_name=OWN_WORLD)
        )
        context = int(world["executionContextId"])
        focused = await evaluate(
            target,
            script("focused-element.js"),
            context_id=context,
            object_group=OBJECT_GROUP,
            return_by_value=False,
        )
        object_id = focused.get("objectId")
        if object_id is None:
            return "Trimtab could not tell which element has the focus"
        return await _judged(
            target, None, str(object_id), partial(key_reason_for, key=key, modifiers=modifiers)
        )
    except _UNKNOWN as exc:
        return f"Trimtab could not tell what the key would act on ({exc})"


# Whatever goes wrong while reading the facts means "cannot tell", which means ask.
_UNKNOWN = (CDPError, JavaScriptError, KeyError, ValueError)


async def _decide(
    target: Target, element: Located, rule: Callable[[CommitFacts], str | None]
) -> str | None:
    try:
        return await _judged(target, element.session, await own_object(target, element), rule)
    except _UNKNOWN as exc:
        return f"Trimtab could not tell whether this submits ({exc})"


async def _judged(
    target: Target,
    session: str | None,
    object_id: str,
    rule: Callable[[CommitFacts], str | None],
) -> str | None:
    """`rule`'s reason for the element `object_id` (of Trimtab's world), with its form.
    The listeners on its event path are read only if the rule asks about them: then
    the rule runs again on the facts with them."""
    found = await call_on(target, object_id, script("commit-facts.js"), session_id=session)
    facts = CommitFacts.from_page(found or {})
    try:
        return _with_form(rule(facts), facts)
    except ListenersUnread:
        pass
    facts = attrs.evolve(
        facts, listeners=await listener_types(target, session, object_id, page_world=False)
    )
    return _with_form(rule(facts), facts)
