"""The outcomes the host builds itself (a task's tabs, a refusal before anything ran),
and the facts of a call and a page that every outcome carries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import trio

from ..envelope import Consent
from ..pipeline import Control
from ..tab import DOWNLOAD_WAIT, Download, Downloads, Held
from ..wire import JSONObject
from ._call import ToolCall, ToolOutcome
from ._sites import SiteRefusal


def element_ids(call: ToolCall) -> list[str]:
    """The ids of the elements ``call`` acts on: its ``id``, or each of fill's fields'."""
    found = [call.args.get("id")]
    fields = call.args.get("fields") if call.name == "fill" else None
    if isinstance(fields, list):
        found += [field.get("id") for field in fields[:100] if isinstance(field, Mapping)]
    return [eid for eid in found if isinstance(eid, str)]


def named_elements(call: ToolCall, controls: Mapping[str, Control]) -> dict[str, JSONObject]:
    """Each element ``call`` names (its ``id``, fill's fields, drag's ``to``) that
    ``controls`` (the caller's latest snapshot of the tab) has, as the page XML showed
    it: tag, ``type`` and name (the page's words), for the person's log of what an
    outside agent did."""
    ids = [*element_ids(call), call.args.get("to")]
    return {
        eid: {"tag": found.tag, "type": found.input_type, "name": found.name[:120]}
        for eid in dict.fromkeys(ids)
        if isinstance(eid, str) and (found := controls.get(eid)) is not None
    }


def called(outcome: ToolOutcome, call: ToolCall) -> ToolOutcome:
    """``outcome`` naming the tab ``call`` acted in and the call's number, where what
    built it did not (a refusal before the tool ran, a task tool's answer)."""
    return attrs.evolve(
        outcome,
        tab=call.tab if outcome.tab is None else outcome.tab,
        call_id=call.id if outcome.call_id is None else outcome.call_id,
    )


def site_refusal(
    stopped: SiteRefusal,
    call: ToolCall,
    side_effects: bool,
    dialog: Mapping[str, Any] | None,
    url: str | None,
) -> ToolOutcome:
    """The outcome of a call the site rules stopped before it acted."""
    return ToolOutcome(
        content=stopped.content,
        is_error=True,
        kind="text",
        # A refusal by rule alone (a javascript: URL) asked nobody: no consent.
        consent=(
            Consent()
            if stopped.answer is None
            else Consent(required=True, granted=False, answer=stopped.answer)
        ),
        submitted=False,
        dialog=dialog_facts(dialog),
        call_id=call.id,
        cached=False,
        cached_from=None,
        cached_at=None,
        note=None,
        side_effects=side_effects,
        submits=False,
        url=url,
        reason=stopped.reason,
        tab=call.tab,
    )


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


async def downloads_of(
    downloads: Downloads, tab: int, mark: int, held: Sequence[Held]
) -> list[Download]:
    """The downloads a call started in ``tab`` (the browser reported them after
    ``mark``; those the guard let go are waited for), once they finished or
    `DOWNLOAD_WAIT` passed: the answer says where each file went."""
    urls = [h.url for h in held if h.download is not None and h.sent]
    with trio.move_on_after(DOWNLOAD_WAIT):
        for url in urls:
            await downloads.wait_for(url, mark, tab)
        await downloads.settled(downloads.since(mark, tab, urls))
    # CDP's events give no type: the response the guard held did.
    types = {h.url: h.download.mime for h in held if h.download is not None}
    return [
        attrs.evolve(d, mime=d.mime or types.get(d.url, ""))
        for d in downloads.latest(downloads.since(mark, tab, urls))
    ]
