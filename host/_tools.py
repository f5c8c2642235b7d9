"""The agent's tools: look at the page, and act on it the way a person would.

Every tool runs over a `pycdp_bridge.Target`, so it works the same through the
extension's relay and the direct transport. Actions use trusted input (the mouse at a
point of the element that the browser's hit test gives to it, the keyboard), wait for
the page to settle, and answer with a snapshot: a diff when the document stayed, a
baseline when the action left it. A tool never acts on another element than the one
asked for: stale ids, covered, hidden, disabled or read-only elements are refused
with a message for the model (`ToolResult.is_error`).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import attrs
import trio

from pycdp_bridge import CDPError, DialogOpenError, PageCrashedError, TargetClosedError, capture
from pycdp_bridge import protocol as cdp

from ._input import (
    MODIFIER_BITS,
    OBJECT_GROUP,
    ElementInfo,
    Located,
    Point,
    Refusal,
    call_on,
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
from ._settle import Activity, settle, watch
from ._snapshots import PageChangedError, Snapshot, TabSession
from ._tracker import ToolPolicy
from ._tracker_keys import folded_key
from .pipeline import Compaction, OutNode, compact, render_node
from .pipeline import _xml as xml_escape

__all__ = [
    "ACTION_TIMEOUT",
    "NAVIGATION_TIMEOUT",
    "SETTLE_TIMEOUT",
    "TOOLS",
    "ToolResult",
    "ToolSpec",
    "run_tool",
    "tool_spec",
    "would_submit",
]

SETTLE_TIMEOUT = 5.0
"""Seconds an action waits for the page to settle before answering with what is there."""
NAVIGATION_TIMEOUT = 15.0
"""Seconds navigate/back/forward/reload wait for the page to load and settle."""
ACTION_TIMEOUT = 60.0
"""Seconds after which any tool gives up (a page frozen by a dialog, a hung renderer)."""
WAIT_FOR_MAX = 30.0
_POLL_INTERVAL = 0.25
_FIND_LIMIT = 40
_READ_LIMIT = 20_000


@attrs.frozen
class ToolSpec:
    """One tool as the model sees it, and how the call tracker treats it."""

    name: str
    description: str
    input_schema: Mapping[str, object]
    policy: ToolPolicy


@attrs.frozen
class ToolResult:
    """What a tool answers."""

    content: str
    is_error: bool = False
    kind: str = ""  # "baseline" | "diff" | "text"
    submits: bool = False


class _BadArguments(Exception):
    """The arguments do not fit the tool's schema."""


# --- arguments ----------------------------------------------------------------------------


def _text_arg(args: Mapping[str, object], name: str, *, required: bool = True) -> str | None:
    value = args.get(name)
    if value is None:
        if required:
            raise _BadArguments(f"missing argument {name!r}")
        return None
    if not isinstance(value, str):
        raise _BadArguments(f"argument {name!r} must be a string; got {value!r}")
    return value


def _bool_arg(args: Mapping[str, object], name: str, default: bool) -> bool:
    value = args.get(name, default)
    if not isinstance(value, bool):
        raise _BadArguments(f"argument {name!r} must be true or false; got {value!r}")
    return value


def _id_arg(args: Mapping[str, object]) -> str:
    value = _text_arg(args, "id")
    assert value is not None
    return value


# --- answers --------------------------------------------------------------------------------


def _error(message: str) -> ToolResult:
    return ToolResult(content=message, is_error=True, kind="text")


def _text(message: str) -> ToolResult:
    return ToolResult(content=message, kind="text")


def _with_note(xml: str, note: str) -> str:
    """Put a `<note>` right after the `<page>` line, keeping the document well-formed."""
    head, newline, rest = xml.partition("\n")
    return f"{head}{newline}<note>{xml_escape.text(note)}</note>\n{rest}"


def _result(snapshot: Snapshot, *, note: str | None = None, submits: bool = False) -> ToolResult:
    xml = _with_note(snapshot.xml, note) if note else snapshot.xml
    return ToolResult(content=xml, kind=snapshot.kind, submits=submits)


def _unsettled(seconds: float) -> str:
    return (
        f"the page did not settle within {seconds:g} s (still loading or changing); "
        "this is how it looks now"
    )


async def _after_action(
    tab: TabSession,
    activity: Activity,
    settled: bool,
    *,
    submits: bool = False,
    note: str | None = None,
) -> ToolResult:
    notes = [n for n in (note, None if settled else _unsettled(SETTLE_TIMEOUT)) if n]
    if activity.opened:
        # `watch` brought the tab back to the front as the window opened, but the
        # browser may have switched to the new tab only after that: once more, now
        # that the page has settled, so the next action is not throttled either.
        with contextlib.suppress(CDPError):
            await tab.target.send("Page.bringToFront")
        # The agent acts in its own tab only; say where the page went instead.
        notes.append(
            f"this opened {', '.join(activity.opened)} in a new tab, which you do not see "
            "or act in; navigate(url) opens it in this tab"
        )
    return _result(await tab.snapshot(), note="; ".join(notes) or None, submits=submits)


# --- navigation --------------------------------------------------------------------------------


