"""Downloads: which responses will be saved as files, and what became of each.

`download_file` tells, from a document response as the browser received it (its
status and headers at Fetch's response stage: facts a page's script cannot fake),
whether the browser will save it rather than show it (``Content-Disposition:
attachment``, or a type it does not display) and names the file, its size and type.
`Downloads` keeps what the browser reported of each download, from either transport:
the direct one's ``Browser.downloadWillBegin``/``downloadProgress`` events, or the
extension's ``download`` message (``chrome.downloads``), so that an action's answer
can say where the file went. Nothing here reads a file's content.

A download no response announced (a file the page builds: ``blob:``, ``data:``) is held
on the direct transport by saving it under its id in `HELD_FOLDER` until the person
decided (`Downloads.hold`, `Downloads.release`, ``_download_guard``): a yes moves it to
the downloads folder under its own name, a no deletes it.
"""

from __future__ import annotations

import contextlib
import itertools
import urllib.parse
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias

import attrs
import trio

from pycdp_bridge import Event
from pycdp_bridge import protocol as cdp

from ..pipeline import xml

__all__ = [
    "DOWNLOAD_STATES",
    "DOWNLOAD_WAIT",
    "HELD_FOLDER",
    "Download",
    "DownloadFile",
    "DownloadState",
    "Downloads",
    "HeldDownload",
    "download_file",
    "held_download",
]

# The longest an action's answer waits for the downloads it started to finish.
DOWNLOAD_WAIT: Final = 10.0

DownloadState: TypeAlias = Literal["in_progress", "complete", "interrupted"]
DOWNLOAD_STATES: Final = ("in_progress", "complete", "interrupted")
# CDP's words for a download's state; "canceled" also covers one that failed.
_CDP_STATES: Final[Mapping[str, DownloadState]] = {
    "inProgress": "in_progress",
    "completed": "complete",
    "canceled": "interrupted",
}
# Types a browser shows in the tab; any other document response is saved as a file.
_SHOWN: Final = frozenset(
    {
        "",
        "application/json",
        "application/pdf",
        "application/xhtml+xml",
        "application/xml",
        "application/javascript",
        "image/svg+xml",
        "multipart/x-mixed-replace",
    }
)
_SHOWN_KINDS: Final = ("text/", "image/", "audio/", "video/")
# Downloads kept: the person's own downloads are relayed too, and only recent ones matter.
_KEPT: Final = 200
# Characters of a name a question or an answer shows.
_NAME_LIMIT: Final = 200
# The folder (in the run's own profile, beside its downloads folder) where the direct
# transport saves what an action downloads, under the download's id, until decided.
HELD_FOLDER: Final = "Held downloads"


@attrs.frozen
class DownloadFile:
    """A file a response will be saved as: its name, size and type as the browser
    received them (the site's words: shown to the model and the person as page data)."""

    url: str
    name: str
    size: int | None
    mime: str

    def element(self) -> str:
        """The file as a question and an answer show it (escaped by the one XML writer)."""
        return xml.element(
            "download",
            {"name": self.name[:_NAME_LIMIT], "size": self.size, "type": self.mime[:100] or None},
        )


def download_file(
    url: str, status: int, headers: Iterable[Mapping[str, Any]]
) -> DownloadFile | None:
    """The file a document response of ``url`` will be saved as, or None when the
    browser will show it (or it is no file: a redirect, an error status)."""
    if not 200 <= status < 300:
        return None
    found: dict[str, str] = {}
    for header in headers:
        found.setdefault(str(header.get("name", "")).lower(), str(header.get("value", "")))
    disposition = found.get("content-disposition", "")
    mime = found.get("content-type", "").split(";")[0].strip().lower()
    attachment = disposition.split(";")[0].strip().lower() == "attachment"
    shown = mime in _SHOWN or mime.startswith(_SHOWN_KINDS)
    if not attachment and shown:
        return None
    length = found.get("content-length", "").strip()
    return DownloadFile(
        url=url,
        name=_file_name(disposition, url),
        size=int(length) if length.isdigit() else None,
        mime=mime,
    )


