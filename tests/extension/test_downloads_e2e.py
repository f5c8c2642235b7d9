"""Downloads end to end: real headless Chromium with the real extension, the real host
Chrome starts, and a real ``trimtab mcp`` client. A download an outside agent's click
starts is asked about in the real side panel; refused, nothing is saved; allowed, the
extension's ``download`` messages (chrome.downloads) tell the host where it went."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import trio
from mcp import Client

from tests.support import TEST_PAGES
from tests.support.e2e import ExtensionBrowser, answer_question
from tests.support.outside import (
    TIMEOUT,
    Places,
    browser,
    call,
    eid_on_line,
    mcp_client,
    open_shared,
    places,
)
from tests.support.recorder import Recorder, serve_recorder

pytestmark = pytest.mark.browser

__all__ = ["places"]  # the fixture

REPORT = (TEST_PAGES / "downloads-report.csv").read_bytes()


async def _answer_in_panel(panel: Any, allow: bool) -> str:
    """Wait for the side panel's question, answer it, return its words."""
    with trio.fail_after(TIMEOUT):
        while (question := await answer_question(panel, allow=allow)) is None:
            await trio.sleep(0.05)
    return question


async def _click(results: list[Any], client: Client, tab: int, eid: str) -> None:
    results.append(await call(client, "click", tab=tab, id=eid))


async def _save_to(ext: ExtensionBrowser, folder: Path) -> None:
    """Where this browser saves downloads: the test's own folder, never the person's;
    the test's CDP connection asks for no download events, so only chrome.downloads
    tells the host of them."""
    await ext.browser.send(
        "Browser.setDownloadBehavior",
        {"behavior": "allow", "downloadPath": str(folder), "eventsEnabled": False},
    )


async def test_an_outside_agent_download_asks_then_says_where_the_file_went(
    places: Places, nursery: trio.Nursery
) -> None:
    """Through trimtab mcp, a click on a link to an attachment asks in the side panel
    (naming the file); Don't allow saves nothing and the answer says so; Allow saves
    the file with the site's bytes and the answer gives its path, which the host
    learned from the extension's download messages."""
    site: Recorder = await nursery.start(serve_recorder, TEST_PAGES)
    folder = places.profile.parent / "saved"
    async with browser(places) as ext, mcp_client(places, "cursor") as client:
        await _save_to(ext, folder)
        tab = await open_shared(ext, site.url("127.0.0.1", "downloads-exports.html"))
        panel = await ext.open_side_panel()
        xml, is_error, _ = await call(client, "capture_snapshot", tab=tab)
        assert not is_error, xml
        link = eid_on_line(xml, "Download the report")

        results: list[Any] = []
        async with trio.open_nursery() as calls:
            calls.start_soon(_click, results, client, tab, link)
            question = await _answer_in_panel(panel, allow=False)
        assert "would save a file from http://127.0.0.1 on this computer" in question
        assert "downloads-report.csv" in question
        text, is_error, _ = results.pop()
        assert "was held: not saved: the person refused" in text
        assert not folder.exists() or list(folder.iterdir()) == []

        async with trio.open_nursery() as calls:
            calls.start_soon(_click, results, client, tab, link)
            await _answer_in_panel(panel, allow=True)
        text, is_error, meta = results.pop()
        assert not is_error, text
        path = folder / "downloads-report.csv"
        assert f"Downloaded downloads-report.csv ({len(REPORT)} bytes, text/csv) to {path}" in text
        assert path.read_bytes() == REPORT
        assert meta["downloads"] == [
            {
                "name": "downloads-report.csv",
                "size": len(REPORT),
                "type": "text/csv",
                "path": str(path),
                "state": "complete",
            }
        ]


def _save_in_profile(places: Places, folder: Path) -> None:
    """Where the browser saves downloads, set as the person sets it (the profile's own
    preference, before launch): no DevTools download behaviour, which would decide
    where to save in the extension's stead, so chrome.downloads holds what it saves."""
    prefs = places.profile / "Default" / "Preferences"
    prefs.parent.mkdir(parents=True, exist_ok=True)
    prefs.write_text(
        json.dumps({"download": {"default_directory": str(folder), "prompt_for_download": False}}),
        encoding="utf-8",
    )


def _saved(folder: Path) -> list[str]:
    """The files in the downloads folder (Chrome's temporary ones left out)."""
    if not folder.exists():
        return []
    return sorted(p.name for p in folder.iterdir() if not p.name.endswith(".crdownload"))


async def test_a_download_the_page_makes_asks_through_the_extension(
    places: Places, nursery: trio.Nursery
) -> None:
    """In the person's own browser (the extension holds downloads in
    onDeterminingFilename), a blob file the page builds on an outside agent's click
    asks with its name, size and type; Don't allow leaves nothing in the downloads
    folder, Allow saves it once; a header download still asks once and is saved."""
    site: Recorder = await nursery.start(serve_recorder, TEST_PAGES)
    folder = places.profile.parent / "saved"
    _save_in_profile(places, folder)
    async with browser(places) as ext, mcp_client(places, "cursor") as client:
        tab = await open_shared(ext, site.url("127.0.0.1", "downloads-made.html"))
        panel = await ext.open_side_panel()
        xml, is_error, _ = await call(client, "capture_snapshot", tab=tab)
        assert not is_error, xml
        button = eid_on_line(xml, "Save the itinerary")

        results: list[Any] = []
        async with trio.open_nursery() as calls:
            calls.start_soon(_click, results, client, tab, button)
            question = await _answer_in_panel(panel, allow=False)
        assert "itinerary.csv" in question
        assert "text/csv" in question
        text, is_error, _ = results.pop()
        assert "was held: not saved: the person refused" in text
        await trio.sleep(0.5)  # a file let go would be on disk by now
        assert _saved(folder) == []

        async with trio.open_nursery() as calls:
            calls.start_soon(_click, results, client, tab, button)
            await _answer_in_panel(panel, allow=True)
        text, is_error, _ = results.pop()
        assert not is_error, text
        with trio.fail_after(TIMEOUT):
            while _saved(folder) != ["itinerary.csv"]:
                await trio.sleep(0.05)
        assert (folder / "itinerary.csv").read_text() == (
            "day,stop\n1,Harbour inn\n2,Cliff hut\n3,Lighthouse cottage\n"
        )

        # A response's download: asked once (the request guard), and saved.
        tab = await open_shared(ext, site.url("127.0.0.1", "downloads-exports.html"))
        xml, is_error, _ = await call(client, "capture_snapshot", tab=tab)
        link = eid_on_line(xml, "Download the report")
        async with trio.open_nursery() as calls:
            calls.start_soon(_click, results, client, tab, link)
            question = await _answer_in_panel(panel, allow=True)
        assert "downloads-report.csv" in question
        text, is_error, _ = results.pop()
        assert not is_error, text
        assert (folder / "downloads-report.csv").read_bytes() == REPORT
        assert _saved(folder) == ["downloads-report.csv", "itinerary.csv"]
        assert await answer_question(panel, allow=False) is None  # no second question
