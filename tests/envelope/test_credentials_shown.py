"""Credentials of every name stay hidden through the host, against a real headless
Chromium and a 127.0.0.1 app that sends API keys and tokens in headers, query strings
and JSON, answers with more, and logs its token: `network`, `console`, `evaluate`'s
value and error, an error text, `read` of a link, `tabs` and the page's own URL show
none of the secret values, and still show everything else."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
import trio

from pycdp_bridge import PageTarget
from tests.support import TEST_PAGES
from tests.support.devtools_site import SERVER_SECRETS, DevtoolsSite, serve_devtools_site
from tests.support.handlers_host import SESSION, TAB, Host, open_host
from tests.support.xmltree import link_id

pytestmark = pytest.mark.browser

JWT_PARTS = ("eyJzdWIiOiJhZGEiLCJpYXQiOjE3MDB9", "Q2hlY2tUaGlzU2lnbmF0dXJlSXNMb25n_SIGNED")
RANDOM_KEY = "Zx8Qp2Lm7Rt4Vb9Nc3Kd6Hs1Jf5Gw0Ty"
# Every secret the page, its URL and its server carry (credentials-app.html).
SECRETS = (
    *SERVER_SECRETS,
    *JWT_PARTS,
    RANDOM_KEY[4:],
    "APIKEY-HEADER-SECRET-11",
    "AUTHTOKEN-HEADER-SECRET-12",
    "PRIVATE-TOKEN-SECRET-13",
    "CSRF-HEADER-SECRET-14",
    "QUERY-APIKEY-SECRET-21",
    "QUERY-ACCESS-SECRET-22",
    "QUERY-SIG-SECRET-23",
    "BODY-CLIENT-SECRET-31",
    "CONSOLE-ACCESS-SECRET-41",
    "CONSOLE-SIG-SECRET-42",
    "LINK-RESET-SECRET-51",
    "PAGE-URL-SECRET-61",
    "EVAL-APIKEY-SECRET-71",
    "EVAL-SESSION-SECRET-72",
    "EVAL-SIG-SECRET-73",
    "EVAL-THROW-SECRET-74",
    "ERR-TEXT-SECRET-81",
)
PAGE = "credentials-app.html?lang=en&access_token=PAGE-URL-SECRET-61"


@pytest.fixture
async def site(nursery: trio.Nursery) -> DevtoolsSite:
    served: DevtoolsSite = await nursery.start(serve_devtools_site, TEST_PAGES)
    return served


@pytest.fixture
async def host(page: PageTarget, site: DevtoolsSite, nursery: trio.Nursery) -> AsyncIterator[Host]:
    async with open_host(page, site.url(PAGE), nursery) as opened:
        yield opened


def hidden_everywhere(reply: dict[str, Any]) -> str:
    """The reply's content, checked to hold no secret value."""
    content = str(reply["content"])
    for secret in SECRETS:
        assert secret not in content, (secret, content)
    return content


async def tool(host: Host, name: str, **args: Any) -> str:
    """The side panel agent's call (evaluate allowed), its content checked."""
    reply = await host.request(
        "tool", session=SESSION, tab=TAB, name=name, args=args, allow_evaluate=True
    )
    return hidden_everywhere(reply)


async def until(host: Host, name: str, wanted: str, **args: Any) -> str:
    """The tool's answers until one holds ``wanted`` (events come after the page's call)."""
    seen = ""
    for _ in range(100):
        seen += await tool(host, name, **args)
        if wanted in seen:
            return seen
        await trio.sleep(0.05)
    raise AssertionError(f"{wanted!r} never came: {seen}")


