"""A task across tabs through the side panel: the real extension, the real host and a
scripted model. "Sign in with Provider" opens the provider's pop-up (another port),
the agent signs in there, the provider answers its opener and closes itself, and the
shop shows the signed-in name; each step names the tab it acted in. Stop in the
pop-up ends the task in both tabs. A tab the person drags out of the task's group
leaves the task. A pop-up on another site waits for the person's yes before its first
request leaves the browser (the extension's gate), and keeps its opener after it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import trio

from tests.extension.test_consent_e2e import PlannedModel, Step, _id_of
from tests.support import TEST_PAGES, StaticServer
from tests.support.agent import ENDED, open_agent, serve_model, submit_message
from tests.support.e2e import (
    ExtensionBrowser,
    ExtensionContext,
    answer_question,
    launch_with_extension,
)
from tests.support.recorder import Recorder, serve_recorder

pytestmark = pytest.mark.browser

STEPS = "trimtabPanel.state.steps.map(({content, ...s}) => s)"


@pytest.fixture
async def ext(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[ExtensionBrowser]:
    monkeypatch.setenv("TRIMTAB_LOG_DIR", str(tmp_path / "logs"))
    async with launch_with_extension(tmp_path / "profile") as browser:
        yield browser


def account_url(shop: StaticServer, provider: StaticServer) -> str:
    return shop.url("tabs-account.html") + f"#provider={provider.origin}"


#: The plan of the sign-in: read the shop, open the provider's pop-up (the host follows
#: it), type a name there, press Continue (a submit: the person is asked).
SIGN_IN: list[Step] = [
    lambda seen: ("capture_snapshot", {}),
    lambda seen: ("click", {"id": _id_of(seen, r'<button id="[^"]+"[^>]*>Sign in with Provider')}),
    lambda seen: (
        "type",
        {"id": _id_of(seen, r'Your name <input id="[^"]+"'), "text": "Ada Lovelace"},
    ),
    lambda seen: ("click", {"id": _id_of(seen, r'<button id="[^"]+"[^>]*>Continue')}),
]


async def answer_until_ended(
    panel: ExtensionContext, *, allow: bool, ended_before: int = 0
) -> list[str]:
    """Answer every question the panel shows (``allow``) until the task submitted after
    ``ended_before`` tasks had ended in it ends; the questions as the panel worded
    them. (A follow-up's submit sets the panel running a moment later: the count of
    ended tasks, not ``running`` alone, says that it has ended.)"""
    asked = []
    while await panel.evaluate(ENDED) <= ended_before or await panel.evaluate(
        "trimtabPanel.state.running"
    ):
        question = await answer_question(panel, allow=allow)
        if question is not None:
            asked.append(question)
        await trio.sleep(0.1)
    return asked


async def page_text(ext: ExtensionBrowser, url: str, selector: str) -> str:
    """The text of ``selector`` in the page at ``url``, read over the browser's own CDP
    (the extension's debugger session is the host's)."""
    target = await ext.wait_for_target("page", url)
    page = await ext.attach(target)
    return str(await page.evaluate(f"document.querySelector({json.dumps(selector)}).textContent"))


async def test_sign_in_with_a_provider_pop_up_through_the_side_panel(
    ext: ExtensionBrowser, pages_server: StaticServer, second_server: StaticServer
) -> None:
    """The agent signs in through the provider's pop-up: the click's answer follows the
    pop-up, the name is typed and Continue pressed there (the person allows the
    submit), the pop-up closes itself and the shop shows "Signed in as Ada Lovelace";
    the steps show the shop's tab, then the pop-up's, each named by its title, and
    the task's group holds the shop's tab (a pop-up window cannot join a group)."""
    url = account_url(pages_server, second_server)
    async with trio.open_nursery() as nursery:
        model = await nursery.start(serve_model, PlannedModel(SIGN_IN))
        panel, shop = await open_agent(ext, model, url)
        await submit_message(panel, "Sign in with Provider as Ada Lovelace.")
        asked = await answer_until_ended(panel, allow=True)
        steps = await panel.evaluate(STEPS)
        shown = await panel.evaluate(
            "[...document.querySelectorAll('#steps .step-tab')]"
            ".map((line) => [line.textContent, getComputedStyle(line).display])"
        )
        group = (await ext.worker.evaluate(f"chrome.tabs.get({shop})"))["groupId"]
        title = await ext.worker.evaluate(f"chrome.tabGroups.get({group}).then((g) => g.title)")
        status = await page_text(ext, url, "#status")
        popup = next(s["tab"] for s in steps if s["kind"] == "tool" and s["tab"] != shop)
        gone = await ext.worker.evaluate(f"chrome.tabs.get({popup}).then(() => false, () => true)")
        nursery.cancel_scope.cancel()
    tools = [s for s in steps if s["kind"] == "tool"]
    assert [s["name"] for s in tools] == ["capture_snapshot", "click", "type", "click"], steps
    assert not any(s["isError"] for s in tools), tools
    assert steps[-1]["kind"] == "done", steps
    assert status == "Signed in as Ada Lovelace."
    assert [s["tab"] for s in tools][:2] == [shop, shop]
    assert tools[2]["tab"] == tools[3]["tab"] != shop
    assert len(asked) == 1, asked
    assert "Continue" in asked[0], asked
    assert title == "Sign in with Provider as Ada Lo…", "named from the person's task"
    assert gone, "the pop-up closed itself"
    # Every step names its tab: the shop's and the pop-up's, by their titles.
    assert [display for _, display in shown] == ["flex"] * 4
    assert "Corner Bikes" in shown[0][0]
    assert "Provider: sign in" in shown[2][0]


async def badge(ext: ExtensionBrowser, tab: int) -> str:
    return str(await ext.worker.evaluate(f"chrome.action.getBadgeText({{tabId: {tab}}})"))


async def test_stop_in_the_pop_up_ends_the_task_in_both_tabs(
    ext: ExtensionBrowser, pages_server: StaticServer, second_server: StaticServer
) -> None:
    """The person presses Stop while the agent waits for their yes to Continue in the
    pop-up: the question leaves, the call is cancelled and nothing is submitted (the
    shop is not signed in, the pop-up stays open with its form), no input is held and
    neither tab keeps the agent's badge; the host goes on answering."""
    url = account_url(pages_server, second_server)
    async with trio.open_nursery() as nursery:
        model = await nursery.start(serve_model, PlannedModel(SIGN_IN))
        panel, shop = await open_agent(ext, model, url)
        await submit_message(panel, "Sign in with Provider as Ada Lovelace.")
        shown = "!document.getElementById('question').hidden"
        while not await panel.evaluate(shown):
            await trio.sleep(0.05)
        steps = await panel.evaluate(STEPS)
        popup = next(s["tab"] for s in steps if s["kind"] == "tool" and s["tab"] != shop)
        during = [await badge(ext, shop), await badge(ext, popup)]
        await panel.evaluate("document.getElementById('stop').click(); true")
        while not await panel.evaluate(ENDED):
            await trio.sleep(0.05)
        while await panel.evaluate(shown):
            await trio.sleep(0.05)
        steps = await panel.evaluate(STEPS)
        after = [await badge(ext, shop), await badge(ext, popup)]
        held = await ext.worker.evaluate("trimtab.relay.held.size")
        status = await page_text(ext, url, "#status")
        open_popup = await ext.worker.evaluate(f"chrome.tabs.get({popup}).then((t) => t.url)")
        pong = await ext.worker.evaluate("trimtab.host.request({type: 'ping'})")
        nursery.cancel_scope.cancel()
    assert steps[-1] == {"kind": "error", "message": "Stopped: stopped by you"}, steps
    assert [s["name"] for s in steps if s["kind"] == "tool"] == [
        "capture_snapshot",
        "click",
        "type",
    ]
    assert during == ["AI", "AI"]
    assert after == ["", ""]
    assert held == 0
    assert status == "You are not signed in."
    assert "/tabs-idp.html" in open_popup
    assert pong["pong"] is True


