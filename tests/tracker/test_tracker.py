"""The call tracker: equivalent calls answered from cache, and never with a stale result."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable
from typing import Any

import attrs
import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from trimtab.tracker import (
    CallTracker,
    ToolPolicy,
    TrackedResult,
    TrackerLimits,
    canonical_json,
    canonical_key,
    fields_key,
    folded_key,
)

TAB = 1
OTHER_TAB = 2


class ToolFailedError(Exception):
    """What the fake tools raise when told to fail."""


@attrs.define
class FakeTool:
    """A tool that counts its runs and returns (or raises) what it is told."""

    runs: int = 0

    def returning(self, value: object) -> Callable[[], Awaitable[object]]:
        async def run() -> object:
            self.runs += 1
            return value

        return run

    def raising(self, message: str) -> Callable[[], Awaitable[object]]:
        async def run() -> object:
            self.runs += 1
            raise ToolFailedError(message)

        return run


def make_tracker(limits: TrackerLimits | None = None) -> CallTracker:
    return CallTracker(
        limits=limits or TrackerLimits(),
        policies={
            "read": ToolPolicy(reads_page=True, key=fields_key("id")),
            "find": ToolPolicy(reads_page=True, key=folded_key("query")),
            "snapshot": ToolPolicy(reads_page=True),
            "get_doc": ToolPolicy(),
            "list_tabs": ToolPolicy(volatile=True),
            "click": ToolPolicy(side_effects=True),
        },
    )


async def read(
    tracker: CallTracker,
    tool: FakeTool,
    value: object = "<page/>",
    *,
    session: str = "s1",
    element: str = "k1",
    tab: Hashable = TAB,
) -> TrackedResult[object]:
    return await tracker.call(session, "read", {"id": element}, tool.returning(value), tab=tab)


async def click(tracker: CallTracker, *, session: str = "s1", tab: Hashable = TAB) -> None:
    await tracker.call(session, "click", {"id": "z1"}, FakeTool().returning("clicked"), tab=tab)


# ---- hits, and what a hit looks like


async def test_repeated_read_is_answered_from_cache() -> None:
    """A second equivalent read does not run the tool and points at the first call."""
    tracker, tool = make_tracker(), FakeTool()
    first = await read(tracker, tool)
    second = await read(tracker, tool)
    assert tool.runs == 1
    assert not first.cached
    assert first.cached_from is None
    assert second.cached
    assert second.cached_from == first.call_id
    assert second.call_id != first.call_id


async def test_a_call_numbered_beforehand_keeps_its_number_in_the_one_sequence() -> None:
    """A door numbers a call before it reaches the tracker (`new_call_id`): every kind of
    call keeps that number, a repeat points at it, and the calls the tracker numbers
    itself go on after it, so no two calls share one."""
    tracker, tool = make_tracker(), FakeTool()
    numbers = [tracker.new_call_id() for _ in range(3)]
    first = await tracker.call(
        "s1", "read", {"id": "k1"}, tool.returning("x"), tab=TAB, call_id=numbers[0]
    )
    again = await tracker.call(
        "s1", "read", {"id": "k1"}, tool.returning("x"), tab=TAB, call_id=numbers[1]
    )
    acted = await tracker.call(
        "s1", "click", {"id": "z1"}, tool.returning("y"), tab=TAB, call_id=numbers[2]
    )
    listed = await tracker.call("s1", "list_tabs", {}, tool.returning([]))
    assert (first.call_id, again.call_id, acted.call_id) == tuple(numbers)
    assert again.cached_from == numbers[0]
    assert listed.call_id == numbers[2] + 1
    assert tracker.statistics().calls == 4


async def test_cached_result_is_the_same_object_and_note_is_separate() -> None:
    """The cached result is the tool's own object, untouched; the note lives in its own field."""
    tracker, tool = make_tracker(), FakeTool()
    content = "<page>" + "x" * 40 + "</page>"
    first = await read(tracker, tool, content)
    second = await read(tracker, tool, "never returned")
    assert second.result is first.result
    assert second.result == content
    assert first.note is None
    assert second.note is not None
    assert f"call {first.call_id}" in second.note
    assert "page has not changed" in second.note
    assert "\n" not in second.note
    assert second.note not in str(second.result)


