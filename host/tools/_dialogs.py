"""JavaScript dialogs (alert, confirm, prompt, "leave this page?"): shown and answered."""

from __future__ import annotations

from collections.abc import Mapping

from pycdp_bridge import DialogOpenError
from pycdp_bridge import protocol as cdp

from ..driver import CallContext, dialog_element, dialog_reason
from ..pipeline import xml
from ..tab import settle
from ._common import (
    ACT,
    SETTLE_TIMEOUT,
    BadArguments,
    Refusal,
    ToolResult,
    after_action,
    bool_arg,
    schema,
    text_arg,
    tool,
)

__all__ = ["answer_dialog", "dialog_result", "dialog_xml"]


def dialog_xml(kind: str, message: str, default_prompt: str = "") -> str:
    """How a JavaScript dialog the page shows is written for the model (FORMAT.md)."""
    attributes = {
        "type": kind,
        "message": message,
        "default": default_prompt if kind == "prompt" else None,
    }
    return (
        xml.element("js-dialog", attributes)
        + "\nThe page waits for an answer and does nothing else until then: "
        "answer_dialog(accept=true) or answer_dialog(accept=false)"
        + (", with text for the prompt." if kind == "prompt" else ".")
    )


def dialog_result(error: DialogOpenError, *, is_error: bool) -> ToolResult:
    """The open dialog as a tool's answer."""
    content = dialog_xml(error.kind, error.message, error.default_prompt)
    return ToolResult(content=content, is_error=is_error, kind="text")


@tool(
    "answer_dialog",
    "Answer the page's JavaScript dialog (alert, confirm, prompt, 'leave this page?'): "
    "OK (accept=true) or Cancel; text is typed into a prompt.",
    schema(
        {
            "accept": {"type": "boolean", "default": True},
            "text": {"type": "string"},
        },
        ("accept",),
    ),
    ACT,
)
async def answer_dialog(call: CallContext, args: Mapping[str, object]) -> ToolResult:
    tab = call.tab
    target = tab.target
    dialog = target.open_dialog
    if dialog is None:
        raise Refusal("no JavaScript dialog is open on this page")
    accept = bool_arg(args, "accept", True)
    answer = text_arg(args, "text", required=False)
    if answer is not None and dialog.get("type") != "prompt":
        raise BadArguments(f"text is only for a prompt; this dialog is a {dialog.get('type')}")
    call.require(dialog_reason(dialog, accept), dialog_element(dialog))
    await target.execute(cdp.page_handle_javascript_dialog(accept=accept, prompt_text=answer))
    # Answering may let a navigation go on (beforeunload) or run the page's handler.
    async with call.watch() as activity:
        settled = await settle(tab.revisions, activity, SETTLE_TIMEOUT)
    return await after_action(call, activity, settled)
