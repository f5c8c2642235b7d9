"""One live tool call, as the driver and the tools see it: an explicit object, made by
the one place that runs a call (`trimtab.tools.run_tool`) and handed down, instead of
state that travels beside the call.

It holds the tab the call acts in, whether the person said yes to this one call (a
yes never outlives it: the next call gets a new context), the call's request guard
(what the browser holds for the person to judge, and the element the call acts on,
named for its questions), and whether the remote objects the call made
(`OBJECT_GROUP`) were released already.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import attrs
import trio

from pycdp_bridge import CDPError, DialogOpenError, TargetClosedError
from pycdp_bridge import protocol as cdp

from ..tab import Activity, Ahead, Guarding, Held, Snapshot, Tab, deadline_waits_for_judge, watch
from ._consent import ConsentNeeded
from ._element import OBJECT_GROUP
from ._gather import gather

__all__ = ["CallContext"]

# How long the release of a call's remote objects may wait for the page on the way out
# (shielded, so a cancelled call frees them too): a page that answers nothing in that
# time keeps them until a later call's release, instead of holding this call's answer.
_RELEASE_WAIT = 2.0


@attrs.define(eq=False)
class CallContext:
    """One live tool call: its tab, the person's yes, its request guard, its objects."""

    tab: Tab
    # The person said yes to this call (a predicted submit, a secret typed, ...).
    consented: bool = False
    # The call's request guard; None where nothing is held (the command line, tests
    # of bare tools), and the page's requests go as they would.
    guard: Guarding | None = None
    # The remote objects the call made were released (alongside the answer's snapshot).
    released: bool = False
    # The page stopped answering during the call (its time limit ran out): its objects
    # are left for a later call to release, rather than waited on again.
    page_stopped: bool = False

    def require(
        self, reason: str | None, element: str | None = None, eid: str | None = None
    ) -> None:
        """Stop the action (`ConsentNeeded`) when it needs consent that was not given;
        else name `element` as what the action acts on, for the request guard's
        questions (``eid``: its id, when the call's own ``id`` argument does not name it)."""
        if self.guard is not None:
            self.guard.acting = element
        if reason is not None and not self.consented:
            raise ConsentNeeded(reason, element, eid)

    def watch(
        self, frame_id: str | None = None, ahead: Ahead | None = None
    ) -> contextlib.AbstractAsyncContextManager[Activity]:
        """The tab's `watch` for the call's action, under the call's request guard."""
        return watch(self.tab.revisions, frame_id, ahead, guard=self.guard)

    def waits_for_judge(self, scope: trio.CancelScope) -> contextlib.AbstractContextManager[None]:
        """`scope`'s deadline stands still while the call's guard decides."""
        return deadline_waits_for_judge(self.guard, scope)

    def held_requests(self) -> tuple[Held, ...]:
        """What the call's guard held since this was last asked (none without a guard)."""
        return () if self.guard is None else self.guard.untold()

    @contextlib.asynccontextmanager
    async def objects(self) -> AsyncIterator[None]:
        """The block is the call: the remote objects it creates are released when it
        ends, shielded and bounded, unless `snapshot` released them already or the page
        stopped answering."""
        try:
            yield
        finally:
            if not self.released and not self.page_stopped:
                with trio.CancelScope(shield=True), trio.move_on_after(_RELEASE_WAIT):
                    await self.release_objects()

    async def release_objects(self) -> None:
        """Let the page free the remote objects this call made."""
        target = self.tab.target
        if target.closed:
            return
        # Only where the call put some: most reads make none.
        for session in target.holding(OBJECT_GROUP):
            # Blocked by a dialog: the group is released after the next call instead.
            with contextlib.suppress(CDPError, TargetClosedError, DialogOpenError):
                await target.execute(
                    cdp.runtime_release_object_group(OBJECT_GROUP), session_id=session
                )

    async def snapshot(self) -> Snapshot:
        """The answer's snapshot; the call's remote objects, no longer needed, are
        released alongside it (one round trip less after the snapshot)."""
        snapshot, _ = await gather(self.tab.snapshot, self.release_objects)
        self.released = True
        return snapshot
