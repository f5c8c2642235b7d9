"""Tools that act on the page with trusted input: click, type, press, select, check,
hover, scroll."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import attrs

from pycdp_bridge import CDPError, JavaScriptError, Target, call_on, evaluate
from pycdp_bridge import protocol as cdp

from ..pipeline import xml
from ..tab import Tab, main_frame_id, settle, watch
from ._common import (
    ACT,
    ID_SCHEMA,
    SETTLE_TIMEOUT,
    BadArguments,
    Refusal,
    ToolResult,
    after_action,
    bool_arg,
    id_arg,
    schema,
    scope_of,
    script,
    text,
    text_arg,
    tool,
)
from ._consent import (
    click_reason,
    control_change_reason,
    key_reason,
    listener_types,
    require,
    secret_reason,
    submit_after_typing_reason,
)
from ._gather import gather
from ._input import (
    Aim,
    ElementInfo,
    Located,
    Point,
    aim_at,
    describe,
    element_info,
    locate_with_info,
    scroll_into_view,
    target_point,
)
from ._keyboard import MODIFIER_BITS, key_press, parse_key
from ._press import PageLeft, click_element, pointer_onto

__all__ = [
    "NoFocus",
    "check",
    "choose",
    "click",
    "enabled_element",
    "focused_enter_submits",
    "hover",
    "is_picker",
    "pick",
    "point_and_consent",
    "press",
    "refuse_unchecking_radio",
    "scroll",
    "select",
    "still_not",
    "type_into",
    "type_text",
]

# Fields whose native editors (pickers, sliders) are not text a person types: their
# value is set as the picker would set it, with the events the picker fires.
_PICKER_TYPES = frozenset({"date", "time", "datetime-local", "month", "week", "color", "range"})


async def enabled_element(tab: Tab, args: Mapping[str, object]) -> tuple[Located, ElementInfo]:
    """The element the ``id`` argument names, refused when it is disabled."""
    element, info = await locate_with_info(tab, id_arg(args))
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
        lambda: main_frame_id(tab.target),
    )


async def _no_reason(target: Target, element: Located) -> str | None:
    """For `point_and_consent` when the action commits nothing (typing without Enter)."""
    del target, element
    return None


@tool(
    "click",
    "Click an element with the mouse, where it is visible (scrolled into view).",
    schema({"id": ID_SCHEMA}, ("id",)),
    ACT,
)
async def click(tab: Tab, args: Mapping[str, object]) -> ToolResult:
    return await clicks_on(tab, args, 1)


async def clicks_on(tab: Tab, args: Mapping[str, object], clicks: int) -> ToolResult:
    """Click the element `args` names `clicks` times in a row (a double click is two
    clicks: whatever the first may submit, it does)."""
    element, info = await enabled_element(tab, args)
    aim, reason, frame = await point_and_consent(tab, element, info, click_reason)
    require(reason, describe(element, info))
    async with watch(tab.revisions, frame, tab.ahead()) as activity:
        note = await click_element(tab.target, element, info, tab.latest, aim, clicks=clicks)
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT, scope_of(element))
    return await after_action(tab, activity, settled, submits=info.submits, note=note)


@tool(
    "type",
    "Click a text field and type into it, replacing its content (clear=false: "
    "appending), then press Enter if submit=true. Date, time and colour fields take "
    "2024-12-31, 13:45, #ff0000. A field that passes the focus elsewhere gets nothing "
    "(an error).",
    schema(
        {
            "id": ID_SCHEMA,
            "text": {"type": "string"},
            "submit": {"type": "boolean", "default": False},
            "clear": {"type": "boolean", "default": True},
        },
        ("id", "text"),
    ),
    ACT,
)
async def type_text(tab: Tab, args: Mapping[str, object]) -> ToolResult:
    typed = text_arg(args, "text")
    assert typed is not None
    submit = bool_arg(args, "submit", False)
    clear = bool_arg(args, "clear", True)
    element, info = await enabled_element(tab, args)
    target = tab.target
    if is_picker(info):
        return await _set_picker(tab, element, info, typed, submit=submit)
    if not info.editable:
        raise Refusal(
            f"{describe(element, info)} is not a text field, so it cannot be typed into; "
            "use click, select or check for it"
        )
    if info.readonly:
        raise Refusal(f"{describe(element, info)} is read-only; it cannot be typed into")
    before = "" if clear else await _field_value(tab, element)
    reason_of = submit_after_typing_reason if submit else _no_reason
    aim, reason, frame = await point_and_consent(tab, element, info, reason_of)
    # A password or card field: the person is asked before anything is typed.
    require(secret_reason(info.secret) or reason, describe(element, info))
    async with watch(tab.revisions, frame) as activity:
        try:
            note = await type_into(tab, element, info, aim, typed, clear=clear, before=before)
        except NoFocus as exc:
            # Typing now would go wherever the page put the focus: nothing is typed.
            settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT, scope_of(element))
            answer = await after_action(
                tab,
                activity,
                settled,
                note=f"nothing was typed: {exc}; see what the page shows now",
            )
            return attrs.evolve(answer, is_error=True)
        if submit:
            await key_press(target, parse_key("Enter"))
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT, scope_of(element))
    return await after_action(tab, activity, settled, submits=submit, note=note)


# Event types by which a page reads keys one by one.
_KEY_EVENTS = frozenset({"keydown", "keypress", "keyup"})


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
        if _KEY_EVENTS & await listener_types(target, element.session, element.object_id):
            # A widget that reads keys one by one (a terminal, an editor, a search that
            # reacts to keydown) hears each character as a person's key press.
            for character in typed:
                await key_press(target, parse_key("Enter" if character == "\n" else character))
            how = "typed key by key (the page listens for keys here)"
        else:
            await target.execute(cdp.input_insert_text(typed))
            how = "inserted without key events (nothing here listens for keys)"
    # What the field holds before Enter, which may take the page elsewhere.
    differs = _differs(element, info, before + typed, await _field_value(tab, element))
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


async def _field_value(tab: Tab, element: Located) -> str:
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


async def _set_picker(
    tab: Tab, element: Located, info: ElementInfo, value: str, *, submit: bool
) -> ToolResult:
    target = tab.target
    # In view and not covered, and whether Enter may then commit.
    reason_of = submit_after_typing_reason if submit else _no_reason
    _, reason, frame = await point_and_consent(tab, element, info, reason_of)
    require(secret_reason(info.secret) or reason, describe(element, info))
    async with watch(tab.revisions, frame) as activity:
        await pick(tab, element, info, value)
        if submit:
            await key_press(target, parse_key("Enter"))
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT, scope_of(element))
    return await after_action(tab, activity, settled, submits=submit)


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


def _modifier_bits(args: Mapping[str, object]) -> int:
    names = args.get("modifiers", [])
    if not isinstance(names, list | tuple):
        raise BadArguments(f"modifiers must be a list like ['Control']; got {names!r}")
    bits = 0
    for name in names:
        if name not in MODIFIER_BITS:
            known = ", ".join(MODIFIER_BITS)
            raise BadArguments(f"unknown modifier {name!r}: use {known}")
        bits |= MODIFIER_BITS[str(name)]
    return bits


async def focused_enter_submits(tab: Tab) -> bool:
    """Whether Enter pressed now would submit a form (a form's text field has focus)."""
    try:
        submits = await evaluate(tab.target, script("focused-enter-submits.js"), await_promise=True)
    except JavaScriptError:
        return False  # as a reply without a value always was: no form to submit seen
    return submits is True


@tool(
    "press",
    "Press a key where the focus is (a key name such as Enter, Tab, Escape, ArrowDown, "
    "PageUp, Space, or one character), with the modifiers held.",
    schema(
        {
            "key": {"type": "string"},
            "modifiers": {
                "type": "array",
                "items": {"type": "string", "enum": list(MODIFIER_BITS)},
                "default": [],
            },
        },
        ("key",),
    ),
    ACT,
)
async def press(tab: Tab, args: Mapping[str, object]) -> ToolResult:
    try:
        key = parse_key(args.get("key"))
    except ValueError as exc:
        raise BadArguments(str(exc)) from exc
    modifiers = _modifier_bits(args)
    submits = key.key == "Enter" and not modifiers and await focused_enter_submits(tab)
    require(await key_reason(tab.target, key, modifiers))
    async with watch(tab.revisions) as activity:
        await key_press(tab.target, key, modifiers)
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT)
    return await after_action(tab, activity, settled, submits=submits)


