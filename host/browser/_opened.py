"""Tabs an action opens: guarded from their first request, and told in the answer.

While a call's action runs in a tab, the host hands every tab the browser reports
opened from it (``tab_opened``) to the call's `OpenedByCall`: each is guarded by the
call's request guard (`trimtab.tab.guard_opened`: the browser holds it before its
first request, so a pop-up on another site asks the site question before anything
leaves the browser), and the call's answer says what became of it (`notes`). The
call ends only once each such tab's load landed (`OpenedTab.landed`): a redirect of
it (an open redirect, a sign-in bounce) is judged like its first request, never sent
after the guard is off.

Through the extension, the browser's hold of a new tab races its first request
(``chrome.debugger`` cannot attach to a tab before Chrome reports it). So while an
action runs, the call also gates its tab (`RelayHub.gate`): the browser itself keeps
any tab opening meanwhile from loading a first document outside the task's sites,
before it is sent, and the extension reports it (``tab_gated``). That document is
judged like the one the guard pauses (`judge_kept_document`, asking the site
question); a yes loads it again (`RelayHub.pass_tab`), a no closes the tab. A gate
blocks the redirects of such a tab's load as well, so a redirect to another site is
kept, reported and judged the same way. The gate is set while the tool gets ready to
act and only its input waits for it; it is lifted after the call, in the background,
before the tab's next gate (`OpenedByCall.guard_each`).
"""

from __future__ import annotations

import contextlib
import logging
from typing import Final

import attrs
import trio

from pycdp_bridge import CDPError, DialogOpenError, TargetClosedError, off_the_path
from pycdp_bridge import protocol as cdp

from ..envelope import SitePolicy
from ..pipeline import credentials
from ..tab import (
    Activity,
    Guarding,
    OpenedTab,
    deadline_waits_for_judge,
    guard_opened,
    judge_kept_document,
)
from ..tracker import ToolPolicy
from ._tab_messages import GateTurn, TabEvent
from ._tab_messages import TabRelayHub as RelayHub

__all__ = [
    "OPENED_WAIT",
    "OpenedByCall",
    "OpenedRecord",
    "blocked_note",
    "gate_domains",
    "opened_note",
]

log = logging.getLogger("trimtab.browser")

# Seconds a call waits, once its tool is done, for the first request of a tab it opened
# to be decided (the person's answer does not count): a tab the browser has not sent
# its first request for by then is left to load unguarded, which `notes` says.
OPENED_WAIT: Final = 3.0
# Seconds a call waits, once the first request of a tab it opened was sent, for that
# load to land (the person's answers do not count): one still on its way by then is
# stopped, since its redirects would leave the browser unguarded once the call ends.
LANDING_WAIT: Final = 10.0
# Seconds the extension may take to set or lift a gate: one that does not answer
# leaves the action ungated (the browser's hold still guards what it wins).
GATE_WAIT: Final = 2.0
# Seconds a call waits for the tab of a pop-up the page asked for without a click (the
# browser opens it only where the person allows pop-ups) before saying it was blocked.
UNASKED_POPUP_WAIT: Final = 0.5
# Seconds between two looks at whether an opened tab loaded without its hold.
_LOADED_POLL: Final = 0.1


def gate_domains(policy: SitePolicy, session: str, tool: ToolPolicy) -> list[str] | None:
    """The domains a gate lets a new tab load a first document from during one call of
    ``session``: the hosts of the sites its task may use (a gate goes by domain, not by
    scheme); None for a tool that does not act (nothing to gate)."""
    if not tool.side_effects:
        return None
    sites = policy.allowed(session) | policy.always
    return sorted({site.host for site in sites if not site.opaque and site.host})


@attrs.define(eq=False)
class OpenedRecord:
    """One tab the call's action opened, and what its guard saw."""

    event: TabEvent
    opened: OpenedTab | None = None
    closed: bool = False  # it closed before the call ended
    blocked: bool = False  # past the task's limit: closed at once
    problem: str | None = None  # why it could not be guarded


@attrs.frozen
class WindowOpen:
    """A window the page asked the browser for (``window.open``, a link's target), as the
    browser reports it: whether a click of the person's (here the agent's) allowed it."""

    url: str
    gesture: bool


