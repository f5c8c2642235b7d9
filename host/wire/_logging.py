"""Where the host logs: a rotating file in the user's state directory, never stdout.

Chrome reads the host's stdout as the protocol channel, so a log line there would
corrupt it, and Chrome's handling of the host's stderr varies by platform (often it
is simply lost). A file the user can find is the one place a traceback survives.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Final

__all__ = [
    "LOG_FILE_NAME",
    "MAX_LOG_LINE",
    "BoundedFormatter",
    "configure_logging",
    "default_log_dir",
]

LOG_FILE_NAME: Final = "host.log"
_MAX_LOG_BYTES: Final = 5 * 1024 * 1024
_LOG_BACKUPS: Final = 3
_FORMAT: Final = "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"
MAX_LOG_LINE: Final = 4_000
"""Characters of one log message; a request field of megabytes is cut, with its size."""
_MAX_TRACEBACK: Final = 20_000


def _bounded(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters)"


class BoundedFormatter(logging.Formatter):
    """A formatter whose lines stay short, whatever a request or a page put in them."""

    def format(self, record: logging.LogRecord) -> str:
        message = _bounded(record.getMessage(), MAX_LOG_LINE)
        bounded = logging.makeLogRecord({**record.__dict__, "msg": message, "args": None})
        if record.exc_info and not record.exc_text:
            bounded.exc_text = _bounded(self.formatException(record.exc_info), _MAX_TRACEBACK)
        elif record.exc_text:
            bounded.exc_text = _bounded(record.exc_text, _MAX_TRACEBACK)
        bounded.exc_info = None
        if record.stack_info:
            bounded.stack_info = _bounded(record.stack_info, _MAX_TRACEBACK)
        return super().format(bounded)


def default_log_dir(environ: Mapping[str, str] | None = None, platform: str | None = None) -> Path:
    """The directory for ``host.log``: ``$TRIMTAB_LOG_DIR``, else the platform's usual place.

    Linux and other Unixes follow the XDG base-directory spec (``$XDG_STATE_HOME``,
    default ``~/.local/state``); macOS uses ``~/Library/Logs``; Windows
    ``%LOCALAPPDATA%``.
    """
    env = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    override = env.get("TRIMTAB_LOG_DIR")
    if override:
        return Path(override).expanduser()
    if platform == "darwin":
        return Path.home() / "Library" / "Logs" / "trimtab"
    if platform == "win32":
        local = env.get("LOCALAPPDATA")
        base = Path(local) if local else Path.home() / "AppData" / "Local"
        return base / "trimtab" / "Logs"
    state = env.get("XDG_STATE_HOME")
    # The spec says a relative $XDG_STATE_HOME is invalid and must be ignored.
    base = Path(state) if state and os.path.isabs(state) else Path.home() / ".local" / "state"
    return base / "trimtab"


def configure_logging(directory: Path | None = None, level: int | str | None = None) -> Path:
    """Send the root logger to a rotating ``host.log`` in ``directory``; return its path.

    ``level`` defaults to ``$TRIMTAB_LOG_LEVEL`` or INFO. If the directory cannot be
    created, logging falls back to stderr (still never stdout) and the returned path
    is the one that failed.
    """
    directory = default_log_dir() if directory is None else directory
    if level is None:
        level = os.environ.get("TRIMTAB_LOG_LEVEL", "INFO").upper()
    path = directory / LOG_FILE_NAME
    handler: logging.Handler
    try:
        directory.mkdir(parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(
            path,
            maxBytes=_MAX_LOG_BYTES,
            backupCount=_LOG_BACKUPS,
            encoding="utf-8",
            # Page text can hold lone surrogates, which strict UTF-8 refuses: the
            # line would be lost with a traceback on stderr instead.
            errors="backslashreplace",
        )
    except OSError as exc:
        handler = logging.StreamHandler(sys.stderr)
        print(f"trimtab-host: cannot write log file {path}: {exc}", file=sys.stderr)
    handler.setFormatter(BoundedFormatter(_FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    try:
        root.setLevel(level)
    except ValueError:  # an unknown level name must not keep the host from starting
        root.setLevel(logging.INFO)
        root.warning("unknown log level %r; using INFO", level)
    logging.captureWarnings(True)
    return path
