"""A task's tabs: the tab it started in and every tab or pop-up opened from its tabs.

A task is a tool-call session (the side panel agent's task, or an outside client's
session). It owns the tab of its first call and every tab the browser reports opened
from one of its tabs while it runs (``tab_opened``, with the opener), up to a limit
(`MAX_TASK_TABS`, ``TRIMTAB_MAX_TABS``); a tab opened past it is closed and counted as
blocked. The agent is on one of them (`TaskTabs.current`): calls that name the tab the
task started in go to it, `switch_tab` moves it. A tab that closes, or that the person
takes out of the task's group, leaves the task.

`Tasks` holds every task's tabs, by tracker session, and the calls acting in a tab now
(`Tasks.acting_in`), which hear of the tabs their action opens (``_opened``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Final

import attrs

from ..wire import count_setting
from ._call import ToolCall
from ._opened import OpenedByCall

__all__ = ["MAX_TASK_TABS", "TaskTab", "TaskTabs", "Tasks", "max_task_tabs"]

MAX_TASK_TABS: Final = 10


def max_task_tabs() -> int:
    """The most tabs a task keeps: ``TRIMTAB_MAX_TABS``, else `MAX_TASK_TABS`."""
    return count_setting("TRIMTAB_MAX_TABS", MAX_TASK_TABS)


@attrs.define
class TaskTab:
    """One tab of a task: which tab opened it, and how (a pop-up window or a tab)."""

    tab: int
    opener: int | None = None
    popup: bool = False


@attrs.define
class TaskTabs:
    """One task's tabs, in the order they joined it, and the one the agent is on."""

    start: int
    current: int
    title: str = ""  # the tab group's name: the task's client, as the person reads it
    limit: int = attrs.field(factory=max_task_tabs)
    tabs: dict[int, TaskTab] = attrs.field(factory=dict)
    blocked: int = 0  # tabs opened past the limit (closed)

    @classmethod
    def starting(cls, tab: int, title: str = "") -> TaskTabs:
        """A task that started in ``tab``, its group named ``title``."""
        return cls(start=tab, current=tab, title=title, tabs={tab: TaskTab(tab)})

    def __contains__(self, tab: object) -> bool:
        return tab in self.tabs

    def __iter__(self) -> Iterator[TaskTab]:
        return iter(list(self.tabs.values()))

    def add(self, tab: int, opener: int | None, *, popup: bool) -> bool:
        """Take in a tab opened from one of the task's; False when the task is full
        (the caller closes it: it is counted as blocked)."""
        if tab in self.tabs:
            return True
        if len(self.tabs) >= self.limit:
            self.blocked += 1
            return False
        self.tabs[tab] = TaskTab(tab, opener, popup)
        return True

    def remove(self, tab: int) -> None:
        """The tab closed or left the task: the agent goes back to the tab that opened
        it (or the task's first tab) when it was on it."""
        gone = self.tabs.pop(tab, None)
        if gone is None or self.current != tab:
            return
        back = gone.opener
        while back is not None and back not in self.tabs:
            back = None
        self.current = back if back is not None else next(iter(self.tabs), self.start)

    def resolve(self, tab: int) -> int:
        """Where a call that names ``tab`` acts: the tab the agent is on when it names
        the task's first tab (the side panel always names that one), else ``tab``."""
        if tab == self.start and self.current in self.tabs:
            return self.current
        return tab


@attrs.define(eq=False)
class Tasks:
    """Every task's tabs, by tracker session, and the calls acting in each tab now."""

    _by_session: dict[str, TaskTabs] = attrs.field(factory=dict, init=False)
    # The calls acting in a tab now, which hear of the tabs their action opens.
    _acting: dict[int, list[OpenedByCall]] = attrs.field(factory=dict, init=False)

    def get(self, session: str) -> TaskTabs | None:
        """The tabs of a task, if it made a call yet."""
        return self._by_session.get(session)

    def of(self, call: ToolCall) -> TaskTabs:
        """The call's task: started in the tab of its first call; a tab it names that
        it did not open (another shared tab of an outside client) joins it."""
        task = self._by_session.get(call.session)
        if task is None:
            task = TaskTabs.starting(call.tab, call.task or call.client)
            self._by_session[call.session] = task
        elif call.tab not in task and call.tab != task.start:
            task.add(call.tab, None, popup=False)
        return task

    def end(self, session: str) -> None:
        """Forget the task ``session`` (its next call starts it again)."""
        self._by_session.pop(session, None)

    def in_task(self, session: str, tab: int) -> bool:
        """Whether ``tab`` was opened from a tab of the task ``session``."""
        task = self._by_session.get(session)
        return task is not None and tab in task and task.tabs[tab].opener is not None

    def opened_from(self, opener: int | None) -> list[tuple[str, TaskTabs]]:
        """The tasks (with their sessions) that hold the tab ``opener``."""
        return [(key, task) for key, task in self._by_session.items() if opener in task]

    def remove_tab(self, tab: int) -> None:
        """The tab closed or left its group: it leaves every task."""
        for task in self._by_session.values():
            task.remove(tab)

    @contextlib.contextmanager
    def acting_in(self, tab: int, sink: OpenedByCall) -> Iterator[None]:
        """While a call acts in ``tab``, the tabs opened from it go to its ``sink``."""
        acting = self._acting.setdefault(tab, [])
        acting.append(sink)
        try:
            yield
        finally:
            acting.remove(sink)
            if not acting:
                self._acting.pop(tab, None)

    def acting(self) -> Iterator[OpenedByCall]:
        """Every call acting in a tab now."""
        for calls in list(self._acting.values()):
            yield from calls

    def sink_for(self, opener: int | None) -> OpenedByCall | None:
        """The call whose action opened a tab from ``opener``: one acting in that tab,
        or one whose action opened that tab (a pop-up that opens its own pop-up)."""
        if opener is None:
            return None
        acting = self._acting.get(opener)
        if acting:
            return acting[-1]
        for call in self.acting():
            if any(r.event.tab == opener for r in call.records):
                return call
        return None
