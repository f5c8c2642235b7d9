"""The download guard: every download an action starts asks, whatever made it.

The request guard holds a download a response announces (its headers). A file the page
builds and saves by script (a ``blob:`` or ``data:`` URL, an ``<a download>`` a script
made on an object URL) has no request to hold, so while an agent's action and its
settle run (`guard_downloads`, beside `guard_requests`) every download the browser
begins in the tab is put to the call's judge as a download too, with the file's name,
its size (the browser's count, once it has one) and its type (a ``data:`` URL's own, a
live ``blob:``'s as an isolated world reads it; else unknown). A download whose
response the request guard let go is not asked about twice.

The hold: in a browser Trimtab launched (`Downloads.folder` known: tests, benchmarks)
the tab saves what it downloads meanwhile under the download's id in `HELD_FOLDER`
beside that folder (``Browser.setDownloadBehavior`` ``allowAndName``), so nothing
reaches the downloads folder before a yes; `Downloads.release` moves it there on a yes,
and deletes it on a no (and the browser cancels one still coming). Cancelling at
``downloadWillBegin`` would not do: a small ``blob:`` is written before the cancel
arrives (tried on Chromium). The person's browser is never told where to save (its
folder is not the host's to know): there the extension holds the download in
``chrome.downloads.onDeterminingFilename`` and reports it (``download_held``,
`HeldDownload`); the action running in its tab claims it (`Downloads.claiming`), the
same judge decides, and the extension lets it be saved or cancels and erases it.

``showSaveFilePicker`` is no download: the browser's own save dialog asks the person,
and no input the agent sends can answer it (headless, it fails with ``AbortError``).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypeVar

import trio

from pycdp_bridge import (
    CDPError,
    DialogOpenError,
    Event,
    RelayTarget,
    Target,
    TargetClosedError,
)
from pycdp_bridge import protocol as cdp

from ._downloads import HELD_FOLDER, DownloadFile, Downloads, HeldDownload
from ._guard import Guarding, Held, PausedRequest, Ruling
from ._scripts import applied, page_script

T = TypeVar("T")

if TYPE_CHECKING:
    from ._settle import Activity

__all__ = ["guard_downloads", "refuse_unclaimed"]

log = logging.getLogger("trimtab.downloads")

# The longest a question waits for the browser to say a file's size.
_SIZE_WAIT: Final = 1.0
# Seconds a command that lets a download go (or sets the tab's behaviour back) may take.
_COMMAND_TIMEOUT: Final = 2.0
_EVENTS: Final = (cdp.events.BROWSER_DOWNLOAD_WILL_BEGIN, cdp.events.BROWSER_DOWNLOAD_PROGRESS)


@contextlib.asynccontextmanager
async def guard_downloads(target: Target, activity: Activity) -> AsyncIterator[None]:
    """Put every download the tab begins during the block to the call's judge (see the
    module). Without a guard that holds downloads (`Guarding.downloads`), or on a target
    that is not the direct transport's, the block runs as is."""
    guard = activity.guard
    downloads = guard.downloads if guard is not None else None
    folder = downloads.folder if downloads is not None else None
    if (
        guard is not None
        and downloads is not None
        and folder is None
        and isinstance(target, RelayTarget)
    ):
        async with _claim_held(target, activity, guard, downloads):
            yield
        return
    if guard is None or downloads is None or folder is None:
        yield
        return
    judged = _Judged(target, activity, guard, downloads)
    async with target.listen(*_EVENTS) as events:
        await judged.behave(folder.parent / HELD_FOLDER, named_by_id=True)
        try:
            async with _deciding(events, judged.note):
                yield
        finally:
            with trio.CancelScope(shield=True):
                await judged.behave(folder, named_by_id=False)


@contextlib.asynccontextmanager
async def _claim_held(
    target: RelayTarget, activity: Activity, guard: Guarding, downloads: Downloads
) -> AsyncIterator[None]:
    """Through the extension: put each download it holds in the tab during the block
    (``download_held``) to the call's judge, and answer it (see the module)."""

    def claim(held: HeldDownload, deciders: trio.Nursery) -> None:
        deciders.start_soon(_decide_held, activity, guard, downloads, held)

    with downloads.claiming(target.tab_id) as held_downloads:
        async with _deciding(held_downloads, claim):
            yield