async def test_note_and_cached_at_follow_the_trio_clock(mock_clock: trio.testing.MockClock) -> None:
    """cached_at is the earlier call's trio time, and the note states its age."""
    tracker, tool = make_tracker(), FakeTool()
    produced_at = trio.current_time()
    first = await read(tracker, tool)
    mock_clock.jump(12)
    second = await read(tracker, tool)
    assert second.cached_at == produced_at
    assert second.cached_at_wall is not None
    assert second.note == (
        f"Same result as call {first.call_id} (12 s ago): the page has not changed since."
    )


async def test_sessions_are_isolated() -> None:
    """The same read in another session runs the tool again."""
    tracker, tool = make_tracker(), FakeTool()
    await read(tracker, tool, session="alice")
    bob = await read(tracker, tool, session="bob")
    assert not bob.cached
    assert tool.runs == 2


async def test_same_args_on_another_tab_are_another_call() -> None:
    """A read of tab 2 is not answered with tab 1's result."""
    tracker, tool = make_tracker(), FakeTool()
    await read(tracker, tool, "tab one", tab=TAB)
    other = await read(tracker, tool, "tab two", tab=OTHER_TAB)
    assert not other.cached
    assert other.result == "tab two"


async def test_same_args_with_other_options_are_another_call() -> None:
    """A read under another snapshot budget runs again; the same budget is answered
    from the cache."""
    tracker, tool = make_tracker(), FakeTool()
    first = await tracker.call(
        "s1", "read", {"id": "k1"}, tool.returning("small"), tab=TAB, options=1000
    )
    other = await tracker.call(
        "s1", "read", {"id": "k1"}, tool.returning("whole"), tab=TAB, options=None
    )
    again = await tracker.call(
        "s1", "read", {"id": "k1"}, tool.returning("x"), tab=TAB, options=1000
    )
    assert not other.cached
    assert other.result == "whole"
    assert again.cached
    assert again.cached_from == first.call_id
    assert tool.runs == 2


# ---- equivalence


async def test_width_and_id_are_not_equivalent() -> None:
    """Regression: the seed's substring match made {"width": 5} a repeat of {"id": 5}."""
    tracker, tool = make_tracker(), FakeTool()
    tracker.register("resize_panel", ToolPolicy())
    await tracker.call("s1", "resize_panel", {"width": 5}, tool.returning("a"))
    second = await tracker.call("s1", "resize_panel", {"id": 5}, tool.returning("b"))
    assert not second.cached
    assert second.result == "b"
    assert canonical_key({"width": 5}) != canonical_key({"id": 5})


def test_generic_key_ignores_key_order_and_number_spelling() -> None:
    """Canonical JSON sorts keys and writes 1.0 as 1, but keeps true apart from 1."""
    assert canonical_key({"a": 1, "b": [1.0, 2]}) == canonical_key({"b": [1, 2.0], "a": 1.0})
    assert canonical_key({"n": -0.0}) == canonical_key({"n": 0})
    assert canonical_key({"flag": True}) != canonical_key({"flag": 1})
    assert canonical_key({"a": "1"}) != canonical_key({"a": 1})
    assert canonical_json({"b": (1, 2), "a": {"y": 2.5, "x": None}}) == (
        '{"a":{"x":null,"y":2.5},"b":[1,2]}'
    )


def test_generic_key_rejects_values_without_json_form() -> None:
    """Arguments JSON cannot carry raise an error naming where they are."""
    with pytest.raises(TypeError, match=r"args\.tags"):
        canonical_key({"tags": {"a", "b"}})
    with pytest.raises(ValueError, match=r"args\.x = nan"):
        canonical_key({"x": float("nan")})


