"""The call tracker: answers a repeated, equivalent tool call from the earlier result.

An agent often asks the same thing twice (read the page, act, read it again without
acting; or the same `find` in other words). Running the tool again costs time and,
worse, tokens for an answer the model already has. The tracker wraps any async tool:
an equivalent call made while nothing it depends on can have changed gets the earlier
result, marked as cached in its own fields, never inside the content.

The rule that matters more than the savings: **never serve a stale result**. A cached
result is only valid while

* no side-effecting call ran in the session since it was read (an action may change
  anything the session can read, so every cached result of the session goes),
* the page revision of its tab is unchanged (the host calls `note_page_change` for
  every change its page observer reports, see `trimtab.tab.PageRevisions`, and an
  action on a tab bumps it too),
* it is younger than the age limit, and it was among the last few calls of the tool.

A result read while any of these changed under it (a DOM mutation during the read) is
returned but not cached. Errors are never cached. Tools the tracker does not know are
treated as side-effecting: wrapping an unregistered `click` must never make it a no-op.

Everything is O(1) per call in the number of sessions and remembered calls: hashed
canonical keys, per-tool call counters instead of scanning a history, and lazy sweeps
that each drop an entry at most once.
"""

from __future__ import annotations

import enum
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable, Mapping
from typing import TypeVar, cast

import attrs
import trio

from ._cache_keys import canonical_key, encoded_size
from ._records import (
    SIDE_EFFECTS,
    PageRevision,
    ToolPolicy,
    TrackedResult,
    TrackerLimits,
    TrackerStatistics,
    is_flagged_error,
)

__all__ = ["CallTracker"]

R = TypeVar("R")

# The state a result was read in: the session's action epoch and, for page reads, the
# tab's page revision. A result is valid only while the current stamp equals it.
_Stamp = tuple[int, int | None]
_Key = tuple[str, Hashable, Hashable, Hashable]


class _Outcome(enum.Enum):
    # The run was cancelled: nobody else may see its Cancelled, so waiters retry.
    ABANDONED = enum.auto()
    RESULT = enum.auto()
    ERROR = enum.auto()


@attrs.define(eq=False)
class _Entry:
    call_id: int
    key: _Key
    result: object
    size: int
    stamp: _Stamp
    page_tab: Hashable | None
    created_at: float
    created_at_wall: float
    last_seq: int


@attrs.define(eq=False)
class _Flight:
    call_id: int
    stamp: _Stamp
    done: trio.Event = attrs.Factory(trio.Event)
    outcome: _Outcome = _Outcome.ABANDONED
    result: object = None
    error: Exception | None = None
    finished_at: float = 0.0
    finished_at_wall: float = 0.0


@attrs.define(eq=False)
class _Session:
    last_active: float
    epoch: int = 0
    busy: int = 0
    bytes: int = 0
    # Insertion order is production order, so the oldest (first to expire) is in front.
    entries: OrderedDict[int, _Entry] = attrs.Factory(OrderedDict)
    by_key: dict[_Key, _Entry] = attrs.Factory(dict)
    flights: dict[_Key, _Flight] = attrs.Factory(dict)
    tool_calls: dict[str, int] = attrs.Factory(dict)


@attrs.define(eq=False)
class _Page:
    revision: int
    changes: int = 0
    reason: str | None = None


@attrs.define(eq=False)
class _Counters:
    calls: int = 0
    hits: int = 0
    coalesced: int = 0
    misses: int = 0
    invalidations: int = 0
    expirations: int = 0
    evictions: int = 0
    page_changes: int = 0
    entries: int = 0
    bytes: int = 0


def _policy_table(policies: Mapping[str, ToolPolicy]) -> dict[str, ToolPolicy]:
    # A copy: registering a tool later must not change the caller's mapping.
    return dict(policies)


# Idle sessions dropped per call: more than one, so the sweep outpaces session creation.
_IDLE_SWEEP_PER_CALL = 2