async def _navigate(tab: TabSession, args: Mapping[str, object]) -> ToolResult:
    url = _text_arg(args, "url")
    assert url is not None
    url = url.strip()
    if not url.startswith(("http://", "https://", "file:", "about:")):
        raise _BadArguments(f"url must be absolute (http:// or https://); got {url!r}")
    target = tab.target
    if target.crashed:
        return await _revive(tab, cdp.page_navigate(url))
    async with watch(target) as activity:
        with trio.move_on_after(NAVIGATION_TIMEOUT) as scope:
            result: Mapping[str, Any] = await target.execute(cdp.page_navigate(url))
            if result.get("errorText"):
                return _error(f"could not load {url}: {result['errorText']}")
            loader = result.get("loaderId")
            if loader is not None:
                await activity.load_of(str(loader))
            settled = await settle(target, activity, scope.deadline - trio.current_time())
        if scope.cancelled_caught:
            settled = False
    return await _baseline(tab, settled)


# Tools that bring a crashed page back (the others refuse while it is crashed).
_REVIVING = frozenset({"navigate", "reload"})


async def _revive(tab: TabSession, command: cdp.Command[Any]) -> ToolResult:
    """Navigate or reload a crashed page: the browser starts a new renderer, which
    announces itself (``Inspector.targetReloadedAfterCrash``) before the page loads.
    Until then the tab answers nothing else, so the usual watch starts after it."""
    target = tab.target
    with trio.move_on_after(NAVIGATION_TIMEOUT) as scope:
        wanted = {"Inspector.targetReloadedAfterCrash", "Page.loadEventFired"}
        async with target.listen(*wanted) as events:
            result: Mapping[str, Any] = await target.execute(command)
            if result.get("errorText"):
                return _error(f"could not load the page: {result['errorText']}")
            async for event in events:
                wanted.discard(event.method)
                if not wanted:
                    break
        async with watch(target) as activity:
            settled = await settle(target, activity, scope.deadline - trio.current_time())
    if scope.cancelled_caught:
        settled = False
    return await _baseline(tab, settled)


async def _baseline(tab: TabSession, settled: bool) -> ToolResult:
    note = None if settled else _unsettled(NAVIGATION_TIMEOUT)
    return _result(await tab.snapshot(baseline=True), note=note)


async def _history(tab: TabSession, step: int) -> ToolResult:
    target = tab.target
    history: Mapping[str, Any] = await target.execute(cdp.page_get_navigation_history())
    index = int(history["currentIndex"]) + step
    entries = history["entries"]
    if not 0 <= index < len(entries):
        where = "previous" if step < 0 else "next"
        return _error(f"there is no {where} page in this tab's history")
    async with watch(target) as activity:
        with trio.move_on_after(NAVIGATION_TIMEOUT) as scope:
            commits = activity.commits
            await target.execute(cdp.page_navigate_to_history_entry(int(entries[index]["id"])))
            await activity.committed(commits)
            settled = await settle(target, activity, scope.deadline - trio.current_time())
        if scope.cancelled_caught:
            settled = False
    return await _baseline(tab, settled)


async def _back(tab: TabSession, args: Mapping[str, object]) -> ToolResult:
    return await _history(tab, -1)


async def _forward(tab: TabSession, args: Mapping[str, object]) -> ToolResult:
    return await _history(tab, +1)


async def _reload(tab: TabSession, args: Mapping[str, object]) -> ToolResult:
    target = tab.target
    if target.crashed:
        return await _revive(tab, cdp.page_reload())
    async with watch(target) as activity:
        with trio.move_on_after(NAVIGATION_TIMEOUT) as scope:
            commits = activity.commits
            await target.execute(cdp.page_reload())
            await activity.committed(commits)
            settled = await settle(target, activity, scope.deadline - trio.current_time())
        if scope.cancelled_caught:
            settled = False
    return await _baseline(tab, settled)


async def _capture_snapshot(tab: TabSession, args: Mapping[str, object]) -> ToolResult:
    return _result(await tab.snapshot(baseline=True))


# --- JavaScript dialogs --------------------------------------------------------------------------


def dialog_xml(kind: str, message: str, default_prompt: str = "") -> str:
    """How a JavaScript dialog the page shows is written for the model (FORMAT.md)."""
    default = f' default="{xml_escape.attr(default_prompt)}"' if kind == "prompt" else ""
    return (
        f'<js-dialog type="{xml_escape.attr(kind)}" message="{xml_escape.attr(message)}"{default}/>'
        "\nThe page waits for an answer and does nothing else until then: "
        "answer_dialog(accept=true) or answer_dialog(accept=false)"
        + (", with text for the prompt." if kind == "prompt" else ".")
    )


def _dialog_result(error: DialogOpenError, *, is_error: bool) -> ToolResult:
    xml = dialog_xml(error.kind, error.message, error.default_prompt)
    return ToolResult(content=xml, is_error=is_error, kind="text")


