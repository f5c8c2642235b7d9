"""A task spans tabs like a person's, through the host's ``tool`` request on a real
headless Chromium: pop-ups and new tabs an action opens join the task, pass the site
rules before their first request, and are told in the answer; each tab keeps its own
ids; the task keeps at most 10 tabs.

The relay is the test peer over the direct transport: it reports each page opened
from a tab of the task, held by the browser before its first request
(`Browser.opened_pages`). Two sites without leaving the machine: every ``*.test`` name
is 127.0.0.1 (``shop.test`` and ``provider.test`` are two sites, on two ports).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from typing import Any

import attrs
import pytest
import trio

from pycdp_bridge import Browser, PageTarget
from pycdp_bridge import protocol as cdp
from tests.support import StaticServer
from tests.support.handlers_host import SESSION, TAB, Host, open_host
from tests.support.link_host import open_link_host
from tests.support.xmltree import control_id
from trimtab.browser import Toolbox
from trimtab.tools import TASK_TOOLS, TOOLS

pytestmark = pytest.mark.browser


def shop(pages: StaticServer, provider: StaticServer, page: str = "tabs-shop.html") -> str:
    return f"http://shop.test:{pages.port}/{page}?provider=http://provider.test:{provider.port}"


def opened_tab(content: str) -> int:
    """The tab id an answer's note says the action opened."""
    found = re.search(r"(?:pop-up|new tab)(?: behind)?, tab (\d+)", content)
    assert found is not None, content
    return int(found.group(1))


async def page_targets(browser: Browser) -> list[dict[str, Any]]:
    found = await browser.execute(cdp.target_get_targets())
    return [t for t in found["targetInfos"] if t["type"] == "page"]


@pytest.fixture
async def host(
    page: PageTarget,
    pages_server: StaticServer,
    second_server: StaticServer,
    nursery: trio.Nursery,
) -> AsyncIterator[Host]:
    """The side panel's handlers on the shop's checkout (shop.test)."""
    async with open_host(page, shop(pages_server, second_server), nursery) as host:
        yield host


async def test_sign_in_with_a_provider_pop_up_completes_in_the_opener(host: Host) -> None:
    """The shop's "Sign in with Provider" opens the provider's pop-up (another site,
    asked about once); the answer names it and shows its page; the agent signs in
    there; the pop-up posts the name to the shop and closes itself, and that answer
    says so and gives the shop's diff, which shows the signed-in name."""
    first = await host.tool("capture_snapshot")
    opened = await host.tool(
        "click", id=control_id(first["content"], "button", "Sign in with Provider")
    )
    assert not opened["is_error"], opened["content"]
    popup = opened_tab(opened["content"])
    assert "you are in it now" in opened["content"]
    assert "Sign in to Provider" in opened["content"]
    (site,) = [q for q in host.person.asked if q["what"] == "site"]
    assert site["site"] == "http://provider.test"
    typed = await host.tool(
        "type", id=control_id(opened["content"], "input", "Account name"), text="Sam"
    )
    assert typed["tab"] == popup, typed["content"]
    assert not typed["is_error"], typed["content"]
    done = await host.tool("click", id=control_id(opened["content"], "button", "Continue"))
    assert not done["is_error"], done["content"]
    assert f"tab {popup} closed itself" in done["content"]
    assert "Signed in as Sam" in done["content"]
    assert 'snapshot="diff"' in done["content"]
    listed = await host.tool("tabs")
    assert f'id="{TAB}"' in listed["content"]
    assert f'id="{popup}"' not in listed["content"]
    assert await host.evaluate("document.getElementById('who').textContent") == "Signed in as Sam"


async def test_a_pop_up_that_closed_itself_answers_with_what_its_opener_did_after(
    page: PageTarget, pages_server: StaticServer, second_server: StaticServer, nursery: trio.Nursery
) -> None:
    """A shop that checks the sign-in with its server shows the name 250 ms after the
    pop-up's message and its closing: the closing click's answer waits for the shop's
    page to be quiet, and shows the name (it showed the shop as it was before)."""
    url = shop(pages_server, second_server) + "&verify=250"
    async with open_host(page, url, nursery) as host:
        first = await host.tool("capture_snapshot")
        opened = await host.tool(
            "click", id=control_id(first["content"], "button", "Sign in with Provider")
        )
        await host.tool(
            "type", id=control_id(opened["content"], "input", "Account name"), text="Sam"
        )
        done = await host.tool("click", id=control_id(opened["content"], "button", "Continue"))
        assert "closed itself" in done["content"], done["content"]
        assert "Signed in as Sam" in done["content"], done["content"]


