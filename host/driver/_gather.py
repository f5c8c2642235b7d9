"""Independent CDP reads sent together: one round trip for all instead of one each."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, overload

import trio

__all__ = ["gather"]

_A = TypeVar("_A")
_B = TypeVar("_B")
_C = TypeVar("_C")


@overload
async def gather(
    first: Callable[[], Awaitable[_A]], second: Callable[[], Awaitable[_B]], /
) -> tuple[_A, _B]: ...


@overload
async def gather(
    first: Callable[[], Awaitable[_A]],
    second: Callable[[], Awaitable[_B]],
    third: Callable[[], Awaitable[_C]],
    /,
) -> tuple[_A, _B, _C]: ...


@overload
async def gather(*calls: Callable[[], Awaitable[Any]]) -> tuple[Any, ...]: ...


async def gather(*calls: Callable[[], Awaitable[Any]]) -> tuple[Any, ...]:
    """Run independent calls at once, so that their commands share one round trip.

    Results in the calls' order; when calls fail, the first failing call's exception
    in that order is raised (as if they had run one after the other), after all ended.
    """
    results: list[Any] = [None] * len(calls)
    errors: list[Exception | None] = [None] * len(calls)

    async def run(index: int, call: Callable[[], Awaitable[Any]]) -> None:
        try:
            results[index] = await call()
        except Exception as exc:  # raised below, in the calls' order
            errors[index] = exc

    async with trio.open_nursery() as nursery:
        for index, call in enumerate(calls):
            nursery.start_soon(run, index, call)
    for exc in errors:
        if exc is not None:
            raise exc
    return tuple(results)