async def _answer_dialog(tab: TabSession, args: Mapping[str, object]) -> ToolResult:
    target = tab.target
    dialog = target.open_dialog
    if dialog is None:
        raise Refusal("no JavaScript dialog is open on this page")
    accept = _bool_arg(args, "accept", True)
    text = _text_arg(args, "text", required=False)
    params: dict[str, object] = {"accept": accept}
    if text is not None:
        if dialog.get("type") != "prompt":
            raise _BadArguments(f"text is only for a prompt; this dialog is a {dialog.get('type')}")
        params["promptText"] = text
    await target.send("Page.handleJavaScriptDialog", params)
    # Answering may let a navigation go on (beforeunload) or run the page's handler.
    async with watch(target) as activity:
        settled = await settle(target, activity, SETTLE_TIMEOUT)
    return await _after_action(tab, activity, settled)


# --- actions ------------------------------------------------------------------------------------


async def _usable(tab: TabSession, args: Mapping[str, object]) -> tuple[Located, ElementInfo]:
    element = await locate(tab, _id_arg(args))
    info = await element_info(tab.target, element)
    if info.disabled:
        raise Refusal(f"{describe(element, info)} is disabled; it cannot be used right now")
    return element, info


async def _click(tab: TabSession, args: Mapping[str, object]) -> ToolResult:
    element, info = await _usable(tab, args)
    point = await target_point(tab.target, element, info, tab.latest)
    async with watch(tab.target) as activity:
        await click_at(tab.target, point)
        settled = await settle(tab.target, activity, SETTLE_TIMEOUT)
    return await _after_action(tab, activity, settled, submits=info.submits)


async def _hover(tab: TabSession, args: Mapping[str, object]) -> ToolResult:
    element = await locate(tab, _id_arg(args))
    info = await element_info(tab.target, element)
    point = await target_point(tab.target, element, info, tab.latest)
    async with watch(tab.target) as activity:
        await move_to(tab.target, point)
        settled = await settle(tab.target, activity, SETTLE_TIMEOUT)
    return await _after_action(tab, activity, settled)


# Selects the field's whole content (as Control+A would) and says whether it had any.
_SELECT_ALL_JS = """
function() {
  this.focus();
  if ('value' in this && typeof this.select === 'function') {
    this.select();
    return this.value.length > 0;
  }
  const range = document.createRange();
  range.selectNodeContents(this);
  const selection = this.ownerDocument.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
  return (this.textContent || '').length > 0;
}
"""

# Puts the caret at the end, where a person appends.
_CARET_END_JS = """
function() {
  this.focus();
  try {
    if ('value' in this && typeof this.setSelectionRange === 'function') {
      this.setSelectionRange(this.value.length, this.value.length);
      return;
    }
  } catch (e) { return; }  // email and number fields have no selection API
  if (this.isContentEditable) {
    const range = document.createRange();
    range.selectNodeContents(this);
    range.collapse(false);
    const selection = this.ownerDocument.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }
}
"""

_FIELD_TEXT_JS = "function() { return 'value' in this ? this.value : (this.textContent || ''); }"

# Fields whose native editors (pickers, sliders) are not text a person types: their
# value is set as the picker would set it, with the events the picker fires.
_PICKER_TYPES = frozenset({"date", "time", "datetime-local", "month", "week", "color", "range"})
_SET_VALUE_JS = """
function(value) {
  const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
  setter.call(this, value);
  this.dispatchEvent(new Event('input', {bubbles: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
  return this.value === value;
}
"""

_FOCUSED_JS = """
function() {
  const doc = this.nodeType === 9 ? this : this.ownerDocument;
  let el = doc.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  for (let n = el; n; n = n.parentNode || n.host || null) if (n === this) return true;
  return false;
}
"""


async def _type(tab: TabSession, args: Mapping[str, object]) -> ToolResult:
    text = _text_arg(args, "text")
    assert text is not None
    submit = _bool_arg(args, "submit", False)
    clear = _bool_arg(args, "clear", True)
    element, info = await _usable(tab, args)
    target = tab.target
    if info.tag == "input" and info.type in _PICKER_TYPES:
        return await _set_picker(tab, element, info, text, submit=submit)
    if not info.editable:
        raise Refusal(
            f"{describe(element, info)} is not a text field, so it cannot be typed into; "
            "use click, select or check for it"
        )
    if info.readonly:
        raise Refusal(f"{describe(element, info)} is read-only; it cannot be typed into")
    point = await target_point(target, element, info, tab.latest)
    async with watch(target) as activity:
        # Focus by clicking it, as a person does; a click that left focus elsewhere
        # (a page that moves focus on click) gets the field focused directly.
        await click_at(target, point)
        if await call_on(target, element.session, element.object_id, _FOCUSED_JS) is not True:
            await target.execute(
                cdp.dom_focus(backend_node_id=element.backend_id), session_id=element.session
            )
        if clear:
            had_text = await call_on(target, element.session, element.object_id, _SELECT_ALL_JS)
            if had_text is True:
                await key_press(target, parse_key("Backspace"))
        else:
            await call_on(target, element.session, element.object_id, _CARET_END_JS)
        if text:
            await target.execute(cdp.input_insert_text(text))
        if submit:
            await key_press(target, parse_key("Enter"))
        settled = await settle(target, activity, SETTLE_TIMEOUT)
    return await _after_action(tab, activity, settled, submits=submit)