@attrs.define
class CallTracker:
    """Duplicate tool-call detection per session that never serves a stale result.

    Wrap every tool call in `call`. Register each tool's `ToolPolicy` first; a tool that
    was never registered is treated as side-effecting (always runs, invalidates the
    session's cached results), the safe default for a tool the tracker knows nothing of.

    Cached results are handed back as the same object; results should be immutable
    values (the host's are strings).
    """

    limits: TrackerLimits = attrs.field(factory=TrackerLimits)
    policies: dict[str, ToolPolicy] = attrs.field(factory=dict, converter=_policy_table)
    is_error: Callable[[object], bool] = is_flagged_error
    """Whether a returned result is an error (never cached)."""
    size_of: Callable[[object], int] = encoded_size
    """Bytes a result counts for against `TrackerLimits.max_bytes`."""
    clock: Callable[[], float] = trio.current_time
    wall_clock: Callable[[], float] = time.time
    # Least recently active session first, so idle ones are found without a scan.
    _sessions: OrderedDict[str, _Session] = attrs.field(init=False, factory=OrderedDict)
    _pages: dict[Hashable, _Page] = attrs.field(init=False, factory=dict)
    # One counter for every tab: a forgotten and re-seen tab never reuses a revision.
    _revision_clock: int = attrs.field(init=False, default=0)
    _last_call_id: int = attrs.field(init=False, default=0)
    _counters: _Counters = attrs.field(init=False, factory=_Counters)

    # ---- configuration

    def register(self, tool: str, policy: ToolPolicy) -> None:
        """Set the policy of `tool`; each tool is registered once."""
        if tool in self.policies:
            raise ValueError(f"tool {tool!r} is already registered with {self.policies[tool]!r}")
        self.policies[tool] = policy

    def policy(self, tool: str) -> ToolPolicy:
        """The policy `tool` runs under: its registered one, else `SIDE_EFFECTS`."""
        return self.policies.get(tool, SIDE_EFFECTS)

    # ---- the calls

    async def call(
        self,
        session: str,
        tool: str,
        args: Mapping[str, object],
        run: Callable[[], Awaitable[R]],
        *,
        tab: Hashable | None = None,
        options: Hashable = None,
        call_id: int | None = None,
    ) -> TrackedResult[R]:
        """Run `tool` through the tracker: answer from an equivalent earlier call, or `run()`.

        `run` is the zero-argument coroutine function that really runs the tool with
        `args`. Its exceptions propagate and are never cached; a concurrent identical
        call waiting on this one sees the same exception. `tab` is required for tools
        that read a page. Raises `ValueError` for a page read without a tab, and
        `TypeError` or `ValueError` for arguments that have no key, before running.
        `options` is what else the result depends on (the snapshot's token budget):
        calls with other options are not the same call. `call_id` is the number a door
        gave the call beforehand (`new_call_id`), else the tracker numbers it.
        """
        policy = self.policy(tool)
        if policy.reads_page and tab is None:
            raise ValueError(f"tool {tool!r} reads a page, so its calls need a tab; got None")
        if policy.side_effects:
            return await self._act(session, tool, run, tab, call_id)
        if policy.volatile:
            return await self._run_uncached(session, run, call_id)
        try:
            arg_key = policy.key(args) if policy.key is not None else canonical_key(args)
        except TypeError as exc:
            raise TypeError(f"arguments of tool {tool!r}: {exc}") from exc
        except ValueError as exc:
            raise ValueError(f"arguments of tool {tool!r}: {exc}") from exc
        # The tab is part of the key even for tools that do not read the page: merging
        # calls across tabs would only save a run, and only if the policy is right.
        key: _Key = (tool, tab, arg_key, options)
        page_tab = tab if policy.reads_page else None

        call_id = self._start_call(call_id)
        state = self._enter(session)
        try:
            seq = state.tool_calls.get(tool, 0) + 1
            state.tool_calls[tool] = seq
            while True:
                now = self.clock()
                self._expire_front(state, now)
                stamp = self._stamp(state, page_tab)
                entry = state.by_key.get(key)
                if entry is not None:
                    # _expire_front left no expired entry: they are ordered by age.
                    if entry.stamp != stamp:
                        self._drop(state, entry)
                        self._counters.invalidations += 1
                    elif seq - entry.last_seq <= self.limits.window:
                        entry.last_seq = seq
                        self._counters.hits += 1
                        return self._from_entry(entry, call_id, now)
                    else:
                        # Hits only ever raise last_seq, so it can never match again.
                        self._drop(state, entry)
                        self._counters.evictions += 1
                flight = state.flights.get(key)
                if flight is not None and flight.stamp == stamp:
                    await flight.done.wait()
                    if flight.outcome is _Outcome.ABANDONED:
                        continue
                    self._counters.hits += 1
                    self._counters.coalesced += 1
                    if flight.error is not None:
                        raise flight.error
                    return self._from_flight(flight, call_id)
                self._counters.misses += 1
                return await self._lead(session, state, key, stamp, page_tab, seq, call_id, run)
        finally:
            self._leave(session, state)

    async def _lead(
        self,
        session: str,
        state: _Session,
        key: _Key,
        stamp: _Stamp,
        page_tab: Hashable | None,
        seq: int,
        call_id: int,
        run: Callable[[], Awaitable[R]],
    ) -> TrackedResult[R]:
        flight = _Flight(call_id, stamp)
        state.flights[key] = flight
        try:
            result = await run()
        except Exception as exc:
            flight.outcome = _Outcome.ERROR
            flight.error = exc
            raise
        else:
            flight.outcome = _Outcome.RESULT
            flight.result = result
        finally:
            if state.flights.get(key) is flight:
                del state.flights[key]
            flight.finished_at = self.clock()
            flight.finished_at_wall = self.wall_clock()
            flight.done.set()
        # The entry keeps the stamp from before the run, so a result read while something
        # changed would never be served anyway; checking here just avoids storing it.
        still_valid = self._sessions.get(session) is state and self._stamp(state, page_tab) == stamp
        if still_valid and not self.is_error(result):
            self._record(
                state,
                _Entry(
                    call_id=call_id,
                    key=key,
                    result=result,
                    size=self.size_of(result),
                    stamp=stamp,
                    page_tab=page_tab,
                    created_at=flight.finished_at,
                    created_at_wall=flight.finished_at_wall,
                    last_seq=seq,
                ),
            )
        return TrackedResult(result=result, call_id=call_id)

    async def _act(
        self,
        session: str,
        tool: str,
        run: Callable[[], Awaitable[R]],
        tab: Hashable | None,
        call_id: int | None,
    ) -> TrackedResult[R]:
        call_id = self._start_call(call_id)
        self._counters.misses += 1
        state = self._enter(session)
        reason = f"side-effecting call {call_id} ({tool})"
        # Before: reads that join during the action must not see pre-action results.
        self._invalidate_session(state)
        if tab is not None:
            self._bump_page(tab, reason)
        try:
            result = await run()
        finally:
            # After: reads that ran during the action may have seen it half done. The
            # session may have been cleared and re-made meanwhile; it is the current one
            # that must not keep them.
            current = self._sessions.get(session)
            if current is not None:
                self._invalidate_session(current)
            if tab is not None:
                self._bump_page(tab, reason)
            self._leave(session, state)
        return TrackedResult(result=result, call_id=call_id)

    async def _run_uncached(
        self, session: str, run: Callable[[], Awaitable[R]], call_id: int | None
    ) -> TrackedResult[R]:
        call_id = self._start_call(call_id)
        self._counters.misses += 1
        state = self._enter(session)
        try:
            result = await run()
        finally:
            self._leave(session, state)
        return TrackedResult(result=result, call_id=call_id)

    # ---- what the host reports

    def note_page_change(self, tab: Hashable, reason: str) -> None:
        """Record that the page in `tab` may have changed (navigation, DOM mutation).

        Every cached read of that tab, in every session, stops being valid. O(1): the
        stale entries are dropped when next looked at or swept.
        """
        self._bump_page(tab, reason)

    def page_revision(self, tab: Hashable) -> PageRevision | None:
        """What the tracker knows of `tab`'s page, or None for a tab it has not seen."""
        page = self._pages.get(tab)
        if page is None:
            return None
        return PageRevision(
            tab=tab, revision=page.revision, changes=page.changes, reason=page.reason
        )

    def forget_tab(self, tab: Hashable) -> None:
        """Drop the tab's revision (the host released it); its cached reads become invalid."""
        self._pages.pop(tab, None)

    def clear_session(self, session: str) -> None:
        """Forget every cached result of `session`; calls in progress will not be cached."""
        state = self._sessions.pop(session, None)
        if state is not None:
            self._discard_entries(state)

    def statistics(self) -> TrackerStatistics:
        """A snapshot of the counters."""
        counters = self._counters
        return TrackerStatistics(
            sessions=len(self._sessions),
            entries=counters.entries,
            bytes=counters.bytes,
            calls=counters.calls,
            hits=counters.hits,
            coalesced=counters.coalesced,
            misses=counters.misses,
            invalidations=counters.invalidations,
            expirations=counters.expirations,
            evictions=counters.evictions,
            page_changes=counters.page_changes,
        )

    # ---- internals

    def new_call_id(self) -> int:
        """The next number of the one sequence every call is numbered in, for a door
        that names a call before it reaches the tracker (one the host refuses first)."""
        self._last_call_id += 1
        return self._last_call_id

    def _start_call(self, call_id: int | None) -> int:
        self._counters.calls += 1
        return call_id if call_id is not None else self.new_call_id()

    def _enter(self, session: str) -> _Session:
        now = self.clock()
        self._sweep_idle(now)
        state = self._sessions.get(session)
        if state is None:
            state = self._sessions[session] = _Session(last_active=now)
        else:
            self._sessions.move_to_end(session)
            state.last_active = now
        state.busy += 1
        return state

    def _leave(self, session: str, state: _Session) -> None:
        state.busy -= 1
        if self._sessions.get(session) is not state:
            return
        if state.busy == 0 and not state.entries:
            # Nothing cached and nothing running: the session holds nothing worth keeping.
            del self._sessions[session]
            return
        self._sessions.move_to_end(session)
        state.last_active = self.clock()

    def _sweep_idle(self, now: float) -> None:
        # A session idle for max_age holds only expired results (each was produced no
        # later than its last activity), so it goes whole, without looking inside.
        for _ in range(_IDLE_SWEEP_PER_CALL):
            oldest = next(iter(self._sessions.items()), None)
            if oldest is None:
                return
            name, state = oldest
            if now - state.last_active < self.limits.max_age:
                return
            if state.busy:
                # A run longer than max_age: keep it, and its place in the order honest.
                self._sessions.move_to_end(name)
                state.last_active = now
                continue
            del self._sessions[name]
            self._counters.expirations += len(state.entries)
            self._discard_entries(state)

    def _expire_front(self, state: _Session, now: float) -> None:
        while state.entries:
            oldest = next(iter(state.entries.values()))
            if now - oldest.created_at >= self.limits.max_age:
                self._counters.expirations += 1
            elif oldest.stamp != self._stamp_if_known(state, oldest.page_tab):
                self._counters.invalidations += 1
            else:
                return
            self._drop(state, oldest)

    def _stamp(self, state: _Session, page_tab: Hashable | None) -> _Stamp:
        if page_tab is None:
            return (state.epoch, None)
        page = self._pages.get(page_tab)
        if page is None:
            self._revision_clock += 1
            page = self._pages[page_tab] = _Page(revision=self._revision_clock)
        return (state.epoch, page.revision)

    def _stamp_if_known(self, state: _Session, page_tab: Hashable | None) -> _Stamp | None:
        # For sweeping: a forgotten tab must not be re-created just to be compared.
        if page_tab is None:
            return (state.epoch, None)
        page = self._pages.get(page_tab)
        return None if page is None else (state.epoch, page.revision)

    def _bump_page(self, tab: Hashable, reason: str) -> None:
        self._revision_clock += 1
        self._counters.page_changes += 1
        page = self._pages.get(tab)
        if page is None:
            page = self._pages[tab] = _Page(revision=self._revision_clock)
        else:
            page.revision = self._revision_clock
        page.changes += 1
        page.reason = reason

    def _record(self, state: _Session, entry: _Entry) -> None:
        limits = self.limits
        if entry.size > limits.max_bytes:
            return
        previous = state.by_key.get(entry.key)
        if previous is not None:
            self._drop(state, previous)
        while state.entries and (
            len(state.entries) >= limits.max_calls or state.bytes + entry.size > limits.max_bytes
        ):
            self._drop(state, next(iter(state.entries.values())))
            self._counters.evictions += 1
        state.entries[entry.call_id] = entry
        state.by_key[entry.key] = entry
        state.bytes += entry.size
        self._counters.entries += 1
        self._counters.bytes += entry.size

    def _drop(self, state: _Session, entry: _Entry) -> None:
        del state.entries[entry.call_id]
        if state.by_key.get(entry.key) is entry:
            del state.by_key[entry.key]
        state.bytes -= entry.size
        self._counters.entries -= 1
        self._counters.bytes -= entry.size

    def _invalidate_session(self, state: _Session) -> None:
        state.epoch += 1
        self._counters.invalidations += len(state.entries)
        self._discard_entries(state)

    def _discard_entries(self, state: _Session) -> None:
        self._counters.entries -= len(state.entries)
        self._counters.bytes -= state.bytes
        state.entries.clear()
        state.by_key.clear()
        state.bytes = 0

    def _from_entry(self, entry: _Entry, call_id: int, now: float) -> TrackedResult[R]:
        if entry.page_tab is not None:
            since = "the page has not changed since"
        else:
            since = "no action has run since"
        note = f"Same result as call {entry.call_id} ({_ago(now - entry.created_at)}): {since}."
        return TrackedResult(
            result=cast(R, entry.result),
            call_id=call_id,
            cached=True,
            cached_from=entry.call_id,
            cached_at=entry.created_at,
            cached_at_wall=entry.created_at_wall,
            note=note,
        )

    def _from_flight(self, flight: _Flight, call_id: int) -> TrackedResult[R]:
        return TrackedResult(
            result=cast(R, flight.result),
            call_id=call_id,
            cached=True,
            cached_from=flight.call_id,
            cached_at=flight.finished_at,
            cached_at_wall=flight.finished_at_wall,
            note=f"Same result as call {flight.call_id}, which was already running.",
        )


def _ago(seconds: float) -> str:
    if seconds < 1:
        return "just now"
    if seconds < 90:
        return f"{seconds:.0f} s ago"
    return f"{seconds / 60:.0f} min ago"
