"""Downloads the page makes itself: a file a script builds and saves (a ``blob:`` or
``data:`` URL behind an ``<a download>`` the script made) asks like any download
during an agent's action, naming the file, its size and type as far as the browser
says; a no leaves no file anywhere, a yes saves it once in the downloads folder."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import trio

from pycdp_bridge import PageTarget
from tests.envelope.test_downloads import click, folder, saved
from tests.support import TEST_PAGES
from tests.support.handlers_host import Host, open_host
from tests.support.link_host import TAB, open_link_host
from tests.support.outside import call, eid_on_line
from tests.support.recorder import Recorder, serve_recorder

pytestmark = pytest.mark.browser

ITINERARY = b"day,stop\n1,Harbour inn\n2,Cliff hut\n3,Lighthouse cottage\n"
PACKING = b"boots\nmap\nwater\n"


@pytest.fixture
async def host(page: PageTarget, nursery: trio.Nursery) -> AsyncIterator[Host]:
    """Handlers of a host on the trip planner, which exports files it made."""
    site: Recorder = await nursery.start(serve_recorder, TEST_PAGES)
    async with open_host(page, site.url("127.0.0.1", "downloads-made.html"), nursery) as host:
        yield host


def held_files(host: Host) -> list[Path]:
    """What the browser wrote where it keeps a download until the person decided."""
    held = host.page.browser.user_data_dir / "Held downloads"
    return sorted(held.iterdir()) if held.exists() else []


async def test_a_blob_the_page_made_asks_and_a_yes_saves_it_once(host: Host) -> None:
    """A script's blob: download asks what="download" with the file's name, size and
    type; a yes saves it in the downloads folder under its name, with the page's
    bytes, once, and the answer says where it went."""
    answer = await click(host, "button", "Save the itinerary")
    (question,) = host.person.asked
    assert question["what"] == "download"
    assert question["reason"] == (
        "Clicking it saves a file the page on http://127.0.0.1 made on this computer"
    )
    assert question["element"] == (
        f'<download name="itinerary.csv" size="{len(ITINERARY)}" type="text/csv"/>'
    )
    path = folder(host) / "itinerary.csv"
    assert saved(host) == ["itinerary.csv"]
    assert path.read_bytes() == ITINERARY
    assert held_files(host) == []
    (download,) = answer["downloads"]
    assert download == {
        "name": "itinerary.csv",
        "size": len(ITINERARY),
        "type": "text/csv",
        "path": str(path),
        "state": "complete",
    }
    assert (
        f"Downloaded itinerary.csv ({len(ITINERARY)} bytes, text/csv) to {path}"
        in (answer["content"])
    )


async def test_a_no_to_a_data_download_leaves_no_file(host: Host) -> None:
    """A script's data: download asks, naming its type from the URL; refused, no file
    is left in the downloads folder or anywhere the browser wrote it, and the answer
    says it was not saved."""
    host.person.allow = False
    answer = await click(host, "button", "Save the packing list")
    (question,) = host.person.asked
    assert question["reason"] == "Clicking it saves a file the page made on this computer"
    assert question["element"] == (
        f'<download name="packing.txt" size="{len(PACKING)}" type="text/plain"/>'
    )
    await trio.sleep(0.5)  # anything still on its way would land by now
    assert saved(host) == []
    assert held_files(host) == []
    assert answer["downloads"] == []
    assert answer["held"][0]["sent"] is False
    assert "The download of packing.txt" in answer["content"]
    assert "was held: not saved: the person refused" in answer["content"]


async def test_a_save_file_picker_saves_nothing_behind_the_persons_back(host: Host) -> None:
    """A page that saves through showSaveFilePicker asks nothing of Trimtab: the
    browser's own save dialog is the person's question, which no input the agent sends
    can answer (headless, it is dismissed): nothing is written, nothing downloaded."""
    answer = await click(host, "button", "Save to a file of my choice")
    assert host.person.asked == []
    assert answer["downloads"] == []
    status = await host.evaluate("document.getElementById('status').textContent")
    assert status in ("Not saved: AbortError", "No file picker")
    assert saved(host) == []
    assert held_files(host) == []


async def test_an_outside_agent_download_of_a_made_file_asks_in_the_panel(
    page: PageTarget, nursery: trio.Nursery
) -> None:
    """Through trimtab mcp, a click that saves a blob the page made asks the person in
    the side panel naming the file; Don't allow leaves no file; Allow saves it once."""
    site: Recorder = await nursery.start(serve_recorder, TEST_PAGES)
    async with open_link_host(page, site.url("127.0.0.1", "downloads-made.html")) as host:
        await host.share(TAB)
        downloads = page.browser.downloads
        async with host.mcp_client() as client:
            xml, is_error, _ = await call(client, "capture_snapshot", tab=TAB)
            assert not is_error, xml
            button = eid_on_line(xml, "Save the itinerary")
            results: list[tuple[str, bool, dict[str, Any]]] = []

            async def run() -> None:
                results.append(await call(client, "click", tab=TAB, id=button))

            for allow in (False, True):
                async with trio.open_nursery() as calls:
                    calls.start_soon(run)
                    ask = await host.extension.next("ask")
                    assert ask["what"] == "download"
                    assert 'name="itinerary.csv"' in ask["element"]
                    assert host.panel.answer(ask["ask"], allow=allow)
                text, _, _ = results.pop()
                if not allow:
                    assert "not saved: the person refused" in text
                    await trio.sleep(0.5)  # anything still on its way would land by now
                    assert not downloads.exists() or list(downloads.iterdir()) == []
            assert [p.name for p in downloads.iterdir()] == ["itinerary.csv"]
            assert (downloads / "itinerary.csv").read_bytes() == ITINERARY
            assert "Downloaded itinerary.csv" in text