async def _set_picker(
    tab: TabSession, element: Located, info: ElementInfo, text: str, *, submit: bool
) -> ToolResult:
    target = tab.target
    await target_point(target, element, info, tab.latest)  # in view, not covered
    async with watch(target) as activity:
        await target.execute(
            cdp.dom_focus(backend_node_id=element.backend_id), session_id=element.session
        )
        accepted = await call_on(
            target, element.session, element.object_id, _SET_VALUE_JS, {"value": text}
        )
        if accepted is not True:
            raise Refusal(
                f"{describe(element, info)} did not accept {text!r}: a {info.type} field "
                "takes values like 2024-12-31 (date), 13:45 (time), 2024-12 (month)"
            )
        if submit:
            await key_press(target, parse_key("Enter"))
        settled = await settle(target, activity, SETTLE_TIMEOUT)
    return await _after_action(tab, activity, settled, submits=submit)


def _modifier_bits(args: Mapping[str, object]) -> int:
    names = args.get("modifiers", [])
    if not isinstance(names, list | tuple):
        raise _BadArguments(f"modifiers must be a list like ['Control']; got {names!r}")
    bits = 0
    for name in names:
        if name not in MODIFIER_BITS:
            known = ", ".join(MODIFIER_BITS)
            raise _BadArguments(f"unknown modifier {name!r}: use {known}")
        bits |= MODIFIER_BITS[str(name)]
    return bits


async def _press(tab: TabSession, args: Mapping[str, object]) -> ToolResult:
    try:
        key = parse_key(args.get("key"))
    except ValueError as exc:
        raise _BadArguments(str(exc)) from exc
    modifiers = _modifier_bits(args)
    submits = key.key == "Enter" and not modifiers and await _focused_enter_submits(tab)
    async with watch(tab.target) as activity:
        await key_press(tab.target, key, modifiers)
        settled = await settle(tab.target, activity, SETTLE_TIMEOUT)
    return await _after_action(tab, activity, settled, submits=submits)


_ACTIVE_JS = """
(() => {
  let el = document.activeElement;
  while (el) {
    if (el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
    else if (el.contentDocument && el.contentDocument.activeElement) {
      el = el.contentDocument.activeElement;
    }
    else break;
  }
  return !!el && el.localName === 'input' && !!el.form
    && ['text', 'search', 'email', 'url', 'tel', 'password', 'number'].includes(el.type);
})()
"""


async def _focused_enter_submits(tab: TabSession) -> bool:
    result = await tab.target.execute(cdp.runtime_evaluate(_ACTIVE_JS))
    return result.get("result", {}).get("value") is True


_SELECT_OPTION_JS = """
function(wanted) {
  const fold = (s) => s.replace(/\\s+/g, ' ').trim();
  const options = Array.from(this.options);
  const label = (o) => fold(o.label || o.text);
  const match = options.find((o) => o.value === wanted)
    || options.find((o) => label(o) === fold(wanted))
    || options.find((o) => label(o).toLowerCase() === fold(wanted).toLowerCase());
  if (!match) return {found: false, options: options.map(label)};
  if (match.disabled) return {found: false, disabled: true, text: label(match)};
  if (match.selected && !this.multiple) return {found: true, changed: false, text: label(match)};
  match.selected = true;
  this.dispatchEvent(new Event('input', {bubbles: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
  return {found: true, changed: true, text: label(match)};
}
"""


async def _select(tab: TabSession, args: Mapping[str, object]) -> ToolResult:
    value = _text_arg(args, "value")
    assert value is not None
    element, info = await _usable(tab, args)
    if info.tag != "select":
        raise Refusal(
            f"{describe(element, info)} is not a <select>; for a custom drop-down, click it "
            "and then click the option"
        )
    target = tab.target
    await target_point(target, element, info, tab.latest)  # in view and not covered
    async with watch(target) as activity:
        # A native <select> opens a popup the browser draws outside the page, which
        # input events cannot drive (headless has none at all), so the option is set
        # the way that popup sets it: focus, selection, then `input` and `change`.
        await target.execute(
            cdp.dom_focus(backend_node_id=element.backend_id), session_id=element.session
        )
        outcome = await call_on(
            target, element.session, element.object_id, _SELECT_OPTION_JS, {"value": value}
        )
        if not outcome["found"]:
            if outcome.get("disabled"):
                raise Refusal(
                    f"option {outcome['text']!r} of {describe(element, info)} is disabled"
                )
            listed = outcome["options"]
            shown = " | ".join(listed[:30]) + (
                f" … ({len(listed)} in all)" if len(listed) > 30 else ""
            )
            raise Refusal(f"{describe(element, info)} has no option {value!r}; options: {shown}")
        settled = await settle(target, activity, SETTLE_TIMEOUT)
    note = None if outcome["changed"] else f"{outcome['text']!r} was already selected"
    return await _after_action(tab, activity, settled, note=note)


