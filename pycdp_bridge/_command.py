"""What a CDP command is: a generator that yields one request and returns the result.

A command yields one request ``{"method": ..., "params": ...}``, receives the raw
result dict and returns it, the shape the ``cdp`` package uses, so `Target.execute`
runs the commands of `pycdp_bridge.protocol` (made with `call`) and that package's
generators alike.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, TypeAlias, TypeVar

__all__ = ["Command", "Empty", "Request", "Result", "call"]

T = TypeVar("T")

#: The message a command generator yields: ``{"method": str, "params": dict}``.
Request: TypeAlias = dict[str, Any]
#: The raw ``result`` object of a CDP response.
Result: TypeAlias = dict[str, Any]
#: A CDP command: yields one request, receives its raw result, returns the value.
Command: TypeAlias = Generator[Request, Result, T]
#: A command that returns nothing worth reading (the result is ``{}``).
Empty: TypeAlias = Result


def call(method: str, /, **params: Any) -> Command[Any]:
    """The command that sends `method` with `params` (those that are not None) and
    returns its raw result; each command of `pycdp_bridge.protocol` declares the
    result's type."""
    sent = {name: value for name, value in params.items() if value is not None}
    result = yield {"method": method, "params": sent}
    return result
