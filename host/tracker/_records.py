"""The tracker's values: its limits, a tool's policy, a tracked result, its figures."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Generic, TypeVar

import attrs

from ._cache_keys import KeyFunction

__all__ = [
    "SIDE_EFFECTS",
    "PageRevision",
    "ToolPolicy",
    "TrackedResult",
    "TrackerLimits",
    "TrackerStatistics",
    "is_flagged_error",
]

R = TypeVar("R")


@attrs.frozen
class TrackerLimits:
    """How much the tracker remembers, per session."""

    max_calls: int = attrs.field(default=50, validator=attrs.validators.gt(0))
    """Cached results kept per session; the oldest goes first."""
    max_age: float = attrs.field(default=300.0, validator=attrs.validators.gt(0.0))
    """Seconds (trio clock) a result stays usable, even if nothing reported a change."""
    window: int = attrs.field(default=3, validator=attrs.validators.gt(0))
    """A call is matched only against the last `window` calls of the same tool."""
    max_bytes: int = attrs.field(default=2 * 1024 * 1024, validator=attrs.validators.gt(0))
    """Bytes of cached results kept per session (by the size function); oldest first."""


@attrs.frozen
class ToolPolicy:
    """How the tracker treats one tool.

    The default, `ToolPolicy()`, is a pure read that does not depend on a page: cached
    until a side-effecting call in the same session.
    """

    side_effects: bool = False
    """The tool changes something: never cached, and it invalidates every cached result
    of its session (and, when called with a tab, that tab's page revision)."""
    reads_page: bool = False
    """The result depends on a tab's page: calls need a tab, and any page change of that
    tab invalidates the result."""
    volatile: bool = False
    """The result depends on state the tracker is never told about (a tab list, a
    clock): always run, never cached, invalidates nothing."""
    key: KeyFunction | None = None
    """Maps arguments to an equivalence key; None means canonical JSON of all of them."""


SIDE_EFFECTS = ToolPolicy(side_effects=True)
"""The policy of every tool that was not registered."""


def is_flagged_error(result: object) -> bool:
    """The default error predicate: a mapping or object whose `is_error` is True."""
    if isinstance(result, Mapping):
        return result.get("is_error") is True
    return getattr(result, "is_error", False) is True


@attrs.frozen
class TrackedResult(Generic[R]):
    """A tool's result as the tracker hands it back."""

    result: R
    """The tool's own result, the very object the tool returned; never rewritten."""
    call_id: int
    """This call's id, unique in the tracker."""
    cached: bool = False
    """True when the tool did not run for this call."""
    cached_from: int | None = None
    """The id of the earlier call whose result this is."""
    cached_at: float | None = None
    """When that result was produced, on the trio clock."""
    cached_at_wall: float | None = None
    """When that result was produced, as seconds since the epoch."""
    note: str | None = None
    """One short line for the model when cached, e.g. "Same result as call 7 (12 s ago):
    the page has not changed since."."""


@attrs.frozen
class TrackerStatistics:
    """A snapshot of the tracker's counters."""

    sessions: int
    """Sessions with cached results or calls in progress."""
    entries: int
    """Cached results held, over all sessions."""
    bytes: int
    """Size of the cached results held, over all sessions."""
    calls: int
    """Calls made."""
    hits: int
    """Calls answered without running the tool (including coalesced ones)."""
    coalesced: int
    """Of the hits, calls that waited for an identical call already running."""
    misses: int
    """Calls that ran the tool."""
    invalidations: int
    """Cached results dropped because a page change or an action may have made them stale."""
    expirations: int
    """Cached results dropped for age (including those of idle sessions)."""
    evictions: int
    """Cached results dropped for the count or byte cap, or for leaving the window."""
    page_changes: int
    """Page changes reported or caused by actions."""


@attrs.frozen
class PageRevision:
    """What the tracker knows of one tab's page."""

    tab: Hashable
    revision: int
    """Changes whenever the page may have; cached reads are valid only at their revision."""
    changes: int
    """Page changes counted for this tab."""
    reason: str | None
    """Why the page last changed, as reported."""
