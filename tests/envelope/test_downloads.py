"""Downloads: a response the browser would save as a file waits for the person's yes
(the request guard holds it at the response stage); a yes saves it and the answer says
its name, size, type and path; a no or no answer saves nothing; a download that fails
midway is reported as interrupted."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import trio

from pycdp_bridge import PageTarget
from tests.support import TEST_PAGES
from tests.support.handlers_host import SESSION, TAB, Host, open_host
from tests.support.recorder import Recorder
from tests.support.xmltree import listed_id

pytestmark = pytest.mark.browser

SHOP = "127.0.0.1"
REPORT = (TEST_PAGES / "downloads-report.csv").read_bytes()


@pytest.fixture
async def host(page: PageTarget, site: Recorder, nursery: trio.Nursery) -> AsyncIterator[Host]:
    """Handlers of a host on the shop's orders page."""
    async with open_host(page, site.url(SHOP, "downloads-exports.html"), nursery) as host:
        yield host


def folder(host: Host) -> Path:
    """Where the browser saves this run's downloads."""
    return host.page.browser.downloads


def saved(host: Host) -> list[str]:
    return sorted(p.name for p in folder(host).glob("*")) if folder(host).exists() else []


def eid(content: str, tag: str, text: str) -> str:
    """The id of the first `<tag>` whose markup has `text`."""
    for match in re.finditer(rf'<{tag} id="([^"]+)"[^>]*>([^<]*)', content):
        if text in match.group(0):
            return match.group(1)
    if (listed := listed_id(content, tag, text)) is not None:
        return listed
    raise AssertionError(f"no <{tag}> with {text!r} in:\n{content}")


async def click(
    host: Host, tag: str, text: str, content: str | None = None, **extra: Any
) -> dict[str, Any]:
    """Click the element, found in ``content`` (else in a first snapshot)."""
    content = content or str((await host.tool("capture_snapshot"))["content"])
    args = {"id": eid(content, tag, text)}
    return await host.request("tool", session=SESSION, tab=TAB, name="click", args=args, **extra)


def asked(host: Host) -> list[str]:
    return [q["what"] for q in host.person.asked]


async def test_a_yes_saves_the_file_and_the_answer_says_where(host: Host) -> None:
    """A link to an attachment asks what="download" naming the file, its size and
    type as the response said; a yes saves it, and the answer gives the name, size,
    type and the path of a file with the site's bytes."""
    answer = await click(host, "a", "Download the report")
    (question,) = host.person.asked
    assert question["what"] == "download"
    assert question["reason"] == ("Clicking it saves a file from http://127.0.0.1 on this computer")
    assert question["element"] == (
        f'<download name="downloads-report.csv" size="{len(REPORT)}" type="text/csv"/>'
    )
    (download,) = answer["downloads"]
    path = folder(host) / "downloads-report.csv"
    assert download == {
        "name": "downloads-report.csv",
        "size": len(REPORT),
        "type": "text/csv",
        "path": str(path),
        "state": "complete",
    }
    assert path.read_bytes() == REPORT
    assert (
        f"Downloaded downloads-report.csv ({len(REPORT)} bytes, text/csv) to {path}"
        in (answer["content"])
    )
    assert answer["is_error"] is False
    assert await host.evaluate("location.pathname") == "/downloads-exports.html"


async def test_a_no_saves_nothing_and_the_answer_says_it_was_refused(host: Host) -> None:
    """Refused, the download never starts: the folder stays empty, the page stays,
    and the answer says the file was not saved because the person refused."""
    host.person.allow = False
    answer = await click(host, "a", "Download the report")
    assert asked(host) == ["download"]
    assert saved(host) == []
    assert answer["downloads"] == []
    assert answer["held"][0]["sent"] is False
    assert answer["held"][0]["download"] == {
        "name": "downloads-report.csv",
        "size": len(REPORT),
        "type": "text/csv",
    }
    assert "The download of downloads-report.csv" in answer["content"]
    assert "was held: not saved: the person refused" in answer["content"]
    assert await host.evaluate("location.pathname") == "/downloads-exports.html"


