"""The bench's CPU accounting (``tests/bench/_cpu.py``) and how the concurrency section
names the processes of a run."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.bench._cpu import busy_ms, cpu_by_kind
from tests.bench.concurrency import _process_kind

# Spins for 0.3 s of CPU, says so, then waits (alive, so its CPU stays readable).
_SPIN = (
    "import sys, time\n"
    "end = time.process_time() + 0.3\n"
    "while time.process_time() < end: pass\n"
    "print('spun', flush=True)\n"
    "sys.stdin.read()\n"
)


def test_a_child_process_cpu_is_counted_under_its_kind() -> None:
    """A child that spins for 0.3 s of CPU shows at least that much under its own kind,
    and the machine's busy time grows by at least as much."""
    machine = busy_ms()
    child = subprocess.Popen(
        [sys.executable, "-c", _SPIN, "spinner"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == b"spun\n"
        spent = cpu_by_kind(os.getpid(), lambda c: "spinner" if "spinner" in c else "rest")
        assert spent["spinner"] >= 290
        assert spent["rest"] > 0  # this process
        assert busy_ms() - machine >= 290
    finally:
        child.communicate(b"", timeout=30)


def test_the_concurrency_sections_processes_are_named_by_their_command_lines() -> None:
    """Chromium's browser process, the extension's renderer, the pages' renderers and
    Chromium's other processes, the host, a client's ``trimtab mcp`` and the bench
    itself each get their own name."""
    assert _process_kind("/usr/lib/chromium/chromium --headless=new --user-data-dir=/x") == (
        "browser"
    )
    assert _process_kind("/usr/lib/chromium/chromium --type=renderer --lang=en") == "pages"
    extension = "/usr/lib/chromium/chromium --type=renderer --extension-process --lang=en"
    assert _process_kind(extension) == "extension"
    assert _process_kind("/usr/lib/chromium/chromium --type=gpu-process") == "other Chromium"
    assert _process_kind("/v/bin/python /v/bin/trimtab-host chrome-extension://abc/") == "host"
    assert _process_kind("/v/bin/python -m trimtab mcp") == "trimtab mcp"
    assert _process_kind("/v/bin/python -m tests.bench --only concurrency") == "bench"
    assert _process_kind("/bin/sleep 5") == "other"