async def test_call_with_unkeyable_args_names_the_tool() -> None:
    """A call whose arguments have no key fails before running, naming the tool."""
    tracker, tool = make_tracker(), FakeTool()
    with pytest.raises(TypeError, match="get_doc"):
        await tracker.call("s1", "get_doc", {"when": object()}, tool.returning("x"))
    assert tool.runs == 0


async def test_folded_find_ignores_case_and_spacing() -> None:
    """find("Add  to Bag") repeats find("add to bag"); a different query does not."""
    tracker, tool = make_tracker(), FakeTool()
    await tracker.call("s1", "find", {"query": "add to bag"}, tool.returning("z1"), tab=TAB)
    same = await tracker.call(
        "s1", "find", {"query": "  Add\tto  BAG "}, tool.returning("x"), tab=TAB
    )
    other = await tracker.call("s1", "find", {"query": "add to cart"}, tool.returning("y"), tab=TAB)
    assert same.cached
    assert not other.cached
    assert tool.runs == 2


async def test_fields_key_ignores_other_arguments() -> None:
    """read(id) is keyed by id alone, as registered."""
    tracker, tool = make_tracker(), FakeTool()
    await tracker.call("s1", "read", {"id": "k1", "verbose": True}, tool.returning("a"), tab=TAB)
    again = await tracker.call("s1", "read", {"id": "k1"}, tool.returning("b"), tab=TAB)
    assert again.cached
    assert again.result == "a"


# ---- tools that are never cached


async def test_side_effecting_tool_always_runs() -> None:
    """Two identical clicks both run."""
    tracker, tool = make_tracker(), FakeTool()
    first = await tracker.call("s1", "click", {"id": "z1"}, tool.returning("ok"), tab=TAB)
    second = await tracker.call("s1", "click", {"id": "z1"}, tool.returning("ok"), tab=TAB)
    assert tool.runs == 2
    assert not first.cached
    assert not second.cached


async def test_unregistered_tool_is_treated_as_side_effecting() -> None:
    """An unknown tool always runs and invalidates the session's cached reads."""
    tracker, tool, reader = make_tracker(), FakeTool(), FakeTool()
    await read(tracker, reader)
    await tracker.call("s1", "mystery", {"x": 1}, tool.returning("a"))
    await tracker.call("s1", "mystery", {"x": 1}, tool.returning("a"))
    again = await read(tracker, reader)
    assert tool.runs == 2
    assert not again.cached
    assert tracker.policy("mystery").side_effects


async def test_volatile_tool_always_runs_and_invalidates_nothing() -> None:
    """A volatile read runs every time but leaves other cached reads valid."""
    tracker, tool, reader = make_tracker(), FakeTool(), FakeTool()
    await read(tracker, reader)
    await tracker.call("s1", "list_tabs", {}, tool.returning("[1, 2]"))
    await tracker.call("s1", "list_tabs", {}, tool.returning("[1, 2]"))
    again = await read(tracker, reader)
    assert tool.runs == 2
    assert again.cached


async def test_page_read_without_tab_is_refused() -> None:
    """A page-reading tool called without a tab raises, naming the tool, and does not run."""
    tracker, tool = make_tracker(), FakeTool()
    with pytest.raises(ValueError, match="'read'"):
        await tracker.call("s1", "read", {"id": "k1"}, tool.returning("x"))
    assert tool.runs == 0


def test_registering_a_tool_twice_is_refused() -> None:
    """A second registration of the same tool raises, naming it."""
    tracker = make_tracker()
    with pytest.raises(ValueError, match="'read'"):
        tracker.register("read", ToolPolicy())


# ---- invalidation


async def test_side_effecting_call_invalidates_session_reads() -> None:
    """After a click, the same read runs again."""
    tracker, tool = make_tracker(), FakeTool()
    await read(tracker, tool, "before")
    await click(tracker)
    after = await read(tracker, tool, "after")
    assert not after.cached
    assert after.result == "after"