async def test_a_tab_dragged_out_of_the_group_leaves_the_task(
    ext: ExtensionBrowser, pages_server: StaticServer, second_server: StaticServer
) -> None:
    """A link with target=_blank opens the terms in a new tab, which joins the task's
    group (titled with the person's task) with the shop and is listed among its tabs;
    the person drags it out of the group, and the task's tabs no longer list it."""
    url = account_url(pages_server, second_server)
    dragged = trio.Event()

    def after_the_drag(seen: str) -> tuple[str, dict[str, Any]] | None:
        # The first task ends here; its follow-up lists the tabs.
        return ("tabs", {}) if dragged.is_set() else None

    # Read the shop, open the terms in a new tab (behind: the host groups the two), list
    # the task's tabs; once the person dragged the terms out of the group, list again.
    plan: list[Step] = [
        lambda seen: ("capture_snapshot", {}),
        lambda seen: ("click", {"id": _id_of(seen, r'<a id="[^"]+"[^>]*>Provider terms')}),
        lambda seen: ("tabs", {}),
        after_the_drag,
    ]
    async with trio.open_nursery() as nursery:
        model = await nursery.start(serve_model, PlannedModel(plan))
        panel, shop = await open_agent(ext, model, url)
        await submit_message(panel, "Open the provider's terms.")
        await answer_until_ended(panel, allow=False)
        group = -1
        while group < 0:
            group = (await ext.worker.evaluate(f"chrome.tabs.get({shop})"))["groupId"]
            await trio.sleep(0.05)
        members = await ext.worker.evaluate(
            f"chrome.tabs.query({{groupId: {group}}}).then((ts) => ts.map((t) => t.id))"
        )
        terms = next(tab for tab in members if tab != shop)
        title = await ext.worker.evaluate(f"chrome.tabGroups.get({group}).then((g) => g.title)")
        await ext.worker.evaluate(f"chrome.tabs.ungroup({terms}).then(() => true)")
        dragged.set()
        # The follow-up lists the task's tabs.
        ended = await panel.evaluate(ENDED)
        await submit_message(panel, "Which tabs are yours?")
        await answer_until_ended(panel, allow=False, ended_before=ended)
        before, after = await panel.evaluate(
            "trimtabPanel.state.steps.filter((s) => s.name === 'tabs').map((s) => s.content)"
        )
        nursery.cancel_scope.cancel()
    assert sorted(members) == sorted([shop, terms])
    assert title == "Open the provider's terms."
    assert str(terms) in before
    assert str(shop) in after
    assert str(terms) not in after


