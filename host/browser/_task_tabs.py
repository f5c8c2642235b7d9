"""A task's tabs: the tab it started in and every tab or pop-up opened from its tabs.

A task is a tool-call session (the side panel agent's task, or an outside client's
session). It owns the tab of its first call and every tab the browser reports opened
from one of its tabs while it runs (``tab_opened``, with the opener), up to a limit
(`MAX_TASK_TABS`, ``TRIMTAB_MAX_TABS``); a tab opened past it is closed and counted as
blocked. The agent is on one of them (`TaskTabs.current`): calls that name the tab the
task started in go to it, `switch_tab` moves it. A tab that closes, or that the person
takes out of the task's group, leaves the task.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Final

import attrs

__all__ = ["MAX_TASK_TABS", "TaskTab", "TaskTabs", "max_task_tabs"]

MAX_TASK_TABS: Final = 10


def max_task_tabs() -> int:
    """The most tabs a task keeps: ``TRIMTAB_MAX_TABS`` (at least 1), else 10."""
    raw = os.environ.get("TRIMTAB_MAX_TABS", "")
    try:
        return max(1, int(raw)) if raw else MAX_TASK_TABS
    except ValueError:
        return MAX_TASK_TABS


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
