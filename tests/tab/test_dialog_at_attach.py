"""A page that asks a JavaScript dialog just as the host first reaches its tab: the
page observer's installation is stopped by the dialog, and it is installed once the
dialog is answered, for the side panel's agent and for an outside client (a real
``trimtab mcp`` process on the link), against a real headless page. The relay peer
stands in for the extension's relay; it loads the page at the moment the host's
first ``Page.enable`` is on its way, so the dialog meets the installation every time."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable

import pytest
import trio

from pycdp_bridge import DialogOpenError, PageTarget
from pycdp_bridge import protocol as cdp
from tests.support import StaticServer
from tests.support.handlers_host import TAB, open_host
from tests.support.link_host import open_link_host
from tests.support.outside import call
from trimtab.browser import HostState

pytestmark = pytest.mark.browser

PAGE = "dialog-at-load.html"
# The page's confirm, as the agent is shown it.
ASKED = '<js-dialog type="confirm" message="Sign the visitors book?"/>'
# What the page writes when a script the host did not run changes it.
BY_ITSELF = "document.getElementById('status').textContent = 'A parcel came by itself.'; 0"


def dialog_as_the_host_attaches(page: PageTarget, url: str) -> Callable[[str], Awaitable[None]]:
    """A relay peer's ``before_command``: as the host's first ``Page.enable`` (the page
    observer's installation) is on its way, the tab loads ``url``, whose script asks a
    confirm as it loads; the command goes on to the page once the dialog shows."""
    begun = False

    async def before(method: str) -> None:
        nonlocal begun
        if method != "Page.enable" or begun:
            return
        begun = True
        async with page.listen(cdp.events.PAGE_JAVASCRIPT_DIALOG_OPENING) as opening:
            # The dialog may open before the navigation's own answer comes.
            with contextlib.suppress(DialogOpenError):
                await page.execute(cdp.page_navigate(url))
            with trio.fail_after(30):
                await opening.receive()

    return before


async def quiet(state: HostState) -> None:
    """Wait until the observer reports no frame of the tab as still changing (the page
    finished loading after the dialog), so that the next read may come from cache."""
    with trio.fail_after(10):
        while state.statistics().revisions[TAB].open_windows:
            await trio.sleep(0.02)


async def test_a_side_panel_task_gets_page_revisions_once_the_dialog_is_answered(
    page: PageTarget, pages_server: StaticServer, nursery: trio.Nursery
) -> None:
    """The side panel's agent, first reaching a tab as it asks a confirm, is shown the
    dialog; once answer_dialog closes it, a repeated read comes from cache, a read after
    the page changed by itself does not, and an action's answer waits until the page
    is quiet (the last of ten greetings) rather than a fixed time."""
    url = pages_server.url(PAGE)
    before = dialog_as_the_host_attaches(page, url)
    async with open_host(page, "about:blank", nursery, before_command=before) as host:
        blocked = await host.tool("capture_snapshot")
        assert blocked["is_error"] is True
        assert ASKED in blocked["content"]

        answered = await host.tool("answer_dialog", accept=True)
        assert answered["is_error"] is False, answered["content"]
        assert [q["tool"] for q in host.person.asked] == ["answer_dialog"]
        assert "Signed the book." in answered["content"]

        await quiet(host.state)
        reads = [await host.tool("capture_snapshot") for _ in range(2)]
        assert [r["cached"] for r in reads] == [False, True]
        await host.evaluate(BY_ITSELF)
        changed = await host.tool("capture_snapshot")
        assert changed["cached"] is False
        assert "A parcel came by itself." in changed["content"]

        greet = next(line for line in changed["content"].splitlines() if "Greet the" in line)
        greeted = await host.tool("click", id=greet.split('id="')[1].split('"')[0])
        assert greeted["is_error"] is False, greeted["content"]
        assert "All ten guests greeted." in greeted["content"]


async def test_a_dialog_the_person_answers_has_the_follower_install_the_observer(
    page: PageTarget, pages_server: StaticServer, nursery: trio.Nursery
) -> None:
    """When the person answers the dialog in the browser instead of the agent, the tab's
    follower installs the observer on the dialog's close event, before any further
    call, and the agent's repeated read after that comes from cache."""
    url = pages_server.url(PAGE)
    before = dialog_as_the_host_attaches(page, url)
    async with open_host(page, "about:blank", nursery, before_command=before) as host:
        blocked = await host.tool("capture_snapshot")
        assert ASKED in blocked["content"]
        assert host.state.statistics().revisions[TAB].installed is False
        # The person's Cancel, in the browser: the host makes no call meanwhile.
        await page.execute(cdp.page_handle_javascript_dialog(accept=False))
        with trio.fail_after(10):
            while not host.state.statistics().revisions[TAB].installed:
                await trio.sleep(0.02)

        await quiet(host.state)
        reads = [await host.tool("capture_snapshot") for _ in range(2)]
        assert [r["cached"] for r in reads] == [False, True]
        assert "Left the book unsigned." in reads[0]["content"]


async def test_an_outside_client_gets_page_revisions_once_the_dialog_is_answered(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """An outside agent (``trimtab mcp`` on the link), first reaching a shared tab as it
    asks a confirm, is shown the dialog; once its answer_dialog closes it, a repeated
    read comes from cache, a read after the page changed by itself does not, and an
    action's answer waits until the page is quiet rather than a fixed time."""
    url = pages_server.url(PAGE)
    before = dialog_as_the_host_attaches(page, url)
    async with open_link_host(page, "about:blank", before_command=before) as host:
        await host.share(TAB)
        async with host.mcp_client() as client:
            blocked, is_error, _ = await call(client, "capture_snapshot", tab=TAB)
            assert is_error
            assert ASKED in blocked

            # Cancel on a confirm commits nothing: nobody is asked.
            answered, is_error, _ = await call(client, "answer_dialog", tab=TAB, accept=False)
            assert not is_error, answered
            assert "Left the book unsigned." in answered

            await quiet(host.link.state)
            _, _, first_meta = await call(client, "capture_snapshot", tab=TAB)
            _, _, again_meta = await call(client, "capture_snapshot", tab=TAB)
            assert [first_meta["cached"], again_meta["cached"]] == [False, True]
            await page.evaluate(BY_ITSELF)
            changed, _, changed_meta = await call(client, "capture_snapshot", tab=TAB)
            assert changed_meta["cached"] is False
            assert "A parcel came by itself." in changed

            greet = next(line for line in changed.splitlines() if "Greet the" in line)
            eid = greet.split('id="')[1].split('"')[0]
            greeted, is_error, _ = await call(client, "click", tab=TAB, id=eid)
            assert not is_error, greeted
            assert "All ten guests greeted." in greeted