# -- pop-ups on another site, through the real extension's gate -------------------------

#: Chromium resolves every ``*.test`` name to this machine: other sites, no traffic out.
SITES_RULE = "--host-resolver-rules=MAP *.test 127.0.0.1"
#: Rounds of a pop-up refused: the gate has no race to lose, so none may leak.
ROUNDS = 20


@pytest.fixture
async def ext_sites(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[ExtensionBrowser]:
    monkeypatch.setenv("TRIMTAB_LOG_DIR", str(tmp_path / "logs"))
    async with launch_with_extension(tmp_path / "profile", extra_args=(SITES_RULE,)) as browser:
        yield browser


@pytest.fixture
async def site(nursery: trio.Nursery) -> Recorder:
    """The fixture pages on every ``*.test`` name; ``/api/`` requests are logged."""
    recorder: Recorder = await nursery.start(serve_recorder, TEST_PAGES)
    return recorder


def claim(seen: str) -> tuple[str, dict[str, Any]]:
    return "click", {"id": _id_of(seen, r'<button id="[^"]+"[^>]*>Claim your reward')}


async def test_a_pop_up_to_another_site_is_refused_before_its_first_request(
    ext_sites: ExtensionBrowser, site: Recorder
) -> None:
    """An agent's click that opens a pop-up on a site the task was not allowed, with the
    person answering no: in every one of 20 rounds the browser keeps the pop-up from
    its first request before it is sent (the other site's log stays empty), the host
    asks the site question, closes the pop-up, and the click's answer says it was
    blocked."""
    plan: list[Step] = [lambda seen: ("capture_snapshot", {}), *[claim] * ROUNDS]
    async with trio.open_nursery() as nursery:
        model = await nursery.start(serve_model, PlannedModel(plan))
        offer = site.url("shop.test", "tabs-offer.html")
        panel, shop = await open_agent(ext_sites, model, offer)
        await submit_message(panel, "Check my basket.")
        asked = await answer_until_ended(panel, allow=False)
        steps = await panel.evaluate("trimtabPanel.state.steps")
        tabs = await ext_sites.worker.evaluate("chrome.tabs.query({}).then((t) => t.length)")
        rules = await ext_sites.worker.evaluate(
            "chrome.declarativeNetRequest.getSessionRules().then((r) => r.length)"
        )
        nursery.cancel_scope.cancel()
    assert site.sent("/api/claim") == [], "a refused pop-up's first request left the browser"
    clicks = [s for s in steps if s["kind"] == "tool" and s["name"] == "click"]
    assert len(clicks) == ROUNDS, steps
    for step in clicks:
        assert "it tried to open a pop-up on http://attacker.test" in step["content"], step
        assert "blocked" in step["content"], step
    assert all(s["tab"] == shop for s in clicks)
    assert asked, "the site question was asked"
    assert all("attacker.test" in question for question in asked), asked
    assert tabs == 2, "each refused pop-up was closed (the shop and the first tab remain)"
    assert rules == 0, "every action's gate was lifted"


async def test_a_sign_in_pop_up_on_another_site_loads_after_a_yes_and_keeps_its_opener(
    ext_sites: ExtensionBrowser, site: Recorder
) -> None:
    """The provider's pop-up is on another site: the gate keeps its first page until the
    person allows the site, then it loads in the same pop-up, which can still talk to
    the shop (postMessage to its opener) once the agent signed in there."""
    port = site.port
    url = f"http://shop.test:{port}/tabs-account.html#provider=http://idp.test:{port}"
    async with trio.open_nursery() as nursery:
        model = await nursery.start(serve_model, PlannedModel(SIGN_IN))
        panel, _ = await open_agent(ext_sites, model, url)
        await submit_message(panel, "Sign in with Provider as Ada Lovelace.")
        asked = await answer_until_ended(panel, allow=True)
        steps = await panel.evaluate(STEPS)
        status = await page_text(ext_sites, url, "#status")
        nursery.cancel_scope.cancel()
    tools = [s for s in steps if s["kind"] == "tool"]
    assert [s["name"] for s in tools] == ["capture_snapshot", "click", "type", "click"], steps
    assert not any(s["isError"] for s in tools), tools
    assert status == "Signed in as Ada Lovelace."
    assert len(asked) == 2, asked
    assert "idp.test" in asked[0], asked
    assert "Continue" in asked[1], asked


async def test_a_pop_up_the_browser_blocks_is_told_in_the_step(
    ext: ExtensionBrowser, pages_server: StaticServer
) -> None:
    """Through the real extension: a click that asks for two windows opens one, and its
    answer names the second as blocked by the browser's pop-up blocker."""
    plan: list[Step] = [
        lambda seen: ("capture_snapshot", {}),
        lambda seen: ("click", {"id": _id_of(seen, r'<button id="[^"]+"[^>]*>Open both receipts')}),
    ]
    with trio.fail_after(90):
        async with trio.open_nursery() as nursery:
            model = await nursery.start(serve_model, PlannedModel(plan))
            panel, _ = await open_agent(ext, model, pages_server.url("tabs-receipts.html"))
            await submit_message(panel, "Open my receipts.")
            asked = await answer_until_ended(panel, allow=True)
            steps = await panel.evaluate("trimtabPanel.state.steps")
            nursery.cancel_scope.cancel()
    (click,) = [s for s in steps if s["kind"] == "tool" and s["name"] == "click"]
    assert asked == [], asked
    assert "page=receipt-2: the browser's pop-up blocker blocked it" in click["content"], click[
        "content"
    ]
    assert "page=receipt-1" in click["content"], click["content"]