async def test_side_effecting_call_invalidates_non_page_reads_of_its_session() -> None:
    """An action may change anything the session reads, so a cached get_doc goes too."""
    tracker, tool = make_tracker(), FakeTool()
    await tracker.call("s1", "get_doc", {"name": "a"}, tool.returning("v1"))
    await tracker.call("s1", "mystery_write", {"name": "a"}, FakeTool().returning("ok"))
    again = await tracker.call("s1", "get_doc", {"name": "a"}, tool.returning("v2"))
    assert not again.cached
    assert again.result == "v2"


async def test_reads_during_an_action_are_not_served_from_either_side_of_it() -> None:
    """A read during an action neither gets the pre-action result nor is served after it."""
    tracker, tool = make_tracker(), FakeTool()
    during: list[TrackedResult[object]] = []

    async def get_doc(value: str) -> TrackedResult[object]:
        # Not a page read, so only the session's own action epoch protects it.
        return await tracker.call("s1", "get_doc", {"name": "a"}, tool.returning(value))

    async def slow_click() -> object:
        during.append(await get_doc("half done"))
        return "clicked"

    await get_doc("before")
    await tracker.call("s1", "click", {"id": "z1"}, slow_click, tab=TAB)
    after = await get_doc("done")
    assert not during[0].cached
    assert during[0].result == "half done"
    assert not after.cached
    assert after.result == "done"


async def test_action_on_a_tab_invalidates_other_sessions_reads_of_that_tab() -> None:
    """A click in one session on tab 1 makes another session's read of tab 1 run again."""
    tracker, tool = make_tracker(), FakeTool()
    await read(tracker, tool, session="reader", tab=TAB)
    await read(tracker, tool, session="reader", tab=OTHER_TAB)
    await click(tracker, session="actor", tab=TAB)
    same_tab = await read(tracker, tool, session="reader", tab=TAB)
    other_tab = await read(tracker, tool, session="reader", tab=OTHER_TAB)
    assert not same_tab.cached
    assert other_tab.cached


@pytest.mark.parametrize("event", ["Page.frameNavigated", "DOM.childNodeInserted"])
async def test_page_change_invalidates_reads_of_that_tab_only(event: str) -> None:
    """A navigation or the page's own DOM mutation invalidates reads of that tab only."""
    tracker, tool = make_tracker(), FakeTool()
    # The other tab's read is older, so the stale one is not the first to be swept.
    await read(tracker, tool, "other", tab=OTHER_TAB)
    await read(tracker, tool, "old", tab=TAB)
    tracker.note_page_change(TAB, event)
    changed = await read(tracker, tool, "new", tab=TAB)
    untouched = await read(tracker, tool, "x", tab=OTHER_TAB)
    assert not changed.cached
    assert changed.result == "new"
    assert untouched.cached
    assert untouched.result == "other"
    revision = tracker.page_revision(TAB)
    assert revision is not None
    assert revision.reason == event
    assert revision.changes == 1


async def test_page_change_during_a_read_keeps_it_out_of_the_cache() -> None:
    """A read that saw the page change under it is returned but not cached."""
    tracker, tool = make_tracker(), FakeTool()

    async def racing_read() -> object:
        tool.runs += 1
        tracker.note_page_change(TAB, "DOM.attributeModified")
        return "half old"

    first = await tracker.call("s1", "read", {"id": "k1"}, racing_read, tab=TAB)
    second = await read(tracker, tool, "fresh")
    assert first.result == "half old"
    assert not second.cached
    assert second.result == "fresh"


async def test_stale_results_are_swept_from_memory() -> None:
    """A result made stale by a page change stops counting against memory on the next call."""
    tracker, tool = make_tracker(), FakeTool()
    await read(tracker, tool, "page text")
    tracker.note_page_change(TAB, "DOM.characterDataModified")
    await tracker.call("s1", "get_doc", {"name": "a"}, tool.returning("doc"))
    stats = tracker.statistics()
    assert stats.invalidations == 1
    assert stats.entries == 1
    assert stats.bytes == len("doc")


