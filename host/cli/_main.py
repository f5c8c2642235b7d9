"""The ``trimtab`` command line: its parser, ``install`` / ``uninstall``, and `main`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import trio

from pycdp_bridge import (
    BrowserNotFoundError,
    CDPError,
    DialogOpenError,
    NavigationError,
    TargetClosedError,
)

from .. import install as installer
from ..tab import DEFAULT_BUDGET, MIN_BUDGET, PageChangedError
from ..wire import collect_less_often, unwrap_group
from ._agents import add_commands, run_command
from ._inspect import PageUnresponsiveError, budget_arg, run_inspect
from ._installs import forget_profile, remember_profile

__all__ = ["main"]


def _install(args: argparse.Namespace) -> int:
    user_data_dir = Path(args.user_data_dir) if args.user_data_dir else None
    if args.command == "install":
        written = installer.install(args.browser, user_data_dir)
        for path in written:
            print(f"registered {installer.HOST_NAME} in {path}", file=sys.stderr)
        if user_data_dir is not None:
            # `trimtab doctor` checks this profile's manifest even with no browser running.
            remember_profile(user_data_dir)
        print(installer.next_steps(args.browser))
    else:
        removed = installer.uninstall(args.browser, user_data_dir)
        for path in removed:
            print(f"removed {path}", file=sys.stderr)
        if user_data_dir is not None:
            forget_profile(user_data_dir)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trimtab", description="Compact web pages for LLM agents; manage the host."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    inspect = commands.add_parser(
        "inspect",
        help="load pages in a headless Chromium and print their compact XML",
        description="Visit the pages in order in one tab and print each snapshot "
        "(one XML document holding every step when there are several). "
        "Figures go to stderr.",
    )
    inspect.add_argument("targets", nargs="+", metavar="URL-or-file")
    inspect.add_argument("--format", choices=("xml", "json"), default="xml")
    inspect.add_argument(
        "--stats",
        action="store_true",
        help="also count the raw HTML and visible-text tokens, and say where ours go",
    )
    inspect.add_argument("--no-dedup", action="store_true", help="render unchanged regions too")
    inspect.add_argument("--no-trim", action="store_true", help="never trim long regions")
    inspect.add_argument("--timeout", type=float, default=30.0, help="page load timeout (s)")
    inspect.add_argument(
        "--budget",
        type=budget_arg,
        default=DEFAULT_BUDGET,
        help=f"tokens a snapshot may take, at least {MIN_BUDGET} (0: no budget; "
        f"default {DEFAULT_BUDGET})",
    )
    for name, text in (
        ("install", "register the native-messaging host with your browsers"),
        ("uninstall", "remove the native-messaging host registration"),
    ):
        sub = commands.add_parser(name, help=text, description=text)
        sub.add_argument(
            "--browser",
            choices=installer.BROWSERS,
            help="only this browser (default: every supported browser)",
        )
        sub.add_argument(
            "--user-data-dir", help="a specific profile folder (its NativeMessagingHosts/)"
        )
    add_commands(commands)
    return parser


# Failures a user can act on: one line on stderr and exit code 2, not a traceback.
_USER_ERRORS = (
    PageUnresponsiveError,
    BrowserNotFoundError,
    NavigationError,
    TargetClosedError,
    CDPError,
    DialogOpenError,
    PageChangedError,
)


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line read; ``key=value`` pairs (``call``'s, ``run``'s) may also come
    after the command's options (``call click --tab 5 id=x``), which argparse alone
    leaves over once it has read the options."""
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    pairs = getattr(args, "arguments", None)
    if extra and isinstance(pairs, list) and not any(e.startswith("-") for e in extra):
        pairs.extend(extra)
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``trimtab ARGV`` (the process's arguments when None); return the exit code."""
    args = _parse(argv)
    collect_less_often()
    if args.command in ("install", "uninstall"):
        return _install(args)
    if args.command != "inspect":
        return run_command(args)
    try:
        return trio.run(run_inspect, args)
    except (*_USER_ERRORS, BaseExceptionGroup) as raised:
        # Errors inside the nursery that answers dialogs come wrapped in a group.
        error = unwrap_group(raised, _USER_ERRORS)
        if error is None:
            raise
        print(f"trimtab: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
