"""`fill`: several fields of a form in one call, one answer with one diff.

Each field is set by the steps of the tool a person's field needs, shared with it (in
``trimtab.driver``): text fields, text areas and editable areas as `type` types, date
and other picker fields as `type` sets them, a <select> (or the face of a drop-down
drawn over one) as `select` chooses, a checkbox, radio or switch as `check` clicks it,
each verified the same way. Nothing is submitted: no Enter, no button. Before the
first input every field is located and the host's consent rules read for each (a field
whose change may submit its form, a secret field): a field that needs the person's yes
stops the whole call before it acts, as `type`, `select` and `check` would. A field
that went stale once others were set stops the call there: the answer names the fields
set so far, and nothing is tried again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

import attrs

from pycdp_bridge import CDPError, JavaScriptError

from ..driver import (
    CallContext,
    ElementInfo,
    Located,
    NoFocus,
    SecretReason,
    aim_at,
    choose,
    choose_on_face,
    click_element,
    click_reason,
    control_change_reason,
    describe,
    enabled_element,
    face_change_reason,
    is_connected,
    is_picker,
    pick,
    refuse_unchecking_radio,
    secret_reason,
    still_not,
    type_into,
)
from ..tab import Tab, settle
from ._common import (
    ACT,
    ID_SCHEMA,
    SETTLE_TIMEOUT,
    BadArguments,
    Refusal,
    ToolResult,
    after_action,
    schema,
    scope_of,
    tool,
)

__all__ = ["MAX_FIELDS", "fill"]

MAX_FIELDS: Final = 50
"""Fields one call may set: more than any one form a person fills in at once."""


@attrs.frozen
class _Field:
    """One field to set: the element, what it is, and the value asked for."""

    eid: str
    element: Located
    info: ElementInfo
    value: str | bool

    @property
    def name(self) -> str:
        return describe(self.element, self.info)


@tool(
    "fill",
    "Set several form fields in one call as type/select/check would; value: text "
    "(an option's text or value, a date 2024-12-31) or true/false (checkbox, radio). "
    "Submits nothing.",
    schema(
        {
            "fields": {
                "type": "array",
                "maxItems": MAX_FIELDS,
                "items": schema(
                    {"id": ID_SCHEMA, "value": {"type": ["string", "boolean"]}}, ("id", "value")
                ),
            }
        },
        ("fields",),
    ),
    ACT,
)
async def fill(call: CallContext, args: Mapping[str, object]) -> ToolResult:
    tab = call.tab
    wanted = _wanted(args.get("fields"))
    fields = [await _field(tab, eid, value) for eid, value in wanted]
    # The consent rules, read for every field before the first input: nothing is set
    # unless the whole call may go on.
    reasons = [(field, await _reason(tab, field)) for field in fields]
    asked = [(field, reason) for field, reason in reasons if reason is not None]
    if asked:
        # A secret is asked about first: the person's setting never waives it.
        asked.sort(key=lambda pair: not isinstance(pair[1], SecretReason))
        field, reason = asked[0]
        # (Several to ask about: the reason names no one form a routine's mark could match.)
        more = f" (and {len(asked) - 1} more of its fields)" if len(asked) > 1 else ""
        call.require(type(reason)(f"{reason}{more}") if more else reason, field.name, field.eid)
    else:
        call.require(None, fields[0].name)
    frame = await tab.main_frame_id()
    done: list[str] = []
    notes: list[str] = []
    stopped: str | None = None
    async with call.watch(frame, tab.ahead()) as activity:
        for field in fields:
            try:
                note = await _set(tab, field)
            except (Refusal, CDPError, JavaScriptError) as exc:
                if not done:
                    raise  # nothing was set: the call fails as one tool's would
                why = exc.message if isinstance(exc, CDPError) else str(exc)
                stopped = (
                    f"fill stopped at {field.eid}: {why}; set before it: {', '.join(done)}; "
                    "the rest was not set, nothing was tried again"
                )
                break
            done.append(field.eid)
            if note:
                notes.append(note)
        scope = scope_of(*(field.element for field in fields))
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT, scope)
    for field in fields:
        if isinstance(field.value, bool) and field.eid in done:
            still = await still_not(tab, field.element, field.info, field.value)
            if still:
                notes.append(still)
    if stopped:
        notes.insert(0, stopped)
    answer = await after_action(call, activity, settled, note="; ".join(notes) or None)
    return attrs.evolve(answer, is_error=True) if stopped else answer


def _wanted(raw: object) -> list[tuple[str, str | bool]]:
    """The fields argument checked: a list of at most `MAX_FIELDS` {id, value}."""
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        raise BadArguments(f"fields must be a list of {{id, value}}; got {raw!r:.80}")
    if not raw:
        raise BadArguments("fields is empty: name at least one {id, value}")
    if len(raw) > MAX_FIELDS:
        raise BadArguments(
            f"fields holds {len(raw)} entries; at most {MAX_FIELDS} per call: fill in parts"
        )
    found: list[tuple[str, str | bool]] = []
    for index, entry in enumerate(raw):
        if not isinstance(entry, Mapping) or set(entry) != {"id", "value"}:
            raise BadArguments(f"fields[{index}] must be {{id, value}}; got {entry!r:.80}")
        eid, value = entry["id"], entry["value"]
        if not isinstance(eid, str):
            raise BadArguments(f"fields[{index}].id must be a string; got {eid!r:.40}")
        if not isinstance(value, str | bool):
            raise BadArguments(
                f"fields[{index}].value must be text or true/false; got {value!r:.40}"
            )
        if any(eid == seen for seen, _ in found):
            raise BadArguments(f"fields[{index}]: {eid!r:.40} is named twice")
        found.append((eid, value))
    return found


async def _field(tab: Tab, eid: str, value: str | bool) -> _Field:
    """The field `eid` names, refused when it cannot take `value`."""
    element, info = await enabled_element(tab, eid)
    field = _Field(eid, element, info, value)
    toggles = info.checked is not None
    if toggles != isinstance(value, bool):
        wants = "true or false" if toggles else "text"
        # Not the field's name: it is the page's words, and this message is Trimtab's.
        raise BadArguments(f"the value for {eid} must be {wants}; got {value!r:.40}")
    if toggles:
        refuse_unchecking_radio(element, info, bool(value))
    elif info.tag != "select" and not is_picker(info) and not element.control.stands_for:
        if not info.editable:
            raise Refusal(f"{field.name} is not a field fill can set; use click for it")
        if info.readonly:
            raise Refusal(f"{field.name} is read-only; it cannot be typed into")
    return field


async def _reason(tab: Tab, field: _Field) -> str | None:
    """Why setting this field needs the person's yes (`type`'s, `select`'s or
    `check`'s rule), or None."""
    info = field.info
    if info.checked is not None:
        if info.checked == field.value:
            return None  # already so: nothing is clicked
        return await click_reason(tab.target, field.element)
    if field.element.control.stands_for:  # a custom drop-down's face: its select's rule
        return await face_change_reason(tab.target, field.element)
    if info.tag == "select":
        return secret_reason(info.secret, "chooses in") or await control_change_reason(
            tab.target, field.element
        )
    return secret_reason(info.secret)


async def _set(tab: Tab, field: _Field) -> str | None:
    """Set one field by its tool's steps; a note when it holds something else."""
    element, info, value = field.element, field.info, field.value
    if not await is_connected(tab, element):
        raise Refusal(
            f"{field.name} is no longer on the page (the page replaced it after an earlier "
            "field); take a snapshot for its new id"
        )
    if isinstance(value, bool):
        if info.checked == value:
            return None
        aim = await aim_at(tab.target, element, info, tab.latest)
        return await click_element(tab.target, element, info, tab.latest, aim)
    if element.control.stands_for:
        return await choose_on_face(tab, element, info, value)
    if info.tag == "select":
        return await choose(tab, element, info, value)
    if is_picker(info):
        await pick(tab, element, info, value)
        return None
    aim = await aim_at(tab.target, element, info, tab.latest)
    try:
        return await type_into(tab, element, info, aim, value)
    except NoFocus as exc:
        raise Refusal(f"nothing was typed: {exc}") from None