async def test_forgotten_tab_reads_are_invalid() -> None:
    """After forget_tab, a read of that tab runs again even without a reported change."""
    tracker, tool = make_tracker(), FakeTool()
    await read(tracker, tool)
    tracker.forget_tab(TAB)
    again = await read(tracker, tool, "fresh")
    assert not again.cached
    assert tracker.page_revision(OTHER_TAB) is None


# ---- errors


async def test_raised_error_propagates_and_is_not_cached() -> None:
    """A tool that raises is re-run on the next identical call."""
    tracker, tool = make_tracker(), FakeTool()
    with pytest.raises(ToolFailedError, match="stale id"):
        await tracker.call("s1", "read", {"id": "k1"}, tool.raising("stale id"), tab=TAB)
    again = await read(tracker, tool, "ok")
    assert not again.cached
    assert again.result == "ok"
    assert tool.runs == 2


async def test_flagged_error_result_is_returned_but_not_cached() -> None:
    """A result flagged is_error reaches the caller and the next call runs again."""
    tracker, tool = make_tracker(), FakeTool()
    failure = {"content": "element k1 is covered", "is_error": True}
    first = await read(tracker, tool, failure)
    second = await read(tracker, tool, failure)
    assert first.result is failure
    assert not second.cached
    assert tool.runs == 2


async def test_custom_error_predicate_is_used() -> None:
    """A configured predicate decides what counts as an error result."""
    tracker = CallTracker(
        policies={"get_doc": ToolPolicy()}, is_error=lambda r: str(r).startswith("ERR")
    )
    tool = FakeTool()
    await tracker.call("s1", "get_doc", {}, tool.returning("ERR: no such doc"))
    second = await tracker.call("s1", "get_doc", {}, tool.returning("ERR: no such doc"))
    assert not second.cached
    assert tool.runs == 2


# ---- concurrency


@attrs.define
class GatedTool:
    """A tool whose run blocks until released, to hold calls in flight."""

    outcome: object = "<page/>"
    runs: int = 0
    started: trio.Event = attrs.Factory(trio.Event)
    release: trio.Event = attrs.Factory(trio.Event)

    async def run(self) -> object:
        self.runs += 1
        self.started.set()
        await self.release.wait()
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


async def run_two_identical_reads(
    tracker: CallTracker, tool: GatedTool, *, cancel_first: bool = False
) -> dict[str, Any]:
    outcomes: dict[str, Any] = {}

    async def caller(name: str, scope_holder: list[trio.CancelScope]) -> None:
        with trio.CancelScope() as scope:
            scope_holder.append(scope)
            try:
                outcomes[name] = await tracker.call("s1", "read", {"id": "k1"}, tool.run, tab=TAB)
            except ToolFailedError as exc:
                outcomes[name] = exc
        if scope.cancelled_caught:
            outcomes[name] = "cancelled"

    first_scope: list[trio.CancelScope] = []
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(caller, "first", first_scope)
            await tool.started.wait()
            nursery.start_soon(caller, "second", [])
            await trio.testing.wait_all_tasks_blocked()
            if cancel_first:
                first_scope[0].cancel()
                await trio.testing.wait_all_tasks_blocked()
            tool.release.set()
    return outcomes


async def test_concurrent_identical_calls_run_once() -> None:
    """Two concurrent identical reads run the tool once; the second is marked cached."""
    tracker, tool = make_tracker(), GatedTool()
    outcomes = await run_two_identical_reads(tracker, tool)
    first, second = outcomes["first"], outcomes["second"]
    assert tool.runs == 1
    assert not first.cached
    assert second.cached
    assert second.cached_from == first.call_id
    assert second.result is first.result
    assert "already running" in second.note
    assert tracker.statistics().coalesced == 1


async def test_concurrent_identical_calls_share_a_failure() -> None:
    """When the shared run raises, both callers see that error and the tool ran once."""
    tracker, tool = make_tracker(), GatedTool(outcome=ToolFailedError("target closed"))
    outcomes = await run_two_identical_reads(tracker, tool)
    assert tool.runs == 1
    assert isinstance(outcomes["first"], ToolFailedError)
    assert outcomes["second"] is outcomes["first"]
    assert tracker.statistics().entries == 0