async def test_a_refused_pop_up_sends_nothing_and_is_closed(host: Host) -> None:
    """With the person saying no to the provider's site, the pop-up's first request
    never leaves the browser, the answer says it was blocked, and the tab is gone."""
    host.person.allow = False
    first = await host.tool("capture_snapshot")
    before = len(await page_targets(host.page.browser))
    refused = await host.tool(
        "click", id=control_id(first["content"], "button", "Sign in with Provider")
    )
    assert "tried to open a pop-up on http://provider.test" in refused["content"]
    assert "blocked" in refused["content"]
    with trio.fail_after(10):
        while len(await page_targets(host.page.browser)) > before:
            await trio.sleep(0.05)
    listed = await host.tool("tabs")
    assert listed["content"].count("<tab ") == 1


async def test_search_results_open_behind_and_each_tab_keeps_its_own_memory(
    host: Host, pages_server: StaticServer
) -> None:
    """Results that open in new tabs stay behind with a one-line note; the agent reads
    two of them and comes back to the list, which answers with a diff of its own; an id
    of the list used in a result's tab is refused naming both tabs."""
    listed = await host.tool(
        "navigate", url=f"http://shop.test:{pages_server.port}/tabs-results.html"
    )
    one = await host.tool("click", id=control_id(listed["content"], "a", "Ridge 2 tent"))
    two = await host.tool("click", id=control_id(listed["content"], "a", "Cairn 3 tent"))
    first, second = opened_tab(one["content"]), opened_tab(two["content"])
    assert "new tab behind" in one["content"]
    assert f"switch_tab({first}) to act in it (you are in tab {TAB})" in one["content"]
    assert "Ridge 2 tent \N{EN DASH} details" not in one["content"].split("<note>")[0]
    read_one = await host.tool("switch_tab", tab=first)
    assert "Price £110" in read_one["content"]
    assert 'snapshot="baseline"' in read_one["content"]
    stray = await host.tool("click", id=control_id(listed["content"], "a", "Fell 1 bivy"))
    assert stray["is_error"]
    assert f"is from tab {TAB}" in stray["content"]
    assert f"acts in tab {first}" in stray["content"]
    added = await host.tool("click", id=control_id(read_one["content"], "button", "Add to basket"))
    assert added["tab"] == first
    assert "In basket" in added["content"]
    read_two = await host.tool("switch_tab", tab=second)
    assert "Price £120" in read_two["content"]
    back = await host.tool("switch_tab", tab=TAB)
    assert 'snapshot="diff"' in back["content"], back["content"]
    tabs = await host.tool("tabs")
    assert tabs["content"].count("<tab ") == 3
    # The person sees the task's tabs as one group, named for the task's client.
    grouped = [m for m in host.peer.sent if m["type"] == "tab_group"]
    assert sorted(grouped[-1]["tabs"]) == sorted([TAB, first, second])
    assert f'id="{first}" url=' in tabs["content"]
    assert f'opener="{TAB}"' in tabs["content"]
    assert f'id="{TAB}"' in tabs["content"].split('current="true"')[0].rsplit("<tab ", 1)[1]


@pytest.mark.popups
async def test_fifty_tabs_in_a_loop_are_capped_at_ten(
    host: Host, pages_server: StaticServer
) -> None:
    """A click that opens 50 tabs leaves the task with 10 tabs: the rest are closed and
    the answer and `tabs` say they were blocked."""
    listed = await host.tool(
        "navigate", url=f"http://shop.test:{pages_server.port}/tabs-results.html"
    )
    flood = await host.tool("click", id=control_id(listed["content"], "button", "Open all offers"))
    assert "it opened 41 more tabs, blocked: the task keeps at most 10" in flood["content"]
    tabs = await host.tool("tabs")
    assert tabs["content"].count("<tab ") == 10
    assert "more tabs were blocked: a task keeps at most 10" in tabs["content"]
    with trio.fail_after(30):
        while len(await page_targets(host.page.browser)) > 10 + 1:  # and the blank first tab
            await trio.sleep(0.1)


