"""What the side panel's log of outside agents hears of one call (``agents_event``).

The panel says each call in words with the one function its own agent's steps use
(``describeCall`` in extension/panel/step-words.js), so the event carries what that
function reads: the tool, the arguments it may show, and the elements the call
names as the client's view of the tab showed them (tag, ``type``, name: the page's
words, which the panel shows as text only).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ...wire import JSONObject

__all__ = ["call_event"]

# Arguments the log may show, for every tool: what is clicked, pressed, chosen,
# looked for or opened. Never what was typed (it may be a password), nor a script,
# nor which local files were attached.
_SHOWN: Final = (
    "id",
    "to",
    "key",
    "modifiers",
    "value",
    "on",
    "accept",
    "url",
    "direction",
    "text",
    "role",
    "region",
    "x",
    "y",
    "tab",
    "full_page",
)
# Per tool, the shown arguments that are the agent's own input there: the text typed
# into a field or a prompt dialog.
_TYPED: Final = {"type": {"text"}, "answer_dialog": {"text"}}
_MAX_SHOWN: Final = 300


def _shown(value: object) -> object:
    return value[:_MAX_SHOWN] if isinstance(value, str) else value


def shown_args(tool: str, args: Mapping[str, object]) -> JSONObject:
    """The arguments of a ``tool`` call the person's log may show: `_SHOWN` but what
    was typed; fill's field ids without their values; how many files an upload
    attached (``files``), not which."""
    typed = _TYPED.get(tool, set())
    shown: JSONObject = {
        key: _shown(value) for key, value in args.items() if key in _SHOWN and key not in typed
    }
    fields = args.get("fields")
    if tool == "fill" and isinstance(fields, list):
        shown["fields"] = [
            {"id": _shown(field.get("id"))} for field in fields[:50] if isinstance(field, Mapping)
        ]
    paths = args.get("paths")
    if isinstance(paths, list):
        shown["files"] = len(paths)
    return shown


def call_event(
    session: int,
    client: str,
    tab: int,
    tool: str,
    args: Mapping[str, object],
    elements: Mapping[str, JSONObject],
    *,
    error: str | None,
) -> JSONObject:
    """The ``agents_event`` of one call of client ``session`` in ``tab`` (where it
    acted), with the ``elements`` it names as the client saw them before it acted."""
    return {
        "event": "call",
        "session": session,
        "client": client,
        "tab": tab,
        "tool": tool,
        "args": shown_args(tool, args),
        "elements": dict(elements),
        "error": None if error is None else error[:_MAX_SHOWN],
    }