async def test_network_hides_credentials_of_every_name(host: Host) -> None:
    """Request headers named X-Api-Key, X-Auth-Token, Private-Token and X-CSRF-Token, a
    query's api_key, access_token and sig, a JSON body's client_secret, a response's
    access_token, refresh_token, X-Auth-Token and Set-Cookie read (hidden); the rest
    (the search terms, the user, X-Request-Id, token_type) is shown."""
    await tool(host, "capture_snapshot")
    assert await host.evaluate("app.signIn()") == "done"
    listing = await until(host, "network", "/api/search")
    assert (
        "/api/search?q=boots&amp;page=2&amp;api_key=(hidden)&amp;access_token=(hidden)"
        "&amp;sig=(hidden)" in listing
    ), listing
    ids = dict(re.findall(r'<request id="(n\d+)"[^>]*>[^<]*/api/(session|search)', listing))
    assert set(ids.values()) == {"session", "search"}, listing
    by_path = {path: request for request, path in ids.items()}
    session = await tool(host, "network", request=by_path["session"])
    for header in ("X-Api-Key", "X-CSRF-Token", "X-Auth-Token", "Set-Cookie"):
        assert re.search(rf"(?im)^{header}: \(hidden\)$", session), (header, session)
    assert re.search(r"(?im)^x-request-id: req-7$", session), session
    assert '"client_secret":"(hidden)"' in session, session
    assert '"user":"ada"' in session
    assert '"access_token": "(hidden)"' in session
    assert '"refresh_token": "(hidden)"' in session
    assert '"token_type": "bearer"' in session
    search = await tool(host, "network", request=by_path["search"])
    for header in ("X-Auth-Token", "Private-Token"):
        assert re.search(rf"(?im)^{header}: \(hidden\)$", search), (header, search)
    assert "page=3&amp;access_token=(hidden)" in search, search
    # A search by URL matches the URL as shown: a credential is no search key.
    found = await tool(host, "network", url="QUERY-SIG")
    assert found.startswith('<network matching="0"'), found


async def test_console_hides_a_logged_token(host: Host) -> None:
    """A page logging its JWT, an object with an accessToken, an API key and a URL with
    sig= shows the JWT and key by their first characters, the others (hidden); the
    message's source URL hides the page's access_token."""
    await tool(host, "capture_snapshot")
    await host.evaluate("app.signIn()")
    console = await until(host, "console", "retrying")
    assert "signed in, token eyJh…" in console, console
    assert "session {user: ada, accessToken: (hidden)}" in console
    assert "Using API key Zx8Q…" in console
    assert "retrying GET /api/search?page=3&amp;sig=(hidden)" in console
    assert "access_token=(hidden)" in console  # the messages' source: the page's URL


async def test_evaluate_hides_credentials_in_its_value_and_its_error(host: Host) -> None:
    """evaluate's value hides fields named apiKey and session.id, a JWT inside a string
    and a URL's sig; what the script threw hides its refresh_token."""
    value = await tool(host, "evaluate", expression="app.profile()")
    assert '"apiKey": "(hidden)"' in value, value
    assert '"session": {"id": "(hidden)", "started": 3}' in value
    assert '"banner": "Welcome back eyJh…"' in value
    assert "lang=en&amp;sig=(hidden)" in value
    assert '"user": "ada"' in value
    thrown = await host.request(
        "tool",
        session=SESSION,
        tab=TAB,
        name="evaluate",
        args={"expression": "app.fail()"},
        allow_evaluate=True,
    )
    assert thrown["is_error"]
    assert "refresh_token=(hidden)" in hidden_everywhere(thrown)


async def test_urls_the_tools_show_and_error_texts_hide_credentials(host: Host) -> None:
    """The page's URL in its XML and in the reply's url, a link's URL in read, the tab's
    URL in tabs and an error that quotes a token hide it; the page's visible text
    stays whole."""
    reply = await host.tool("capture_snapshot")
    snapshot = hidden_everywhere(reply)
    assert re.match(r'<page url="[^"]*\?lang=en&amp;access_token=\(hidden\)"', snapshot)
    # The page's URL the side panel's agent quotes when it drops an old page state.
    assert str(reply["url"]).endswith("?lang=en&access_token=(hidden)"), reply["url"]
    assert "Reset password" in snapshot
    link = link_id(snapshot, "Reset password")
    assert link is not None, snapshot
    read = await tool(host, "read", id=link)
    assert re.search(r'href="[^"]*/reset\?token=\(hidden\)"', read), read
    tabs = await tool(host, "tabs")
    assert "access_token=(hidden)" in tabs, tabs
    reply = await host.tool("wait_for", text="token=ERR-TEXT-SECRET-81", timeout=0.2)
    assert reply["is_error"]
    assert "token=(hidden)" in hidden_everywhere(reply)