@tool(
    "select",
    "Choose an option of a <select> by its text or value (click custom drop-downs).",
    schema(
        {
            "id": ID_SCHEMA,
            "value": {"type": "string"},
        },
        ("id", "value"),
    ),
    ACT,
)
async def select(tab: Tab, args: Mapping[str, object]) -> ToolResult:
    value = text_arg(args, "value")
    assert value is not None
    element, info = await enabled_element(tab, args)
    if info.tag != "select":
        raise Refusal(
            f"{describe(element, info)} is not a <select>; for a custom drop-down, click it "
            "and then click the option"
        )
    # In view and not covered, and whether the change may commit.
    _, reason, frame = await point_and_consent(tab, element, info, control_change_reason)
    # A card's expiry chosen from a list is asked about as one typed in.
    require(secret_reason(info.secret, "chooses in") or reason, describe(element, info))
    async with watch(tab.revisions, frame, tab.ahead()) as activity:
        note = await choose(tab, element, info, value)
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT, scope_of(element))
    return await after_action(tab, activity, settled, note=note)


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


@tool(
    "check",
    "Turn a checkbox, radio button or switch on (off: on=false) by clicking it, unless "
    "it already is.",
    schema({"id": ID_SCHEMA, "on": {"type": "boolean", "default": True}}, ("id",)),
    ACT,
)
async def check(tab: Tab, args: Mapping[str, object]) -> ToolResult:
    on = bool_arg(args, "on", True)
    element, info = await enabled_element(tab, args)
    if info.checked is None:
        raise Refusal(
            f"{describe(element, info)} is not a checkbox, radio button or switch; use click"
        )
    state = "checked" if on else "unchecked"
    if info.checked == on:
        return text(f"{describe(element, info)} is already {state}; nothing was done")
    refuse_unchecking_radio(element, info, on)
    target = tab.target
    aim, reason, frame = await point_and_consent(tab, element, info, click_reason)
    require(reason, describe(element, info))
    async with watch(tab.revisions, frame, tab.ahead()) as activity:
        note = await click_element(target, element, info, tab.latest, aim)
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT, scope_of(element))
    still = await still_not(tab, element, info, on)
    if still is not None:
        note = still if note is None else f"{note}; {still}"
    return await after_action(tab, activity, settled, note=note)


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