async def _check(tab: TabSession, args: Mapping[str, object]) -> ToolResult:
    on = _bool_arg(args, "on", True)
    element, info = await _usable(tab, args)
    if info.checked is None:
        raise Refusal(
            f"{describe(element, info)} is not a checkbox, radio button or switch; use click"
        )
    state = "checked" if on else "unchecked"
    if info.checked == on:
        return _text(f"{describe(element, info)} is already {state}; nothing was done")
    if not on and (info.type == "radio" or info.role in ("radio", "menuitemradio")):
        raise Refusal(
            f"{describe(element, info)} is a radio button: it is unchecked by checking "
            "another option of its group"
        )
    target = tab.target
    point = await target_point(target, element, info, tab.latest)
    async with watch(target) as activity:
        await click_at(target, point)
        settled = await settle(target, activity, SETTLE_TIMEOUT)
    note = None
    try:
        after = await element_info(target, element)
    except CDPError:
        after = None  # the click took the page elsewhere; the snapshot shows where
    if after is not None and after.checked != on:
        note = f"clicked {describe(element, info)} but it is still not {state}"
    return await _after_action(tab, activity, settled, note=note)


async def _scroll(tab: TabSession, args: Mapping[str, object]) -> ToolResult:
    direction = _text_arg(args, "direction", required=False)
    eid = _text_arg(args, "id", required=False)
    if direction not in (None, "down", "up"):
        raise _BadArguments(f"direction must be 'down' or 'up'; got {direction!r}")
    target = tab.target
    if eid is not None and direction is None:
        element = await locate(tab, eid)
        info = await element_info(target, element)
        async with watch(target) as activity:
            await scroll_into_view(target, element, info)
            settled = await settle(target, activity, SETTLE_TIMEOUT)
        return await _after_action(tab, activity, settled)
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
    async with watch(target) as activity:
        await target.execute(
            cdp.input_dispatch_mouse_event("mouseWheel", point.x, point.y, delta_x=0, delta_y=delta)
        )
        settled = await settle(target, activity, SETTLE_TIMEOUT)
    note = None
    if eid is None and await _scroll_position(tab) == before:
        edge = "bottom" if delta > 0 else "top"
        note = (
            f"the page did not move: it is already at the {edge}, or the part under the "
            "middle of the window does not scroll (pass the id of what should scroll)"
        )
    return await _after_action(tab, activity, settled, note=note)


async def _scroll_position(tab: TabSession) -> float:
    metrics = await tab.target.execute(cdp.page_get_layout_metrics())
    return float(metrics["cssVisualViewport"]["pageY"])


# --- reading --------------------------------------------------------------------------------------


async def _current(tab: TabSession) -> Compaction:
    """The latest snapshot, or a fresh capture that does not change what the model saw."""
    if tab.latest is not None:
        return tab.latest
    return compact(await capture(tab.target), count=False)


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def _region_of(compaction: Compaction) -> dict[str, str]:
    """eid → key of the innermost region holding it."""
    found: dict[str, str] = {}
    for region in compaction.regions:  # outer regions come before the ones inside them
        for eid in region.eids:
            found[eid] = region.key
    return found


async def _find(tab: TabSession, args: Mapping[str, object]) -> ToolResult:
    text = _text_arg(args, "text", required=False)
    role = _text_arg(args, "role", required=False)
    region = _text_arg(args, "region", required=False)
    if not (text or role or region):
        raise _BadArguments("find needs at least one of text, role or region")
    compaction = await _current(tab)
    regions = _region_of(compaction)
    wanted_text = _fold(text) if text else None
    wanted_role = _fold(role) if role else None
    lines: list[str] = []
    matches = 0
    for node in compaction.root.iter():
        if node.eid is None:
            continue
        control = compaction.controls.get(node.eid)
        if control is None:
            continue
        where = regions.get(node.eid, control.region)
        if region and region not in (where, where.rsplit("-", 1)[0]):
            continue
        if wanted_role and wanted_role not in (_fold(control.role), node.tag):
            continue
        if wanted_text and not _matches_text(node, control.name, wanted_text):
            continue
        matches += 1
        if len(lines) < _FIND_LIMIT:
            lines.append(f'<in region="{xml_escape.attr(where)}">{render_node(node)}</in>')
    # The query is not echoed: an equivalent query (other case or spacing) answered
    # from cache must read exactly like a fresh answer.
    more = f' shown="{len(lines)}"' if matches > len(lines) else ""
    body = "".join(f"{line}\n" for line in lines)
    return _text(f'<found count="{matches}"{more}>\n{body}</found>\n')


def _matches_text(node: OutNode, name: str, wanted: str) -> bool:
    if wanted in _fold(node.text()) or wanted in _fold(name):
        return True
    return any(wanted in _fold(value) for key, value in node.attrs if key != "id")


async def _expand(tab: TabSession, args: Mapping[str, object]) -> ToolResult:
    region = _text_arg(args, "region")
    assert region is not None
    try:
        return _text(tab.expand(region.strip()))
    except LookupError as exc:
        return _error(str(exc.args[0]))


_READ_JS = """
function(limit) {
  const el = this;
  const tag = el.localName;
  const fold = (s) => (s || '').replace(/[ \\t]+/g, ' ').replace(/\\n\\s*\\n+/g, '\\n').trim();
  const out = {tag, attrs: {}, text: '', options: null};
  if (tag === 'a' && el.href) out.attrs.href = el.href;
  if (tag === 'img') out.attrs.src = el.currentSrc || el.src;
  if (tag === 'select') {
    out.options = Array.from(el.options).map((o) => ({
      text: fold(o.label || o.text), value: o.value, selected: o.selected, disabled: o.disabled,
    }));
  } else if ('value' in el && ['input', 'textarea'].includes(tag)) {
    out.attrs.type = el.type;
    if (['checkbox', 'radio'].includes(el.type)) out.attrs.checked = String(el.checked);
    else out.text = el.type === 'password' ? '\\u2022'.repeat(el.value.length) : el.value;
  } else {
    out.text = fold(el.innerText || el.textContent);
  }
  const title = el.getAttribute('title');
  if (title) out.attrs.title = title;
  const label = el.getAttribute('aria-label');
  if (label) out.attrs.label = label;
  out.full = out.text.length;
  out.text = out.text.slice(0, limit);
  return out;
}
"""


