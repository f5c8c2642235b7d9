"""The side panel's inspector: what the agent would see from a fresh look at a tab now,
and the overlay drawn over an element the person points at.

The inspector renders on a copy of the agent's `SnapshotMemory` (see ``_state``): the
agent's own memory, the base of its next diff, is never moved by it. The copy is kept
in the held tab for `highlight_element`, with each element's CDP session.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Final

import attrs
import trio

from pycdp_bridge import CDPError, PageModel
from pycdp_bridge import protocol as cdp

from ..pipeline import Control
from ..tab import Snapshot, page_token_counts
from ..wire import JSONObject, RequestError
from ._errors import cdp_errors
from ._open_tabs import OpenTab

# What the overlay paints: content box, padding and margin, like DevTools' inspector.
HIGHLIGHT_CONFIG: Final[Mapping[str, object]] = {
    "showInfo": True,
    "contentColor": {"r": 111, "g": 168, "b": 220, "a": 0.66},
    "paddingColor": {"r": 147, "g": 196, "b": 125, "a": 0.55},
    "borderColor": {"r": 255, "g": 229, "b": 153, "a": 0.66},
    "marginColor": {"r": 246, "g": 178, "b": 107, "a": 0.66},
}


async def inspect_tab(state: OpenTab, tab: int, budget: int | None) -> JSONObject:
    """What the agent would see from a fresh look now, for the side panel's inspector."""
    model: PageModel | None = None
    counts: dict[str, int] = {}

    async def take() -> None:
        nonlocal model
        # The agent's capture options: the person sees what the agent is sent.
        model = await state.inspector.capture()

    async def measure() -> None:
        counts.update(await page_token_counts(state.tab.target))

    async with state.inspector_lock:
        started = time.perf_counter()
        try:
            async with cdp_errors(tab), trio.open_nursery() as nursery:
                nursery.start_soon(measure)
                await take()
        except BaseException:
            state.inspector.forget()
            state.inspector_sessions.clear()
            raise
        assert model is not None
        # A baseline against what the agent last saw, rendered on a copy
        # so that the agent's memory (the base of its next diff) stays as the
        # model knows it.
        view = state.tab.memory.fork()
        view.options = attrs.evolve(view.options, budget=budget)
        snapshot: Snapshot = view.render(
            model, capture_ms=(time.perf_counter() - started) * 1000, baseline=True
        )
        state.inspector = view
        state.inspector_sessions = control_sessions(model, snapshot.compaction.controls)
    stats = snapshot.stats_dict()
    stats.update(counts)
    return {"xml": snapshot.xml, "kind": snapshot.kind, "stats": stats}


async def highlight_element(state: OpenTab, tab: int, eid: str | None) -> bool:
    """Draw the overlay over element ``eid`` (None clears it); False when cleared."""
    target = state.tab.target
    async with cdp_errors(tab):
        # The overlay needs the DOM domain; a capture has enabled it already anyway.
        await target.execute(cdp.dom_enable())
        await target.execute(cdp.overlay_enable())
        if eid is None:
            await target.execute(cdp.overlay_hide_highlight())
            return False
        control, session_id = resolve_eid(state, eid)
        try:
            await target.execute(
                cdp.overlay_highlight_node(
                    HIGHLIGHT_CONFIG, backend_node_id=control.backend_node_id
                ),
                session_id=session_id,
            )
        except CDPError as exc:
            raise RequestError(
                "stale_id", f"element {eid!r} is no longer on the page ({exc.message})"
            ) from exc
    return True


def resolve_eid(state: OpenTab, eid: str) -> tuple[Control, str | None]:
    inspected = state.inspector.latest
    if inspected is not None and eid in inspected.controls:
        return inspected.controls[eid], state.inspector_sessions.get(eid)
    agent = state.tab.latest
    # The agent's snapshot keeps no frame sessions: only main-frame ids resolve.
    if agent is not None and eid in agent.controls and agent.controls[eid].frame == 0:
        return agent.controls[eid], None
    # An outside client's question names an element of its own view of the tab.
    for view in state.views.values():
        seen = view.latest
        if seen is not None and eid in seen.controls and seen.controls[eid].frame == 0:
            return seen.controls[eid], None
    if inspected is None and agent is None:
        raise RequestError("stale_id", f"no snapshot of tab {state.id} yet, so no element {eid!r}")
    raise RequestError(
        "stale_id",
        f"no element {eid[:60]!r} in the latest snapshot of tab {state.id}; take a new snapshot",
    )


def control_sessions(model: PageModel, controls: Mapping[str, Control]) -> dict[str, str | None]:
    frames = model.frames
    return {
        eid: frames[control.frame].session_id if 0 <= control.frame < len(frames) else None
        for eid, control in controls.items()
    }
