"""Launching Chromium over the CDP pipe, pages, and clean shutdown on every path."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import cdp.page
import cdp.runtime
import pytest
import trio

from pycdp_bridge import (
    Browser,
    BrowserNotFoundError,
    CDPError,
    JavaScriptError,
    NavigationError,
    PageTarget,
    TargetClosedError,
    browser_args,
    find_browser,
    launch_browser,
)
from tests.support import LAUNCHED_PROFILES, TEST_PAGES, StaticServer, browser_processes
from tests.support.shared_browser import Shared

pytestmark = pytest.mark.browser


def test_browser_not_found_names_what_was_tried(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """TRIMTAB_CHROME pointing nowhere raises BrowserNotFoundError with install advice."""
    missing = tmp_path / "no-such-chrome"
    monkeypatch.setenv("TRIMTAB_CHROME", str(missing))
    with pytest.raises(BrowserNotFoundError) as raised:
        find_browser()
    message = str(raised.value)
    assert str(missing) in message
    assert "apt-get install chromium" in message
    assert "TRIMTAB_CHROME" in message


def test_browser_not_found_on_empty_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without TRIMTAB_CHROME and nothing on PATH, every candidate name is listed."""
    monkeypatch.delenv("TRIMTAB_CHROME", raising=False)
    monkeypatch.setenv("PATH", "")
    with pytest.raises(BrowserNotFoundError, match="chromium-browser on PATH"):
        find_browser()


async def test_page_navigates_and_evaluates(page: PageTarget) -> None:
    """A new page loads a file URL, waits for its load event and evaluates JavaScript."""
    url = (TEST_PAGES / "frames" / "same.html").as_uri()
    await page.navigate(url)
    assert await page.evaluate("document.getElementById('same-text').textContent") == (
        "Text in the same-origin frame"
    )
    assert await page.evaluate("Promise.resolve(6 * 7)") == 42
    assert await page.evaluate("location.href") == url


async def test_cdp_package_generators_run_through_execute(page: PageTarget) -> None:
    """The cdp package's command generators run on a real page via Target.execute."""
    frame_id, loader_id, error = await page.execute(
        cdp.page.navigate((TEST_PAGES / "frames" / "same.html").as_uri())
    )
    value, exception = await page.execute(cdp.runtime.evaluate("1 + 2", return_by_value=True))
    assert frame_id
    assert loader_id
    assert error is None
    assert exception is None
    assert value.value == 3


async def test_errors_are_typed(page: PageTarget) -> None:
    """Refused commands, failed loads and thrown scripts raise their own exceptions."""
    with pytest.raises(CDPError, match=r"Nope\.nothing") as refused:
        await page.send("Nope.nothing")
    assert refused.value.code == -32601
    with pytest.raises(NavigationError, match="ERR_FILE_NOT_FOUND"):
        await page.navigate((TEST_PAGES / "missing.html").as_uri())
    with pytest.raises(JavaScriptError, match="boom"):
        await page.evaluate("throw new Error('boom')")


async def test_closed_page_refuses_commands(browser: Browser) -> None:
    """After close(), the page's session is detached and commands raise TargetClosedError."""
    page = await browser.new_page()
    async with browser.listen("Target.detachedFromTarget") as events:
        await page.close()
        async for event in events:
            if event.params.get("sessionId") == page.session_id:
                break
    assert page.closed
    with pytest.raises(TargetClosedError):
        await page.evaluate("1")


async def test_events_reach_page_listeners(page: PageTarget) -> None:
    """Page events arrive on a page listener with session_id None (the page's own)."""
    async with page.listen("Page.lifecycleEvent") as events:
        await page.send("Page.navigate", {"url": (TEST_PAGES / "frames" / "same.html").as_uri()})
        async for event in events:
            if event.params.get("name") == "load":
                break
    assert event.session_id is None
    assert event.method == "Page.lifecycleEvent"


async def test_shutdown_leaves_no_process_and_no_profile() -> None:
    """Leaving launch_browser stops every Chromium process and removes the temp profile."""
    async with launch_browser() as browser:
        LAUNCHED_PROFILES.append(browser.user_data_dir)
        await browser.new_page()
        assert browser_processes(browser.user_data_dir)
        assert (browser.user_data_dir / "chrome.log").is_file()
    assert browser_processes(browser.user_data_dir) == []
    assert not browser.user_data_dir.exists()