async def test_cancelled_leader_lets_the_waiter_run_itself() -> None:
    """If the first call is cancelled, the waiting call runs the tool rather than fail."""
    tracker, tool = make_tracker(), GatedTool()
    outcomes = await run_two_identical_reads(tracker, tool, cancel_first=True)
    assert outcomes["first"] == "cancelled"
    second = outcomes["second"]
    assert not second.cached
    assert second.result == "<page/>"
    assert tool.runs == 2


async def test_call_after_page_change_does_not_join_a_stale_run() -> None:
    """A read started after a page change does not share a run that began before it."""
    tracker, tool = make_tracker(), GatedTool(outcome="old page")
    fresh = FakeTool()
    results: list[TrackedResult[object]] = []

    async def first_read() -> None:
        results.append(await tracker.call("s1", "read", {"id": "k1"}, tool.run, tab=TAB))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(first_read)
        await tool.started.wait()
        tracker.note_page_change(TAB, "Page.frameNavigated")
        second = await read(tracker, fresh, "new page")
        tool.release.set()
    assert not second.cached
    assert second.result == "new page"
    assert results[0].result == "old page"
    assert fresh.runs == 1


# ---- limits


async def test_entries_expire_after_five_minutes(mock_clock: trio.testing.MockClock) -> None:
    """A read is cached at 299 s and runs again once 300 s have passed."""
    tracker, tool = make_tracker(), FakeTool()
    await read(tracker, tool)
    mock_clock.jump(299)
    assert (await read(tracker, tool)).cached
    mock_clock.jump(1)
    expired = await read(tracker, tool)
    assert not expired.cached
    assert tracker.statistics().expirations == 1


async def test_only_last_three_calls_of_a_tool_are_checked() -> None:
    """A read repeated after three other reads runs again; after two it is a hit."""
    tracker, tool = make_tracker(), FakeTool()
    await read(tracker, tool, element="a")
    await read(tracker, tool, element="b")
    await read(tracker, tool, element="c")
    within = await read(tracker, tool, element="a")
    await read(tracker, tool, element="d")
    await read(tracker, tool, element="e")
    await read(tracker, tool, element="f")
    beyond = await read(tracker, tool, element="a")
    assert within.cached
    assert not beyond.cached


async def test_calls_of_other_tools_do_not_use_up_the_window() -> None:
    """The window counts calls of the same tool; other tools in between do not push it."""
    tracker, tool = make_tracker(), FakeTool()
    await read(tracker, tool, element="a")
    for index in range(5):
        await tracker.call("s1", "get_doc", {"n": index}, tool.returning(index))
    again = await read(tracker, tool, element="a")
    assert again.cached


async def test_session_remembers_at_most_fifty_calls() -> None:
    """The 51st cached result evicts the oldest; the second oldest is still served."""
    tracker, tool = make_tracker(TrackerLimits(window=1000)), FakeTool()
    for index in range(51):
        await read(tracker, tool, f"r{index}", element=f"e{index}")
    stats = tracker.statistics()
    assert stats.entries == 50
    assert stats.evictions == 1
    assert (await read(tracker, tool, element="e1")).cached
    assert not (await read(tracker, tool, element="e0")).cached


async def test_byte_cap_evicts_oldest_results_first() -> None:
    """Past the byte cap the oldest result goes; one larger than the cap is not kept."""
    tracker, tool = make_tracker(TrackerLimits(max_bytes=10, window=100)), FakeTool()
    await read(tracker, tool, "aaaa", element="a")
    await read(tracker, tool, "bbbb", element="b")
    await read(tracker, tool, "cccc", element="c")
    stats = tracker.statistics()
    assert stats.bytes == 8
    assert stats.evictions == 1
    assert (await read(tracker, tool, element="b")).cached
    assert not (await read(tracker, tool, "aaaa", element="a")).cached
    await read(tracker, tool, "x" * 11, element="huge")
    assert not (await read(tracker, tool, "x" * 11, element="huge")).cached
    assert tracker.statistics().bytes <= 10