async def _read(tab: TabSession, args: Mapping[str, object]) -> ToolResult:
    element = await locate(tab, _id_arg(args))
    facts = await call_on(
        tab.target, element.session, element.object_id, _READ_JS, {"value": _READ_LIMIT}
    )
    attributes = f' id="{xml_escape.attr(element.eid)}"' + "".join(
        f' {name}="{xml_escape.attr(str(value))}"' for name, value in facts["attrs"].items()
    )
    tag = "read"
    parts = [f'<{tag} tag="{xml_escape.attr(facts["tag"])}"{attributes}>']
    if facts["options"] is not None:
        parts.append("\n")
        for option in facts["options"]:
            states = "".join(
                f' {state}="true"' for state in ("selected", "disabled") if option[state]
            )
            value = option["value"]
            value_attr = f' value="{xml_escape.attr(value)}"' if value != option["text"] else ""
            parts.append(
                f"<option{value_attr}{states}>{xml_escape.text(option['text'])}</option>\n"
            )
    else:
        parts.append(xml_escape.text(facts["text"]))
        if facts["full"] > len(facts["text"]):
            parts.append(f'<more chars="{facts["full"] - len(facts["text"])}"/>')
    parts.append(f"</{tag}>\n")
    return _text("".join(parts))


async def _wait_for(tab: TabSession, args: Mapping[str, object]) -> ToolResult:
    text = _text_arg(args, "text", required=False)
    eid = _text_arg(args, "id", required=False)
    if not text and not eid:
        raise _BadArguments("wait_for needs text or id")
    timeout = args.get("timeout", 5)
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
    ):
        raise _BadArguments(f"timeout must be a number of seconds; got {timeout!r}")
    if not 0 < timeout <= WAIT_FOR_MAX:
        raise _BadArguments(
            f"timeout must be between 0 and {WAIT_FOR_MAX:g} seconds; got {timeout}"
        )
    wanted = _fold(text) if text else None
    with trio.move_on_after(float(timeout)):
        while True:
            compaction = compact(await capture(tab.target), count=False)
            if (eid is None or eid in compaction.controls) and (
                wanted is None or _page_has_text(compaction, wanted)
            ):
                return _result(await tab.snapshot())
            await trio.sleep(_POLL_INTERVAL)
    what = " and ".join(
        part for part in (f"text {text!r}" if text else "", f"element {eid}" if eid else "") if part
    )
    return _error(f"waited {float(timeout):g} s: {what} did not appear on the page")


def _page_has_text(compaction: Compaction, wanted: str) -> bool:
    if wanted in _fold(compaction.root.text()):
        return True
    return any(wanted in _fold(control.name) for control in compaction.controls.values())


# --- the catalogue --------------------------------------------------------------------------------

_Handler = Callable[[TabSession, Mapping[str, object]], Awaitable[ToolResult]]

_ID_SCHEMA = {"type": "string", "description": 'an element id from the latest snapshot, like "k3x"'}
_ACT = ToolPolicy(side_effects=True)
_READS = ToolPolicy(reads_page=True)


def _schema(properties: Mapping[str, object], required: tuple[str, ...] = ()) -> dict[str, object]:
    return {
        "type": "object",
        "properties": dict(properties),
        "required": list(required),
        "additionalProperties": False,
    }


_SETTLES = (
    f"Then it waits until the page settles (loads, requests answered, {0.3:g} s without "
    f"changes; at most {SETTLE_TIMEOUT:g} s, after which the result says the page did not "
    "settle) and returns a snapshot: a diff of what changed, or the whole new page "
    "(baseline) if the action opened another page."
)
_REFUSES = (
    "Errors (nothing is done): an id that is no longer on the page (take a snapshot), an "
    "element that is hidden, disabled, or covered by something else (the error names it)."
)
_LOADS = (
    f"Waits for the page to load (at most {NAVIGATION_TIMEOUT:g} s) and returns the whole "
    "page (baseline)."
)

