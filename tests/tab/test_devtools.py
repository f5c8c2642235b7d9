"""The devtools tools against a real headless Chromium through the host's handlers
(the relay as the extension runs it) and a real ``trimtab mcp``: console messages with
stacks, a bounded flood, requests with credentials that are never shown, a 404, a CORS
failure, a 50 MB and a binary body, one request's detail; the tool groups."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import pytest
import trio

from pycdp_bridge import PageTarget
from tests.support import TEST_PAGES
from tests.support.devtools_site import BIG_BODY, DevtoolsSite, serve_devtools_site
from tests.support.handlers_host import TAB, Host, open_host
from tests.support.link_host import open_link_host
from tests.support.outside import call
from trimtab.browser import ToolCall
from trimtab.envelope import Answer, Question
from trimtab.tab import CONSOLE_KEPT, Tab
from trimtab.tools import TOOLS, run_tool

pytestmark = pytest.mark.browser

SECRETS = ("TOKEN-AUTH-SECRET", "COOKIE-SESSION-SECRET", "COOKIE-SET-SECRET", "PW-HUNTER2")


@pytest.fixture
async def site(nursery: trio.Nursery) -> DevtoolsSite:
    served: DevtoolsSite = await nursery.start(serve_devtools_site, TEST_PAGES)
    return served


@pytest.fixture
async def other_site(nursery: trio.Nursery) -> DevtoolsSite:
    served: DevtoolsSite = await nursery.start(serve_devtools_site, TEST_PAGES)
    return served


@pytest.fixture
async def host(page: PageTarget, site: DevtoolsSite, nursery: trio.Nursery) -> AsyncIterator[Host]:
    async with open_host(page, site.url("devtools-app.html"), nursery) as opened:
        # The first call holds the tab: from then on its console and network are kept.
        await opened.tool("capture_snapshot")
        yield opened


async def _content(host: Host, name: str, **args: object) -> str:
    reply = await host.tool(name, **args)
    assert not reply["is_error"], reply
    content = str(reply["content"])
    for secret in SECRETS:
        assert secret not in content, content
    return content


async def _until(host: Host, name: str, wanted: str, **args: object) -> str:
    """The tool's answer once it holds ``wanted`` (events arrive after the page's call)."""
    seen = ""
    for _ in range(100):
        seen += await _content(host, name, **args)
        if wanted in seen:
            return seen
        await trio.sleep(0.05)
    raise AssertionError(f"{wanted!r} never came: {seen}")


async def test_an_uncaught_error_comes_with_its_stack(host: Host) -> None:
    """A TypeError thrown in a timer is an error message with the script's URL, line and
    the top frames of its stack; the next call says only what came since."""
    await host.evaluate("app.refresh()")
    answer = await _until(host, "console", "TypeError")
    message = re.search(r'<message level="error"[^>]*>[^<]*TypeError[^<]*</message>', answer)
    assert message is not None, answer
    assert "devtools-app.html:" in message[0]
    assert "at renderOrders (" in message[0], message[0]
    await host.evaluate("console.info('second')")
    later = await _until(host, "console", "second")
    assert "TypeError" not in later


async def test_console_may_be_the_first_call(
    page: PageTarget, site: DevtoolsSite, nursery: trio.Nursery
) -> None:
    """A tab's very first call may be `console`: the host follows the tab's log before
    it runs, so the call answers (what the page logged is kept from then on)."""
    async with open_host(page, site.url("devtools-app.html"), nursery) as opened:
        reply = await opened.tool("console")
        assert not reply["is_error"], reply
        assert reply["content"].startswith("<console new=")
        await opened.evaluate("console.error('after the first call')")
        await _until(opened, "console", "after the first call")


async def test_level_shows_that_level_and_above(host: Host) -> None:
    """level=warning shows warnings and errors, not the info and debug messages."""
    await host.evaluate(
        "console.debug('d-1'); console.info('i-1'); console.warn('w-1'); console.error('e-1')"
    )
    answer = await _until(host, "console", "e-1", level="warning")
    assert "w-1" in answer
    assert "i-1" not in answer
    assert "d-1" not in answer


async def test_reads_are_cached_until_the_log_changes(host: Host) -> None:
    """A console call made again while nothing new came is answered from the tracker's
    cache; a new message makes the next call run and show it. Objects are previewed."""
    for _ in range(20):
        await host.tool("console")
        again = await host.tool("console")
        if again["cached"]:
            break
        await trio.sleep(0.1)  # the page was still loading something: once more
    else:
        raise AssertionError("a repeated console call was never answered from the cache")
    await host.evaluate("console.log('fresh', {ready: true, items: [1, 2]})")
    answer = await _until(host, "console", "fresh")
    assert "fresh {ready: true, items: Array(2)}" in answer, answer


async def test_each_client_reads_on_from_where_it_stopped(host: Host) -> None:
    """The side panel's agent and an outside client each get a message once: one's
    console call does not move the other's place in the tab's log."""
    await host.evaluate("console.info('for-both')")
    await _until(host, "console", "for-both")

    async def nobody(question: Question) -> Answer:
        raise AssertionError(f"a read asked the person: {question}")

    call = ToolCall(session="outside-1", tab=TAB, name="console", view="outside-1")
    first = await host.state.call_tool(call, nobody)
    assert "for-both" in first.content
    await host.evaluate("console.info('later')")
    while "later" not in (again := await host.state.call_tool(call, nobody)).content:
        await trio.sleep(0.05)
    assert "for-both" not in again.content


async def test_a_flood_is_bounded_and_counted(
    page: PageTarget, site: DevtoolsSite, nursery: trio.Nursery
) -> None:
    """100,000 messages in one burst: the tab keeps at most its bound, every message
    is counted (none lost unseen), the answer shows the newest 200 and says how many
    were dropped."""
    await page.navigate(site.url("devtools-app.html"))
    tab = Tab.open(page)
    nursery.start_soon(tab.devtools.run)
    await tab.devtools.ready.wait()
    await page.evaluate("app.flood(100000)")
    while not any(m.text == "flood over" for m in tab.devtools.messages):
        await trio.sleep(0.1)
    assert len(tab.devtools.messages) <= CONSOLE_KEPT
    answer = await run_tool(tab, "console", {})
    head = re.match(r'<console new="(\d+)" shown="200" dropped="(\d+)">', answer.content)
    assert head is not None, answer.content[:300]
    # Every message was counted: kept or dropped, none lost unseen.
    assert int(head[1]) <= CONSOLE_KEPT
    assert int(head[1]) + int(head[2]) >= 100_001
    assert answer.content.count("<message") == 200
    assert re.search(r'<message level="error"[^>]*>flood over\n', answer.content)


async def test_requests_never_show_credentials(host: Host) -> None:
    """A fetch with an Authorization header and the page's cookie, answered with a
    Set-Cookie: listed with its status, and in detail every credential is named with
    its value hidden."""
    await host.evaluate("app.loadOrders()")
    listing = await _until(host, "network", "/api/orders")
    found = re.search(r'<request id="(n\d+)" method="GET" type="Fetch" status="200"', listing)
    assert found is not None, listing
    detail = await _content(host, "network", request=found[1])
    assert re.search(r"(?im)^authorization: \(hidden\)$", detail), detail
    assert re.search(r"(?im)^cookie: \(hidden\)$", detail), detail
    assert re.search(r"(?im)^set-cookie: \(hidden\)$", detail), detail
    assert re.search(r"(?im)^x-client: dashboard$", detail), detail
    assert '"total": 12.5' in detail


async def test_a_404_and_a_cors_failure_are_named(host: Host, other_site: DevtoolsSite) -> None:
    """A 404 is listed with its status; a cross-origin fetch without CORS headers is
    listed as failed, naming CORS."""
    assert await host.evaluate("app.missing()") == 404
    result = await host.evaluate(f"app.crossOrigin({other_site.url('nocors')!r})")
    assert "TypeError" in result
    listing = await _until(host, "network", "/nocors")
    assert re.search(r'status="404"[^>]*>[^<]*/api/missing<', listing), listing
    assert re.search(r'failed="CORS MissingAllowOriginHeader[^"]*"[^>]*>[^<]*/nocors<', listing)


async def test_large_and_binary_bodies_are_bounded(host: Host) -> None:
    """A 50 MB text body is named with its size and not shown; a binary one is named
    binary."""
    assert await host.evaluate("app.big()") == BIG_BODY
    assert await host.evaluate("app.image()") == 4096
    listing = await _until(host, "network", "/pixel.bin")
    big = re.search(r'<request id="(n\d+)"[^>]*>[^<]*/big<', listing)
    binary = re.search(r'<request id="(n\d+)"[^>]*>[^<]*/pixel.bin<', listing)
    assert big is not None, listing
    assert binary is not None, listing
    detail = await _content(host, "network", request=big[1])
    assert f'<response-body mime="text/plain" bytes="{BIG_BODY}" none="over' in detail
    assert len(detail) < 5000
    detail = await _content(host, "network", request=binary[1])
    assert 'none="binary"' in detail


async def test_posted_passwords_are_masked(host: Host) -> None:
    """A JSON body and a form's submission that carry the page's password field's
    value show it masked, and so does a console message that logs it; the other
    fields are shown."""
    await host.evaluate("document.querySelector('[name=pw]').value = 'PW-HUNTER2'")
    assert await host.evaluate("app.postJson('PW-HUNTER2')") == 200
    listing = await _until(host, "network", "/api/login", url="/api/login")
    posted = re.search(r'<request id="(n\d+)" method="POST"', listing)
    assert posted is not None, listing
    detail = await _content(host, "network", request=posted[1])
    assert '"pw":"•••"' in detail, detail
    assert '"user":"ada"' in detail
    await host.evaluate("console.log('typed:', document.querySelector('[name=pw]').value)")
    assert "typed: •••" in await _until(host, "console", "typed:")
    await host.evaluate("document.getElementById('login').submit()")
    listing = await _until(host, "network", "Document", url="/api/login")
    posted = re.search(r'<request id="(n\d+)" method="POST" type="Document"', listing)
    assert posted is not None, listing
    detail = await _content(host, "network", request=posted[1])
    assert "user=ada&amp;pw=•••" in detail, detail


async def test_an_unknown_request_id_is_refused(host: Host) -> None:
    """A request id the tab does not keep is refused, naming it."""
    reply = await host.tool("network", request="n99999")
    assert reply["is_error"]
    assert "'n99999'" in reply["content"]


# --- through `trimtab mcp` and the host's `tools` request: groups ----------------------


async def test_credentials_never_reach_an_mcp_client(
    page: PageTarget, site: DevtoolsSite, other_site: DevtoolsSite
) -> None:
    """Through a real ``trimtab mcp`` process: the console's error and the requests'
    listing and detail reach the client, and no credential or password value does."""
    async with open_link_host(page, site.url("devtools-app.html")) as link:
        await link.share(TAB)
        async with link.mcp_client() as client:
            await call(client, "capture_snapshot", tab=TAB)
            await page.evaluate("document.querySelector('[name=pw]').value = 'PW-HUNTER2'")
            await page.evaluate("app.loadOrders().then(() => app.postJson('PW-HUNTER2'))")
            await page.evaluate(f"app.crossOrigin({other_site.url('nocors')!r})")
            await page.evaluate("app.refresh()")
            answers: list[str] = []
            while "/nocors" not in "".join(answers):
                text, is_error, _ = await call(client, "network", tab=TAB)
                assert not is_error, text
                answers.append(text)
                await trio.sleep(0.05)
            listing = "".join(answers)
            for request in re.findall(r'<request id="(n\d+)"', listing):
                text, is_error, _ = await call(client, "network", tab=TAB, request=request)
                assert not is_error, text
                answers.append(text)
            while "TypeError" not in "".join(answers):
                text, _, _ = await call(client, "console", tab=TAB)
                answers.append(text)
                await trio.sleep(0.05)
    everything = "\n".join(answers)
    assert "Authorization: (hidden)" in everything
    assert "Set-Cookie: (hidden)" in everything
    assert 'failed="CORS MissingAllowOriginHeader' in everything
    for secret in SECRETS:
        assert secret not in everything


async def test_mcp_tools_core_leaves_out_devtools(page: PageTarget, site: DevtoolsSite) -> None:
    """``trimtab mcp --tools core`` lists no console or network tool and refuses a call
    to one, saying which group it is in and how to offer it."""
    async with open_link_host(page, site.url("devtools-app.html")) as link:
        await link.share(TAB)
        async with link.mcp_client(tools="core") as client:
            with trio.fail_after(60):
                listed = {tool.name for tool in (await client.list_tools()).tools}
            assert {"tabs", "capture_snapshot", "click"} <= listed
            assert not listed & {spec.name for spec in TOOLS if spec.group != "core"}
            text, is_error, _ = await call(client, "console", tab=TAB)
        assert is_error
        assert "console is in the devtools tool group" in text
        assert "--tools core,devtools" in text
        async with link.mcp_client() as client:
            with trio.fail_after(60):
                listed = {tool.name for tool in (await client.list_tools()).tools}
            assert {"console", "network"} <= listed


async def test_an_unknown_group_is_an_error_naming_it(page: PageTarget) -> None:
    """``trimtab mcp --tools core,bogus`` exits with a usage error naming ``bogus`` and
    the groups there are."""
    async with open_link_host(page, "about:blank") as link:
        code, _, stderr = await link.trimtab("mcp", "--tools", "core,bogus")
    assert code == 2
    assert "unknown tool group 'bogus'" in stderr
    assert "core, pixels, devtools" in stderr


async def test_the_tools_request_takes_groups(host: Host) -> None:
    """The side panel's `tools` request with ``groups`` gets the core tools and those
    groups' tools only; without it every tool; an unknown group is refused, named."""
    core = await host.request("tools", groups=[])
    names = [tool["name"] for tool in core["tools"]]
    assert names == [spec.name for spec in TOOLS if spec.group == "core"]
    devtools = await host.request("tools", groups=["core", "devtools"])
    assert {"console", "network"} <= {tool["name"] for tool in devtools["tools"]}
    every = await host.request("tools")
    assert [tool["name"] for tool in every["tools"]] == [spec.name for spec in TOOLS]
    refused = await host.error("tools", groups=["core", "telepathy"])
    assert refused.code == "bad_request"
    assert "'telepathy'" in refused.message
