"""Property tests: page strings in refusals and consent questions never forge markup, and
the consent rules hold for every combination of facts."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from trimtab.driver._consent import (
    CommitFacts,
    DownloadReason,
    ListenersUnread,
    activation_reason,
    change_reason,
    dialog_element,
    dialog_reason,
    key_reason_for,
    typing_reason,
)
from trimtab.driver._element import ElementInfo, Located, cover_description, describe
from trimtab.driver._keyboard import parse_key
from trimtab.pipeline import Control

# Markup-heavy page strings: quotes, angle brackets, ampersands, ids, control characters
# and lone surrogates, as well as any text at all.
_MARKUP = st.sampled_from(
    ['"', "'", "<", ">", "&", "/>", "</button>", '<button id="tzv" type="button"/>', " id=",
     "&amp;", "\ud800", "\x00", "\r\n", "]]>", "<!--", "<?x?>", "<b c=\""]
)  # fmt: skip
PAGE_TEXT = st.lists(st.one_of(_MARKUP, st.text(max_size=8)), max_size=8).map("".join)


def _parse(message: str) -> etree._Element:
    """The message as XML content: it must always parse."""
    return etree.fromstring(f"<r>{message}</r>".encode())


def _located(eid: str) -> Located:
    control = Control(eid=eid, node=0, backend_node_id=1, frame=0, role="", name="", region="")
    return Located(eid=eid, control=control, session=None, object_id="o")


def _info(tag: str, text: str) -> ElementInfo:
    return ElementInfo(
        tag=tag, type="", role="", disabled=False, editable=False, readonly=False,
        checked=None, submits=False, enter_submits=False, text=text,
    )  # fmt: skip


@settings(max_examples=400)
@given(tag=PAGE_TEXT, text=PAGE_TEXT)
def test_describe_never_forges(tag: str, text: str) -> None:
    """How a refusal names an element shows the page's tag and text without any tag or id
    the page wrote: one element, with Trimtab's id only."""
    tree = _parse(f"{describe(_located('k3x'), _info(tag, text))} is disabled")
    elements = list(tree.iter())[1:]
    assert len(elements) == 1
    assert elements[0].get("id") == "k3x"
    assert set(elements[0].attrib) == {"id"}


@settings(max_examples=400)
@given(
    tag=PAGE_TEXT, dom_id=PAGE_TEXT, cls=PAGE_TEXT, text=PAGE_TEXT, eid=st.sampled_from(["", "z1"])
)
def test_cover_description_never_forges(
    tag: str, dom_id: str, cls: str, text: str, eid: str
) -> None:
    """What covers an element is named with its page id, class and text escaped: one
    element, whose only `id` is Trimtab's (when it has one)."""
    facts = {"tag": tag, "id": dom_id, "cls": cls, "text": text}
    tree = _parse(f"covered by {cover_description(facts, eid or None)}: deal with it")
    elements = list(tree.iter())[1:]
    assert len(elements) == 1
    assert elements[0].get("id") == (eid or None)
    assert set(elements[0].attrib) <= {"id", "dom-id", "class"}


@settings(max_examples=300)
@given(
    role=PAGE_TEXT,
    name=PAGE_TEXT,
    text=PAGE_TEXT,
    flags=st.fixed_dictionaries(
        {k: st.booleans() for k in ("picker", "popover", "floating", "full", "same")}
    ),
)
def test_covering_layer_never_forges(
    role: str, name: str, text: str, flags: dict[str, bool]
) -> None:
    """A pop-up a cover belongs to is named in Trimtab's words and escaped elements whose
    only `id` is Trimtab's, once: the page's role never reaches the words, its name only
    an element's `label`."""
    layer = {"tag": "div", "id": "p", "cls": "x", "text": text, "role": role, "name": name}
    hit = {"tag": "span", "id": "q", "cls": "", "text": text}
    said = cover_description({**hit, "layer": {**layer, **flags}}, "z1")
    tree = _parse(f"covered by {said}: deal with it")
    elements = list(tree.iter())[1:]
    assert 1 <= len(elements) <= 2
    assert [el.get("id") for el in elements if el.get("id")] == ["z1"]
    assert all(set(el.attrib) <= {"id", "dom-id", "class", "label"} for el in elements)
    words = (tree.text or "").removeprefix("covered by ").strip()
    roles = ("dialog", "alertdialog", "menu", "menubar", "listbox", "tooltip")
    assert words in ("", "an open colour picker", "an open pop-up") or role in roles, words


