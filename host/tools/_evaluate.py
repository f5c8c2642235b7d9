"""`evaluate`: the agent's JavaScript run in the page, with the person's consent.

The expression runs in the page's own context (the main world of its main frame), as
the DevTools console runs it (top-level ``await``). Whatever it does, the call ends:
a script that does not finish within `EVALUATE_TIMEOUT` is terminated
(``Runtime.terminateExecution``) and the page keeps working; an exception is named;
the value comes back as bounded JSON, with what JSON cannot hold (a cycle, a DOM
node, a function) described (``js/evaluate-value.js``). The value is the page's data:
its credentials hidden (``trimtab.pipeline.credentials``: a field named ``token``, a
JWT in a string, the same in what the script threw), it is written by the one XML
writer, and the doors put it in the untrusted block.

Every call asks the person first (`EvaluateReason`), showing the code, unless they
allowed `evaluate` on the page's site; the host decides that (``trimtab.envelope``).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Mapping
from typing import Any, Final

import trio

from pycdp_bridge import CDPError, DialogOpenError, Target, TargetClosedError, call_on
from pycdp_bridge import protocol as cdp

from ..driver import OBJECT_GROUP, CallContext, EvaluateReason
from ..pipeline import credentials, xml
from ..tab import settle
from ._common import ACT, SETTLE_TIMEOUT, BadArguments, ToolResult, error, schema, script, tool
from ._common import text as text_result

__all__ = ["EVALUATE_TIMEOUT", "MAX_EXPRESSION", "MAX_VALUE", "evaluate"]

EVALUATE_TIMEOUT: Final = 10.0
"""Seconds the agent's script may run (its promise included) before it is terminated."""
MAX_EXPRESSION: Final = 20_000
"""Characters of JavaScript one call may send: more is no expression a person reads."""
MAX_VALUE: Final = 8_000
"""Characters of JSON a value answers with; more is cut, and the answer says so."""
# How deep, how wide and how many containers the value's walk goes.
_LIMITS: Final = {"depth": 6, "items": 100, "string": 2_000, "nodes": 500}
_REASON: Final = EvaluateReason(
    "it runs the agent's JavaScript in the page, which can read and change anything there"
)


@tool(
    "evaluate",
    "Run JavaScript in the page (as in the DevTools console; await works) and get its "
    "value as JSON. The person is asked first.",
    schema({"expression": {"type": "string"}}, ("expression",)),
    ACT,
    group="devtools",
)
async def evaluate(call: CallContext, args: Mapping[str, object]) -> ToolResult:
    tab = call.tab
    expression = args.get("expression")
    if not isinstance(expression, str) or not expression.strip():
        raise BadArguments(f"expression must be JavaScript text; got {expression!r:.80}")
    if len(expression) > MAX_EXPRESSION:
        raise BadArguments(
            f"expression is {len(expression)} characters long; at most {MAX_EXPRESSION}"
        )
    call.require(_REASON)
    async with call.watch() as activity:
        answer = await _run(tab.target, expression)
        # Whatever the script started (a navigation, a request) is followed and held
        # by the request guard like any action's; its page changes show next time.
        await settle(tab.revisions, activity, SETTLE_TIMEOUT)
    notes = [xml.element("note", content=held.note()) for held in call.held_requests()]
    if notes:
        answer = ToolResult(
            content="\n".join([answer.content, *notes]), is_error=answer.is_error, kind="text"
        )
    return answer


async def _run(target: Target, expression: str) -> ToolResult:
    started = time.monotonic()
    reply: Mapping[str, Any] | None = None
    try:
        with trio.move_on_after(EVALUATE_TIMEOUT + 1):
            reply = await target.execute(
                cdp.runtime_evaluate(
                    expression,
                    await_promise=True,
                    return_by_value=False,
                    object_group=OBJECT_GROUP,
                    timeout_ms=EVALUATE_TIMEOUT * 1000,
                    repl_mode=True,
                )
            )
    except (DialogOpenError, TargetClosedError):
        raise
    except CDPError:
        # The browser's own timeout ends a script stuck in a loop with an error reply
        # ("Execution was terminated"; "Internal error" in the console's mode).
        if time.monotonic() - started < EVALUATE_TIMEOUT * 0.9:
            raise
    if reply is None:
        await _terminate(target)
        return error(
            f"evaluate stopped the script: it did not finish within {EVALUATE_TIMEOUT:g} s "
            "(a loop, or a promise that never settles); the page keeps working"
        )
    details: Mapping[str, Any] | None = reply.get("exceptionDetails")
    if details is not None:
        thrown = credentials.hide_text(_thrown(details))
        return error(f"the script threw: {xml.text(thrown)}")
    value = await _value(target, reply.get("result", {}))
    if value is None:
        await _terminate(target)
        return error(
            f"evaluate could not read the script's value within {EVALUATE_TIMEOUT:g} s "
            "(a getter or proxy of it does not return); the page keeps working"
        )
    return text_result(value)


async def _value(target: Target, remote: Mapping[str, Any]) -> str | None:
    """The value as ``<value>JSON</value>``, bounded; None when reading it hung."""
    kind = remote.get("type")
    found: object
    if "unserializableValue" in remote:
        found = str(remote["unserializableValue"])  # NaN, Infinity, -0, 10n
    elif kind == "undefined":
        found = "[undefined]"
    elif remote.get("objectId") is None:
        found = remote.get("value")
    else:
        with trio.move_on_after(EVALUATE_TIMEOUT):
            found = await call_on(
                target, str(remote["objectId"]), script("evaluate-value.js"), _LIMITS
            )
            return _written(found)
        return None
    return _written(found)


def _written(found: object) -> str:
    found = credentials.hide_value(found)
    if isinstance(found, str) and len(found) > _LIMITS["string"]:
        found = f"{found[: _LIMITS['string']]}… ({len(found)} characters)"
    shown = json.dumps(found, ensure_ascii=False)
    if len(shown) > MAX_VALUE:
        cut = f" (cut: {len(shown)} characters in all; return less)"
        return xml.element("value", {"cut": "true"}, content=shown[:MAX_VALUE]) + cut
    return xml.element("value", content=shown)


def _thrown(details: Mapping[str, Any]) -> str:
    """What the script threw, as DevTools names it: the Error's name, message and
    first frames, or the thrown value."""
    exception: Mapping[str, Any] = details.get("exception") or {}
    description = exception.get("description")
    if isinstance(description, str) and description:
        shown = "\n".join(description.splitlines()[:4])
    elif "value" in exception:
        shown = f"{exception['value']!r}"
    else:
        shown = str(details.get("text") or "an exception")
    return shown[:1_000]


async def _terminate(target: Target) -> None:
    """Stop what the script still runs, so the page answers again (shielded: the call
    may be ending)."""
    with (
        trio.CancelScope(shield=True),
        trio.move_on_after(5),
        contextlib.suppress(CDPError, TargetClosedError, DialogOpenError),
    ):
        await target.execute(cdp.runtime_terminate_execution())
