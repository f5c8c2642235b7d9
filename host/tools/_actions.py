"""Tools that act on the page with trusted input: click, type, press, select, check,
hover, scroll. Each finds its element, asks the driver where and whether the person
must say yes first (`require`), and acts inside the tab's `watch` (the request guard
and the settle), then answers with what changed (`after_action`)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

import attrs

from ..driver import (
    MODIFIER_BITS,
    CallContext,
    ElementInfo,
    Located,
    NoFocus,
    NotChosen,
    PageLeft,
    Point,
    aim_at,
    choose,
    choose_on_face,
    click_element,
    click_reason,
    control_change_reason,
    describe,
    enabled_element,
    face_change_reason,
    field_value,
    focused_enter_submits,
    gather,
    is_picker,
    key_press,
    key_reason,
    locate_with_info,
    no_reason,
    parse_key,
    pick,
    point_and_consent,
    pointer_onto,
    refuse_unchecking_radio,
    scroll_into_view,
    scroll_position,
    secret_reason,
    still_not,
    submit_after_typing_reason,
    target_point,
    type_into,
    viewport_size,
    wheel,
)
from ..tab import settle
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
    text,
    text_arg,
    tool,
)

__all__ = ["check", "click", "clicks_on", "hover", "press", "scroll", "select", "type_text"]


@tool(
    "click",
    "Click an element with the mouse, where it is visible (scrolled into view).",
    schema({"id": ID_SCHEMA}, ("id",)),
    ACT,
)
async def click(call: CallContext, args: Mapping[str, object]) -> ToolResult:
    return await clicks_on(call, args, 1)


async def clicks_on(call: CallContext, args: Mapping[str, object], clicks: int) -> ToolResult:
    """Click the element `args` names `clicks` times in a row (a double click is two
    clicks: whatever the first may submit, it does)."""
    tab = call.tab
    element, info = await enabled_element(tab, id_arg(args))
    aim, reason, frame = await point_and_consent(tab, element, info, click_reason)
    call.require(reason, describe(element, info))
    async with call.watch(frame, tab.ahead()) as activity:
        note = await click_element(tab.target, element, info, tab.latest, aim, clicks=clicks)
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT, scope_of(element))
    return await after_action(call, activity, settled, submits=info.submits, note=note)


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
async def type_text(call: CallContext, args: Mapping[str, object]) -> ToolResult:
    tab = call.tab
    typed = text_arg(args, "text")
    assert typed is not None
    submit = bool_arg(args, "submit", False)
    clear = bool_arg(args, "clear", True)
    element, info = await enabled_element(tab, id_arg(args))
    target = tab.target
    if is_picker(info):
        return await _set_picker(call, element, info, typed, submit=submit)
    if not info.editable:
        raise Refusal(
            f"{describe(element, info)} is not a text field, so it cannot be typed into; "
            "use click, select or check for it"
        )
    if info.readonly:
        raise Refusal(f"{describe(element, info)} is read-only; it cannot be typed into")
    before = "" if clear else await field_value(tab, element)
    reason_of = submit_after_typing_reason if submit else no_reason
    aim, reason, frame = await point_and_consent(tab, element, info, reason_of)
    # A password or card field: the person is asked before anything is typed.
    call.require(secret_reason(info.secret) or reason, describe(element, info))
    async with call.watch(frame, tab.ahead()) as activity:
        try:
            note = await type_into(tab, element, info, aim, typed, clear=clear, before=before)
        except NoFocus as exc:
            # Typing now would go wherever the page put the focus: nothing is typed.
            settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT, scope_of(element))
            answer = await after_action(
                call,
                activity,
                settled,
                note=f"nothing was typed: {exc}; see what the page shows now",
            )
            return attrs.evolve(answer, is_error=True)
        if submit:
            await key_press(target, parse_key("Enter"))
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT, scope_of(element))
    return await after_action(call, activity, settled, submits=submit, note=note)


async def _set_picker(
    call: CallContext, element: Located, info: ElementInfo, value: str, *, submit: bool
) -> ToolResult:
    tab = call.tab
    target = tab.target
    # In view and not covered, and whether Enter may then commit.
    reason_of = submit_after_typing_reason if submit else no_reason
    _, reason, frame = await point_and_consent(tab, element, info, reason_of)
    call.require(secret_reason(info.secret) or reason, describe(element, info))
    async with call.watch(frame, tab.ahead()) as activity:
        await pick(tab, element, info, value)
        if submit:
            await key_press(target, parse_key("Enter"))
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT, scope_of(element))
    return await after_action(call, activity, settled, submits=submit)


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
async def press(call: CallContext, args: Mapping[str, object]) -> ToolResult:
    tab = call.tab
    try:
        key = parse_key(args.get("key"))
    except ValueError as exc:
        raise BadArguments(str(exc)) from exc
    modifiers = _modifier_bits(args)
    submits = key.key == "Enter" and not modifiers and await focused_enter_submits(tab)
    call.require(await key_reason(tab.target, tab.main_frame_id, key, modifiers))
    async with call.watch(None, tab.ahead()) as activity:
        await key_press(tab.target, key, modifiers)
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT)
    return await after_action(call, activity, settled, submits=submits)


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
async def select(call: CallContext, args: Mapping[str, object]) -> ToolResult:
    tab = call.tab
    value = text_arg(args, "value")
    assert value is not None
    element, info = await enabled_element(tab, id_arg(args))
    if info.tag != "select" and element.control.stands_for:
        # A custom drop-down's face (the snapshot shows it as the select it stands for).
        return await _select_on_face(call, element, info, value)
    if info.tag != "select":
        raise Refusal(
            f"{describe(element, info)} is not a <select>; for a custom drop-down, click it "
            "and then click the option"
        )
    # In view and not covered, and whether the change may commit.
    _, reason, frame = await point_and_consent(tab, element, info, control_change_reason)
    # A card's expiry chosen from a list is asked about as one typed in.
    call.require(secret_reason(info.secret, "chooses in") or reason, describe(element, info))
    async with call.watch(frame, tab.ahead()) as activity:
        note = await choose(tab, element, info, value)
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT, scope_of(element))
    return await after_action(call, activity, settled, note=note)


async def _select_on_face(
    call: CallContext, face: Located, info: ElementInfo, wanted: str
) -> ToolResult:
    """`select` on a custom drop-down's face: the driver's `choose_on_face`, with the
    consent a native select's change would need (its hidden select's rule), answered
    with the page's changes; an error when the option was not chosen."""
    tab = call.tab
    reason, frame = await gather(lambda: face_change_reason(tab.target, face), tab.main_frame_id)
    call.require(reason, describe(face, info))
    failed = False
    async with call.watch(frame, tab.ahead()) as activity:
        try:
            note = await choose_on_face(tab, face, info, wanted)
        except NotChosen as exc:
            # The face was clicked: the answer shows what came of it, as an error.
            note, failed = str(exc), True
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT, scope_of(face))
    answer = await after_action(call, activity, settled, note=note)
    return attrs.evolve(answer, is_error=failed)


