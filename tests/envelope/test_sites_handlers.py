"""Sites per task through the host's ``tool`` request, on a real headless Chromium: a
task acts where it started, asks once per other site, and the person's lists hold.

Two sites without leaving the machine: the browser resolves every ``*.test`` name to
127.0.0.1, so ``garden.test`` and ``weather.test`` are two sites served by one test
server."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio

from pycdp_bridge import Browser, PageTarget
from pycdp_bridge import protocol as cdp
from tests.support import StaticServer
from tests.support.handlers_host import SESSION, Host, open_host
from tests.support.link_host import TAB, open_link_host
from tests.support.outside import call as mcp_call
from tests.support.relay_peer import RelayPeer
from trimtab.browser import Toolbox, open_host_state
from trimtab.envelope import SITES_FILE, SitePolicy
from trimtab.sites import site_of

pytestmark = pytest.mark.browser


def garden(server: StaticServer) -> str:
    return f"http://garden.test:{server.port}/sites-garden.html"


def weather(server: StaticServer) -> str:
    return f"http://weather.test:{server.port}/sites-weather.html"


@pytest.fixture
def policy(tmp_path: Path) -> SitePolicy:
    """The person's site lists, kept in this test's own state folder."""
    return SitePolicy.load(tmp_path / "trimtab")


@pytest.fixture
async def host(
    page: PageTarget, pages_server: StaticServer, nursery: trio.Nursery, policy: SitePolicy
) -> AsyncIterator[Host]:
    """Handlers of a host whose tab shows the garden centre, on garden.test."""
    async with open_host(page, garden(pages_server), nursery, sites=policy) as host:
        yield host


async def navigate(host: Host, url: str, session: str = SESSION) -> dict[str, object]:
    return await host.tool("navigate", session=session, url=url)


def button(xml: str, label: str) -> str:
    return xml.split(label)[0].rsplit('<button id="', 1)[1].split('"')[0]


async def test_another_site_is_asked_about_once_per_task(
    host: Host, pages_server: StaticServer
) -> None:
    """A task that started on garden.test asks before it opens weather.test; after the
    person's "once" it goes back and forth without asking again, and another task asks
    anew."""
    started = await host.tool("capture_snapshot")
    assert "Garden centre" in str(started["content"])
    opened = await navigate(host, weather(pages_server))
    assert opened["is_error"] is False, opened["content"]
    assert "Weather station" in str(opened["content"])
    (question,) = host.person.asked
    assert question["what"] == "site"
    assert question["site"] == "http://weather.test"
    assert question["choices"] == ["once", "always", "no"]
    assert question["tool"] == "navigate"
    assert question["reason"].startswith(
        "navigate opens http://weather.test, a site this task has not been allowed "
        "(it may act on http://garden.test)"
    )
    assert "plain http" in question["reason"]
    assert question["element"] is None
    back = await navigate(host, garden(pages_server))
    assert back["is_error"] is False
    again = await navigate(host, weather(pages_server) + "?later")
    assert again["is_error"] is False
    assert len(host.person.asked) == 1
    # Another task that starts on the weather page must ask for the garden centre.
    await host.tool("capture_snapshot", session="agent-2")
    await navigate(host, garden(pages_server), session="agent-2")
    assert [q["site"] for q in host.person.asked] == ["http://weather.test", "http://garden.test"]
    assert [q["session"] for q in host.person.asked] == [SESSION, "agent-2"]


async def test_a_no_leaves_the_page_where_it_was_and_is_asked_again_next_time(
    host: Host, pages_server: StaticServer
) -> None:
    """The person's no refuses that call only: the tab stays on its page, the result
    says why in plain words, and the next call to that site asks again."""
    await host.tool("capture_snapshot")
    host.person.allow = False
    refused = await navigate(host, weather(pages_server))
    assert refused["is_error"] is True
    assert refused["consent"] == {"required": True, "granted": False}
    assert str(refused["content"]).startswith(
        "Not done: the person refused when asked in the browser (navigate opens "
        "http://weather.test, a site this task has not been allowed"
    )
    assert await host.evaluate("location.hostname") == "garden.test"
    await navigate(host, weather(pages_server))
    assert len(host.person.asked) == 2


async def test_always_holds_for_every_task_and_is_in_sites_json(
    host: Host, pages_server: StaticServer, policy: SitePolicy
) -> None:
    """An "always" allows the site for this task and every later one, without asking
    again, and is written to the person's sites.json; the door lists it."""
    await host.tool("capture_snapshot")
    host.person.always = True
    opened = await navigate(host, weather(pages_server))
    assert opened["is_error"] is False, opened["content"]
    assert policy.folder is not None
    stored = json.loads((policy.folder / SITES_FILE).read_text())
    assert stored == {"always": ["http://weather.test"], "never": []}
    assert await host.request("sites") == stored
    await navigate(host, garden(pages_server))
    await host.tool("capture_snapshot", session="agent-2")
    later = await navigate(host, weather(pages_server), session="agent-2")
    assert later["is_error"] is False
    assert [q["site"] for q in host.person.asked] == ["http://weather.test"]


