"""The exceptions every transport raises, so callers handle one set of errors."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

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


class DialogOpenError(Exception):
    """The page shows a JavaScript dialog (alert, confirm, prompt, beforeunload): its
    renderer answers nothing until the dialog is answered (``Page.handleJavaScriptDialog``)
    or the tab navigates away."""

    def __init__(
        self, method: str | None, kind: str, message: str, default_prompt: str = ""
    ) -> None:
        prefix = f"{method}: " if method else ""
        super().__init__(
            f"{prefix}the page shows {_with_article(kind)} dialog ({message[:200]!r}) and does"
            " nothing else until it is answered"
        )
        self.method = method
        self.kind = kind
        self.message = message
        self.default_prompt = default_prompt

    @classmethod
    def of(cls, method: str | None, dialog: Mapping[str, Any]) -> DialogOpenError:
        """The error for a dialog described by ``Page.javascriptDialogOpening``'s params."""
        return cls(
            method,
            str(dialog.get("type", "alert")),
            str(dialog.get("message", "")),
            str(dialog.get("defaultPrompt", "")),
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


def _with_article(word: str) -> str:
    """'an alert', 'a confirm': for messages that name a dialog's type."""
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"