def held_download(
    message: Mapping[str, Any], answer: Callable[[int, bool], Awaitable[None]]
) -> HeldDownload:
    """The extension's ``download_held`` message (``host/PROTOCOL.md``), answered with
    ``answer(download, allow)``; ValueError names a field not as the protocol says."""
    fields = {key: message.get(key) for key in ("tab", "download", "size")}
    for field, value in fields.items():
        integer = isinstance(value, int) and not isinstance(value, bool)
        if not integer and not (field == "size" and value is None):
            raise ValueError(f"download_held {field} = {value!r:.60} is not an integer")
    download, tab, size = int(message["download"]), int(message["tab"]), fields["size"]
    url = str(message.get("url") or "")
    file = DownloadFile(
        url=url,
        name=str(message.get("name") or "") or "download",
        size=size if isinstance(size, int) and size >= 0 else None,
        mime=str(message.get("mime") or "")[:100],
    )

    async def answered(allow: bool) -> None:
        await answer(download, allow)

    scheme = str(message.get("scheme") or url.partition(":")[0]).lower()
    return HeldDownload(id=f"ext-{download}", tab=tab, file=file, scheme=scheme, answer=answered)


def _place(held: Path, folder: Path, name: str) -> Path:
    """Move a held file into ``folder`` as ``name``, numbered as the browser numbers a
    name already taken ("report (1).csv"); the path it now has."""
    name = name.replace("\\", "/").rsplit("/", 1)[-1].lstrip(".") or "download"
    folder.mkdir(parents=True, exist_ok=True)
    stem, dot, suffix = name.rpartition(".") if "." in name else (name, "", "")
    path, number = folder / name, 0
    while path.exists():
        number += 1
        path = folder / f"{stem} ({number}){dot}{suffix}"
    held.replace(path)
    return path


def _file_name(disposition: str, url: str) -> str:
    """The name Content-Disposition gives (``filename*`` first), else the URL's last part."""
    names: dict[str, str] = {}
    for part in disposition.split(";")[1:]:
        key, _, value = part.partition("=")
        names[key.strip().lower()] = value.strip().strip('"')
    extended = names.get("filename*", "")
    if "''" in extended:
        charset, _, encoded = extended.partition("''")
        name = urllib.parse.unquote(encoded, encoding=charset or "utf-8", errors="replace")
    else:
        name = names.get("filename", "")
    if not name:
        path = urllib.parse.urlsplit(url).path
        name = urllib.parse.unquote(path.rsplit("/", 1)[-1])
    # A name is never a path: the browser saves it in its downloads folder.
    return name.replace("\\", "/").rsplit("/", 1)[-1] or "download"


@attrs.frozen
class Download:
    """One download as the browser reported it last."""

    id: str
    url: str
    name: str
    size: int | None
    state: DownloadState
    tab: int | None = None  # the tab it started in, when the browser says
    mime: str = ""
    path: str | None = None  # where it was saved, once complete
    received: int | None = None  # bytes so far (the direct transport says)
    order: int = 0  # when Trimtab first heard of it, among all downloads

    def note(self) -> str:
        """What an action's answer says of it (the name and path are the site's words)."""
        size = "" if self.size is None else f"{self.size} bytes"
        facts = ", ".join(filter(None, (size, self.mime[:100])))
        said = f"{self.name[:_NAME_LIMIT]}" + (f" ({facts})" if facts else "")
        if self.state == "complete":
            return f"Downloaded {said} to {(self.path or '')[:500]}"
        if self.state == "interrupted":
            got = "" if self.received is None else f" after {self.received} bytes"
            return f"The download of {said} was interrupted{got}; no file was saved"
        got = "" if self.received is None else f": {self.received} bytes so far"
        return f"Still downloading {said}{got}"


@attrs.frozen
class HeldDownload:
    """A download the extension holds before it is saved (``download_held``) until the
    host answers it (``answer(allow)``: ``download_decide``)."""

    id: str  # the id `Downloads` knows it by ("ext-12")
    tab: int
    file: DownloadFile
    scheme: str  # its URL's scheme: blob, data, https, …
    answer: Callable[[bool], Awaitable[None]]


