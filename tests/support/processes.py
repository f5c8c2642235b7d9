"""Find live browser processes by the profile directory they were started with."""

from __future__ import annotations

from pathlib import Path

__all__ = ["LAUNCHED_PROFILES", "browser_processes"]

#: Profile dirs of every browser the tests launched; checked when the session ends.
LAUNCHED_PROFILES: list[Path] = []


def browser_processes(user_data_dir: Path) -> list[int]:
    """Pids of live (non-zombie) processes whose command line names ``user_data_dir``.

    Every Chromium helper inherits ``--user-data-dir`` from the browser's command
    line, so this finds the whole browser. Zombies are dead already: they wait only
    for pid 1 to reap them.
    """
    needle = f"--user-data-dir={user_data_dir}".encode()
    found: list[int] = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            stat = (proc / "stat").read_text()
        except OSError:
            continue  # exited while we looked
        state = stat.rsplit(")", 1)[-1].split()[0]
        if state != "Z" and needle in cmdline:
            found.append(int(proc.name))
    return found