@tool(
    "check",
    "Turn a checkbox, radio button or switch on (off: on=false) by clicking it, unless "
    "it already is.",
    schema({"id": ID_SCHEMA, "on": {"type": "boolean", "default": True}}, ("id",)),
    ACT,
)
async def check(call: CallContext, args: Mapping[str, object]) -> ToolResult:
    tab = call.tab
    on = bool_arg(args, "on", True)
    element, info = await enabled_element(tab, id_arg(args))
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
    call.require(reason, describe(element, info))
    async with call.watch(frame, tab.ahead()) as activity:
        note = await click_element(target, element, info, tab.latest, aim)
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT, scope_of(element))
    still = await still_not(tab, element, info, on)
    if still is not None:
        note = still if note is None else f"{note}; {still}"
    return await after_action(call, activity, settled, note=note)


@tool(
    "hover",
    "Move the mouse over an element (hover menus, tooltips).",
    schema({"id": ID_SCHEMA}, ("id",)),
    ACT,
)
async def hover(call: CallContext, args: Mapping[str, object]) -> ToolResult:
    tab = call.tab
    element, info = await locate_with_info(tab, id_arg(args))
    aim, frame = await gather(
        lambda: aim_at(tab.target, element, info, tab.latest),
        tab.main_frame_id,
    )
    # A hover commits nothing the host can predict; what it makes the page send is
    # held by the request guard, whose questions name the element.
    call.require(None, describe(element, info))
    async with call.watch(frame, tab.ahead()) as activity:
        # Refused when the element does not stay under the pointer once it hovers it;
        # a hover that took the page elsewhere did what it does.
        with contextlib.suppress(PageLeft):
            await pointer_onto(tab.target, element, info, tab.latest, aim)
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT, scope_of(element))
    return await after_action(call, activity, settled)


@tool(
    "scroll",
    "Scroll with the mouse wheel by most of a window: the page, or with an id the "
    "scrollable element under it; an id alone is scrolled into view. Pages that load "
    "more as you scroll load it.",
    schema({"direction": {"type": "string", "enum": ["down", "up"]}, "id": ID_SCHEMA}),
    ACT,
)
async def scroll(call: CallContext, args: Mapping[str, object]) -> ToolResult:
    tab = call.tab
    direction = text_arg(args, "direction", required=False)
    eid = text_arg(args, "id", required=False)
    if direction not in (None, "down", "up"):
        raise BadArguments(f"direction must be 'down' or 'up'; got {direction!r}")
    target = tab.target
    if eid is not None and direction is None:
        element, info = await locate_with_info(tab, eid)
        async with call.watch(None, tab.ahead()) as activity:
            await scroll_into_view(target, element, info)
            settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT)
        return await after_action(call, activity, settled)
    width, height = await viewport_size(target)
    if eid is not None:
        # Wheel over the element: the scrollable box under the pointer moves, as for a person.
        element, info = await locate_with_info(tab, eid)
        point = await target_point(target, element, info, tab.latest)
    else:
        point = Point(width / 2, height / 2)
    delta = round(height * 0.8) * (1 if direction != "up" else -1)
    before = await scroll_position(target)
    # Scrolling loads content anywhere (lists that grow as you scroll): the whole page.
    async with call.watch(None, tab.ahead()) as activity:
        await wheel(target, point, delta)
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT)
    note = None
    if eid is None and await scroll_position(target) == before:
        edge = "bottom" if delta > 0 else "top"
        note = (
            f"the page did not move: it is already at the {edge}, or the part under the "
            "middle of the window does not scroll (pass the id of what should scroll)"
        )
    return await after_action(call, activity, settled, note=note)
