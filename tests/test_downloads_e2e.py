"""Downloads end to end: real headless Chromium with the real extension, the real host
Chrome starts, and a real ``trimtab mcp`` client. A download an outside agent's click
starts is asked about in the real side panel; refused, nothing is saved; allowed, the
extension's ``download`` messages (chrome.downloads) tell the host where it went."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio
from mcp import Client

from tests.support import TEST_PAGES
from tests.support.e2e import ExtensionBrowser, answer_question
from tests.support.outside import TIMEOUT, Places, browser, call, eid_of, mcp_client, places, share
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
        _target, tab = await ext.open_tab(site.url("127.0.0.1", "downloads-exports.html"))
        await ext.wait_loaded(tab)
        await share(ext, tab)
        panel = await ext.open_side_panel()
        xml, is_error, _ = await call(client, "capture_snapshot", tab=tab)
        assert not is_error, xml
        link = eid_of(xml, "Download the report")

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
