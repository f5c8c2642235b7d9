"""The `trimtab` command line: inspect pages, install the native-messaging host."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import trio

from pycdp_bridge import (
    BrowserNotFoundError,
    CDPError,
    DialogOpenError,
    NavigationError,
    PageTarget,
    TargetClosedError,
    collect_less_often,
    launch_browser,
    sole_kind,
)
from pycdp_bridge import protocol as cdp

from .pipeline import count_tokens
from .tab import (
    DEFAULT_BUDGET,
    MIN_BUDGET,
    PageChangedError,
    Snapshot,
    SnapshotMemory,
    SnapshotOptions,
    check_budget,
    page_token_counts,
)

__all__ = ["main"]


def _page_url(target: str) -> str:
    """A URL for a URL or a local file path."""
    if "://" in target or target.startswith(("about:", "data:")):
        return target
    path = Path(target).expanduser()
    if not path.exists():
        raise SystemExit(f"trimtab: no such file or URL: {target!r}")
    return path.resolve().as_uri()


async def _inspect(args: argparse.Namespace) -> int:
    urls = [_page_url(t) for t in args.targets]
    options = SnapshotOptions(
        dedup=not args.no_dedup, trim=not args.no_trim, budget=args.budget or None
    )
    outputs: list[str] = []
    records: list[dict[str, object]] = []
    count_tokens("")  # load the tokenizer's tables now, not inside the first timing
    async with launch_browser() as browser, trio.open_nursery() as nursery:
        page = await browser.new_page()
        await nursery.start(_answer_dialogs, page)
        memory = SnapshotMemory(page, options)
        for url in urls:
            started = time.perf_counter()
            try:
                await page.navigate(url, timeout=args.timeout)
            except trio.TooSlowError:
                # Many real pages never finish loading (a stalled request); a person
                # would still read what is there, so the snapshot shows it.
                print(
                    f"trimtab: {url} was still loading after {args.timeout:g} s"
                    " (--timeout); showing it as it is",
                    file=sys.stderr,
                )
            loaded = time.perf_counter()
            try:
                with trio.fail_after(args.timeout):
                    snapshot = await _snapshot(memory)
                    done = time.perf_counter()
                    record: dict[str, object] = {
                        "url": url,
                        "kind": snapshot.kind,
                        "load_ms": round((loaded - started) * 1000, 1),
                        "snapshot_ms": round((done - loaded) * 1000, 1),
                        **snapshot.stats_dict(),
                    }
                    if args.stats:
                        record.update(await page_token_counts(page))
            except trio.TooSlowError:
                raise PageUnresponsiveError(url, args.timeout) from None
            outputs.append(snapshot.xml)
            records.append(record)
        nursery.cancel_scope.cancel()
    if args.format == "json":
        json.dump(
            [{"xml": xml, "stats": rec} for xml, rec in zip(outputs, records, strict=True)],
            sys.stdout,
            indent=1,
        )
        sys.stdout.write("\n")
    elif len(outputs) == 1:
        sys.stdout.write(outputs[0])
    else:
        sys.stdout.write(f'<trimtab steps="{len(outputs)}">\n')
        sys.stdout.write("".join(outputs))
        sys.stdout.write("</trimtab>\n")
    sys.stdout.flush()
    for record in records:
        print(_figures(record), file=sys.stderr)
    return 0


class PageUnresponsiveError(Exception):
    """The page did not answer a capture in time: a script on it is stuck."""

    def __init__(self, url: str, seconds: float) -> None:
        super().__init__(f"{url} did not answer within {seconds:g} s (a script on it may be stuck)")


async def _answer_dialogs(
    page: PageTarget, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
) -> None:
    """Click OK on every JavaScript dialog the page opens, as a person reading it would
    (a page that alerts while it loads would otherwise never finish), and say so."""
    async with page.listen("Page.javascriptDialogOpening") as dialogs:
        task_status.started()
        async for dialog in dialogs:
            kind, message = dialog.params.get("type"), str(dialog.params.get("message", ""))
            print(
                f"trimtab: the page opened a dialog ({kind}: {message[:200]!r}); answered OK",
                file=sys.stderr,
            )
            with contextlib.suppress(CDPError, TargetClosedError):
                await page.execute(cdp.page_handle_javascript_dialog(accept=True))


# A page that opens dialog after dialog is snapshot between them, this many times at most.
_DIALOG_RETRIES = 5


async def _snapshot(memory: SnapshotMemory) -> Snapshot:
    """A snapshot, taken again when a dialog interrupted it (`_answer_dialogs` answers it)."""
    for _ in range(_DIALOG_RETRIES):
        try:
            return await memory.snapshot()
        except DialogOpenError:
            with trio.fail_after(5):
                while memory.target.open_dialog is not None:
                    await trio.sleep(0.01)
    return await memory.snapshot()


def _figures(record: dict[str, object]) -> str:
    parts = [f"{record['url']}", f"  kind={record['kind']} tokens={record['tokens']}"]
    if "raw_tokens" in record:
        tokens = record["tokens"]
        raw = record["raw_tokens"]
        text = record["text_tokens"]
        assert isinstance(tokens, int)
        assert isinstance(raw, int)
        assert isinstance(text, int)
        parts.append(
            f"  raw HTML={raw} tokens ({raw / max(tokens, 1):.1f}x ours), "
            f"visible text={text} tokens (ours is {tokens / max(text, 1):.2f}x)"
        )
    parts.append(
        f"  elements in={record['elements_in']} out={record['elements_out']}"
        f" controls={record['controls']} dropped={record['dropped']}"
    )
    saved = f"dedup saved={record.get('dedup_saved', 0)} trim saved={record.get('trim_saved', 0)}"
    if record.get("budget_hidden"):
        saved += f"; behind budget markers={record['budget_hidden']} tokens"
    parts.append(
        f"  load {record['load_ms']} ms, snapshot {record['snapshot_ms']} ms "
        f"(capture {record['capture_ms']} ms, pipeline {record['pipeline_ms']} ms); {saved}"
    )
    if record.get("missing"):
        parts.append(f"  degraded: missing {record['missing']}")
    return "\n".join(parts)


def budget_arg(value: str) -> int:
    """A ``--budget`` value: tokens, or 0 for no budget."""
    try:
        budget = int(value)
        if budget:
            check_budget(budget)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be 0 (no budget) or at least {MIN_BUDGET} tokens, not {value!r}"
        ) from None
    return budget


def _install(args: argparse.Namespace) -> int:
    from . import _install as installer

    user_data_dir = Path(args.user_data_dir) if args.user_data_dir else None
    if args.command == "install":
        written = installer.install(args.browser, user_data_dir)
        for path in written:
            print(f"registered {installer.HOST_NAME} in {path}", file=sys.stderr)
    else:
        removed = installer.uninstall(args.browser, user_data_dir)
        for path in removed:
            print(f"removed {path}", file=sys.stderr)
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
        "--stats", action="store_true", help="also count the raw HTML and visible-text tokens"
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
            choices=("chrome", "chromium", "edge", "brave", "vivaldi"),
            help="only this browser (default: every supported browser)",
        )
        sub.add_argument(
            "--user-data-dir", help="a specific profile folder (its NativeMessagingHosts/)"
        )
    from .cli import add_commands

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


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    collect_less_often()
    if args.command in ("install", "uninstall"):
        return _install(args)
    if args.command != "inspect":
        from .cli import run_command

        return run_command(args)
    try:
        return trio.run(_inspect, args)
    except (*_USER_ERRORS, BaseExceptionGroup) as raised:
        # Errors inside the nursery that answers dialogs come wrapped in a group.
        error = sole_kind(raised, _USER_ERRORS)
        if error is None:
            raise
        print(f"trimtab: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