@tool(
    "hover",
    "Move the mouse over an element (hover menus, tooltips).",
    schema({"id": ID_SCHEMA}, ("id",)),
    ACT,
)
async def hover(tab: Tab, args: Mapping[str, object]) -> ToolResult:
    element, info = await locate_with_info(tab, id_arg(args))
    aim, frame = await gather(
        lambda: aim_at(tab.target, element, info, tab.latest),
        lambda: main_frame_id(tab.target),
    )
    # A hover commits nothing the host can predict; what it makes the page send is
    # held by the request guard, whose questions name the element.
    require(None, describe(element, info))
    async with watch(tab.revisions, frame, tab.ahead()) as activity:
        # Refused when the element does not stay under the pointer once it hovers it;
        # a hover that took the page elsewhere did what it does.
        with contextlib.suppress(PageLeft):
            await pointer_onto(tab.target, element, info, tab.latest, aim)
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT, scope_of(element))
    return await after_action(tab, activity, settled)


@tool(
    "scroll",
    "Scroll with the mouse wheel by most of a window: the page, or with an id the "
    "scrollable element under it; an id alone is scrolled into view. Pages that load "
    "more as you scroll load it.",
    schema({"direction": {"type": "string", "enum": ["down", "up"]}, "id": ID_SCHEMA}),
    ACT,
)
async def scroll(tab: Tab, args: Mapping[str, object]) -> ToolResult:
    direction = text_arg(args, "direction", required=False)
    eid = text_arg(args, "id", required=False)
    if direction not in (None, "down", "up"):
        raise BadArguments(f"direction must be 'down' or 'up'; got {direction!r}")
    target = tab.target
    if eid is not None and direction is None:
        element, info = await locate_with_info(tab, eid)
        async with watch(tab.revisions) as activity:
            await scroll_into_view(target, element, info)
            settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT)
        return await after_action(tab, activity, settled)
    metrics = await target.execute(cdp.page_get_layout_metrics())
    viewport: Mapping[str, Any] = metrics["cssLayoutViewport"]
    width, height = float(viewport["clientWidth"]), float(viewport["clientHeight"])
    if eid is not None:
        # Wheel over the element: the scrollable box under the pointer moves, as for a person.
        element, info = await locate_with_info(tab, eid)
        point = await target_point(target, element, info, tab.latest)
    else:
        point = Point(width / 2, height / 2)
    delta = round(height * 0.8) * (1 if direction != "up" else -1)
    before = await _scroll_position(tab)
    # Scrolling loads content anywhere (lists that grow as you scroll): the whole page.
    async with watch(tab.revisions) as activity:
        await target.execute(
            cdp.input_dispatch_mouse_event("mouseWheel", point.x, point.y, delta_x=0, delta_y=delta)
        )
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT)
    note = None
    if eid is None and await _scroll_position(tab) == before:
        edge = "bottom" if delta > 0 else "top"
        note = (
            f"the page did not move: it is already at the {edge}, or the part under the "
            "middle of the window does not scroll (pass the id of what should scroll)"
        )
    return await after_action(tab, activity, settled, note=note)


async def _scroll_position(tab: Tab) -> float:
    metrics = await tab.target.execute(cdp.page_get_layout_metrics())
    return float(metrics["cssVisualViewport"]["pageY"])