def test_limits_reject_non_positive_values() -> None:
    """TrackerLimits refuses a zero window, naming the field and the value."""
    with pytest.raises(ValueError, match=r"'window' must be > 0: 0"):
        TrackerLimits(window=0)


# ---- cleanup


async def test_session_with_nothing_cached_is_dropped() -> None:
    """A session that only made side-effecting calls holds no state afterwards."""
    tracker = make_tracker()
    await click(tracker, session="actor")
    assert tracker.statistics().sessions == 0


async def test_idle_sessions_are_swept(mock_clock: trio.testing.MockClock) -> None:
    """A session idle past the age limit is dropped when another session calls."""
    tracker, tool = make_tracker(), FakeTool()
    await read(tracker, tool, session="old", element="a")
    await read(tracker, tool, session="old", element="b")
    assert tracker.statistics().sessions == 1
    mock_clock.jump(300)
    await read(tracker, tool, session="new")
    stats = tracker.statistics()
    assert stats.sessions == 1
    assert stats.entries == 1
    assert stats.expirations == 2


async def test_clear_session_forgets_its_results() -> None:
    """After clear_session the same read runs again, and other sessions keep theirs."""
    tracker, tool = make_tracker(), FakeTool()
    await read(tracker, tool, session="a")
    await read(tracker, tool, session="b")
    tracker.clear_session("a")
    assert not (await read(tracker, tool, session="a")).cached
    assert (await read(tracker, tool, session="b")).cached


async def test_clear_session_during_a_run_keeps_its_result_out() -> None:
    """A result that finishes after its session was cleared is not cached."""
    tracker, tool = make_tracker(), FakeTool()

    async def read_then_clear() -> object:
        tracker.clear_session("s1")
        return "from before the clear"

    await tracker.call("s1", "read", {"id": "k1"}, read_then_clear, tab=TAB)
    assert not (await read(tracker, tool, "fresh")).cached


# ---- statistics


async def test_statistics_count_what_happened() -> None:
    """statistics() reports calls, hits, misses, invalidations and sizes of this sequence."""
    tracker, tool = make_tracker(), FakeTool()
    await read(tracker, tool, "abc", element="a")  # miss
    await read(tracker, tool, "abc", element="a")  # hit
    await read(tracker, tool, "de", element="b")  # miss
    tracker.note_page_change(TAB, "DOM.documentUpdated")
    await read(tracker, tool, "fgh", element="a")  # miss: a's entry was invalidated
    await click(tracker)  # miss; drops the two entries left
    stats = tracker.statistics()
    assert stats.calls == 5
    assert stats.hits == 1
    assert stats.misses == 4
    assert stats.calls == stats.hits + stats.misses
    assert stats.invalidations == 3
    assert stats.page_changes == 3  # the reported one, and the click before and after
    assert stats.entries == 0
    assert stats.bytes == 0
    assert stats.sessions == 0
    assert tool.runs == 3


async def test_statistics_bytes_track_held_results() -> None:
    """bytes is the UTF-8 size of the results held."""
    tracker, tool = make_tracker(), FakeTool()
    await read(tracker, tool, "é" * 3, element="a")
    await read(tracker, tool, "xyz", element="b")
    stats = tracker.statistics()
    assert stats.bytes == len(("é" * 3).encode()) + len("xyz")
    assert stats.entries == 2
    assert stats.sessions == 1


# ---- the property: a cached answer is always what running the tool would return


@attrs.define
class FakeWorld:
    """Pages whose reads are a pure function of their revision, and per-session stores."""

    pages: dict[int, int] = attrs.Factory(dict)
    stores: dict[str, int] = attrs.Factory(dict)

    def read(self, tab: int, element: str) -> object:
        if element == "missing":
            return {"content": f"no element {element}", "is_error": True}
        return f"tab{tab}@{self.pages.get(tab, 0)}:{element}"

    def find(self, tab: int, query: str) -> str:
        folded = " ".join(query.split()).casefold()
        return f"tab{tab}@{self.pages.get(tab, 0)}:find:{folded}"

    def doc(self, session: str, name: str) -> str:
        return f"{session}@{self.stores.get(session, 0)}:{name}"

    def act(self, session: str, tab: int) -> None:
        self.pages[tab] = self.pages.get(tab, 0) + 1
        self.stores[session] = self.stores.get(session, 0) + 1