@pytest.mark.popups
async def test_a_pop_up_that_closes_at_once_and_one_that_opens_another(
    host: Host, pages_server: StaticServer
) -> None:
    """A pop-up that closes as it loads is told as opened and closed again, and leaves
    the task; a pop-up whose page opens its own pop-up brings both into the task, the
    second one opened by the first."""
    first = await host.tool("capture_snapshot")
    quick = await host.tool(
        "click", id=control_id(first["content"], "button", "Quick sign-in check")
    )
    if "which closed again" not in quick["content"]:
        # Its script closes it once its document is there: on a busy machine that may
        # come after the click's answer, which then tells it as opened (found at load).
        assert "it opened a pop-up, tab " in quick["content"], quick["content"]
        assert "tabs-provider.html?close=1" in quick["content"], quick["content"]
    with trio.fail_after(10):
        while (await host.tool("tabs"))["content"].count("<tab ") != 1:
            await trio.sleep(0.1)
    listed = await host.tool(
        "navigate", url=f"http://shop.test:{pages_server.port}/tabs-results.html"
    )
    chained = await host.tool(
        "click", id=control_id(listed["content"], "button", "Compare in a window")
    )
    compare = opened_tab(chained["content"])
    with trio.fail_after(20):
        while (tabs := await host.tool("tabs"))["content"].count("<tab ") < 3:
            await trio.sleep(0.1)
    assert f'opener="{compare}"' in tabs["content"]


@pytest.mark.popups
@pytest.mark.long
async def test_a_pop_up_that_closes_itself_while_it_is_read_leaves_a_clear_answer(
    host: Host, pages_server: StaticServer, second_server: StaticServer
) -> None:
    """A pop-up that closes itself a moment after it opened, whenever that falls
    (before the click's answer, while its page is read for it, after it), leaves the
    click answered without an error, and the task back in the tab that opened it."""
    button = control_id(
        (await host.tool("capture_snapshot"))["content"], "button", "Quick sign-in check"
    )
    # (on an idle machine the closing falls into the read near 150-250 ms)
    for delay in range(0, 400, 25):
        # (the same page each time: its main region is told as unchanged, the id holds)
        await host.tool("navigate", url=shop(pages_server, second_server) + f"&check={delay}")
        quick = await host.tool("click", id=button)
        assert not quick["is_error"], (delay, quick["content"])
        with trio.fail_after(10):
            while (await host.tool("tabs"))["content"].count("<tab ") != 1:
                await trio.sleep(0.05)


@pytest.mark.popups
async def test_consent_and_the_call_tracker_work_in_a_tab_the_task_opened(
    host: Host, pages_server: StaticServer
) -> None:
    """In a pop-up the task opened, a submit asks the person naming that tab, and a
    repeated read is answered from that tab's own cache."""
    listed = await host.tool(
        "navigate", url=f"http://shop.test:{pages_server.port}/tabs-results.html"
    )
    chained = await host.tool(
        "click", id=control_id(listed["content"], "button", "Compare in a window")
    )
    compare = opened_tab(chained["content"])
    # The comparison page opens its detail window as it loads: on a busy machine that
    # comes after the click's answer, and tells the tracker the comparison changed.
    # The repeated read is compared once the page is done opening it.
    with trio.fail_after(30):
        while (await host.tool("tabs"))["content"].count("<tab ") < 3:
            await trio.sleep(0.1)
    await host.tool("switch_tab", tab=compare)
    await host.tool("capture_snapshot")
    # A tab in the list may still be changing (a busy run failed the read right after
    # the first one as uncached: the page observer saw a change in between). A read
    # that follows a quiet one is answered from the cache, so the reads go on until
    # one is; a cache that never answered would end the loop with TooSlowError.
    with trio.fail_after(10):
        while not (again := await host.tool("capture_snapshot"))["cached"]:
            pass
    assert again["tab"] == compare
    # The pop-up's first page came with the answer of the click that opened it.
    bought = await host.tool("click", id=control_id(chained["content"], "button", "Buy now"))
    assert not bought["is_error"], bought["content"]
    (asked,) = [q for q in host.person.asked if q["what"] == "submit"]
    assert asked["tab"] == compare
    assert bought["consent"] == {"required": True, "granted": True}