@pytest.mark.parametrize("extra_args", [(), ("--disable-features=Translate",)])
async def test_a_new_window_preloads_no_browser_ui(extra_args: tuple[str, ...]) -> None:
    """A launched browser's windows, the first and one per new browser context, load no
    page of Chromium's own UI (the omnibox popup's WebUI, a renderer per window), also
    when the caller turns features of its own off (Chromium keeps one such switch)."""
    async with launch_browser(extra_args=extra_args) as browser:
        LAUNCHED_PROFILES.append(browser.user_data_dir)
        context = await browser.send("Target.createBrowserContext")
        await browser.send(
            "Target.createTarget",
            {"url": "about:blank", "browserContextId": context["browserContextId"]},
        )
        # Chromium creates the popup's pages with the window; give it the time it takes.
        await trio.sleep(1)
        found = await browser.send("Target.getTargets", {"filter": [{}]})
        kinds = {info["type"] for info in found["targetInfos"]}
        assert kinds <= {"page", "tab"}, found["targetInfos"]


def test_the_switches_keep_one_list_of_disabled_features_last() -> None:
    """`browser_args` puts the base switches first and the caller's after them, and
    joins every ``--disable-features`` list, the base's and the caller's, into one
    switch at the end (each name once); with no list of the caller's, the base's."""
    base = browser_args()
    [features] = [flag for flag in base if flag.startswith("--disable-features=")]
    assert base[-1] == features
    args = browser_args("--a", "--disable-features=Translate,WebUIOmniboxPopup", "--b")
    assert args[: len(base) - 1] == base[:-1]
    assert args[len(base) - 1 : -1] == ["--a", "--b"]
    assert args[-1] == f"{features},Translate"
    assert browser_args("--disable-features=") == base


async def test_a_killed_browser_leaves_nothing_outside_its_profile() -> None:
    """Chromium's one-browser-per-profile socket lives in a folder of the profile (not
    of /tmp), so a browser killed outright leaves nothing once its profile is removed."""
    async with launch_browser() as browser:
        LAUNCHED_PROFILES.append(browser.user_data_dir)
        await browser.new_page()
        socket = os.readlink(browser.user_data_dir / "SingletonSocket")
        assert Path(socket).is_relative_to(browser.user_data_dir), socket
        assert Path(socket).is_socket()
        os.killpg(browser.pid, signal.SIGKILL)
    assert not Path(socket).parent.exists()


async def test_exception_in_body_still_stops_browser() -> None:
    """An exception inside the launch block still kills the whole process group."""
    profiles: list[Path] = []

    async def fail_inside() -> None:
        async with launch_browser() as browser:
            profiles.append(browser.user_data_dir)
            LAUNCHED_PROFILES.append(browser.user_data_dir)
            await browser.new_page()
            raise RuntimeError("body failed")

    with trio.fail_after(60), pytest.raises(RuntimeError, match="body failed"):
        await fail_inside()
    [profile] = profiles
    assert browser_processes(profile) == []
    assert not profile.exists()


async def test_cancellation_still_stops_browser() -> None:
    """Cancelling the task that holds the browser still kills the whole process group."""
    profiles: list[Path] = []
    with trio.CancelScope() as scope:
        async with launch_browser() as browser:
            profiles.append(browser.user_data_dir)
            LAUNCHED_PROFILES.append(browser.user_data_dir)
            await browser.new_page()
            scope.cancel()
            await trio.sleep_forever()
    assert scope.cancelled_caught
    assert browser_processes(profiles[0]) == []


async def test_given_profile_dir_is_kept(tmp_path: Path) -> None:
    """A caller's user-data-dir is used and left in place, with Chromium's log in it."""
    profile = tmp_path / "profile"
    profile.mkdir()
    async with launch_browser(user_data_dir=profile, window_size=(800, 600)) as browser:
        LAUNCHED_PROFILES.append(profile)
        page = await browser.new_page()
        width = await page.evaluate("window.innerWidth")
    assert width == 800
    assert (profile / "chrome.log").is_file()
    assert browser_processes(profile) == []


async def test_each_test_gets_a_browser_of_its_own_from_theshared_chromium(
    shared_chromium: Shared, tmp_path: Path, pages_server: StaticServer
) -> None:
    """Two connections to the shared Chromium in turn: the second sees none of the first's
    tabs, cookies or storage, and a tab it opens is in a context of its own."""
    if shared_chromium is None:
        pytest.skip("--fresh-browser: no shared Chromium in this run")
    url = pages_server.url("e2e-relay.html")
    async with shared_chromium.connect(tmp_path / "first") as first:
        page = await first.new_page(url)
        await page.evaluate("document.cookie = 'seen=1'; localStorage.setItem('seen', '1')")
        assert await page.evaluate("document.cookie") == "seen=1"
        first_tab = page.target_id
    async with shared_chromium.connect(tmp_path / "second") as second:
        page = await second.new_page(url)
        assert await page.evaluate("document.cookie") == ""
        assert await page.evaluate("localStorage.getItem('seen')") is None
        found = await second.send("Target.getTargets")
        ids = [info["targetId"] for info in found["targetInfos"] if info["type"] == "page"]
        assert ids == [page.target_id]
        assert first_tab not in ids