@attrs.define(eq=False)
class OpenedByCall:
    """The tabs one call's action opened from its tab (`tab`)."""

    tab: int
    # The domains the call's gate lets new tabs load from (`gate_domains`); None: none.
    domains: list[str] | None = None
    # The call's request guard, which guards the tabs it opens too (None: unguarded).
    guard: Guarding | None = None
    records: list[OpenedRecord] = attrs.field(factory=list)
    # The windows the page asked for during the call, as the browser reported them.
    asked: list[WindowOpen] = attrs.field(factory=list)
    # Each record to guard, with the URL of its first document when a gate kept it.
    _send: trio.MemorySendChannel[tuple[OpenedRecord, str | None]] = attrs.field(init=False)
    _receive: trio.MemoryReceiveChannel[tuple[OpenedRecord, str | None]] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._send, self._receive = trio.open_memory_channel[tuple[OpenedRecord, str | None]](1000)

    def opened(self, event: TabEvent, *, blocked: bool) -> None:
        """The browser opened ``event.tab`` from the call's tab (``blocked``: past the
        task's limit, closed by the host, not guarded)."""
        record = OpenedRecord(event, blocked=blocked)
        self.records.append(record)
        if not blocked:
            with contextlib.suppress(trio.WouldBlock, trio.ClosedResourceError):
                self._send.send_nowait((record, None))

    def kept(self, event: TabEvent) -> bool:
        """A gate kept a tab this call opened from its first document (``event.url``):
        judge it; False when the tab is not one of this call's."""
        for record in self.records:
            if record.event.tab == event.tab and not record.blocked:
                with contextlib.suppress(trio.WouldBlock, trio.ClosedResourceError):
                    self._send.send_nowait((record, event.url))
                return True
        return False

    def closed(self, tab: int) -> None:
        for record in self.records:
            if record.event.tab == tab:
                record.closed = True

    async def guard_each(
        self,
        hub: RelayHub,
        later: trio.Nursery,
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Gate the call's tab to its `domains` (None: no gate), guard every opened tab
        until cancelled (the call is over), and lift the gate.

        Neither the gate nor its lift is on the answer's path: both go in ``later`` (a
        nursery that outlives the call), each in its turn among the tab's gate requests
        (`RelayHub.gate_turn`: a lift goes after its gate was answered, and the tab's
        next gate after the lift). The gate is set beside the tool's first steps (the
        element found, ...), and only the action's input waits until it is set
        (`Guarding.gated`, which `watch` waits for). The gate stays up a moment longer
        than the call, never shorter."""
        gate = None if self.domains is None else self._set_gate(hub, self.domains, later)
        try:
            async with trio.open_nursery() as nursery:
                await nursery.start(self._window_opens, hub)
                task_status.started()
                async for record, kept in self._receive:
                    if kept is None:
                        nursery.start_soon(self._guard, hub, record)
                    else:
                        nursery.start_soon(self._judge_kept, hub, record, kept)
        finally:
            if gate is not None:
                lift = hub.gate_turn(self.tab)
                try:
                    later.start_soon(_send_gate, lift, None, None)
                except RuntimeError:
                    lift.give_up()  # the host is going away: the extension lifts its gates

    def _set_gate(self, hub: RelayHub, domains: list[str], later: trio.Nursery) -> GateTurn:
        """Start setting the call's gate in ``later``: the guard's `Guarding.gated` is set
        once it is set, or could not be."""
        turn = hub.gate_turn(self.tab)
        gated = trio.Event()
        if self.guard is not None:
            self.guard.gated = gated
        try:
            later.start_soon(_send_gate, turn, domains, gated)
        except RuntimeError:
            turn.give_up()  # the host is going away: nothing is gated
            gated.set()
        return turn

    async def _window_opens(
        self, hub: RelayHub, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Keep the windows the page of the call's tab asks for (not its frames')."""
        async with hub.target(self.tab).listen(cdp.events.PAGE_WINDOW_OPEN) as events:
            task_status.started()
            async for event in events:
                if event.session_id is None:
                    gesture = event.params.get("userGesture") is True
                    self.asked.append(WindowOpen(str(event.params.get("url", "")), gesture))

    def blocked_by_browser(self) -> list[str]:
        """The URLs of the pop-ups the browser's pop-up blocker kept: those the page asked
        for without a click to allow them, past the tabs that did open (a site the person
        allows pop-ups on opens them anyway)."""
        unasked = [window for window in self.asked if not window.gesture]
        opened_unasked = max(0, len(self.records) - (len(self.asked) - len(unasked)))
        return [window.url for window in unasked[opened_unasked:]]

    async def _guard(self, hub: RelayHub, record: OpenedRecord) -> None:
        target = hub.target(record.event.tab)
        # Made before any wait: a gate's report of its first document may come first.
        record.opened = record.opened or OpenedTab()
        try:
            async with guard_opened(target, Activity("", guard=self.guard), record.opened):
                await trio.sleep_forever()
        except (CDPError, TargetClosedError, DialogOpenError) as exc:
            record.problem = str(exc)
            if record.opened is not None:
                record.opened.decided.set()

    async def _loaded_unheld(self, hub: RelayHub, record: OpenedRecord) -> bool:
        """Whether the tab shows a document whose request the browser's hold did not catch
        (the extension's hold of a new tab races its first request; a gate keeps the
        other sites' documents, whose error page does not count): then it is decided,
        as sent unguarded."""
        opened = record.opened
        if opened is None:
            return False
        with contextlib.suppress(CDPError, TargetClosedError, DialogOpenError, KeyError):
            tree = await hub.target(record.event.tab).execute(cdp.page_get_frame_tree())
            frame = tree["frameTree"]["frame"]
            url = str(frame.get("url", ""))
            if url and url != "about:blank" and not frame.get("unreachableUrl"):
                if not opened.decided.is_set():
                    opened.url, opened.sent = url, True
                    opened.why = "it loaded before the browser could hold it"
                    opened.decided.set()
                opened.landed.set()  # a document committed: its load has no redirect left
                return True
        return False

    async def _judge_kept(self, hub: RelayHub, record: OpenedRecord, url: str) -> None:
        """Judge the first document a gate kept the tab from: loaded again on a yes,
        the tab closed on a no (it shows only the browser's error page)."""
        record.opened = record.opened or OpenedTab()
        tab = record.event.tab
        allowed = await judge_kept_document(self.guard, record.opened, url)
        with (
            trio.CancelScope(shield=True),
            trio.move_on_after(GATE_WAIT),
            contextlib.suppress(CDPError, TargetClosedError, ValueError),
        ):
            await (hub.pass_tab(tab, url) if allowed else hub.close_tab(tab))

    async def decisions(self, hub: RelayHub) -> None:
        """Wait (at most `OPENED_WAIT`, not counting the person's answer) until the first
        request of every opened tab was decided, or it is known to have loaded unheld;
        then (at most `LANDING_WAIT`) until the load of each tab that was let go landed,
        every redirect of it judged; a load still on its way then is stopped."""
        if self.blocked_by_browser():
            # Their tabs would be reported within moments, if the browser opened them.
            with trio.move_on_after(UNASKED_POPUP_WAIT):
                while self.blocked_by_browser():
                    await trio.sleep(0.02)
        with (
            trio.move_on_after(OPENED_WAIT) as limit,
            deadline_waits_for_judge(self.guard, limit),
        ):
            for record in list(self.records):
                while record.opened is None and not (record.blocked or record.problem):
                    await trio.sleep(0.01)
                while record.opened is not None and not record.closed:
                    with trio.move_on_after(_LOADED_POLL):
                        await record.opened.decided.wait()
                    if record.opened.decided.is_set() or await self._loaded_unheld(hub, record):
                        break
        for record in self.records:
            await self._landing(hub, record)

    async def _landing(self, hub: RelayHub, record: OpenedRecord) -> None:
        """Wait until the load of a tab the call let go landed (see `decisions`)."""
        opened = record.opened
        if opened is None or not opened.sent or record.blocked or record.problem:
            return
        with (
            trio.move_on_after(LANDING_WAIT) as limit,
            deadline_waits_for_judge(self.guard, limit),
        ):
            while not (record.closed or opened.landed.is_set()):
                with trio.move_on_after(_LOADED_POLL):
                    await opened.landed.wait()
                if not opened.landed.is_set():
                    await self._loaded_unheld(hub, record)
        if not (record.closed or opened.landed.is_set()):
            # Stopped rather than left to go on unguarded once the call ends.
            with (
                trio.CancelScope(shield=True),
                trio.move_on_after(GATE_WAIT),
                contextlib.suppress(CDPError, TargetClosedError, DialogOpenError),
            ):
                await hub.target(record.event.tab).execute(cdp.page_stop_loading())
            opened.sent, opened.why = False, f"its page did not load within {LANDING_WAIT:g} s"


