"""The browser tabs the host holds (`OpenTabs`): for each, the agent's `Tab`, each
outside client's view of it, the inspector's view, and the followers that run for it."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator

import attrs
import trio

from pycdp_bridge import CDPError, RelayHub, RelayTarget, Target, TargetClosedError
from pycdp_bridge import protocol as cdp

from ..envelope import Answer, Ask, Question
from ..tab import Downloads, LogRead, SnapshotMemory, Tab
from ..tracker import CallTracker
from ..wire import RequestError
from ._errors import page_timeout, page_unresponsive

log = logging.getLogger("trimtab.browser")


@attrs.define(eq=False)
class OpenTab:
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
            view = attrs.evolve(
                self.tab, memory=SnapshotMemory(self.tab.target), log_read=LogRead()
            )
            self.views[name] = view
        return view

    def cancel_followers(self) -> None:
        """Stop the tab's followers: its page revisions, its log and its downloads."""
        self.follower.cancel()
        self.devtools_follower.cancel()
        self.download_follower.cancel()


@attrs.define(eq=False)
class OpenTabs:
    """The tabs the host holds, by browser tab id: opened on demand (`open`), with their
    followers running in ``nursery``; forgotten when they close (`forget`) or a door
    lets them go (`release`). A tab's page changes go to ``tracker``."""

    hub: RelayHub
    nursery: trio.Nursery
    tracker: CallTracker
    downloads: Downloads
    _by_id: dict[int, OpenTab] = attrs.field(factory=dict, init=False)

    def __len__(self) -> int:
        return len(self._by_id)

    def __iter__(self) -> Iterator[OpenTab]:
        return iter(list(self._by_id.values()))

    def get(self, tab: int) -> OpenTab | None:
        """The held tab ``tab``, if the host holds it (without opening it)."""
        return self._by_id.get(tab)

    def __getitem__(self, tab: int) -> OpenTab:
        return self._by_id[tab]

    async def open(self, tab: int) -> OpenTab:
        """The held tab ``tab``, opened (its followers started) if the host does not
        hold it or its debugger detached, once its page observer is ready."""
        state = self._by_id.get(tab)
        if state is None or state.tab.target.closed:
            if state is not None:
                # The debugger detached (tab closed, user cancelled): start over.
                state.cancel_followers()
                self.tracker.forget_tab(tab)
            target = self.hub.target(tab)
            state = OpenTab(
                id=tab,
                tab=Tab.open(target, on_change=self._page_changed(tab)),
                inspector=SnapshotMemory(target),
            )
            self._by_id[tab] = state
            self.nursery.start_soon(self._follow, state, name=f"page revisions of tab {tab}")
            # The console and network log, collected from now on for the devtools tools.
            self.nursery.start_soon(follow_devtools, state, name=f"console and network of {tab}")
            self.nursery.start_soon(
                follow_downloads, state, self.downloads, name=f"downloads {tab}"
            )
        # A page already stuck in a script never lets the observer install: the wait
        # is bounded like every request that touches the page.
        limit = page_timeout()
        with trio.move_on_after(limit) as waited:
            await state.tab.revisions.ready.wait()
            # A first call may be `console`: the log follows the tab before it runs.
            await state.tab.devtools.ready.wait()
        if waited.cancelled_caught:
            raise page_unresponsive(tab, limit)
        if state.tab.target.closed:
            raise RequestError("target_closed", f"tab {tab} is closed or its debugger detached")
        return state

    async def facts(self, tab: int) -> tuple[str, str]:
        """The tab's title and URL as the browser's history has them ('' when unknown); a
        tab the host holds no memory of yet (one an action opened) is asked all the same."""
        held = self._by_id.get(tab)
        target = held.tab.target if held is not None else self.hub.target(tab)
        if target.closed:
            return "", ""
        with contextlib.suppress(CDPError, TargetClosedError, KeyError, IndexError, TypeError):
            with trio.move_on_after(page_timeout()):
                history = await target.execute(cdp.page_get_navigation_history())
                entry = history["entries"][history["currentIndex"]]
                return str(entry.get("title", "")), str(entry.get("url", ""))
        return "", ""

    def forget(self, tab: int) -> None:
        """Free everything held of a tab that closed: its memory, views, cached reads."""
        state = self._by_id.pop(tab, None)
        if state is not None:
            state.follower.cancel()
            state.tab.forget()
            state.inspector.forget()
            state.inspector_sessions.clear()
            state.views.clear()
        self.tracker.forget_tab(tab)

    async def release(self, tab: int) -> None:
        """Forget everything of the tab and detach the debugger from it."""
        state = self._by_id.pop(tab, None)
        target: Target | None = None
        if state is not None:
            state.cancel_followers()
            state.tab.forget()
            state.inspector.forget()
            state.inspector_sessions.clear()
            target = state.tab.target
        self.tracker.forget_tab(tab)
        if target is None or target.closed:
            target = self.hub.target(tab)
        if isinstance(target, RelayTarget):
            # Already gone (the tab closed, the user detached): nothing to detach.
            with contextlib.suppress(TargetClosedError, CDPError):
                await target.detach()

    def _page_changed(self, tab: int) -> Callable[[str], None]:
        def changed(reason: str) -> None:
            self.tracker.note_page_change(tab, reason)

        return changed

    async def _follow(self, state: OpenTab) -> None:
        """Run the tab's revision follower; it must never take the host down."""
        with state.follower:
            try:
                await state.tab.revisions.run()
            except TargetClosedError as exc:
                log.info("tab %d closed while following its page: %s", state.id, exc)
            except Exception:
                log.exception("the page revision follower of tab %d failed", state.id)
            finally:
                # A tab whose changes are no longer followed must not serve cached reads.
                if self._by_id.get(state.id) is state:
                    self.tracker.note_page_change(state.id, "page revisions stopped")


def asking_while_open(state: OpenTab, ask: Ask) -> Ask:
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


async def follow_devtools(state: OpenTab) -> None:
    """Run the tab's console and network log; a failure only ends the log."""
    with state.devtools_follower:
        try:
            await state.tab.devtools.run()
        except TargetClosedError:
            pass
        except Exception:
            log.exception("the console and network log of tab %d failed", state.id)


async def follow_downloads(state: OpenTab, downloads: Downloads) -> None:
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
