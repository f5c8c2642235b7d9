"""Fields as a person fills them: typed into, set as their picker sets them, chosen
in, checked; and what is checked before and after (disabled, kept the focus, holds
what was typed, still not checked).

Typing clicks the field first (`click_element`), makes sure it kept the focus
(`NoFocus` otherwise: nothing is typed where the page put the focus), clears it and
inserts the text, key by key where the page listens for keys; a native <select> is
set the way its popup sets it, since input events cannot drive that popup.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pycdp_bridge import CDPError, JavaScriptError, Target, call_on, evaluate
from pycdp_bridge import protocol as cdp

from ..pipeline import xml
from ..tab import Tab
from ._element import (
    Aim,
    ElementInfo,
    Located,
    Refusal,
    aim_at,
    describe,
    element_info,
    locate_with_info,
)
from ._gather import gather
from ._keyboard import key_press, parse_key
from ._listeners import KEY_EVENTS, listener_types
from ._press import click_element
from ._scripts import script

__all__ = [
    "NoFocus",
    "choose",
    "enabled_element",
    "field_value",
    "focused_enter_submits",
    "is_connected",
    "is_picker",
    "no_reason",
    "pick",
    "point_and_consent",
    "refuse_unchecking_radio",
    "still_not",
    "type_into",
]

# Fields whose native editors (pickers, sliders) are not text a person types: their
# value is set as the picker would set it, with the events the picker fires.
_PICKER_TYPES = frozenset({"date", "time", "datetime-local", "month", "week", "color", "range"})


async def enabled_element(tab: Tab, eid: str) -> tuple[Located, ElementInfo]:
    """The element `eid` names, refused when it is disabled."""
    element, info = await locate_with_info(tab, eid)
    if info.disabled:
        raise Refusal(f"{describe(element, info)} is disabled; it cannot be used right now")
    return element, info


async def point_and_consent(
    tab: Tab,
    element: Located,
    info: ElementInfo,
    reason_of: Callable[[Target, Located], Awaitable[str | None]],
) -> tuple[Aim, str | None, str]:
    """Before acting on `element`: where to act (`aim_at`), why it may need consent
    (`reason_of`) and the main frame's id (for `watch`), read at once: the reads are
    independent, so they share their round trips. A refusal of `aim_at` comes first,
    as when they ran one after the other; no input is sent before the caller's
    `require`."""
    return await gather(
        lambda: aim_at(tab.target, element, info, tab.latest),
        lambda: reason_of(tab.target, element),
        tab.main_frame_id,
    )


async def no_reason(target: Target, element: Located) -> str | None:
    """For `point_and_consent` when the action commits nothing (typing without Enter)."""
    del target, element
    return None


class NoFocus(Refusal):
    """The field did not keep the focus when clicked: nothing was typed into it."""


async def type_into(
    tab: Tab,
    element: Located,
    info: ElementInfo,
    aim: Aim,
    typed: str,
    *,
    clear: bool = True,
    before: str = "",
) -> str | None:
    """Type `typed` into a text field as a person does (`type`'s steps, shared with
    `fill`): click it, check it kept the focus (`NoFocus` otherwise), clear it, insert
    the text; then read it back. A note when it holds something else."""
    target = tab.target
    # Focus by clicking it, as a person does; a click that left focus elsewhere
    # (a page that moves focus on click) gets the field focused directly.
    await click_element(target, element, info, tab.latest, aim)
    elsewhere = await _focus(tab, element)
    if elsewhere is not None:
        raise NoFocus(f"{describe(element, info)} does not keep the focus (it went to {elsewhere})")
    if clear:
        had_text = await call_on(
            target, element.object_id, script("select-all.js"), session_id=element.session
        )
        if had_text is True:
            await key_press(target, parse_key("Backspace"))
    else:
        await call_on(target, element.object_id, script("caret-end.js"), session_id=element.session)
    how: str | None = None
    if typed:
        if KEY_EVENTS & await listener_types(
            target, element.session, element.object_id, page_world=True
        ):
            # A widget that reads keys one by one (a terminal, an editor, a search that
            # reacts to keydown) hears each character as a person's key press.
            for character in typed:
                await key_press(target, parse_key("Enter" if character == "\n" else character))
            how = "typed key by key (the page listens for keys here)"
        else:
            await target.execute(cdp.input_insert_text(typed))
            how = "inserted without key events (nothing here listens for keys)"
    # What the field holds before Enter, which may take the page elsewhere.
    differs = _differs(element, info, before + typed, await field_value(tab, element))
    return how if differs is None else f"{how}; {differs}" if how else differs


def is_picker(info: ElementInfo) -> bool:
    """Whether the field is set as its native picker sets it (date, time, colour, range)."""
    return info.tag == "input" and info.type in _PICKER_TYPES


async def _focus(tab: Tab, element: Located) -> str | None:
    """Focus the element if it has not the focus; None once it has, else where it is."""
    target = tab.target
    focused = await call_on(
        target, element.object_id, script("is-focused.js"), session_id=element.session
    )
    if focused is True:
        return None
    with contextlib.suppress(CDPError):  # "not focusable": the page disabled it meanwhile
        await target.execute(
            cdp.dom_focus(backend_node_id=element.backend_id), session_id=element.session
        )
    owner = await call_on(
        target, element.object_id, script("focus-owner.js"), session_id=element.session
    )
    return None if owner is None else str(owner)


async def field_value(tab: Tab, element: Located) -> str:
    """What the field holds; empty when it cannot be read (it left the page)."""
    try:
        value = await call_on(
            tab.target, element.object_id, script("field-value.js"), session_id=element.session
        )
    except (CDPError, JavaScriptError):
        return ""
    return value if isinstance(value, str) else ""


def _differs(element: Located, info: ElementInfo, expected: str, holds: str) -> str | None:
    """A note when the field holds something else than what was typed into it."""
    if info.tag not in ("input", "textarea"):
        expected, holds = " ".join(expected.split()), " ".join(holds.split())
    if holds == expected:
        return None
    if info.secret is not None:
        # What a secret field holds is never echoed, not even what differs.
        return (
            f"{describe(element, info)} holds {len(holds)} characters, not the "
            f"{len(expected)} typed (the page limited or changed what was typed)"
        )
    return (
        f"{describe(element, info)} holds {holds[:200]!r}, not {expected[:200]!r}: the page "
        "limited or changed what was typed"
    )


async def pick(tab: Tab, element: Located, info: ElementInfo, value: str) -> None:
    """Set a picker field's value as its picker would (`type`'s steps, shared with
    `fill`); a refusal when it does not take the focus or the value."""
    elsewhere = await _focus(tab, element)
    if elsewhere is not None:
        raise Refusal(
            f"{describe(element, info)} does not take the focus (it went to {elsewhere}); "
            "nothing was set"
        )
    accepted = await call_on(
        tab.target, element.object_id, script("set-value.js"), value, session_id=element.session
    )
    if accepted is not True:
        raise Refusal(
            f"{describe(element, info)} did not accept {value!r}: a {info.type} field "
            "takes values like 2024-12-31 (date), 13:45 (time), 2024-12 (month)"
        )


async def focused_enter_submits(tab: Tab) -> bool:
    """Whether Enter pressed now would submit a form (a form's text field has focus)."""
    try:
        submits = await evaluate(tab.target, script("focused-enter-submits.js"), await_promise=True)
    except JavaScriptError:
        return False  # as a reply without a value always was: no form to submit seen
    return submits is True


async def choose(tab: Tab, element: Located, info: ElementInfo, value: str) -> str | None:
    """Choose the option of a native <select> (`select`'s steps, shared with `fill`);
    a refusal naming the options when it has none such; a note when it already was."""
    target = tab.target
    # A native <select> opens a popup the browser draws outside the page, which
    # input events cannot drive (headless has none at all), so the option is set
    # the way that popup sets it: focus, selection, then `input` and `change`.
    await target.execute(
        cdp.dom_focus(backend_node_id=element.backend_id), session_id=element.session
    )
    outcome: Mapping[str, Any] = await call_on(
        target, element.object_id, script("select-option.js"), value, session_id=element.session
    )
    if not outcome["found"]:
        if outcome.get("disabled"):
            option = xml.element("option", content=str(outcome["text"]))
            raise Refusal(f"{option} of {describe(element, info)} is disabled")
        listed = outcome["options"]
        shown = " ".join(xml.element("option", content=str(o)) for o in listed[:30]) + (
            f" … ({len(listed)} in all)" if len(listed) > 30 else ""
        )
        raise Refusal(
            f"{describe(element, info)} has no option {xml.text(repr(value))}; options: {shown}"
        )
    return None if outcome["changed"] else f"{outcome['text']!r} was already selected"


def refuse_unchecking_radio(element: Located, info: ElementInfo, on: bool) -> None:
    """A radio button is turned off only by checking another of its group."""
    if not on and (info.type == "radio" or info.role in ("radio", "menuitemradio")):
        raise Refusal(
            f"{describe(element, info)} is a radio button: it is unchecked by checking "
            "another option of its group"
        )


async def still_not(tab: Tab, element: Located, info: ElementInfo, on: bool) -> str | None:
    """After clicking a checkbox, radio or switch (`check`, `fill`): a note when it is
    still not in the state asked for."""
    try:
        after = await element_info(tab.target, element)
    except (CDPError, JavaScriptError):
        return None  # the click took the page elsewhere; the snapshot shows where
    if after.checked == on:
        return None
    state = "checked" if on else "unchecked"
    return f"clicked {describe(element, info)} but it is still not {state}"


async def is_connected(tab: Tab, element: Located) -> bool:
    """Whether the element is still in its document (the page may have replaced it)."""
    connected = await call_on(
        tab.target, element.object_id, script("is-connected.js"), session_id=element.session
    )
    return connected is True