@contextlib.asynccontextmanager
async def _deciding(
    arriving: trio.MemoryReceiveChannel[T], take: Callable[[T, trio.Nursery], None]
) -> AsyncIterator[None]:
    """`take` each item that arrives while the block runs, and each that arrived before
    it ended, with a nursery to decide it in; the block waits for every decision. A
    block cancelled from outside leaves the undecided refused (their deciders shield
    that). The block's own error comes out as itself, not in a group of the nursery's
    making: the tools meet a closed tab or a dialog as the error it is."""
    try:
        async with trio.open_nursery() as deciders:
            taking = trio.CancelScope()

            async def pump() -> None:
                with taking:
                    async for item in arriving:
                        take(item, deciders)

            deciders.start_soon(pump)
            try:
                yield
            except BaseException as exc:
                if not isinstance(exc, Exception):
                    deciders.cancel_scope.cancel()  # undecided: refused (shielded)
                raise
            finally:
                taking.cancel()
                # Arrived before the block ended: decided as during it.
                with contextlib.suppress(trio.WouldBlock, trio.EndOfChannel):
                    while not deciders.cancel_scope.cancel_called:
                        take(arriving.receive_nowait(), deciders)
    except BaseExceptionGroup as group:
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise


async def _decide_held(
    activity: Activity, guard: Guarding, downloads: Downloads, held: HeldDownload
) -> None:
    """Put one held download to the judge, then let it go or drop it, whatever
    happens meanwhile: an undecided download is dropped."""
    file = held.file
    if any(h.download is not None and h.sent and h.url == file.url for h in guard.held):
        # The response the person let go (the request guard asked already).
        with trio.CancelScope(shield=True):
            await _answer(held, True)
        return
    ruling: Ruling | None = None
    activity.hold()
    try:
        request = PausedRequest(
            "GET", file.url, "Download", navigation=False, form=False, download=file
        )
        with guard.deciding():
            ruling = await guard.judge(request, guard.acting)
    finally:
        activity.release()
        if ruling is None:
            ruling = Ruling(
                send=False, held=True, why="not saved: the action ended before it was decided"
            )
        if ruling.held:
            guard.held.append(
                Held("GET", file.url, sent=ruling.send, form=False, why=ruling.why, download=file)
            )
        if not ruling.send:
            downloads.release(held.id, False)
        with trio.CancelScope(shield=True):
            await _answer(held, ruling.send)


async def refuse_unclaimed(held: HeldDownload) -> None:
    """Refuse a download the extension held in a tab no action runs in now (it began
    after the action's guard ended): undecided, so not saved."""
    log.info("refused download %s held in tab %d outside an action", held.id, held.tab)
    with trio.CancelScope(shield=True):
        await _answer(held, False)


async def _answer(held: HeldDownload, allow: bool) -> None:
    """Tell the extension to let the download go or cancel it (a host it cannot reach
    any more: the extension drops what it holds)."""
    with (
        trio.move_on_after(_COMMAND_TIMEOUT),
        contextlib.suppress(CDPError, TargetClosedError, DialogOpenError),
    ):
        await held.answer(allow)


