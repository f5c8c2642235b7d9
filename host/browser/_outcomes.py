"""The outcomes the host builds itself (a task's tabs, a refusal before anything ran),
and the facts of a call and a page that every outcome carries."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..envelope import Consent
from ..wire import JSONObject
from ._call import ToolCall, ToolOutcome


def element_ids(call: ToolCall) -> list[str]:
    """The ids of the elements ``call`` acts on: its ``id``, or each of fill's fields'."""
    found = [call.args.get("id")]
    fields = call.args.get("fields") if call.name == "fill" else None
    if isinstance(fields, list):
        found += [field.get("id") for field in fields[:100] if isinstance(field, Mapping)]
    return [eid for eid in found if isinstance(eid, str)]


def refused_outright(content: str) -> ToolOutcome:
    """A call the host refuses by the person's setting, before anything: nobody asked."""
    return text_outcome(content, is_error=True, side_effects=True)


def text_outcome(
    content: str, *, is_error: bool = False, side_effects: bool = False, quotes_page: bool = True
) -> ToolOutcome:
    """The outcome of a call the host answered itself (a task's tabs, a refusal);
    ``quotes_page=False`` when ``content`` is Trimtab's words alone."""
    return ToolOutcome(
        content=content,
        is_error=is_error,
        kind="text",
        consent=Consent(),
        submitted=False,
        dialog=None,
        call_id=None,
        cached=False,
        cached_from=None,
        cached_at=None,
        note=None,
        side_effects=side_effects,
        submits=False,
        quotes_page=quotes_page,
    )


def dialog_facts(dialog: Mapping[str, Any] | None) -> JSONObject | None:
    """The open JavaScript dialog as the side panel reads it, or None."""
    if dialog is None:
        return None
    kind = str(dialog.get("type", ""))
    return {
        "type": kind,
        "message": str(dialog.get("message", "")),
        "default": str(dialog.get("defaultPrompt", "")) if kind == "prompt" else None,
    }
