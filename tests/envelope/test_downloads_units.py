"""Which responses are downloads and what a download's name, size and type are, from
the headers the browser received; the extension's `download` messages as the host
takes them in."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from pycdp_bridge import Event
from trimtab.browser import HostState, TabRelayHub, open_host_state
from trimtab.tab import HELD_FOLDER, Download, Downloads, download_file

URL = "http://127.0.0.1:9/orders/export"


def headers(**found: str) -> list[dict[str, str]]:
    return [{"name": name.replace("_", "-"), "value": value} for name, value in found.items()]


def test_an_attachment_is_a_download_named_by_its_header() -> None:
    """Content-Disposition: attachment makes any type a download, named by its
    filename (filename* first, decoded), sized by Content-Length."""
    file = download_file(
        URL,
        200,
        headers(
            Content_Type="text/html; charset=utf-8",
            Content_Disposition='attachment; filename="a.html"; '
            "filename*=UTF-8''r%C3%A9sum%C3%A9.html",
            Content_Length="1200",
        ),
    )
    assert file is not None
    assert (file.name, file.size, file.mime) == ("résumé.html", 1200, "text/html")


def test_a_page_the_browser_shows_is_no_download() -> None:
    """Pages, text, images, PDFs and error statuses are shown, not saved."""
    for mime in ("text/html", "text/plain", "image/png", "application/pdf", "application/json"):
        assert download_file(URL, 200, headers(Content_Type=mime)) is None
    assert download_file(URL, 404, headers(Content_Disposition="attachment")) is None
    assert download_file(URL, 302, headers(Content_Type="application/zip")) is None


def test_a_type_the_browser_does_not_show_is_a_download_named_by_its_url() -> None:
    """A zip without Content-Disposition is saved under the URL's last part; a name
    is never a path; a missing length is an unknown size."""
    file = download_file(
        URL + "/orders%202026.zip?x=1", 200, headers(Content_Type="application/zip")
    )
    assert file is not None
    assert (file.name, file.size, file.mime) == ("orders 2026.zip", None, "application/zip")
    sneaky = download_file(
        URL, 200, headers(Content_Disposition='attachment; filename="../../.bashrc"')
    )
    assert sneaky is not None
    assert sneaky.name == ".bashrc"


def test_the_question_shows_the_file_escaped() -> None:
    """A name the site chose is escaped by the one XML writer."""
    file = download_file(
        URL,
        200,
        headers(
            Content_Disposition='attachment; filename="<img src=x>&.csv"', Content_Type="text/csv"
        ),
    )
    assert file is not None
    assert file.element() == '<download name="&lt;img src=x&gt;&amp;.csv" type="text/csv"/>'


def test_relay_messages_make_one_download_and_bad_ones_name_the_field() -> None:
    """The extension's start and completion of one download merge into one record
    with its path; a message with a bad state or size is refused naming it."""
    downloads = Downloads()
    start = {
        "type": "download",
        "tab": None,
        "download": 3,
        "url": URL,
        "name": "r.csv",
        "size": 84,
        "mime": "text/csv",
        "path": None,
        "state": "in_progress",
    }
    downloads.note_message(start)
    downloads.note_message({**start, "path": "/d/r.csv", "state": "complete"})
    (download,) = downloads.since(0, 7, [URL])
    assert (download.name, download.size, download.path, download.state) == (
        "r.csv",
        84,
        "/d/r.csv",
        "complete",
    )
    assert downloads.since(0, 7) == []  # a tab it does not name: only by the URL
    with pytest.raises(ValueError, match="download state = 'done'"):
        downloads.note_message({**start, "state": "done"})
    with pytest.raises(ValueError, match="download size = '84'"):
        downloads.note_message({**start, "size": "84"})


def test_only_the_latest_downloads_are_kept() -> None:
    """The person's own downloads are relayed too: the host keeps the latest 200."""
    downloads = Downloads()
    for n in range(250):
        downloads.note(
            Download(id=str(n), url=f"{URL}/{n}", name="f", size=1, state="complete", tab=1)
        )
    kept = downloads.since(0, 1)
    assert len(kept) == 200
    assert kept[0].id == "50"


async def test_the_host_drops_a_bad_download_message_and_keeps_serving() -> None:
    """A malformed `download` message is logged and dropped; the next one is kept."""

    async def send(_: object) -> None:
        return None

    async with open_host_state(TabRelayHub(send)) as state:
        assert isinstance(state, HostState)
        state.note_download({"type": "download", "download": 1, "state": "bogus"})
        state.note_download(
            {
                "type": "download",
                "tab": 4,
                "download": 2,
                "url": URL,
                "name": "x",
                "size": None,
                "mime": "",
                "path": None,
                "state": "in_progress",
            }
        )
        assert [d.name for d in state.downloads.since(0, 4)] == ["x"]
        await trio.lowlevel.checkpoint()


def _held(downloads: Downloads, guid: str, name: str, held: Path) -> None:
    """The browser begins download ``guid`` and finishes it under its id in ``held``."""
    (held / guid).write_bytes(b"day,stop\n")
    downloads.note_event(
        1,
        Event(
            "Browser.downloadWillBegin",
            {"guid": guid, "url": "blob:http://127.0.0.1/x", "suggestedFilename": name},
        ),
    )
    downloads.note_event(
        1,
        Event(
            "Browser.downloadProgress",
            {
                "guid": guid,
                "totalBytes": 9,
                "receivedBytes": 9,
                "state": "completed",
                "filePath": str(held / guid),
            },
        ),
    )


def test_a_held_download_waits_for_the_decision_and_a_yes_names_it_like_the_browser(
    tmp_path: Path,
) -> None:
    """A download finished in the held folder stays in progress (nowhere the person
    finds it) until a yes moves it into the downloads folder under its own name,
    numbered when the name is taken; a no deletes it and forgets it."""
    folder, held = tmp_path / "Downloads", tmp_path / HELD_FOLDER
    held.mkdir()
    folder.mkdir()
    (folder / "trip.csv").write_bytes(b"older")
    downloads = Downloads(folder=folder)
    _held(downloads, "g1", "trip.csv", held)
    (pending,) = downloads.since(0, 1)
    assert pending.state == "in_progress"
    assert pending.path is None
    downloads.release("g1", True)
    (saved,) = downloads.latest([pending])
    assert saved.state == "complete"
    assert saved.path == str(folder / "trip (1).csv")
    assert (folder / "trip (1).csv").read_bytes() == b"day,stop\n"
    downloads.release("g2", False)  # decided before the browser finished it
    _held(downloads, "g2", "other.csv", held)
    assert list(held.iterdir()) == []
    assert [d.id for d in downloads.since(0, 1)] == ["g1"]