async def _send_gate(turn: GateTurn, domains: list[str] | None, sent: trio.Event | None) -> None:
    """Set (``domains``) or lift (None) a call's gate in its turn, within `GATE_WAIT`: one
    that does not answer leaves the action ungated (the browser's hold still guards what
    it wins); ``sent`` is set once it is over, answered or not."""
    try:
        await turn.ready()  # the tab's previous gate request is bounded alike
        with (
            off_the_path(),
            trio.move_on_after(GATE_WAIT),
            contextlib.suppress(CDPError, TargetClosedError),
        ):
            await turn.send(domains)
    except Exception:
        # It runs in the host's own nursery, which must not fail for one gate.
        log.exception("the gate request of tab %d failed", turn.tab)
    finally:
        turn.give_up()
        if sent is not None:
            sent.set()


def blocked_note(url: str) -> str:
    """What the answer says of a pop-up the browser's pop-up blocker kept."""
    shown = credentials.hide_url(url)[:200]
    return (
        f"it tried to open a pop-up on {shown}: the browser's pop-up blocker blocked it "
        "(a page may open one only right after a click in it; the person can allow pop-ups "
        "for the site in the browser)"
    )


def opened_note(record: OpenedRecord, title: str, url: str) -> str:
    """What the answer says of one opened tab (page strings as they are: the answer's
    ``<note>`` escapes them; credentials in URLs hidden)."""
    event = record.event
    what = "a pop-up" if event.popup else "a new tab"
    opened = record.opened
    if opened is not None and opened.sent is False:
        shown = credentials.hide_url(opened.url)[:200]
        return f"it tried to open {what} on {shown}: blocked ({opened.why})"
    where = credentials.hide_url(url or (opened.url if opened else "") or event.url)[:300]
    named = f' "{title[:120]}"' if title else ""
    if record.closed:
        return f"it opened {what} (tab {event.tab}) at {where}, which closed again"
    if event.popup:
        return f"it opened {what}, tab {event.tab}, at {where}{named}: you are in it now"
    # The tab the call acted in is named too: the way back after switch_tab.
    return (
        f"it opened {what} behind, tab {event.tab}, at {where}{named}; "
        f"switch_tab({event.tab}) to act in it (you are in tab {event.opener})"
    )
