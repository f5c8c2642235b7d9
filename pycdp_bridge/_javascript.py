"""Running the page's JavaScript: one way to evaluate, one way to call on an object.

`evaluate` and `call_on` send ``Runtime.evaluate`` and ``Runtime.callFunctionOn``
and read their replies the same way: when the page's code throws (or its promise
rejects) they raise `JavaScriptError` with the page's own text of the exception;
every other failure is the transport's (`CDPError`, `TargetClosedError`, ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from . import _protocol as cdp
from ._errors import JavaScriptError
from ._target import Target

if TYPE_CHECKING:
    from cdp_use.cdp.runtime.types import CallArgument

__all__ = ["ObjectRef", "call_on", "evaluate"]


@attrs.frozen
class ObjectRef:
    """An argument of `call_on` that is a remote object of the page, not a value."""

    object_id: str


async def evaluate(
    target: Target,
    expression: str,
    *,
    context_id: int | None = None,
    await_promise: bool = False,
    return_by_value: bool = True,
    object_group: str | None = None,
    session_id: str | None = None,
) -> Any:
    """Evaluate ``expression`` in the page (or in the execution context ``context_id``).

    Returns the JSON value of the result; with ``return_by_value=False``, the
    ``Runtime.RemoteObject`` itself (its ``objectId`` names the object, kept in
    ``object_group`` when given, until released). Raises JavaScriptError when the
    expression throws or, with ``await_promise``, its promise rejects.
    """
    reply: Mapping[str, Any] = await target.execute(
        cdp.runtime_evaluate(
            expression,
            return_by_value=return_by_value,
            await_promise=await_promise,
            context_id=context_id,
            object_group=object_group,
        ),
        session_id=session_id,
    )
    return _result(expression, reply, return_by_value=return_by_value)


async def call_on(
    target: Target,
    object_id: str | None,
    function_source: str,
    *args: object,
    context_id: int | None = None,
    await_promise: bool = True,
    return_by_value: bool = True,
    session_id: str | None = None,
) -> Any:
    """Call the function ``function_source`` with ``this`` bound to the remote object
    ``object_id`` and ``args`` as its arguments: JSON values, or `ObjectRef` for
    remote objects. With ``object_id`` None it runs in the execution context
    ``context_id`` instead (an isolated world), on its arguments alone.

    Returns as `evaluate` does; raises JavaScriptError when the function throws or
    its promise rejects, ValueError unless exactly one of ``object_id`` and
    ``context_id`` is given.
    """
    arguments: list[CallArgument] = [
        {"objectId": arg.object_id} if isinstance(arg, ObjectRef) else {"value": arg}
        for arg in args
    ]
    reply: Mapping[str, Any] = await target.execute(
        cdp.runtime_call_function_on(
            function_source,
            object_id=object_id,
            execution_context_id=context_id,
            arguments=arguments,
            return_by_value=return_by_value,
            await_promise=await_promise,
        ),
        session_id=session_id,
    )
    return _result(function_source, reply, return_by_value=return_by_value)


def _result(source: str, reply: Mapping[str, Any], *, return_by_value: bool) -> Any:
    """The value (or remote object) of an evaluation's reply, or its exception raised."""
    details: Mapping[str, Any] | None = reply.get("exceptionDetails")
    if details is not None:
        raise JavaScriptError(source, _exception_text(details))
    remote: Mapping[str, Any] = reply.get("result", {})
    if not return_by_value:
        return dict(remote)
    return remote.get("value")


def _exception_text(details: Mapping[str, Any]) -> str:
    """What the page threw, as DevTools shows it: an Error's description (name, message
    and stack), else the thrown value, else the protocol's summary ("Uncaught")."""
    exception: Mapping[str, Any] = details.get("exception") or {}
    description = exception.get("description")
    if description:
        return str(description)
    if "value" in exception:
        return f"{details.get('text', 'Uncaught')} {exception['value']!r}"
    return str(details.get("text") or "the page's code threw")
