"""The conftest's deadline: every async test runs under a time limit."""

from __future__ import annotations

import math

import pytest
import trio

from tests.conftest import DEADLINE


async def test_an_async_test_runs_under_the_default_deadline() -> None:
    """Inside an async test the effective deadline is at most DEADLINE seconds away."""
    remaining = trio.current_effective_deadline() - trio.current_time()
    assert remaining != math.inf
    assert 0 < remaining <= DEADLINE


@pytest.mark.deadline(5)
async def test_the_deadline_marker_sets_another_limit() -> None:
    """`@pytest.mark.deadline(seconds)` replaces the default limit for that test."""
    remaining = trio.current_effective_deadline() - trio.current_time()
    assert 0 < remaining <= 5