SESSIONS = st.sampled_from(["s1", "s2"])
TABS = st.sampled_from([1, 2])
READ = st.tuples(st.just("read"), SESSIONS, TABS, st.sampled_from(["a", "b", "missing"]))
FIND = st.tuples(st.just("find"), SESSIONS, TABS, st.sampled_from(["Buy", " buy ", "cart"]))
DOC = st.tuples(st.just("doc"), SESSIONS, st.sampled_from(["x", "y"]))
# Reads are listed more than once so that sequences repeat them often enough to hit.
OPERATIONS = st.one_of(
    READ,
    READ,
    FIND,
    DOC,
    st.tuples(st.just("act"), SESSIONS, TABS),
    st.tuples(
        st.just("mutate"),
        TABS,
        st.sampled_from(["the page changed its DOM or state", "Page.frameNavigated"]),
    ),
    st.tuples(st.just("wait"), st.sampled_from([1.0, 60.0, 299.0, 301.0])),
)
LIMITS = st.builds(
    TrackerLimits,
    max_calls=st.integers(1, 8),
    max_age=st.just(300.0),
    window=st.integers(1, 4),
    max_bytes=st.sampled_from([24, 64, 10_000]),
)


@settings(max_examples=200)
@given(limits=LIMITS, operations=st.lists(OPERATIONS, min_size=10, max_size=80))
def test_cached_answer_always_equals_a_fresh_run(
    limits: TrackerLimits, operations: list[tuple[Any, ...]]
) -> None:
    """Over random reads, actions, page changes and waits, every answer equals a fresh run."""
    clock = trio.testing.MockClock()
    trio.run(play, limits, operations, clock, clock=clock)


def acting(
    world: FakeWorld, tool: FakeTool, session: str, tab: int
) -> Callable[[], Awaitable[object]]:
    async def act() -> object:
        tool.runs += 1
        world.act(session, tab)
        return "ok"

    return act


async def play(
    limits: TrackerLimits, operations: list[tuple[Any, ...]], clock: trio.testing.MockClock
) -> None:
    tracker, world = make_tracker(limits), FakeWorld()
    hits = 0
    for operation in operations:
        kind = operation[0]
        if kind == "wait":
            clock.jump(operation[1])
            continue
        if kind == "mutate":
            _, tab, event = operation
            world.pages[tab] = world.pages.get(tab, 0) + 1
            tracker.note_page_change(tab, event)
            continue
        tool = FakeTool()
        if kind == "act":
            _, session, tab = operation
            act = acting(world, tool, session, tab)
            await tracker.call(session, "click", {"id": "z1"}, act, tab=tab)
            assert tool.runs == 1
            continue
        if kind == "read":
            _, session, tab, element = operation
            expected = world.read(tab, element)
            tool_name, args, call_tab = "read", {"id": element}, tab
        elif kind == "find":
            _, session, tab, query = operation
            expected = world.find(tab, query)
            tool_name, args, call_tab = "find", {"query": query}, tab
        else:
            _, session, name = operation
            expected = world.doc(session, name)
            tool_name, args, call_tab = "get_doc", {"name": name}, None
        answer = await tracker.call(
            session, tool_name, args, tool.returning(expected), tab=call_tab
        )
        assert answer.result == expected
        assert answer.cached == (tool.runs == 0)
        hits += answer.cached
    stats = tracker.statistics()
    assert stats.hits == hits
    assert stats.calls == stats.hits + stats.misses
    assert stats.entries <= limits.max_calls * 2
    assert stats.bytes <= limits.max_bytes * 2
