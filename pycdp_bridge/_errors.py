"""The exceptions every transport raises, so callers handle one set of errors."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "BrowserNotFoundError",
    "CDPError",
    "JavaScriptError",
    "NavigationError",
    "TargetClosedError",
]


class CDPError(Exception):
    """The browser answered a command with a protocol error."""

    def __init__(self, method: str, code: int, message: str, data: str | None = None) -> None:
        detail = f": {data}" if data else ""
        super().__init__(f"{method} failed with CDP error {code}: {message}{detail}")
        self.method = method
        self.code = code
        self.message = message
        self.data = data


class TargetClosedError(Exception):
    """The target (tab, session or browser) went away before or while a command ran."""

    def __init__(self, reason: str, method: str | None = None) -> None:
        prefix = f"{method}: " if method else ""
        super().__init__(f"{prefix}target closed ({reason})")
        self.reason = reason
        self.method = method


class PageCrashedError(TargetClosedError):
    """The tab's page crashed (its renderer process died); the tab itself stays, and
    navigating or reloading it brings a page back."""

    def __init__(self, method: str | None = None) -> None:
        super().__init__("the page crashed", method)
        prefix = f"{method}: " if method else ""
        self.args = (
            f"{prefix}the page crashed (its renderer process died); navigate or reload the tab",
        )


class BrowserNotFoundError(Exception):
    """No Chromium-family browser executable could be found."""

    def __init__(self, tried: Sequence[str]) -> None:
        listed = ", ".join(tried) if tried else "nothing"
        super().__init__(
            f"no Chromium browser found (tried {listed}); install one with "
            "`apt-get install chromium` or set TRIMTAB_CHROME to the browser's executable"
        )
        self.tried = tuple(tried)


class NavigationError(Exception):
    """The browser could not load a URL (Page.navigate returned an errorText)."""

    def __init__(self, url: str, error_text: str) -> None:
        super().__init__(f"navigation to {url!r} failed: {error_text}")
        self.url = url
        self.error_text = error_text


class JavaScriptError(Exception):
    """An expression evaluated in the page threw."""

    def __init__(self, expression: str, description: str) -> None:
        shown = expression if len(expression) <= 80 else expression[:77] + "..."
        super().__init__(f"evaluating {shown!r} threw: {description}")
        self.expression = expression
        self.description = description
