"""The browser's refusals as the wire's error codes."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Final

import trio

from pycdp_bridge import (
    CDPError,
    DialogOpenError,
    JavaScriptError,
    PageCrashedError,
    TargetClosedError,
)

from ..pipeline import credentials
from ..tab import PageChangedError
from ..wire import ErrorCode, RequestError, seconds_setting, unwrap_group

__all__ = ["PAGE_TIMEOUT", "TOOL_TIMEOUT", "cdp_errors", "page_timeout", "page_unresponsive"]

# A request that touches the page answers page_unresponsive after this long
# (`page_timeout`): a script stuck in a loop blocks every command. Tools stop
# themselves after 45 s (trimtab.tools.ACTION_TIMEOUT), so a tool's run waits longer
# than that.
PAGE_TIMEOUT: Final = 30.0
TOOL_TIMEOUT: Final = 90.0


def page_timeout() -> float:
    """How long the host waits on a page that does not answer: ``TRIMTAB_PAGE_TIMEOUT``
    seconds, else `PAGE_TIMEOUT`."""
    return seconds_setting("TRIMTAB_PAGE_TIMEOUT", PAGE_TIMEOUT)


# What a request that touches the page answers for each error; subclasses first.
_ERROR_CODES: Final[tuple[tuple[type[BaseException], ErrorCode], ...]] = (
    (PageCrashedError, "page_crashed"),
    (DialogOpenError, "dialog_open"),
    (TargetClosedError, "target_closed"),
    (CDPError, "cdp_error"),
    (JavaScriptError, "cdp_error"),
    (PageChangedError, "page_changed"),
)


def page_unresponsive(tab: int, timeout: float) -> RequestError:
    return RequestError(
        "page_unresponsive",
        f"tab {tab}: the page did not answer within {timeout:g} s (a script on it may"
        " be stuck); reload it or try again later",
    )


@contextlib.asynccontextmanager
async def cdp_errors(tab: int, timeout: float | None = None) -> AsyncIterator[trio.CancelScope]:
    """Turn the browser's refusals into the protocol's error replies, and a page that
    stops answering (a script stuck in a loop) into one after `timeout` seconds
    (`page_timeout` by default). Yields the time limit's scope."""
    timeout = page_timeout() if timeout is None else timeout
    try:
        with trio.fail_after(timeout) as limit:
            yield limit
    except trio.TooSlowError as exc:
        raise page_unresponsive(tab, timeout) from exc
    except BaseException as exc:
        coded = _error_code(exc)
        if coded is None:
            raise
        code, error = coded
        # The browser's words may quote the page (a URL, a script's message).
        raise RequestError(code, credentials.hide_text(f"tab {tab}: {error}")) from exc


def _error_code(exc: BaseException) -> tuple[ErrorCode, BaseException] | None:
    """The protocol's code for an error, or for a group of errors of one kind (the
    concurrent calls of a capture fail alike), with the error to show."""
    for kind, code in _ERROR_CODES:
        error = unwrap_group(exc, kind)
        if error is not None:
            return code, error
    return None