@attrs.define(eq=False)
class _Hold:
    """A download saved under its id in `HELD_FOLDER` until the person decided."""

    allow: bool | None = None  # None: not decided yet
    path: Path | None = None  # the held file, once the browser finished it


@attrs.define(eq=False)
class Downloads:
    """What the browser reported of every download, by id, from either transport.

    ``folder``: where a browser Trimtab launched saves downloads (`Browser.downloads`):
    the host holds what an action downloads beside it, in `HELD_FOLDER`, until the
    person decided; None (the person's browser): the host holds no file itself."""

    folder: Path | None = None
    _known: dict[str, Download] = attrs.field(factory=dict)
    _holds: dict[str, _Hold] = attrs.field(factory=dict)
    _order: itertools.count[int] = attrs.field(factory=lambda: itertools.count(1))
    _changed: trio.Event = attrs.field(factory=trio.Event)
    # Per tab an action runs in, where the downloads the extension holds go (`claiming`).
    _claims: dict[int, trio.MemorySendChannel[HeldDownload]] = attrs.field(factory=dict)

    @contextlib.contextmanager
    def claiming(self, tab: int) -> Iterator[trio.MemoryReceiveChannel[HeldDownload]]:
        """Receive the downloads the extension holds in ``tab`` during the block."""
        sender, receiver = trio.open_memory_channel[HeldDownload](64)
        self._claims[tab] = sender
        try:
            yield receiver
        finally:
            if self._claims.get(tab) is sender:
                del self._claims[tab]
            sender.close()

    def note_held(
        self, message: Mapping[str, Any], answer: Callable[[int, bool], Awaitable[None]]
    ) -> HeldDownload | None:
        """Hand the extension's ``download_held`` (`held_download`) to the action
        running in its tab; returned when none claims it (no action runs there now),
        for the caller to refuse. ValueError names a field not as the protocol says."""
        held = held_download(message, answer)
        sender = self._claims.get(held.tab)
        if sender is None:
            return held
        try:
            sender.send_nowait(held)
        except (trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError):
            return held
        return None

    def mark(self) -> int:
        """A point in time: `since` gives the downloads first heard of after it."""
        return max((d.order for d in self._known.values()), default=0)

    def since(self, mark: int, tab: int, urls: Iterable[str] = ()) -> list[Download]:
        """The downloads first heard of after ``mark`` of ``tab`` (or of ``urls``, in a
        tab the browser does not name), oldest first."""
        wanted = set(urls)
        found = [
            d
            for d in self._known.values()
            if d.order > mark and (d.tab == tab or (d.tab is None and d.url in wanted))
        ]
        return sorted(found, key=lambda d: d.order)

    def note(self, download: Download) -> None:
        """Take in what the browser reports of one download (later reports win; what a
        report leaves out, None, is kept from earlier ones)."""
        known = self._known.get(download.id)
        if known is None:
            download = attrs.evolve(download, order=next(self._order))
        else:
            download = attrs.evolve(
                download,
                order=known.order,
                url=download.url or known.url,
                name=download.name or known.name,
                mime=download.mime or known.mime,
                tab=download.tab if download.tab is not None else known.tab,
                size=download.size if download.size is not None else known.size,
                path=download.path or known.path,
                received=download.received if download.received is not None else known.received,
            )
        self._known[download.id] = download
        if len(self._known) > _KEPT:
            # The oldest goes (dicts keep the order downloads were first heard of).
            del self._known[next(iter(self._known))]
        self._changed.set()
        self._changed = trio.Event()

    def hold(self, guid: str) -> None:
        """Keep download ``guid`` (saved in `HELD_FOLDER`) until `release` decides."""
        self._holds.setdefault(guid, _Hold())

    def release(self, guid: str, allow: bool) -> None:
        """Decide on a held download: a yes saves it in `folder` under its own name
        (once the browser finished it), a no deletes it and forgets it."""
        hold = self._holds.setdefault(guid, _Hold())
        hold.allow = allow
        if not allow and self._known.pop(guid, None) is not None:
            self._changed.set()
            self._changed = trio.Event()
        self._settle_hold(guid)

    def _settle_hold(self, guid: str) -> None:
        """Move or delete a held file once it is both finished and decided."""
        hold = self._holds.get(guid)
        if hold is None or hold.allow is None or hold.path is None or self.folder is None:
            return
        del self._holds[guid]
        known = self._known.get(guid) if hold.allow else self._known.pop(guid, None)
        if not hold.allow or known is None:
            hold.path.unlink(missing_ok=True)
            return
        path = _place(hold.path, self.folder, known.name or guid)
        self.note(attrs.evolve(known, state="complete", path=str(path), name=path.name))

    def note_event(self, tab: int, event: Event) -> None:
        """Take in a direct transport's ``Browser.download*`` event of ``tab``."""
        params = event.params
        guid = str(params.get("guid", ""))
        hold = self._holds.get(guid)
        path = params.get("filePath")
        if path and Path(str(path)).parent.name == HELD_FOLDER:
            # Saved under its id until decided: its name is the one it began with, and
            # it is not saved where the person finds it until a yes moves it there.
            hold = self._holds.setdefault(guid, _Hold())
            hold.path = Path(str(path))
            path = None
        if hold is not None and params.get("state") == "canceled":
            del self._holds[guid]  # the browser deleted what it had written
        elif hold is not None and params.get("state") == "completed":
            params = {**params, "state": "inProgress"}
        if hold is not None and hold.allow is False:
            self._settle_hold(guid)  # refused: never a download the answer tells of
            return
        if event.method == cdp.events.BROWSER_DOWNLOAD_WILL_BEGIN:
            self.note(
                Download(
                    id=guid,
                    url=str(params.get("url", "")),
                    name=str(params.get("suggestedFilename", "")),
                    size=None,
                    state="in_progress",
                    tab=tab,
                )
            )
        elif event.method == cdp.events.BROWSER_DOWNLOAD_PROGRESS and guid in self._known:
            total = params.get("totalBytes")
            self.note(
                Download(
                    id=guid,
                    url="",
                    name=str(path).rsplit("/", 1)[-1] if path else "",
                    size=int(total) if isinstance(total, (int, float)) and total > 0 else None,
                    state=_CDP_STATES.get(str(params.get("state")), "in_progress"),
                    path=str(path) if path else None,
                    received=int(params.get("receivedBytes") or 0),
                )
            )
        if hold is not None:
            self._settle_hold(guid)

    def note_message(self, message: Mapping[str, Any]) -> None:
        """Take in the extension's ``download`` message (``host/PROTOCOL.md``);
        ValueError names a field that is not as the protocol says."""
        state = message.get("state")
        if state not in DOWNLOAD_STATES:
            raise ValueError(f"download state = {state!r:.60} is not one of {DOWNLOAD_STATES}")
        tab, size = message.get("tab"), message.get("size")
        for field, value in (("tab", tab), ("size", size)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise ValueError(f"download {field} = {value!r:.60} is not an integer or null")
        path = message.get("path")
        held = self._holds.get(f"ext-{message.get('download')}")
        if held is not None and held.allow is False:
            return  # refused while held: cancelled and erased, never this call's file
        self.note(
            Download(
                id=f"ext-{message.get('download')}",
                url=str(message.get("url") or ""),
                name=str(message.get("name") or ""),
                size=size,
                state=state,
                tab=tab,
                mime=str(message.get("mime") or ""),
                path=str(path) if path else None,
            )
        )

    async def wait_for(self, url: str, mark: int, tab: int) -> None:
        """Wait until the browser reports a download of ``url`` (in ``tab``, or in a tab
        it does not name) first heard of after ``mark``."""
        while not any(
            d.order > mark and d.url == url and d.tab in (tab, None) for d in self._known.values()
        ):
            await self._changed.wait()

    async def settled(self, downloads: Iterable[Download]) -> list[Download]:
        """``downloads`` as the browser reports them once none is in progress any more."""
        wanted = list(downloads)
        while any(d.state == "in_progress" for d in self.latest(wanted)):
            await self._changed.wait()
        return self.latest(wanted)

    def latest(self, downloads: Iterable[Download]) -> list[Download]:
        """``downloads`` as the browser reports them now."""
        return [self._known.get(d.id, d) for d in downloads]
