"""``trimtab run``'s secrets, never on its command line (``ps`` shows a command line).

A parameter given as ``key=-`` is read from standard input, one line each, in the
order given (from a terminal without echo). A secret parameter the run was not given
is asked for when standard input is a terminal; otherwise the command stops, saying
how to give it.
"""

from __future__ import annotations

import getpass
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from ..link import LinkError

__all__ = ["FROM_STDIN", "ask_secrets", "missing_secrets", "read_values"]

# A parameter's value that says: read it from standard input.
FROM_STDIN: Final = "-"


def read_values(
    params: Mapping[str, str],
    *,
    terminal: bool | None = None,
    ask: Callable[[str], str] = getpass.getpass,
) -> dict[str, str]:
    """``params`` with each ``-`` value read from standard input (one line; from a
    terminal, ``ask`` without echo); `LinkError` ``usage`` when input ends first."""
    terminal = sys.stdin.isatty() if terminal is None else terminal
    values = dict(params)
    for key, value in params.items():
        if value != FROM_STDIN:
            continue
        if terminal:
            values[key] = ask(f"{key}: ")
            continue
        line = sys.stdin.readline()
        if not line:
            raise LinkError(
                "usage", f"parameter {key!r} is to be read from stdin (-), but stdin ended"
            )
        values[key] = line.removesuffix("\n").removesuffix("\r")
    return values


def missing_secrets(
    listed: Sequence[Mapping[str, Any]], name: str, params: Mapping[str, str]
) -> list[str]:
    """The secret parameters of routine ``name`` (as ``routines`` lists it) that
    ``params`` does not give; none when the routine is not listed (the run says so)."""
    routine = next((r for r in listed if r.get("name") == name), None)
    parameters = routine.get("parameters", []) if routine is not None else []
    return [
        str(p["name"])
        for p in parameters
        if p.get("kind") == "secret" and str(p.get("name")) not in params
    ]


def ask_secrets(
    name: str,
    missing: Sequence[str],
    *,
    terminal: bool | None = None,
    ask: Callable[[str], str] = getpass.getpass,
) -> dict[str, str]:
    """Each of routine ``name``'s ``missing`` secrets, asked without echo from a
    terminal; `LinkError` ``usage`` saying how to give one when there is none."""
    terminal = sys.stdin.isatty() if terminal is None else terminal
    if missing and not terminal:
        key = missing[0]
        raise LinkError(
            "usage",
            f"routine {name!r} needs its secret parameter {key!r} (never kept): give "
            f"{key}=- and its value on stdin, or run it from a terminal to be asked "
            "(a value on the command line shows in ps)",
        )
    return {key: ask(f"{key} (secret, for routine {name!r}; not shown): ") for key in missing}
