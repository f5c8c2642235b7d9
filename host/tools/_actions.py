"""Tools that act on the page with trusted input: click, type, press, select, check,
hover, scroll."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pycdp_bridge import CDPError, JavaScriptError, call_on
from pycdp_bridge import protocol as cdp

from ..pipeline import xml
from ..tab import Tab, settle, watch
from ._common import (
    ACT,
    ID_SCHEMA,
    REFUSES,
    SETTLE_TIMEOUT,
    SETTLES,
    BadArguments,
    Refusal,
    ToolResult,
    after_action,
    bool_arg,
    id_arg,
    json_value,
    schema,
    script,
    text,
    text_arg,
    tool,
)
from ._consent import (
    click_reason,
    control_change_reason,
    key_reason,
    require,
    submit_after_typing_reason,
)
from ._input import (
    MODIFIER_BITS,
    ElementInfo,
    Located,
    Point,
    click_at,
    describe,
    element_info,
    key_press,
    locate,
    move_to,
    parse_key,
    scroll_into_view,
    target_point,
)

__all__ = [
    "check",
    "click",
    "focused_enter_submits",
    "hover",
    "press",
    "scroll",
    "select",
    "type_text",
    "usable",
]

# Fields whose native editors (pickers, sliders) are not text a person types: their
# value is set as the picker would set it, with the events the picker fires.
_PICKER_TYPES = frozenset({"date", "time", "datetime-local", "month", "week", "color", "range"})


async def usable(tab: Tab, args: Mapping[str, object]) -> tuple[Located, ElementInfo]:
    """The element the ``id`` argument names, refused when it is disabled."""
    element = await locate(tab, id_arg(args))
    info = await element_info(tab.target, element)
    if info.disabled:
        raise Refusal(f"{describe(element, info)} is disabled; it cannot be used right now")
    return element, info


@tool(
    "click",
    "Click an element with the mouse, like a person: it is scrolled into view and "
    f"clicked where it is visible. {SETTLES} A click that opens another tab or "
    "window (a target=_blank link, a pop-up) leaves you in this one, and the "
    f"result's note says which URL it opened. {REFUSES}",
    schema({"id": ID_SCHEMA}, ("id",)),
    ACT,
)
async def click(tab: Tab, args: Mapping[str, object]) -> ToolResult:
    element, info = await usable(tab, args)
    point = await target_point(tab.target, element, info, tab.latest)
    require(await click_reason(tab.target, element), describe(element, info))
    async with watch(tab.revisions) as activity:
        await click_at(tab.target, point)
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT)
    return await after_action(tab, activity, settled, submits=info.submits)


@tool(
    "type",
    "Type text into a text field (input, textarea or editable area): it is clicked, "
    "its content is replaced (clear=false appends instead), the text is typed, and "
    "with submit=true Enter is pressed afterwards. Date, time and colour fields take "
    f"values like 2024-12-31, 13:45, #ff0000. {SETTLES} {REFUSES} Also refused: "
    "fields that are read-only and elements that are not text fields.",
    schema(
        {
            "id": ID_SCHEMA,
            "text": {"type": "string", "description": "the text to type"},
            "submit": {
                "type": "boolean",
                "default": False,
                "description": "press Enter afterwards (submits most forms)",
            },
            "clear": {
                "type": "boolean",
                "default": True,
                "description": "replace what the field holds (false: append)",
            },
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
    element, info = await usable(tab, args)
    target = tab.target
    if info.tag == "input" and info.type in _PICKER_TYPES:
        return await _set_picker(tab, element, info, typed, submit=submit)
    if not info.editable:
        raise Refusal(
            f"{describe(element, info)} is not a text field, so it cannot be typed into; "
            "use click, select or check for it"
        )
    if info.readonly:
        raise Refusal(f"{describe(element, info)} is read-only; it cannot be typed into")
    point = await target_point(target, element, info, tab.latest)
    if submit:
        require(await submit_after_typing_reason(target, element), describe(element, info))
    async with watch(tab.revisions) as activity:
        # Focus by clicking it, as a person does; a click that left focus elsewhere
        # (a page that moves focus on click) gets the field focused directly.
        await click_at(target, point)
        focused = await call_on(
            target, element.object_id, script("is-focused.js"), session_id=element.session
        )
        if focused is not True:
            await target.execute(
                cdp.dom_focus(backend_node_id=element.backend_id), session_id=element.session
            )
        if clear:
            had_text = await call_on(
                target, element.object_id, script("select-all.js"), session_id=element.session
            )
            if had_text is True:
                await key_press(target, parse_key("Backspace"))
        else:
            await call_on(
                target, element.object_id, script("caret-end.js"), session_id=element.session
            )
        if typed:
            await target.execute(cdp.input_insert_text(typed))
        if submit:
            await key_press(target, parse_key("Enter"))
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT)
    return await after_action(tab, activity, settled, submits=submit)


async def _set_picker(
    tab: Tab, element: Located, info: ElementInfo, value: str, *, submit: bool
) -> ToolResult:
    target = tab.target
    await target_point(target, element, info, tab.latest)  # in view, not covered
    if submit:
        require(await submit_after_typing_reason(target, element), describe(element, info))
    async with watch(tab.revisions) as activity:
        await target.execute(
            cdp.dom_focus(backend_node_id=element.backend_id), session_id=element.session
        )
        accepted = await call_on(
            target, element.object_id, script("set-value.js"), value, session_id=element.session
        )
        if accepted is not True:
            raise Refusal(
                f"{describe(element, info)} did not accept {value!r}: a {info.type} field "
                "takes values like 2024-12-31 (date), 13:45 (time), 2024-12 (month)"
            )
        if submit:
            await key_press(target, parse_key("Enter"))
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT)
    return await after_action(tab, activity, settled, submits=submit)


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
    source = script("focused-enter-submits.js")
    reply = await tab.target.execute(cdp.runtime_evaluate(f"({source})()"))
    return json_value(reply) is True


@tool(
    "press",
    "Press one key on the keyboard, sent to whatever has the focus: Enter, Tab, "
    "Escape, Backspace, Delete, ArrowUp, ArrowDown, ArrowLeft, ArrowRight, Home, "
    "End, PageUp, PageDown, Space, or a single character; modifiers are held while "
    f"it is pressed. {SETTLES}",
    schema(
        {
            "key": {"type": "string", "description": "a key name or one character"},
            "modifiers": {
                "type": "array",
                "items": {"type": "string", "enum": list(MODIFIER_BITS)},
                "default": [],
                "description": 'keys held down, e.g. ["Control"]',
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
    "Choose an option of a drop-down (<select>) by its visible text or its value. "
    f"{SETTLES} {REFUSES} Also refused: an option that does not exist (the error "
    "lists the options) and elements that are not <select> (click custom drop-downs).",
    schema(
        {
            "id": ID_SCHEMA,
            "value": {"type": "string", "description": "the option's text or value"},
        },
        ("id", "value"),
    ),
    ACT,
)
async def select(tab: Tab, args: Mapping[str, object]) -> ToolResult:
    value = text_arg(args, "value")
    assert value is not None
    element, info = await usable(tab, args)
    if info.tag != "select":
        raise Refusal(
            f"{describe(element, info)} is not a <select>; for a custom drop-down, click it "
            "and then click the option"
        )
    target = tab.target
    await target_point(target, element, info, tab.latest)  # in view and not covered
    require(await control_change_reason(target, element), describe(element, info))
    async with watch(tab.revisions) as activity:
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
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT)
    note = None if outcome["changed"] else f"{outcome['text']!r} was already selected"
    return await after_action(tab, activity, settled, note=note)


@tool(
    "check",
    "Check (on=true) or uncheck (on=false) a checkbox, radio button or switch by "
    "clicking it; nothing is done if it is already in that state. "
    f"{SETTLES} {REFUSES}",
    schema({"id": ID_SCHEMA, "on": {"type": "boolean", "default": True}}, ("id",)),
    ACT,
)
async def check(tab: Tab, args: Mapping[str, object]) -> ToolResult:
    on = bool_arg(args, "on", True)
    element, info = await usable(tab, args)
    if info.checked is None:
        raise Refusal(
            f"{describe(element, info)} is not a checkbox, radio button or switch; use click"
        )
    state = "checked" if on else "unchecked"
    if info.checked == on:
        return text(f"{describe(element, info)} is already {state}; nothing was done")
    if not on and (info.type == "radio" or info.role in ("radio", "menuitemradio")):
        raise Refusal(
            f"{describe(element, info)} is a radio button: it is unchecked by checking "
            "another option of its group"
        )
    target = tab.target
    point = await target_point(target, element, info, tab.latest)
    require(await click_reason(target, element), describe(element, info))
    async with watch(tab.revisions) as activity:
        await click_at(target, point)
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT)
    note = None
    try:
        after = await element_info(target, element)
    except (CDPError, JavaScriptError):
        after = None  # the click took the page elsewhere; the snapshot shows where
    if after is not None and after.checked != on:
        note = f"clicked {describe(element, info)} but it is still not {state}"
    return await after_action(tab, activity, settled, note=note)


@tool(
    "hover",
    f"Move the mouse over an element (opens hover menus and tooltips). {SETTLES} {REFUSES}",
    schema({"id": ID_SCHEMA}, ("id",)),
    ACT,
)
async def hover(tab: Tab, args: Mapping[str, object]) -> ToolResult:
    element = await locate(tab, id_arg(args))
    info = await element_info(tab.target, element)
    point = await target_point(tab.target, element, info, tab.latest)
    async with watch(tab.revisions) as activity:
        await move_to(tab.target, point)
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT)
    return await after_action(tab, activity, settled)


@tool(
    "scroll",
    "Scroll with the mouse wheel: direction 'down' or 'up' scrolls the page by most "
    "of a window height; with an id and a direction, the scrollable element under "
    "it scrolls; with only an id, the page scrolls until that element is in view. "
    "Use it to load more content on pages that load as you scroll. " + SETTLES,
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
        element = await locate(tab, eid)
        info = await element_info(target, element)
        async with watch(tab.revisions) as activity:
            await scroll_into_view(target, element, info)
            settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT)
        return await after_action(tab, activity, settled)
    metrics = await target.execute(cdp.page_get_layout_metrics())
    viewport: Mapping[str, Any] = metrics["cssLayoutViewport"]
    width, height = float(viewport["clientWidth"]), float(viewport["clientHeight"])
    if eid is not None:
        # Wheel over the element: the scrollable box under the pointer moves, as for a person.
        element = await locate(tab, eid)
        info = await element_info(target, element)
        point = await target_point(target, element, info, tab.latest)
    else:
        point = Point(width / 2, height / 2)
    delta = round(height * 0.8) * (1 if direction != "up" else -1)
    before = await _scroll_position(tab)
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