_CATALOGUE: tuple[tuple[ToolSpec, _Handler], ...] = (
    (
        ToolSpec(
            "navigate",
            f"Open a URL in the tab. {_LOADS} Errors: the URL could not be loaded.",
            _schema(
                {"url": {"type": "string", "description": "an absolute http(s) URL"}}, ("url",)
            ),
            _ACT,
        ),
        _navigate,
    ),
    (
        ToolSpec("back", f"Go back one page in the tab's history. {_LOADS}", _schema({}), _ACT),
        _back,
    ),
    (
        ToolSpec(
            "forward", f"Go forward one page in the tab's history. {_LOADS}", _schema({}), _ACT
        ),
        _forward,
    ),
    (ToolSpec("reload", f"Reload the page. {_LOADS}", _schema({}), _ACT), _reload),
    (
        ToolSpec(
            "capture_snapshot",
            "Look at the page as it is now: returns the whole page (baseline), with regions "
            "unchanged since your last baseline collapsed.",
            _schema({}),
            _READS,
        ),
        _capture_snapshot,
    ),
    (
        ToolSpec(
            "answer_dialog",
            "Answer the JavaScript dialog the page opened (alert, confirm, prompt, or "
            "'leave this page?'), as a person clicks OK (accept=true) or Cancel "
            "(accept=false); for a prompt, text is what is typed in it. While such a "
            "dialog is open the page does nothing else, so other tools answer with the "
            f"dialog (<js-dialog .../>) instead. {_SETTLES} Errors: no dialog is open.",
            _schema(
                {
                    "accept": {"type": "boolean", "default": True},
                    "text": {"type": "string", "description": "the answer to a prompt"},
                },
                ("accept",),
            ),
            _ACT,
        ),
        _answer_dialog,
    ),
    (
        ToolSpec(
            "click",
            "Click an element with the mouse, like a person: it is scrolled into view and "
            f"clicked where it is visible. {_SETTLES} A click that opens another tab or "
            "window (a target=_blank link, a pop-up) leaves you in this one, and the "
            f"result's note says which URL it opened. {_REFUSES}",
            _schema({"id": _ID_SCHEMA}, ("id",)),
            _ACT,
        ),
        _click,
    ),
    (
        ToolSpec(
            "type",
            "Type text into a text field (input, textarea or editable area): it is clicked, "
            "its content is replaced (clear=false appends instead), the text is typed, and "
            "with submit=true Enter is pressed afterwards. Date, time and colour fields take "
            f"values like 2024-12-31, 13:45, #ff0000. {_SETTLES} {_REFUSES} Also refused: "
            "fields that are read-only and elements that are not text fields.",
            _schema(
                {
                    "id": _ID_SCHEMA,
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
            _ACT,
        ),
        _type,
    ),
    (
        ToolSpec(
            "press",
            "Press one key on the keyboard, sent to whatever has the focus: Enter, Tab, "
            "Escape, Backspace, Delete, ArrowUp, ArrowDown, ArrowLeft, ArrowRight, Home, "
            "End, PageUp, PageDown, Space, or a single character; modifiers are held while "
            f"it is pressed. {_SETTLES}",
            _schema(
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
            _ACT,
        ),
        _press,
    ),
    (
        ToolSpec(
            "select",
            "Choose an option of a drop-down (<select>) by its visible text or its value. "
            f"{_SETTLES} {_REFUSES} Also refused: an option that does not exist (the error "
            "lists the options) and elements that are not <select> (click custom drop-downs).",
            _schema(
                {
                    "id": _ID_SCHEMA,
                    "value": {"type": "string", "description": "the option's text or value"},
                },
                ("id", "value"),
            ),
            _ACT,
        ),
        _select,
    ),
    (
        ToolSpec(
            "check",
            "Check (on=true) or uncheck (on=false) a checkbox, radio button or switch by "
            "clicking it; nothing is done if it is already in that state. "
            f"{_SETTLES} {_REFUSES}",
            _schema(
                {"id": _ID_SCHEMA, "on": {"type": "boolean", "default": True}},
                ("id",),
            ),
            _ACT,
        ),
        _check,
    ),
    (
        ToolSpec(
            "hover",
            "Move the mouse over an element (opens hover menus and tooltips). "
            f"{_SETTLES} {_REFUSES}",
            _schema({"id": _ID_SCHEMA}, ("id",)),
            _ACT,
        ),
        _hover,
    ),
    (
        ToolSpec(
            "scroll",
            "Scroll with the mouse wheel: direction 'down' or 'up' scrolls the page by most "
            "of a window height; with an id and a direction, the scrollable element under "
            "it scrolls; with only an id, the page scrolls until that element is in view. "
            "Use it to load more content on pages that load as you scroll. " + _SETTLES,
            _schema(
                {
                    "direction": {"type": "string", "enum": ["down", "up"]},
                    "id": _ID_SCHEMA,
                }
            ),
            _ACT,
        ),
        _scroll,
    ),
    (
        ToolSpec(
            "find",
            "Search the latest snapshot, including parts that were trimmed or collapsed, "
            "for elements with ids: by text (case-insensitive, part of the text or label), "
            "role (link, button, textbox, checkbox, combobox... or the tag: a, input, "
            "select) and/or region (nav, main, footer...). Returns one line per element "
            "with its region, at most 40.",
            _schema(
                {
                    "text": {"type": "string"},
                    "role": {"type": "string"},
                    "region": {"type": "string"},
                }
            ),
            ToolPolicy(reads_page=True, key=folded_key("text")),
        ),
        _find,
    ),
    (
        ToolSpec(
            "expand",
            "Show all of one region of the latest snapshot (one that was trimmed or "
            "collapsed as unchanged). Errors: no such region (the error lists them).",
            _schema(
                {"region": {"type": "string", "description": "a region name, like nav"}},
                ("region",),
            ),
            _READS,
        ),
        _expand,
    ),
    (
        ToolSpec(
            "read",
            "Read one element in full: all its text (up to 20,000 characters), a link's "
            "URL, every option of a drop-down, a field's value. Errors: an id no longer on "
            "the page.",
            _schema({"id": _ID_SCHEMA}, ("id",)),
            _READS,
        ),
        _read,
    ),
    (
        ToolSpec(
            "wait_for",
            "Wait until a text or an element id appears on the page (checked every quarter "
            "second), then return a snapshot of what changed. Errors: it did not appear "
            f"within timeout seconds (default 5, at most {WAIT_FOR_MAX:g}).",
            _schema(
                {
                    "text": {"type": "string"},
                    "id": _ID_SCHEMA,
                    "timeout": {
                        "type": "number",
                        "default": 5,
                        "exclusiveMinimum": 0,
                        "maximum": WAIT_FOR_MAX,
                    },
                }
            ),
            # Never answered from cache: it waits on what the page does next, and
            # its snapshot moves the tab's diff base.
            ToolPolicy(volatile=True),
        ),
        _wait_for,
    ),
)

TOOLS: tuple[ToolSpec, ...] = tuple(spec for spec, _ in _CATALOGUE)
_HANDLERS: Mapping[str, _Handler] = {spec.name: handler for spec, handler in _CATALOGUE}
_SPECS: Mapping[str, ToolSpec] = {spec.name: spec for spec in TOOLS}


def tool_spec(name: str) -> ToolSpec:
    """The spec of the tool called `name`; KeyError naming the known tools otherwise."""
    try:
        return _SPECS[name]
    except KeyError:
        known = ", ".join(_SPECS)
        raise KeyError(f"unknown tool {name!r}; the tools are {known}") from None


async def run_tool(tab: TabSession, name: str, args: Mapping[str, object]) -> ToolResult:
    """Run one tool on a tab; refusals and a closed tab come back as `is_error` results.

    Raises KeyError for an unknown tool name and CDPError for a browser failure that
    is not about the page having changed.
    """
    tool_spec(name)
    handler = _HANDLERS[name]
    crashed = _error(
        f"{name} failed: the page crashed (its renderer process died); "
        "navigate(url) or reload() brings the tab back"
    )
    if tab.target.crashed and name not in _REVIVING:
        # Not even the latest snapshot stands for the page any more.
        tab.forget()
        return crashed
    dialog = tab.target.open_dialog
    if dialog is not None and name != "answer_dialog":
        # Nothing was done: the page answers nothing until the dialog is answered.
        return _dialog_result(DialogOpenError.of(name, dialog), is_error=True)
    try:
        with trio.fail_after(ACTION_TIMEOUT):
            return await handler(tab, args)
    except (Refusal, _BadArguments) as exc:
        prefix = "" if isinstance(exc, Refusal) else f"bad arguments for {name}: "
        return _error(prefix + str(exc))
    except DialogOpenError as exc:
        # The action ran and the page answered it with a dialog: that is its result.
        return _dialog_result(exc, is_error=False)
    except PageCrashedError:
        tab.forget()
        return crashed
    except TargetClosedError as exc:
        tab.forget()
        return _error(
            f"{name} failed: the tab closed or stopped being debugged ({exc.reason}); "
            "nothing more can be done in it"
        )
    except PageChangedError as exc:
        return _error(f"{name}: {exc}")
    except trio.TooSlowError:
        return _error(
            f"{name} did not finish within {ACTION_TIMEOUT:g} s: the page does not respond "
            "(a script on it may be stuck); reload it or take a snapshot later"
        )
    except CDPError as exc:
        if "node" in exc.message.lower() or "context" in exc.message.lower():
            # The element or its document went away between two steps: the page changed.
            return _error(
                f"{name} stopped: the page changed while acting ({exc.message}); nothing "
                "more was done; take a snapshot"
            )
        raise
    finally:
        with trio.CancelScope(shield=True):
            await _release(tab)


async def _release(tab: TabSession) -> None:
    """Let the page free the remote objects this call held."""
    if tab.target.closed:
        return
    sessions: list[str | None] = [None, *tab.target.child_sessions()]
    for session in sessions:
        # Blocked by a dialog: the group is released after the next call instead.
        with contextlib.suppress(CDPError, TargetClosedError, DialogOpenError):
            await tab.target.send(
                "Runtime.releaseObjectGroup", {"objectGroup": OBJECT_GROUP}, session_id=session
            )


async def would_submit(tab: TabSession, name: str, args: Mapping[str, object]) -> bool:
    """Whether running this call would submit a form, found without acting.

    A click on a submit button of a form, Enter (`press` or `type(submit=true)`) in a
    form's text field. False when the element cannot be found (the call will fail).
    """
    tool_spec(name)
    try:
        if name == "type":
            return args.get("submit") is True
        if name == "press":
            return (
                args.get("key") in ("Enter", "Return")
                and not args.get("modifiers")
                and (await _focused_enter_submits(tab))
            )
        if name == "click":
            element = await locate(tab, args.get("id"))
            return (await element_info(tab.target, element)).submits
    except (Refusal, CDPError, TargetClosedError):
        return False
    finally:
        with trio.CancelScope(shield=True):
            await _release(tab)
    return False
