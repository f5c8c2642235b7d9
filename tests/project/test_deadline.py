"""The conftest's deadline: every async test runs under a time limit."""

from __future__ import annotations

import ast
import math
from collections.abc import Iterator
from pathlib import Path

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


TESTS = Path(__file__).resolve().parents[1]


def _marked_deadline(test: ast.AsyncFunctionDef) -> float | None:
    """The seconds of the test's ``@pytest.mark.deadline(N)``, if it has one."""
    for decorator in test.decorator_list:
        if (
            isinstance(decorator, ast.Call)
            and ast.unparse(decorator.func) == "pytest.mark.deadline"
            and isinstance(decorator.args[0], ast.Constant)
        ):
            return float(decorator.args[0].value)
    return None


def _own_bounds(test: ast.AsyncFunctionDef) -> Iterator[tuple[int, float]]:
    """(line, seconds) of each ``trio.fail_after(N)`` with a literal N in the test's own
    body: not in the functions it defines, which may run outside the test's deadline."""
    nodes: list[ast.AST] = list(test.body)
    while nodes:
        node = nodes.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        if (
            isinstance(node, ast.Call)
            and ast.unparse(node.func) == "trio.fail_after"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, int | float)
        ):
            yield node.lineno, float(node.args[0].value)
        nodes.extend(ast.iter_child_nodes(node))


def test_no_test_holds_a_bound_its_deadline_cuts_first() -> None:
    """A `fail_after` in a test's own body is shorter than the test's deadline: a longer
    one can never fire (the deadline cuts the test first), and says a time the test does
    not have; a test that needs longer says so with `@pytest.mark.deadline`."""
    dead = []
    for path in sorted(TESTS.rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.AsyncFunctionDef) and node.name.startswith("test_"):
                deadline = _marked_deadline(node) or DEADLINE
                dead += [
                    f"{path.relative_to(TESTS)}:{line} {node.name}: fail_after({seconds:g})"
                    f" under a {deadline:g} s deadline"
                    for line, seconds in _own_bounds(node)
                    if seconds >= deadline
                ]
    assert not dead, "\n".join(dead)
