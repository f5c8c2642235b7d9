"""CPU time of processes and threads, read from ``/proc`` (Linux).

On a shared machine under load a snapshot's wall time is mostly waiting for a core;
the CPU time each side spent (our host's thread and browser, Playwright's thread,
driver and browser) is the work itself, which the load does not change much. Each
task's ``schedstat`` gives its run time in nanoseconds; where ``/proc`` has none
(another system), the figures are NaN and the tables show "-".
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = ["busy_ms", "cpu_by_kind", "process_tree", "thread_cpu_ms", "tree_cpu_ms"]

_PROC = Path("/proc")


def process_tree(root: int) -> list[int]:
    """`root` and every process below it (by parent pid), now."""
    children: dict[int, list[int]] = {}
    for entry in _PROC.iterdir() if _PROC.is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # gone meanwhile
        # The command name may hold spaces and parentheses: fields follow the last ")".
        parent = int(stat[stat.rindex(")") + 2 :].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found: list[int] = []
    stack = [root]
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, ()))
    return found


def tree_cpu_ms(pids: Iterable[int]) -> float:
    """Milliseconds every thread of these processes has run so far (NaN without /proc)."""
    total = 0
    seen = False
    for pid in pids:
        try:
            tasks = list((_PROC / str(pid) / "task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                total += int((task / "schedstat").read_text().split()[0])
                seen = True
            except (OSError, ValueError, IndexError):
                continue
    return total / 1e6 if seen else float("nan")


def cpu_by_kind(root: int, kind: Callable[[str], str]) -> dict[str, float]:
    """Milliseconds `root` and every process below it have run so far, summed by the
    `kind` of each one's command line (arguments joined by spaces)."""
    totals: dict[str, float] = {}
    for pid in process_tree(root):
        try:
            command = (_PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue  # gone meanwhile
        ms = tree_cpu_ms([pid])
        if ms == ms:
            name = kind(command.decode("utf-8", "replace"))
            totals[name] = totals.get(name, 0.0) + ms
    return totals


def busy_ms() -> float:
    """Milliseconds of CPU the whole machine has spent so far, summed over its cores
    (``/proc/stat``: all but idle and I/O wait; NaN without it)."""
    try:
        fields = (_PROC / "stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return float("nan")
    ticks = [int(f) for f in fields]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)
    # user, nice, system, idle, iowait, irq, softirq, steal (guest is within user)
    return (sum(ticks[:8]) - idle) * 1000 / os.sysconf("SC_CLK_TCK")


def thread_cpu_ms(thread: int | None) -> float:
    """Milliseconds one thread of this process has run so far (its native id)."""
    if thread is None:
        return float("nan")
    try:
        schedstat = (_PROC / str(os.getpid()) / "task" / str(thread) / "schedstat").read_text()
    except OSError:
        return float("nan")
    return int(schedstat.split()[0]) / 1e6
