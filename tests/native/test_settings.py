"""The host's settings from its environment (``trimtab.wire.seconds_setting`` and
``count_setting``): every variable read one way, a bad value logged and never fatal."""

from __future__ import annotations

import logging

import pytest

from trimtab.wire import count_setting, seconds_setting


def test_seconds_are_read_as_given() -> None:
    """A positive number of seconds, whole or not and with spaces around it, is used."""
    assert seconds_setting("T", 30.0, environ={"T": " 2.5 "}) == 2.5
    assert seconds_setting("T", 30.0, environ={"T": "7"}) == 7.0


def test_unset_or_blank_seconds_keep_the_default_unlogged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An unset or blank variable is the default, and nothing is logged."""
    with caplog.at_level(logging.WARNING):
        assert seconds_setting("T", 30.0, environ={}) == 30.0
        assert seconds_setting("T", 30.0, environ={"T": "  "}) == 30.0
    assert caplog.records == []


@pytest.mark.parametrize("raw", ["ten", "-1", "0", "nan", "inf", "1e999"])
def test_a_bad_number_of_seconds_is_logged_by_name_and_value(
    raw: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A value that is no positive finite number keeps the default, and the log names
    the variable and the value."""
    with caplog.at_level(logging.WARNING, logger="trimtab.host"):
        read = seconds_setting("TRIMTAB_PAGE_TIMEOUT", 30.0, environ={"TRIMTAB_PAGE_TIMEOUT": raw})
    assert read == 30.0
    [record] = caplog.records
    assert f"TRIMTAB_PAGE_TIMEOUT={raw!r}" in record.getMessage()


def test_zero_seconds_may_be_allowed() -> None:
    """Where no wait at all makes sense (``positive=False``), 0 is a value; below it is not."""
    assert seconds_setting("T", 5.0, positive=False, environ={"T": "0"}) == 0.0
    assert seconds_setting("T", 5.0, positive=False, environ={"T": "-0.5"}) == 5.0


def test_seconds_come_from_the_process_environment_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without ``environ``, the variable is read from the host's environment when asked,
    so a setting reaches the host Chrome starts."""
    monkeypatch.setenv("TRIMTAB_TAB_WAIT", "3")
    assert seconds_setting("TRIMTAB_TAB_WAIT", 10.0) == 3.0
    monkeypatch.delenv("TRIMTAB_TAB_WAIT")
    assert seconds_setting("TRIMTAB_TAB_WAIT", 10.0) == 10.0


@pytest.mark.parametrize(("raw", "read"), [("4", 4), (" 12 ", 12), ("1", 1)])
def test_a_count_is_read_as_given(raw: str, read: int) -> None:
    """A whole number of at least 1 is used."""
    assert count_setting("TRIMTAB_MAX_TABS", 10, environ={"TRIMTAB_MAX_TABS": raw}) == read


@pytest.mark.parametrize("raw", ["0", "-3", "2.5", "many"])
def test_a_bad_count_is_logged_by_name_and_value(
    raw: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A count that is not a whole number of at least 1 keeps the default, and the log
    names the variable and the value."""
    with caplog.at_level(logging.WARNING, logger="trimtab.host"):
        assert count_setting("TRIMTAB_MAX_TABS", 10, environ={"TRIMTAB_MAX_TABS": raw}) == 10
    [record] = caplog.records
    assert f"TRIMTAB_MAX_TABS={raw!r}" in record.getMessage()
