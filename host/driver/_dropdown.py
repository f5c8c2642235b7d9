"""Choosing on a custom drop-down, the face a library draws over a hidden <select>
(`select`'s and `fill`'s steps for it).

The snapshot shows such a face as the select it stands for (``pipeline/_dropdowns``),
and its control keeps the hidden select's node (`Control.stands_for`). Choosing an
option is done as a person does it, with trusted clicks only: click the face, wait
for its list to show the option's text, click that item. Nothing is set by script:
the library hears a person's clicks and updates the select itself, which is then
read back; the note says what was chosen, or `NotChosen` names the option when the
select did not take it. Each click is aimed and witnessed as `click`'s is, so a
press lands on the face or on the option and nowhere else.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
import trio

from pycdp_bridge import CDPError, JavaScriptError, Target, call_on
from pycdp_bridge import protocol as cdp

from ..pipeline import xml
from ..tab import Tab
from ._consent import control_change_reason, secret_reason
from ._element import OBJECT_GROUP, ElementInfo, Located, Refusal, aim_at, describe, element_info
from ._press import click_element
from ._scripts import script

__all__ = ["NotChosen", "choose_on_face", "face_change_reason", "stood_for"]

# How long the list may take to show the option once the face is clicked (a library
# that animates its list open, or builds it on the first click), and the select to
# take the option once it is clicked.
_LIST_SHOWS = 2.0
_TAKES = 1.0
_POLL = 0.05


class NotChosen(Refusal):
    """The face was clicked but the option was not chosen: the list did not show it,
    it could not be clicked, or the select did not take it (the message says which)."""


async def face_change_reason(target: Target, face: Located) -> str | None:
    """Why choosing in the face's hidden select may need consent: a secret it holds (a
    card's expiry, asked about as one typed in), or a change that may commit."""
    select = await stood_for(target, face)
    info = await element_info(target, select)
    return secret_reason(info.secret, "chooses in") or await control_change_reason(target, select)


async def choose_on_face(tab: Tab, face: Located, info: ElementInfo, wanted: str) -> str | None:
    """Choose the option `wanted` (its text or value) of the hidden select that `face`
    stands for, as a person does: click the face, then the item of its list that shows
    the option, and check the select took it. Returns the answer's note; `Refusal`
    before any click for an option the select lacks or has disabled, `NotChosen` after."""
    target = tab.target
    select = await stood_for(target, face)
    if (await element_info(target, select)).disabled:
        raise Refusal(f"{describe(face, info)} is disabled; it cannot be used right now")
    option: Mapping[str, Any] = await call_on(
        target, select.object_id, script("dropdown-option.js"), wanted, session_id=select.session
    )
    _refuse_unfound(face, info, wanted, option)
    text = str(option["text"])
    if option["chosen"]:
        return f"{text!r} was already selected"
    named = xml.element("option", content=text)
    aim = await aim_at(target, face, info, tab.latest)
    opened = await click_element(target, face, info, tab.latest, aim)
    item = await _list_item(tab, face, text)
    if item is None:
        raise NotChosen(
            f"clicked {describe(face, info)} but its list did not show the option {named}; "
            "nothing was chosen"
        )
    item_info = await element_info(target, item)
    try:
        item_aim = await aim_at(target, item, item_info, tab.latest)
        clicked = await click_element(target, item, item_info, tab.latest, item_aim)
    except Refusal as refusal:
        raise NotChosen(f"clicked {describe(face, info)} but not its option: {refusal}") from None
    now = await _taken(tab, select, str(option["value"]))
    if now is not None:
        # Where the option's presses went tells why it was not taken; once it was, a
        # list that closed on the release (Select2: no click follows) is no news.
        held = f": it still holds {now!r}" if now else ""
        raise NotChosen(
            "; ".join(
                n
                for n in (
                    clicked,
                    f"clicked the option {named} in the list of {describe(face, info)}, but "
                    f"the select did not take it{held}",
                )
                if n
            )
        )
    chose = f"chose {text!r}: opened the drop-down and clicked the option"
    return chose if opened is None else f"{opened}; {chose}"


def _refuse_unfound(
    face: Located, info: ElementInfo, wanted: str, option: Mapping[str, Any]
) -> None:
    """A refusal naming the options when none is `wanted`, or when it is disabled."""
    if option["found"] and not option["disabled"]:
        return
    if option["found"]:
        named = xml.element("option", content=str(option["text"]))
        raise Refusal(f"{named} of {describe(face, info)} is disabled")
    listed = [str(o) for o in option["options"]]
    shown = " ".join(xml.element("option", content=o) for o in listed[:30]) + (
        f" … ({len(listed)} in all)" if len(listed) > 30 else ""
    )
    raise Refusal(
        f"{describe(face, info)} has no option {xml.text(repr(wanted))}; options: {shown}"
    )


async def stood_for(target: Target, face: Located) -> Located:
    """The hidden select a custom drop-down's face stands for, to read and to act on
    as the face is (`Refusal` when it left the page)."""
    backend_id = face.control.stands_for
    try:
        resolved = await target.execute(
            cdp.dom_resolve_node(backend_node_id=backend_id, object_group=OBJECT_GROUP),
            session_id=face.session,
        )
    except CDPError as exc:
        raise Refusal(
            f"the select that {xml.element('select', {'id': face.eid})} stands for is not "
            "on the page any more; take a snapshot"
        ) from exc
    control = attrs.evolve(face.control, backend_node_id=backend_id, stands_for=0)
    return attrs.evolve(face, control=control, object_id=str(resolved["object"]["objectId"]))


async def _list_item(tab: Tab, face: Located, text: str) -> Located | None:
    """The item of the face's open list that shows `text`, once it shows (or None)."""
    target = tab.target
    with trio.move_on_after(_LIST_SHOWS):
        while True:
            try:
                found = await call_on(
                    target,
                    face.object_id,
                    script("dropdown-list-item.js"),
                    text,
                    return_by_value=False,
                    session_id=face.session,
                )
            except (CDPError, JavaScriptError):
                return None  # the face left the page: there is no list to choose in
            object_id = found.get("objectId")
            if object_id is not None:
                described = await target.execute(
                    cdp.dom_describe_node(object_id=str(object_id)), session_id=face.session
                )
                backend_id = int(described["node"]["backendNodeId"])
                control = attrs.evolve(face.control, backend_node_id=backend_id, stands_for=0)
                return attrs.evolve(face, eid="", control=control, object_id=str(object_id))
            await trio.sleep(_POLL)
    return None


async def _taken(tab: Tab, select: Located, value: str) -> str | None:
    """None once the select holds the option of `value` (waiting a moment for a
    library that sets it late), else the text of the option it holds ("": unread)."""
    now: object = None
    with trio.move_on_after(_TAKES):
        while True:
            try:
                now = await call_on(
                    tab.target,
                    select.object_id,
                    script("dropdown-chosen.js"),
                    session_id=select.session,
                )
            except (CDPError, JavaScriptError):
                return ""  # the select left the page: it took nothing that can be read
            if isinstance(now, Mapping) and now.get("value") == value:
                return None
            await trio.sleep(_POLL)
    return str(now.get("text", "")) if isinstance(now, Mapping) else ""
