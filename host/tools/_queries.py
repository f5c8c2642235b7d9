"""Tools that read without acting: find, expand, read, wait_for."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import trio

from pycdp_bridge import call_on

from ..driver import CallContext, locate, secret_of, stood_for
from ..pipeline import Compaction, OutNode, compact, mask, render_node, xml
from ..tab import Tab
from ..tracker import ToolPolicy, folded_key
from ._common import (
    ID_SCHEMA,
    READS,
    BadArguments,
    ToolResult,
    error,
    id_arg,
    result,
    schema,
    script,
    text,
    text_arg,
    tool,
)

__all__ = ["WAIT_FOR_MAX", "expand", "find", "read", "wait_for"]

WAIT_FOR_MAX = 30.0
_POLL_INTERVAL = 0.25
_FIND_LIMIT = 40
_READ_LIMIT = 20_000


def _searchable(value: str) -> str:
    """Text as a search compares it: runs of whitespace as one space, case folded."""
    return " ".join(value.split()).casefold()


async def _current(tab: Tab) -> Compaction:
    """The latest snapshot, or a fresh capture that does not change what the model saw."""
    if tab.latest is not None:
        return tab.latest
    return compact(await tab.memory.capture(), count=False)


def _region_of(compaction: Compaction) -> dict[str, str]:
    """eid → key of the innermost region holding it."""
    found: dict[str, str] = {}
    for region in compaction.regions:  # outer regions come before the ones inside them
        for eid in region.eids:
            found[eid] = region.key
    return found


def _matches_text(node: OutNode, name: str, wanted: str) -> bool:
    if wanted in _searchable(node.text()) or wanted in _searchable(name):
        return True
    return any(wanted in _searchable(value) for key, value in node.attrs if key != "id")


@tool(
    "find",
    "Search the latest snapshot, trimmed and collapsed parts too, for elements with "
    "ids by text (part of their text or label, any case), role (link, button, "
    "textbox, … or a tag) and/or region. At most 40 lines.",
    schema({"text": {"type": "string"}, "role": {"type": "string"}, "region": {"type": "string"}}),
    ToolPolicy(reads_page=True, key=folded_key("text")),
)
async def find(call: CallContext, args: Mapping[str, object]) -> ToolResult:
    tab = call.tab
    wanted_text = text_arg(args, "text", required=False)
    role = text_arg(args, "role", required=False)
    region = text_arg(args, "region", required=False)
    if not (wanted_text or role or region):
        raise BadArguments("find needs at least one of text, role or region")
    compaction = await _current(tab)
    regions = _region_of(compaction)
    wanted = _searchable(wanted_text) if wanted_text else None
    wanted_role = _searchable(role) if role else None
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
        if wanted_role and wanted_role not in (_searchable(control.role), node.tag):
            continue
        if wanted and not _matches_text(node, control.name, wanted):
            continue
        matches += 1
        if len(lines) < _FIND_LIMIT:
            lines.append(
                xml.start_tag("in", {"region": where}) + render_node(node) + xml.end_tag("in")
            )
    # The query is not echoed: an equivalent query (other case or spacing) answered
    # from cache must read exactly like a fresh answer.
    counts = {"count": matches, "shown": len(lines) if matches > len(lines) else None}
    body = "".join(f"{line}\n" for line in lines)
    return text(f"{xml.start_tag('found', counts)}\n{body}{xml.end_tag('found')}\n")


_AT_SCHEMA: Mapping[str, object] = {"type": "integer", "minimum": 0, "default": 0}


def _at_arg(args: Mapping[str, object]) -> int:
    """The offset ``at`` of a `<more>` marker (0 when absent)."""
    value = args.get("at", 0)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BadArguments(f"argument 'at' must be a whole number from 0; got {value!r}")
    return value


@tool(
    "expand",
    "Show all of one region of the latest snapshot (one that was trimmed or "
    "collapsed as unchanged), or the next page of one from a <more region at> marker. "
    "Errors: no such region (the error lists them).",
    schema(
        {
            "region": {"type": "string", "description": "a region name, like nav"},
            "at": _AT_SCHEMA,
        },
        ("region",),
    ),
    READS,
)
async def expand(call: CallContext, args: Mapping[str, object]) -> ToolResult:
    tab = call.tab
    region = text_arg(args, "region")
    assert region is not None
    try:
        return text(tab.expand(region.strip(), _at_arg(args)))
    except (LookupError, ValueError) as exc:
        return error(str(exc.args[0]))


@tool(
    "read",
    "Read one element in full: all its text (up to 20,000 characters), a link's "
    "URL, every option of a drop-down, a field's value. Or the next page of a long "
    "text from a <more text at> marker: read(text, at). Errors: an id no longer on "
    "the page.",
    schema({"id": ID_SCHEMA, "text": {"type": "string"}, "at": _AT_SCHEMA}),
    READS,
)
async def read(call: CallContext, args: Mapping[str, object]) -> ToolResult:
    tab = call.tab
    key = text_arg(args, "text", required=False)
    if (key is None) == (args.get("id") is None):
        raise BadArguments("read needs an element id, or a long text's key (text) and at")
    if key is not None:
        try:
            return text(tab.read_text(key.strip(), _at_arg(args)))
        except (LookupError, ValueError) as exc:
            return error(str(exc.args[0]))
    element = await locate(tab, id_arg(args))
    tab.memory.shown_live(element.eid)
    # A custom drop-down's face is read as the select it stands for: every option.
    source = await stood_for(tab.target, element) if element.control.stands_for else element
    facts: Mapping[str, Any] = await call_on(
        tab.target,
        source.object_id,
        script("read-element.js"),
        _READ_LIMIT,
        session_id=source.session,
    )
    attributes: dict[str, object] = {"tag": facts["tag"], "id": element.eid}
    attributes.update((name, str(value)) for name, value in facts["attrs"].items())
    parts = [xml.start_tag("read", attributes)]
    secret = secret_of(facts.get("hints"))
    if secret is not None and facts["options"] is not None:
        # A card's expiry month as a list: its options, not which one is chosen.
        facts = dict(facts, options=[dict(o, selected=False) for o in facts["options"]])
    elif secret is not None:
        # A password's or a card's value: that it is filled (a card number's last four
        # digits), as the snapshot shows it.
        shown = mask(secret, str(facts["text"]))
        facts = dict(facts, text=shown, full=len(shown))
    if facts["options"] is not None:
        parts.append("\n")
        for option in facts["options"]:
            option_attributes = {
                "value": option["value"] if option["value"] != option["text"] else None,
                "selected": bool(option["selected"]),
                "disabled": bool(option["disabled"]),
            }
            parts.append(xml.element("option", option_attributes, content=option["text"]) + "\n")
    else:
        parts.append(xml.text(facts["text"]))
        if facts["full"] > len(facts["text"]):
            parts.append(xml.element("more", {"chars": facts["full"] - len(facts["text"])}))
    parts.append(xml.end_tag("read") + "\n")
    return text("".join(parts))


def _page_has_text(compaction: Compaction, wanted: str) -> bool:
    if wanted in _searchable(compaction.root.text()):
        return True
    return any(wanted in _searchable(control.name) for control in compaction.controls.values())


@tool(
    "wait_for",
    "Wait until a text or an element id is on the page (timeout in seconds), then "
    "answer with what changed.",
    schema(
        {
            "text": {"type": "string"},
            "id": ID_SCHEMA,
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
)
async def wait_for(call: CallContext, args: Mapping[str, object]) -> ToolResult:
    tab = call.tab
    wanted_text = text_arg(args, "text", required=False)
    eid = text_arg(args, "id", required=False)
    if not wanted_text and not eid:
        raise BadArguments("wait_for needs text or id")
    timeout = args.get("timeout", 5)
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
    ):
        raise BadArguments(f"timeout must be a number of seconds; got {timeout!r}")
    if not 0 < timeout <= WAIT_FOR_MAX:
        raise BadArguments(f"timeout must be between 0 and {WAIT_FOR_MAX:g} seconds; got {timeout}")
    wanted = _searchable(wanted_text) if wanted_text else None
    with trio.move_on_after(float(timeout)):
        while True:
            model = await tab.memory.capture()
            # With the ids the tab issued reserved, as the snapshot that answers has them.
            compaction = compact(model, count=False, reserved=tab.memory.reserved(model))
            if (eid is None or eid in compaction.controls) and (
                wanted is None or _page_has_text(compaction, wanted)
            ):
                return result(await tab.snapshot())
            await trio.sleep(_POLL_INTERVAL)
    what = " and ".join(
        part
        for part in (
            f"text {wanted_text!r}" if wanted_text else "",
            f"element {eid}" if eid else "",
        )
        if part
    )
    return error(f"waited {float(timeout):g} s: {what} did not appear on the page")