@pytest.mark.popups
async def test_a_pop_up_opened_outside_an_action_goes_only_where_the_task_may(
    page: PageTarget, pages_server: StaticServer, nursery: trio.Nursery
) -> None:
    """A pop-up on the shop whose page, as it loads, opens a window on another site by
    itself (no action of the agent's): nobody can be asked, so that window's first
    request never leaves the browser, and the window is closed."""
    provider = await nursery.start(_logging_server)
    url = f"http://shop.test:{pages_server.port}/tabs-shop.html?provider=http://provider.test:{provider.port}"
    async with open_host(page, url, nursery) as host:
        first = await host.tool("capture_snapshot")
        await host.tool("click", id=control_id(first["content"], "button", "Compare prices"))
        with trio.fail_after(20):
            while not any(m["type"] == "cdp_close_tab" for m in host.peer.sent):
                await trio.sleep(0.05)
            while any(
                t["url"].startswith("http://provider.test")
                for t in await page_targets(page.browser)
            ):
                await trio.sleep(0.05)
        await trio.sleep(1)  # a request let go would have arrived by now
        assert provider.hits == []
        assert host.person.asked == []


@attrs.define
class _Logged:
    port: int
    hits: list[str] = attrs.field(factory=list)


async def _logging_server(*, task_status: trio.TaskStatus[_Logged]) -> None:
    """A site that logs every request line it gets (and answers with a blank page)."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    logged = _Logged(listeners[0].socket.getsockname()[1])

    async def handle(stream: trio.SocketStream) -> None:
        async with stream:
            with contextlib.suppress(trio.BrokenResourceError):
                head = await stream.receive_some(65536)
                logged.hits.append(head.split(b"\r\n", 1)[0].decode(errors="replace"))
                body = b"<title>Provider</title>"
                await stream.send_all(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n"
                    b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
                )

    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.serve_listeners, handle, listeners)
        task_status.started(logged)


async def test_bad_tab_ids_and_a_tab_closed_mid_action_get_clear_answers(
    host: Host, pages_server: StaticServer
) -> None:
    """A tab id that never existed, or one that is not a number, is refused naming the
    task's tabs; a tab closed while an action waits in it answers that it closed, and
    the task goes on in the tab that opened it."""
    for bad in (123456, "abc", True):
        answer = await host.tool("switch_tab", tab=bad)
        assert answer["is_error"]
        assert f"its tabs are {TAB}" in answer["content"]
    listed = await host.tool(
        "navigate", url=f"http://shop.test:{pages_server.port}/tabs-results.html"
    )
    one = await host.tool("click", id=control_id(listed["content"], "a", "Ridge 2 tent"))
    tab = opened_tab(one["content"])
    await host.tool("switch_tab", tab=tab)
    target = next(t["targetId"] for t in await page_targets(host.page.browser) if "n=1" in t["url"])
    async with trio.open_nursery() as nursery:
        waiting: dict[str, Any] = {}

        async def wait() -> None:
            waiting.update(await host.tool("wait_for", text="Never on the page", timeout=20))

        nursery.start_soon(wait)
        await trio.sleep(1)
        await host.page.browser.execute(cdp.target_close_target(target))
    assert "closed" in waiting["content"]
    after = await host.tool("capture_snapshot")
    assert after["tab"] == TAB
    assert "Results for tents" in after["content"]
    gone = await host.tool("switch_tab", tab=tab)
    assert gone["is_error"]


async def test_the_opener_navigating_away_leaves_the_pop_up_in_the_task(
    host: Host, pages_server: StaticServer
) -> None:
    """While the provider's pop-up is open the shop's tab goes to another page; the
    pop-up stays in the task, still named as opened by the shop's tab, and answers."""
    first = await host.tool("capture_snapshot")
    opened = await host.tool(
        "click", id=control_id(first["content"], "button", "Sign in with Provider")
    )
    popup = opened_tab(opened["content"])
    await host.tool("switch_tab", tab=TAB)
    away = await host.tool(
        "navigate", url=f"http://shop.test:{pages_server.port}/tabs-results.html"
    )
    assert "Results for tents" in away["content"]
    again = await host.tool("switch_tab", tab=popup)
    # As the agent last saw it: a diff with nothing changed.
    assert "tabs-provider.html" in again["content"]
    assert "<unchanged/>" in again["content"]
    tabs = await host.tool("tabs")
    assert f'opener="{TAB}"' in tabs["content"]
    assert tabs["content"].count("<tab ") == 2