async def test_nobody_answering_saves_nothing(host: Host) -> None:
    """A person who never answers: the question is withdrawn when its time is up,
    nothing is saved, and the answer says nobody answered."""
    host.person.allow = None
    answer = await click(host, "a", "Download the report")
    assert asked(host) == ["download"]
    assert [w["ask"] for w in host.person.withdrawn] == [host.person.asked[0]["ask"]]
    assert saved(host) == []
    assert "not saved: nobody answered" in answer["content"]


async def test_a_download_a_script_starts_is_asked_about(host: Host) -> None:
    """A button whose script sets `location` to the export URL asks before the file
    is saved, and a yes saves it."""
    answer = await click(host, "button", "Export all orders")
    assert asked(host) == ["download"]
    assert (folder(host) / "downloads-report.csv").read_bytes() == REPORT
    assert answer["downloads"][0]["state"] == "complete"


async def test_a_form_whose_answer_is_a_file_asks_to_submit_then_to_save(
    host: Host, site: Recorder
) -> None:
    """A form POST whose response is an attachment is asked about as a submit, then
    the response as a download: refused, the form reached the site but nothing is
    saved; allowed, the file is saved."""
    host.person.allow = False
    content = str((await host.tool("capture_snapshot"))["content"])
    refused = await click(host, "button", "Export the year", content)
    assert asked(host) == ["submit"]
    assert site.sent("/api/export") == []
    assert refused["consent"] == {"required": True, "granted": False}

    host.person.allow = True
    answer = await click(host, "button", "Export the year", content)
    assert asked(host) == ["submit", "submit", "download"]
    assert [r.body for r in site.sent("/api/export")] == ["year=2026"]
    assert (folder(host) / "downloads-report.csv").read_bytes() == REPORT
    assert answer["downloads"][0]["name"] == "downloads-report.csv"


async def test_a_download_the_server_drops_is_reported_as_interrupted(host: Host) -> None:
    """A download whose connection the server drops midway (and whose resumption it
    refuses) is answered as interrupted, and no file is left."""
    answer = await click(host, "a", "Download the archive")
    assert asked(host) == ["download"]
    (download,) = answer["downloads"]
    assert download["state"] == "interrupted"
    assert download["name"] == "orders-2026.zip"
    assert "The download of orders-2026.zip" in answer["content"]
    assert "was interrupted" in answer["content"]
    assert "orders-2026.zip" not in saved(host)


async def test_a_file_that_keeps_coming_is_answered_as_still_downloading(host: Host) -> None:
    """A huge download that has not finished when the answer's wait is over is
    answered as still in progress, with its size and the bytes so far; the host keeps
    serving."""
    answer = await click(host, "a", "Download the full history")
    assert asked(host) == ["download"]
    (download,) = answer["downloads"]
    assert download["state"] == "in_progress"
    assert download["path"] is None
    assert download["type"] == "application/octet-stream"
    assert (
        "Still downloading endless-body (134217728 bytes, application/octet-stream)"
        in (answer["content"])
    )
    assert (await host.tool("capture_snapshot"))["is_error"] is False


async def test_with_the_setting_off_a_download_is_saved_unasked(host: Host) -> None:
    """With "ask before submitting or downloading" off, the file is saved without a
    question and the answer still says where it went."""
    answer = await click(host, "a", "Download the report", ask_before_submit=False)
    assert asked(host) == []
    assert answer["downloads"][0]["state"] == "complete"
    assert (folder(host) / "downloads-report.csv").read_bytes() == REPORT


async def test_a_link_with_a_download_attribute_asks_once(host: Host) -> None:
    """A link with a download attribute is asked about before the click; that yes
    covers the file it saves (one question per call), and the answer says where."""
    answer = await click(host, "a", "Save the orders")
    assert asked(host) == ["download"]
    assert answer["consent"] == {"required": True, "granted": True}
    (download,) = answer["downloads"]
    assert download["state"] == "complete"
    assert Path(download["path"]).read_bytes() == REPORT


async def test_a_page_that_only_navigates_asks_nothing(host: Host) -> None:
    """A plain link to a page is no download: no question, no file, no note."""
    answer = await click(host, "a", "Back to the shop")
    assert asked(host) == []
    assert answer["downloads"] == []
    assert saved(host) == []
    assert await host.evaluate("location.pathname") == "/guard-shop.html"
