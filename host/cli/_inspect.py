"""``trimtab inspect``: pages in a headless Chromium the command starts, as compact XML."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from pathlib import Path

import trio

from pycdp_bridge import (
    CDPError,
    DialogOpenError,
    PageTarget,
    TargetClosedError,
    launch_browser,
)
from pycdp_bridge import protocol as cdp

from ..pipeline import TokenBreakdown, count_tokens, load_in_background, token_breakdown
from ..tab import (
    MIN_BUDGET,
    Snapshot,
    SnapshotMemory,
    SnapshotOptions,
    check_budget,
    page_token_counts,
)

__all__ = ["PageUnresponsiveError", "budget_arg", "run_inspect"]


def _page_url(target: str) -> str:
    """A URL for a URL or a local file path."""
    if "://" in target or target.startswith(("about:", "data:")):
        return target
    path = Path(target).expanduser()
    if not path.exists():
        raise SystemExit(f"trimtab: no such file or URL: {target!r}")
    return path.resolve().as_uri()


async def run_inspect(args: argparse.Namespace) -> int:
    """Print the snapshots of ``args.targets`` (XML or JSON); figures go to stderr."""
    urls = [_page_url(t) for t in args.targets]
    options = SnapshotOptions(
        dedup=not args.no_dedup, trim=not args.no_trim, budget=args.budget or None
    )
    outputs: list[str] = []
    records: list[dict[str, object]] = []
    breakdowns: list[TokenBreakdown | None] = []
    load_in_background()  # the tokenizer's tables, while the browser starts
    async with launch_browser() as browser, trio.open_nursery() as nursery:
        count_tokens("")  # that load done, not inside the first timing
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
                    breakdown = token_breakdown(snapshot.xml) if args.stats else None
                    if breakdown is not None:
                        record.update(await page_token_counts(page))
                        record["breakdown"] = breakdown.as_dict()
            except trio.TooSlowError:
                raise PageUnresponsiveError(url, args.timeout) from None
            outputs.append(snapshot.xml)
            records.append(record)
            breakdowns.append(breakdown)
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
    for record, breakdown in zip(records, breakdowns, strict=True):
        print(_figures(record, breakdown), file=sys.stderr)
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
    async with page.listen(cdp.events.PAGE_JAVASCRIPT_DIALOG_OPENING) as dialogs:
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


def _figures(record: dict[str, object], breakdown: TokenBreakdown | None) -> str:
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
    if breakdown is not None:
        markup = sorted(breakdown.markup.items(), key=lambda kv: -kv[1])[:4]
        parts.append(f"  our tokens: {breakdown.summary()}")
        parts.append(
            "  markup (tags, ids, attributes) by element: "
            + ", ".join(
                f"{name} {tokens:.0f} ({breakdown.elements.get(name, 0)}x)"
                for name, tokens in markup
            )
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
        f"(capture {record['capture_ms']:.1f} ms, pipeline {record['pipeline_ms']:.1f} ms); {saved}"
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
