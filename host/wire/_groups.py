"""One error out of the groups trio's nurseries raise.

Concurrent CDP calls to a page that closed, crashed or shows a dialog all fail alike,
and a handler's nursery hands its error over in a group; what a person, a client or
the extension needs to hear is one of them.
"""

from __future__ import annotations

__all__ = ["unwrap_group"]


def unwrap_group(
    error: BaseException, kinds: type[BaseException] | tuple[type[BaseException], ...]
) -> BaseException | None:
    """`error` itself if it is of `kinds`; for a group made only of such errors (at any
    depth) its first one; otherwise None (a group with any other error in it too)."""
    if isinstance(error, kinds):
        return error
    if not isinstance(error, BaseExceptionGroup):
        return None
    matched, rest = error.split(kinds)
    if matched is None or rest is not None:
        return None
    first: BaseException = matched
    while isinstance(first, BaseExceptionGroup):
        first = first.exceptions[0]
    return first
