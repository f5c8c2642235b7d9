"""The shape of a CDP command as a generator, shared by the protocol's modules.

A command yields one request ``{"method": ..., "params": ...}``, receives the raw
result dict and returns it, the shape the ``cdp`` package uses, so ``Target.execute``
runs ours and that package's generators alike.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
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


def call(method: str, params: Mapping[str, Any] | None = None) -> Command[Result]:
    """The command that sends `method` with `params` and returns its raw result."""
    result = yield {"method": method, "params": dict(params) if params else {}}
    return result