async def test_new_tab_asks_about_another_site_and_close_tab_frees_its_memory(
    host: Host, pages_server: StaticServer, second_server: StaticServer
) -> None:
    """new_tab passes the site rules like navigate (another site is asked about, a
    javascript: URL refused); the tab it opens is the one the agent acts in; close_tab
    closes it, forgets everything held of it, and the agent is back in the first tab."""
    refused = await host.tool("new_tab", url="javascript:alert(1)")
    assert refused["is_error"]
    url = f"http://provider.test:{second_server.port}/tabs-provider.html"
    opened = await host.tool("new_tab", url=url)
    assert not opened["is_error"], opened["content"]
    assert "Sign in to Provider" in opened["content"]
    assert [q["site"] for q in host.person.asked] == ["http://provider.test"]
    tab = opened["tab"]
    assert host.state.tab(tab) is not None
    closed = await host.tool("close_tab", tab=tab)
    assert f"you act in tab {TAB}" in closed["content"]
    assert host.state.tab(tab) is None
    assert (await host.tool("capture_snapshot"))["tab"] == TAB
    other = await host.tool("tabs", session="agent-2")
    assert other["content"].count("<tab ") == 1
    assert SESSION != "agent-2"


async def test_an_outside_agent_signs_in_through_a_pop_up_of_its_shared_tab(
    page: PageTarget, pages_server: StaticServer, second_server: StaticServer
) -> None:
    """Through `trimtab mcp` (a real MCP client), with the shop's tab shared: the pop-up
    the sign-in opens is the client's to use (shared with it alone), the client signs
    in there, and the shop shows the name."""
    async with open_link_host(page, shop(pages_server, second_server)) as linked:
        await linked.share(TAB)
        async with trio.open_nursery() as nursery:

            async def person() -> None:
                while True:
                    await linked.answer(True)

            nursery.start_soon(person)
            async with linked.mcp_client() as client:
                first = await client.call_tool("capture_snapshot", {})
                xml = first.content[0].text
                opened = await client.call_tool(
                    "click", {"id": control_id(xml, "button", "Sign in with Provider")}
                )
                text = opened.content[0].text
                popup = opened_tab(text)
                typed = await client.call_tool(
                    "type",
                    {"tab": popup, "id": control_id(text, "input", "Account name"), "text": "Kim"},
                )
                assert not typed.is_error, typed.content[0].text
                done = await client.call_tool(
                    "click", {"tab": popup, "id": control_id(text, "button", "Continue")}
                )
                assert "Signed in as Kim" in done.content[0].text, done.content[0].text
                # A tab of its own, opened and closed again.
                opened = await client.call_tool(
                    "new_tab", {"url": shop(pages_server, second_server)}
                )
                assert not opened.is_error, opened.content[0].text
                other = int(opened.meta["trimtab"]["tab"]) if opened.meta else None
                closed = await client.call_tool("close_tab", {"tab": other})
                assert f"closed tab {other}" in closed.content[0].text, closed.content[0].text
            nursery.cancel_scope.cancel()
    with trio.fail_after(10):
        assert await page.evaluate("document.getElementById('who').textContent") == (
            "Signed in as Kim"
        )


def test_the_task_tools_are_ordinary_tools_with_a_handler_on_the_task() -> None:
    """The task's tools are declared in the catalogue like every tool, marked as acting
    on the task, and each has a handler that takes the task (no other tool has one); a
    door whose every call names its tab has no use for `tabs` and `switch_tab` alone."""
    toolbox = Toolbox.load()
    on_task = {spec.name for spec in TOOLS if spec.on_task}
    assert on_task == TASK_TOOLS == {"tabs", "switch_tab", "new_tab", "close_tab"}
    assert all((toolbox.task_handler(spec) is not None) == spec.on_task for spec in TOOLS)
    assert {spec.name for spec in TOOLS if not spec.where_calls_name_a_tab} == {
        "tabs",
        "switch_tab",
    }
