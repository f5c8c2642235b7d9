"""Heals waiting for the person's yes (`WaitingHeals`), without a browser: kept in a file
that outlives the host, read back as they were written, following the person's edit of
their routine."""

from __future__ import annotations

import json
import logging
import stat
from pathlib import Path

import pytest

from tests.routines.test_amend import DONE, SHOP, VALUES, healed, shop_routine
from trimtab.routines import (
    HEALS_FILE,
    KEPT_HEALS,
    Amendment,
    Routine,
    WaitingHeals,
    amend,
    edit_routine,
    heal_of,
)

# The calls a healer made, each a heal of another shape (see tests.routines.test_amend).
PRESSED = [("find", {"text": "Buy"}, True, SHOP), ("click", {"id": "buy"}, True, DONE)]
TYPED = [
    ("type", {"id": "q", "text": "3"}, True, SHOP),
    ("type", {"id": "pin", "text": "424242"}, True, SHOP),
    ("click", {"id": "buy"}, True, DONE),
]
LOOKED = [("capture_snapshot", {}, True, SHOP)]


def heal(calls: list[tuple[str, dict[str, str], bool, str]], at: int = 2) -> Amendment:
    """The amendment ``calls`` make of the shop routine's step ``at`` (0-based)."""
    return heal_of(shop_routine(), at, at + 1, healed(calls).of("s"), VALUES)


@pytest.mark.parametrize(
    ("calls", "at"), [(PRESSED, 2), (TYPED, 0), (LOOKED, 1)], ids=["press", "typed", "none"]
)
def test_a_heal_reads_back_as_it_was_made(
    calls: list[tuple[str, dict[str, str], bool, str]], at: int, tmp_path: Path
) -> None:
    """A heal of a press, one that types values the run was given and a new secret, and
    one of no step at all: a host started on the file finds each as it was made, for
    the session that made it only, and keeping it mends the routine alike."""
    made = heal(calls, at)
    file = tmp_path / HEALS_FILE
    number = WaitingHeals.load(file).add("agent-1", made).number
    again = WaitingHeals.load(file)
    found = again.get(number, "agent-1")
    assert found is not None
    assert found.amendment == made
    assert again.get(number, "agent-2") is None
    assert amend(shop_routine(), found.amendment) == amend(shop_routine(), made)
    assert "424242" not in file.read_text()
    assert stat.S_IMODE(file.stat().st_mode) == 0o600


def test_numbers_never_repeat_and_a_kept_heal_waits_no_more(tmp_path: Path) -> None:
    """After a restart the next heal gets a new number, so a person's yes to an old
    heal's number never keeps another; a heal removed (kept) is gone from the file."""
    file = tmp_path / HEALS_FILE
    first = WaitingHeals.load(file).add("s", heal(PRESSED))
    heals = WaitingHeals.load(file)
    second = heals.add("s", heal(LOOKED, 1))
    assert second.number > first.number
    heals.remove(first.number)
    again = WaitingHeals.load(file)
    assert again.get(first.number, "s") is None
    assert again.get(second.number, "s") == second
    assert len(again) == 1


def test_only_the_newest_heals_wait(tmp_path: Path) -> None:
    """Past `KEPT_HEALS`, the oldest heal goes, in the file as in memory."""
    file = tmp_path / HEALS_FILE
    heals = WaitingHeals.load(file)
    made = [heals.add("s", heal(PRESSED)).number for _ in range(KEPT_HEALS + 2)]
    again = WaitingHeals.load(file)
    assert len(again) == KEPT_HEALS
    assert again.get(made[0], "s") is None
    assert again.get(made[1], "s") is None
    assert again.get(made[-1], "s") is not None


@pytest.mark.parametrize(
    "text",
    [
        "{not json",
        json.dumps({"version": 99, "made": 1, "heals": []}),
        json.dumps({"version": 1, "made": 1, "heals": [{"id": 1, "session": "s"}]}),
        json.dumps({"version": 1, "made": 0, "heals": [{"id": 1, "session": "s"}]}),
    ],
    ids=["not-json", "newer", "no-steps", "number-never-made"],
)
def test_a_file_that_does_not_read_waits_with_no_heal(
    text: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A heals file gone wrong offers nothing to keep (the person is never asked to keep
    what a broken file says), is logged, and the next heal writes a good one."""
    file = tmp_path / HEALS_FILE
    file.write_text(text)
    with caplog.at_level(logging.WARNING, logger="trimtab.routines"):
        heals = WaitingHeals.load(file)
    assert len(heals) == 0
    assert f"the heals waiting in {file} were not read" in caplog.text
    number = heals.add("s", heal(PRESSED)).number
    assert WaitingHeals.load(file).get(number, "s") is not None


def test_a_heal_follows_the_persons_edit_of_its_routine(tmp_path: Path) -> None:
    """The person renames the routine and the parameter a heal's steps use: the heal
    waits under the new name, uses the parameter's new name, and still mends the
    edited routine (its replaced step found there)."""
    file = tmp_path / HEALS_FILE
    before = shop_routine()
    made = heal_of(before, 0, 1, healed(TYPED).of("s"), VALUES)
    assert made.old[0].args == {"text": {"param": "quantity"}}
    heals = WaitingHeals.load(file)
    number = heals.add("s", made).number
    other: Routine = edit_routine(before, name="Other")
    heals.follow(other, edit_routine(other, name="Still other"))  # another routine's edit
    after = edit_routine(before, name="Order lamps", parameters={"quantity": {"name": "count"}})
    heals.follow(before, after)
    found = WaitingHeals.load(file).get(number, "s")
    assert found is not None
    assert found.amendment.routine == "Order lamps"
    assert found.amendment.old[0].args == {"text": {"param": "count"}}
    assert found.amendment.new[0].args == {"text": {"param": "count"}}
    mended = amend(after, found.amendment)
    assert mended.steps[0].args == {"text": {"param": "count"}}
    assert [p.name for p in mended.parameters] == ["count", "account_password", "pin"]
