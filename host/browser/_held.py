"""A browser tab the host holds: the agent's `Tab`, each outside client's view of it,
the inspector's view, and the followers that run for it."""

from __future__ import annotations

import contextlib
import logging

import attrs
import trio

from pycdp_bridge import TargetClosedError
from pycdp_bridge import protocol as cdp

from ..envelope import Answer, Ask, Question
from ..tab import Downloads, Seen, SnapshotMemory, Tab
from ..wire import RequestError

log = logging.getLogger("trimtab.browser")


@attrs.define(eq=False)
class HeldTab:
    """A browser tab the host holds: the agent's `Tab`, and the inspector's view of it."""

    id: int
    tab: Tab
    # The inspector's latest view of the page: a copy of the agent's memory taken for
    # `inspect`, kept for `highlight`.
    inspector: SnapshotMemory
    inspector_lock: trio.Lock = attrs.field(factory=trio.Lock)
    # eid -> CDP session of the inspector's latest snapshot (out-of-process iframes).
    inspector_sessions: dict[str, str | None] = attrs.field(factory=dict)
    # Cancels the tab's page observer follower when the tab is released.
    follower: trio.CancelScope = attrs.field(factory=trio.CancelScope)
    # Cancels the follower of the tab's console and network log.
    devtools_follower: trio.CancelScope = attrs.field(factory=trio.CancelScope)
    # Cancels the follower of the tab's download events (the direct transport's).
    download_follower: trio.CancelScope = attrs.field(factory=trio.CancelScope)
    # Clients of the link (trimtab.link) each see the tab through their own view:
    # their own snapshot memory, the same target, page observer and lock.
    views: dict[str, Tab] = attrs.field(factory=dict)

    def view(self, name: str | None) -> Tab:
        """The tab as the client ``name`` has seen it (None: the side panel's agent)."""
        if name is None:
            return self.tab
        view = self.views.get(name)
        if view is None:
            # Its own place in the tab's console and network log too.
            view = attrs.evolve(self.tab, memory=SnapshotMemory(self.tab.target), seen=Seen())
            self.views[name] = view
        return view


def asking_while_open(state: HeldTab, ask: Ask) -> Ask:
    """``ask``, ended (and its question withdrawn) when the tab closes meanwhile."""

    async def ask_while_open(question: Question) -> Answer:
        target = state.tab.target
        async with trio.open_nursery() as nursery:

            async def watch_closed() -> None:
                # Targets say they closed only through a flag; a few checks a
                # second cost nothing beside a person's answer.
                while not target.closed:
                    await trio.sleep(0.2)
                nursery.cancel_scope.cancel()

            nursery.start_soon(watch_closed)
            answer = await ask(question)
            nursery.cancel_scope.cancel()
            return answer
        raise RequestError(
            "target_closed", f"tab {state.id} closed while the person was being asked"
        )

    return ask_while_open


async def follow_devtools(state: HeldTab) -> None:
    """Run the tab's console and network log; a failure only ends the log."""
    with state.devtools_follower:
        try:
            await state.tab.devtools.run()
        except TargetClosedError:
            pass
        except Exception:
            log.exception("the console and network log of tab %d failed", state.id)


async def follow_downloads(state: HeldTab, downloads: Downloads) -> None:
    """Take in the tab's ``Browser.download*`` events: the direct transport reports
    downloads to the tab's session (the extension sends ``download`` messages)."""
    with state.download_follower:
        events_of = (
            cdp.events.BROWSER_DOWNLOAD_WILL_BEGIN,
            cdp.events.BROWSER_DOWNLOAD_PROGRESS,
        )
        with contextlib.suppress(TargetClosedError):
            async with state.tab.target.listen(*events_of) as events:
                async for event in events:
                    downloads.note_event(state.id, event)
