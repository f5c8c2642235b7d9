"""The host process refuses callers other than the installed extension, and keeps its
log lines short whatever a request carries."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest
import trio

from tests.native.test_host_process import ORIGIN, host_env, nm_frame, run_host_process
from trimtab.native import allowed_origin, origin_refusal
from trimtab.wire import configure_logging


def test_only_the_installed_extension_is_served() -> None:
    """The installed extension's origin is allowed; another extension, a web origin and no
    origin at all are refused with a reason that names them."""
    assert allowed_origin() == ORIGIN
    assert origin_refusal(ORIGIN) is None
    other = "chrome-extension://abcdefghijklmnopabcdefghijklmnop/"
    assert other in str(origin_refusal(other))
    assert "https://evil.example" in str(origin_refusal("https://evil.example"))
    assert "no caller origin" in str(origin_refusal(None))


@pytest.mark.parametrize(
    "argv",
    [["chrome-extension://abcdefghijklmnopabcdefghijklmnop/"], [], ["--parent-window=0"]],
)
async def test_host_refuses_another_caller(tmp_path: Path, argv: list[str]) -> None:
    """Started for another extension (or with no origin) the host answers nothing, logs
    one clear line and exits non-zero."""
    process = await trio.run_process(
        [sys.executable, "-m", "trimtab.native", *argv],
        stdin=nm_frame({"type": "ping", "id": 1}),
        capture_stdout=True,
        capture_stderr=True,
        check=False,
        env=host_env(tmp_path),
    )
    assert process.returncode == 2
    assert process.stdout == b""
    log = (tmp_path / "host.log").read_text(encoding="utf-8")
    assert "refusing to serve" in log
    said = process.stderr.decode()
    assert "not the installed extension" in said or "no caller origin" in said, said


async def test_huge_request_fields_make_short_log_lines(
    nursery: trio.Nursery, tmp_path: Path
) -> None:
    """A request whose type is 10 MB is answered and logged as a line of a few kilobytes."""
    host = await nursery.start(run_host_process, tmp_path / "logs")
    huge = "T" * 10_000_000
    await host.send({"type": huge, "id": 7})
    reply = await host.reply_to(7)
    assert reply["error"]["code"] == "unknown_type"
    assert await host.finish() == 0
    log = host.log_text()
    assert "unknown request type" in log
    assert "more characters" in log
    assert max(len(line) for line in log.splitlines()) < 10_000
    assert len(log) < 50_000


def test_a_lone_surrogate_is_logged_not_lost(tmp_path: Path) -> None:
    """A log line carrying page text with a lone surrogate is written, the surrogate
    escaped, instead of being dropped by strict UTF-8."""
    root = logging.getLogger()
    saved_handlers, saved_level = list(root.handlers), root.level
    try:
        path = configure_logging(tmp_path)
        logging.getLogger("trimtab.test").warning("page title %s", "bad \ud800 title")
        for handler in root.handlers:
            handler.flush()
        assert "page title bad \\ud800 title" in path.read_text(encoding="utf-8")
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
            handler.close()
        for handler in saved_handlers:
            root.addHandler(handler)
        root.setLevel(saved_level)