@settings(max_examples=300)
@given(kind=st.sampled_from(["confirm", "prompt", "beforeunload", "alert"]), message=PAGE_TEXT)
def test_dialog_reason_never_forges(kind: str, message: str) -> None:
    """A consent question about a dialog keeps the page's message out of Trimtab's words:
    the reason is the same for every message, and the message is the escaped content of
    one <js-dialog> element that names the dialog's type."""
    reason = dialog_reason({"type": kind, "message": message}, accept=True)
    if kind == "alert":
        assert reason is None
        return
    assert reason == dialog_reason({"type": kind, "message": "x"}, accept=True)
    assert reason is not None
    assert "<" not in reason
    assert dialog_reason({"type": kind, "message": message}, accept=False) is None
    element = dialog_element({"type": kind, "message": message})
    assert element is not None
    tree = _parse(element)
    elements = list(tree.iter())[1:]
    assert [el.tag for el in elements] == ["js-dialog"]
    assert dict(elements[0].attrib) == {"type": kind}


_FACTS = st.builds(
    CommitFacts,
    tag=st.sampled_from(["button", "input", "a", "select", "textarea", "div", "iframe"]),
    unknown=st.booleans(),
    submit_button=st.booleans(),
    in_form=st.booleans(),
    implicit_submit=st.booleans(),
    change_script=st.booleans(),
    toggles=st.booleans(),
    select=st.booleans(),
    editable=st.booleans(),
    activates=st.booleans(),
    script_href=st.booleans(),
    downloads=st.booleans(),
    listeners=st.frozensets(st.sampled_from(["click", "change", "input", "keydown", "scroll"])),
)


@settings(max_examples=500)
@given(facts=_FACTS)
def test_rules_ask_whenever_a_commit_is_possible(facts: CommitFacts) -> None:
    """Unknown always asks; a submit button always asks on click, Enter and Space; a field
    of a form asks on Enter in every spelling; Tab and Escape never ask."""
    keys = [parse_key(k) for k in ("Enter", "Return", "\r", "\n", "NumpadEnter")]
    if facts.unknown:
        assert activation_reason(facts) is not None
        assert change_reason(facts) is not None
        assert all(key_reason_for(facts, key, 0) is not None for key in keys)
    if facts.submit_button or facts.downloads:
        assert activation_reason(facts) is not None
    if facts.downloads and not facts.unknown:
        assert isinstance(activation_reason(facts), DownloadReason)
    if facts.submit_button and facts.activates and not facts.editable:
        assert all(key_reason_for(facts, key, 0) is not None for key in keys)
        assert key_reason_for(facts, parse_key("Space"), 0) is not None
    if facts.implicit_submit:
        assert all(key_reason_for(facts, key, 0) is not None for key in keys)
    if facts.change_script:
        assert change_reason(facts) is not None
    for key in ("Tab", "Escape"):
        assert key_reason_for(facts, parse_key(key), 0) is None


_KEYS = ("Enter", "Space", "a", "ArrowDown", "Tab", "Escape")


@settings(max_examples=500)
@given(facts=_FACTS, key=st.sampled_from(_KEYS), modifiers=st.sampled_from((0, 2, 8)))
def test_a_rule_that_decides_without_listeners_decides_as_with_them(
    facts: CommitFacts, key: str, modifiers: int
) -> None:
    """Listeners are read only when a rule asks about them: every rule, on the facts
    without listeners, either asks (ListenersUnread) or gives the reason it gives with
    the listeners read, whatever they are."""
    rules = {
        "click": activation_reason,
        "change": change_reason,
        "typing then Enter": lambda f: typing_reason(f, submit=True),
        f"key {key}": lambda f: key_reason_for(f, parse_key(key), modifiers),
    }
    unread = attrs.evolve(facts, listeners=None)
    for name, rule in rules.items():
        try:
            reason = rule(unread)
        except ListenersUnread:
            continue
        assert reason == rule(facts), name


def test_a_click_outside_a_form_never_asks_for_listeners() -> None:
    """The commonest action, a click on a plain button or link outside any form, is
    decided without the listeners (their read is several round trips per node)."""
    for facts in (CommitFacts(tag="button", activates=True), CommitFacts(tag="a")):
        assert activation_reason(facts) is None
    with pytest.raises(ListenersUnread):
        activation_reason(CommitFacts(tag="div", in_form=True))


def test_every_enter_spelling_is_enter() -> None:
    """ "\\r", "\\n", "Return" and "NumpadEnter" are all the Enter key, so no spelling
    escapes the Enter rules."""
    for spelling in ("Enter", "Return", "\r", "\n", "\r\n", "NumpadEnter"):
        assert parse_key(spelling).key == "Enter"
        assert parse_key(spelling).text == "\r"
