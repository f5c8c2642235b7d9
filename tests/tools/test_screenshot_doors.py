"""`screenshot` through the doors outside agents use: a real MCP client gets image
content, ``trimtab call screenshot`` writes the image to a file and prints its path
(a real host state and link on a headless page, over the relay's path), and through
the real extension's ``chrome.debugger`` a shared tab behind another is captured."""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path

import pytest
import trio
from mcp_types import ImageContent, TextContent
from PIL import Image

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.link_host import TAB, TIMEOUT, open_link_host
from tests.support.outside import Places, browser, mcp_client, open_shared, places
from tests.tools.test_screenshot import ORANGE, near

pytestmark = pytest.mark.browser

__all__ = ["places"]  # the fixture


async def test_an_mcp_client_gets_the_chart_as_image_content(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """`screenshot` through ``trimtab mcp`` answers a text part (Trimtab's facts, in the
    page data block) and an MCP image part: a JPEG of the viewport with the chart's
    orange bar where the page drew it; repeated on an unchanged page, the call tracker
    answers it."""
    async with (
        open_link_host(page, pages_server.url("pixels-chart.html")) as host,
        host.mcp_client() as client,
    ):
        await host.share(TAB)
        listed = await client.list_tools()
        assert "screenshot" in {tool.name for tool in listed.tools}
        with trio.fail_after(TIMEOUT):
            result = await client.call_tool("screenshot", {"tab": TAB})
        assert not result.is_error, result.content
        text, image = result.content
        assert isinstance(text, TextContent)
        assert re.search(r"<<<PAGE DATA \w+>>>\n<screenshot of=\"viewport\"", text.text)
        assert isinstance(image, ImageContent)
        assert image.mime_type == "image/jpeg"
        picture = Image.open(io.BytesIO(base64.b64decode(image.data)))
        assert picture.format == "JPEG"
        width = await page.evaluate("document.documentElement.clientWidth")
        assert picture.size == (width, await page.evaluate("innerHeight"))
        assert near(picture.convert("RGB").getpixel((320, 200)), ORANGE)
        # A read: the same call on the unchanged page is the tracker's, image and all;
        # once the page changes it is taken anew.
        with trio.fail_after(TIMEOUT):
            again = await client.call_tool("screenshot", {"tab": TAB})
        assert (again.meta or {})["trimtab"]["cached"] is True
        assert again.content[-1] == image
        await page.evaluate("document.body.style.background = 'rgb(0, 0, 0)'")
        with trio.fail_after(TIMEOUT):
            changed = await client.call_tool("screenshot", {"tab": TAB})
        assert (changed.meta or {})["trimtab"]["cached"] is False


async def test_trimtab_call_screenshot_writes_a_file_and_prints_its_path(
    page: PageTarget, pages_server: StaticServer, tmp_path: Path
) -> None:
    """``trimtab call screenshot`` prints the path of the image it wrote (a new file by
    default, ``--out`` where asked); with ``--json`` the reply names the file instead of
    carrying the bytes; a bad id is a tool error on stderr, no file."""
    async with open_link_host(page, pages_server.url("pixels-chart.html")) as host:
        await host.share(TAB)
        code, out, err = await host.trimtab("call", "screenshot")
        assert code == 0, err
        written = Path(out.strip())
        try:
            assert written.suffix == ".jpg"
            picture = Image.open(written)
            assert picture.format == "JPEG"
            assert near(picture.convert("RGB").getpixel((320, 200)), ORANGE)
        finally:
            written.unlink()
        target = tmp_path / "chart.png"
        code, out, err = await host.trimtab(
            "call", "screenshot", "format=png", "full_page=true", "--out", str(target)
        )
        assert code == 0, err
        assert out == f"{target}\n"
        assert Image.open(target).format == "PNG"
        code, out, err = await host.trimtab(
            "call", "screenshot", "--json", "--out", str(tmp_path / "again.jpg")
        )
        assert code == 0, err
        reply = json.loads(out)
        assert reply["image"]["file"] == str(tmp_path / "again.jpg")
        assert reply["image"]["data"] is None
        assert reply["image"]["mime"] == "image/jpeg"
        code, out, err = await host.trimtab("call", "screenshot", "id=zz999")
        assert (code, out) == (1, "")
        assert err.startswith("trimtab: tool_error: ")
        assert "stale id" in err


async def test_a_shared_tab_behind_another_is_captured_through_the_extension(
    places: Places, pages_server: StaticServer
) -> None:
    """Through trimtab mcp, the real host and the extension's chrome.debugger, a shared
    tab behind another (hidden long enough to be throttled) is captured as it is, with
    no step of the relay's own, and stays behind."""
    async with browser(places) as ext, mcp_client(places) as client:
        tab = await open_shared(ext, pages_server.url("pixels-chart.html"))
        front, _ = await ext.open_tab("about:blank")
        await (await ext.attach(front)).send("Page.bringToFront")
        # Chromium throttles a hidden page's rendering once it has been hidden a moment.
        await trio.sleep(1.5)
        with trio.fail_after(TIMEOUT):
            result = await client.call_tool("screenshot", {"tab": tab})
        assert not result.is_error, result.content
        image = result.content[-1]
        assert isinstance(image, ImageContent)
        picture = Image.open(io.BytesIO(base64.b64decode(image.data))).convert("RGB")
        assert near(picture.getpixel((320, 200)), ORANGE)
        assert not await ext.worker.evaluate(f"chrome.tabs.get({tab}).then((t) => t.active)")