class _Judged:
    """The downloads of one action's guard: sizes heard so far, and the decisions."""

    def __init__(
        self,
        target: Target,
        activity: Activity,
        guard: Guarding,
        downloads: Downloads,
    ) -> None:
        self.target, self.activity, self.guard = target, activity, guard
        self.downloads = downloads
        self.sizes: dict[str, int] = {}
        self.sized = trio.Event()

    async def behave(self, folder: Path, *, named_by_id: bool) -> None:
        """Where the tab saves downloads from now on (see the module)."""
        command = cdp.browser_set_download_behavior(str(folder), named_by_id=named_by_id)
        with (
            trio.move_on_after(_COMMAND_TIMEOUT),
            contextlib.suppress(CDPError, TargetClosedError, DialogOpenError),
        ):
            await self.target.execute(command)

    def note(self, event: Event, deciders: trio.Nursery) -> None:
        """Take in one download event: a download that begins is decided on."""
        guid = str(event.params.get("guid", ""))
        if event.method == cdp.events.BROWSER_DOWNLOAD_WILL_BEGIN:
            self.downloads.hold(guid)
            deciders.start_soon(self.decide, event)
            return
        total = event.params.get("totalBytes")
        if (isinstance(total, (int, float)) and total > 0) or event.params.get(
            "state"
        ) != "inProgress":
            self.sizes[guid] = int(total) if isinstance(total, (int, float)) else 0
            self.sized.set()
            self.sized = trio.Event()

    async def decide(self, event: Event) -> None:
        """Put one download to the judge, then keep it or drop it, whatever happens
        meanwhile: an undecided download is dropped."""
        params = event.params
        guid, url = str(params.get("guid", "")), str(params.get("url", ""))
        name = str(params.get("suggestedFilename", "")) or "download"
        if any(h.download is not None and h.sent and h.url == url for h in self.guard.held):
            # The response the person let go (the request guard asked already).
            self.downloads.release(guid, True)
            return
        ruling: Ruling | None = None
        file = DownloadFile(url=url, name=name, size=None, mime="")
        self.activity.hold()
        try:
            file = await self._file(event, file)
            request = PausedRequest(
                "GET", url, "Download", navigation=False, form=False, download=file
            )
            with self.guard.deciding():
                ruling = await self.guard.judge(request, self.guard.acting)
        finally:
            self.activity.release()
            with trio.CancelScope(shield=True):
                await self._let_go(guid, url, file, ruling)

    async def _file(self, event: Event, file: DownloadFile) -> DownloadFile:
        """The file as far as the browser says: its size once counted, its type."""
        guid = str(event.params.get("guid", ""))
        with trio.move_on_after(_SIZE_WAIT):
            while guid not in self.sizes:
                await self.sized.wait()
        size = self.sizes.get(guid) or None
        mime = ""
        if file.url.startswith("data:"):
            mime = file.url[5:].split(",", 1)[0].split(";", 1)[0].strip().lower()
        elif file.url.startswith("blob:"):
            mime = await self._blob_type(str(event.params.get("frameId", "")), file.url)
        return DownloadFile(url=file.url, name=file.name, size=size, mime=mime[:100])

    async def _blob_type(self, frame: str, url: str) -> str:
        """A blob's type, read in an isolated world of its frame ('' once revoked)."""
        with (
            trio.move_on_after(_SIZE_WAIT),
            contextlib.suppress(CDPError, TargetClosedError, DialogOpenError, KeyError),
        ):
            world = await self.target.execute(
                cdp.page_create_isolated_world(frame, world_name="trimtab-downloads")
            )
            found = await self.target.execute(
                cdp.runtime_evaluate(
                    applied(page_script("trimtab.tab", "blob-type.js"), url),
                    context_id=world["executionContextId"],
                    await_promise=True,
                    return_by_value=True,
                )
            )
            value = found["result"].get("value")
            return value.split(";", 1)[0].strip().lower() if isinstance(value, str) else ""
        return ""

    async def _let_go(self, guid: str, url: str, file: DownloadFile, ruling: Ruling | None) -> None:
        """Keep the download (a yes) or drop it (a no, or no decision), and say so."""
        if ruling is None:
            ruling = Ruling(
                send=False, held=True, why="not saved: the action ended before it was decided"
            )
        if ruling.held:
            held = Held("GET", url, sent=ruling.send, form=False, why=ruling.why, download=file)
            self.guard.held.append(held)
        self.downloads.release(guid, ruling.send)
        if not ruling.send:
            with (
                trio.move_on_after(_COMMAND_TIMEOUT),
                contextlib.suppress(CDPError, TargetClosedError, DialogOpenError),
            ):
                await self.target.execute(cdp.browser_cancel_download(guid))