async def test_the_never_list_refuses_without_asking(
    host: Host, pages_server: StaticServer
) -> None:
    """A site on the person's never list (set through the side panel's ``sites_set``)
    is refused without a question: navigating there, and even reading or acting on a
    tab the person opened there themselves."""
    lists = await host.request("sites_set", always=[], never=["http://www.weather.test/"])
    assert lists == {"always": [], "never": ["http://weather.test"]}
    await host.tool("capture_snapshot")
    refused = await navigate(host, weather(pages_server))
    assert refused["is_error"] is True
    assert str(refused["content"]).startswith(
        "Not done: the person's settings never allow the agent on http://weather.test"
    )
    assert await host.evaluate("location.hostname") == "garden.test"
    with trio.fail_after(30):
        await host.page.navigate(weather(pages_server))  # the person went there
    read = await host.tool("capture_snapshot")
    assert read["is_error"] is True
    assert "Weather station" not in str(read["content"])
    assert "never allow the agent on http://weather.test" in str(read["content"])
    assert host.person.asked == []


async def test_acting_on_a_page_of_another_site_asks_but_reading_it_does_not(
    host: Host, pages_server: StaticServer
) -> None:
    """When the tab shows another site than the task's (the person went there), the
    agent may read it, but a click there asks first, and a no clicks nothing."""
    await host.tool("capture_snapshot")
    with trio.fail_after(30):
        await host.page.navigate(weather(pages_server))
    seen = await host.tool("capture_snapshot")
    assert "Weather station" in str(seen["content"])
    assert host.person.asked == []
    host.person.allow = False
    refresh = button(str(seen["content"]), "Refresh the forecast")
    refused = await host.tool("click", id=refresh)
    assert refused["is_error"] is True
    (question,) = host.person.asked
    assert question["site"] == "http://weather.test"
    assert question["reason"].startswith(
        f"click acts on the page in tab {question['tab']}, which is on http://weather.test"
    )
    assert await host.evaluate("document.getElementById('when').textContent") == (
        "Forecast of this morning"
    )
    host.person.allow = True
    clicked = await host.tool("click", id=refresh)
    assert clicked["is_error"] is False, clicked["content"]
    assert await host.evaluate("document.getElementById('when').textContent") == "Refreshed"


async def test_back_to_a_page_of_another_site_asks(host: Host, pages_server: StaticServer) -> None:
    """Going back in the tab's history to a page of a site the task was not allowed on
    asks like a navigation to it."""
    with trio.fail_after(30):
        await host.page.navigate(weather(pages_server))
        await host.page.navigate(garden(pages_server))
    await host.tool("capture_snapshot")
    host.person.allow = False
    refused = await host.tool("back")
    assert refused["is_error"] is True
    (question,) = host.person.asked
    assert question["site"] == "http://weather.test"
    assert question["reason"].startswith("back goes to a page on http://weather.test")
    assert await host.evaluate("location.hostname") == "garden.test"


@pytest.mark.popups
async def test_a_blank_pop_up_its_opener_wrote_is_the_openers_site(
    browser: Browser, page: PageTarget, pages_server: StaticServer, nursery: trio.Nursery
) -> None:
    """An about:blank pop-up that a page of another site opened and wrote into counts
    as that site: acting on it asks about the writer's site, not about "about:"."""
    with trio.fail_after(30):
        await page.navigate(weather(pages_server))
        assert await page.evaluate("String(!!(window.prize = window.open('')))") == "true"
        await page.evaluate("prize.document.write('<button>Claim your prize</button>'); 0")
        targets = await browser.execute(cdp.target_get_targets())
        (opened,) = [t for t in targets["targetInfos"] if t.get("openerId") == page.target_id]
        attached = await browser.execute(
            cdp.target_attach_to_target(opened["targetId"], flatten=True)
        )
        popup = PageTarget(browser, opened["targetId"], attached["sessionId"])
        await popup.execute(cdp.page_enable())
    peer = RelayPeer(popup, TAB)
    await nursery.start(peer.run)
    async with open_host_state(peer.hub, toolbox=Toolbox.load()) as state:
        host = Host.serving(state, peer, popup)
        state.sites.start(SESSION, site_of(garden(pages_server)))  # the task began there
        host.person.allow = False
        refused = await host.tool("press", key="Tab")
        assert refused["is_error"] is True
        (question,) = host.person.asked
        assert question["site"] == "http://weather.test"


async def test_javascript_and_data_urls_are_refused_without_asking(host: Host) -> None:
    """navigate never runs a javascript: URL nor opens a data: page, and says why; the
    person is not asked and the page stays."""
    await host.tool("capture_snapshot")
    script = await navigate(host, "javascript:document.title='owned'")
    assert script["is_error"] is True
    assert "a javascript: URL runs script in the page" in str(script["content"])
    data = await navigate(host, "data:text/html,<h1>Sign in</h1>")
    assert data["is_error"] is True
    assert "a data: URL is a page the agent would write itself" in str(data["content"])
    assert host.person.asked == []
    assert await host.evaluate("document.title") == "Garden centre"


async def test_sites_set_refuses_what_is_not_a_site_naming_it(host: Host) -> None:
    """``sites_set`` refuses an entry that names no site, or a site on both lists, with
    bad_request naming it, and the lists stay as they were."""
    await host.request("sites_set", always=["https://garden.test"], never=[])
    for always, never, named in (
        (["garden.test"], [], "'garden.test' is not a site"),
        ([], [7], "7"),
        (["https://a.test"], ["https://b.a.test"], "'https://a.test' is on both"),
    ):
        refused = await host.error("sites_set", always=always, never=never)
        assert refused.code == "bad_request"
        assert named in refused.message
    wrong = await host.error("sites_set", always="https://a.test", never=[])
    assert wrong.code == "bad_request"
    assert await host.request("sites") == {"always": ["https://garden.test"], "never": []}


async def test_an_outside_agent_over_mcp_gets_the_same_site_decision(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A ``trimtab mcp`` client's session is a task too: its navigation to another site
    is asked about in the side panel (once per site), and the person's no is the tool's
    result, the page left where it was."""
    async with (
        open_link_host(page, garden(pages_server)) as host,
        host.mcp_client("outside-agent") as client,
    ):
        await host.share(TAB)
        text, is_error, _ = await mcp_call(client, "capture_snapshot", tab=TAB)
        assert not is_error, text
        results: list[tuple[str, bool]] = []
        async with trio.open_nursery() as nursery:

            async def go() -> None:
                found = await mcp_call(client, "navigate", tab=TAB, url=weather(pages_server))
                results.append(found[:2])

            nursery.start_soon(go)
            question = await host.answer(False)
        assert question["what"] == "site"
        assert question["site"] == "http://weather.test"
        assert question["client"].startswith("outside-agent")
        ((text, is_error),) = results
        assert is_error
        assert "the person refused when asked in the browser" in text
        assert "navigate opens http://weather.test" in text
        assert await page.evaluate("location.hostname") == "garden.test"
        async with trio.open_nursery() as nursery:
            nursery.start_soon(go)
            await host.answer(True)
        assert results[1][1] is False, results[1][0]
        assert await page.evaluate("location.hostname") == "weather.test"
        text, is_error, _ = await mcp_call(client, "navigate", tab=TAB, url=garden(pages_server))
        assert not is_error, text


async def test_a_look_alike_name_is_asked_about_as_punycode_with_a_note(
    host: Host, pages_server: StaticServer
) -> None:
    """A name written with a Cyrillic letter is another site than the Latin one it looks
    like: the question names it in punycode and says what it is not."""
    await host.tool("capture_snapshot")
    host.person.allow = False
    look_alike = f"http://g\u0430rden.test:{pages_server.port}/sites-garden.html"
    refused = await navigate(host, look_alike)
    assert refused["is_error"] is True
    (question,) = host.person.asked
    assert question["site"] == "http://xn--grden-4ve.test"
    assert "it is not garden.test (Latin letters)" in question["reason"]


async def test_acting_inside_a_frame_of_another_site_asks_about_that_site(
    host: Host, pages_server: StaticServer
) -> None:
    """A button inside a frame of another site (an ad) is that site's: clicking it asks
    about the frame's site although the page is the task's own, and a yes clicks it."""
    url = f"http://garden.test:{pages_server.port}/sites-garden-ad.html"
    await host.tool("capture_snapshot")
    opened = await navigate(host, url)
    assert opened["is_error"] is False, opened["content"]
    refresh = button(str(opened["content"]), "Refresh the forecast")
    host.person.allow = False
    refused = await host.tool("click", id=refresh)
    assert refused["is_error"] is True
    (question,) = host.person.asked
    assert question["site"] == "http://weather.test"
    assert question["reason"].startswith(
        "click acts inside a frame of the page that belongs to http://weather.test"
    )
    host.person.allow = True
    clicked = await host.tool("click", id=refresh)
    assert clicked["is_error"] is False, clicked["content"]
    assert "Refreshed" in str(clicked["content"])
    assert len(host.person.asked) == 2
