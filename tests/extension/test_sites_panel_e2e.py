"""The side panel's side of sites per task, with the real extension in headless Chromium
and a `FakeHost` that plays the host: a site question offers No, Once and Always (No
focused) and sends the person's choice with `always`; the "Allowed sites" settings
read the lists with `sites`, save them with `sites_set`, and say plainly when the host
does not know those requests."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from tests.support import StaticServer
from tests.support.e2e import (
    ARTIFACTS,
    ExtensionBrowser,
    ExtensionContext,
    FakeHost,
    launch_with_extension,
    serve_fake_host,
    write_bridge,
)

pytestmark = pytest.mark.browser

TIMEOUT = 45


@attrs.define
class SitesHost:
    """The fake host's answers: ping, the site lists (None: it does not know `sites`),
    and every `answer` and `sites_set` the extension sent, in order."""

    fake: FakeHost
    lists: dict[str, list[str]] | None = None
    answers: list[dict[str, Any]] = attrs.field(factory=list)
    saved: list[dict[str, Any]] = attrs.field(factory=list)

    async def serve(self) -> None:
        async for message in self.fake.inbox:
            kind = message.get("type")
            reply: Mapping[str, Any]
            if kind == "ping":
                reply = {"result": {"pong": True, "version": "test"}}
            elif kind == "answer":
                self.answers.append(message)
                reply = {"result": {"waiting": True}}
            elif kind in ("sites", "sites_set") and self.lists is not None:
                if kind == "sites_set":
                    self.saved.append(message)
                    self.lists = {"always": message["always"], "never": message["never"]}
                reply = {"result": self.lists}
            elif "id" in message:
                reply = {"error": {"code": "unknown_type", "message": f"unknown type {kind!r}"}}
            else:
                continue
            kind = "error" if "error" in reply else "result"
            await self.fake.send({"type": kind, "id": message["id"], **reply})


@pytest.fixture
async def faked(tmp_path: Path) -> AsyncIterator[tuple[ExtensionBrowser, SitesHost]]:
    async with trio.open_nursery() as nursery:
        fake: FakeHost = await nursery.start(serve_fake_host)
        host = SitesHost(fake)
        nursery.start_soon(host.serve)
        bridge = write_bridge(tmp_path, fake.port)
        async with launch_with_extension(tmp_path / "profile", host_path=bridge) as ext:
            with trio.fail_after(30):
                await fake.connected.wait()
            yield ext, host
        nursery.cancel_scope.cancel()


_SHOWN = """(() => {
    const box = document.getElementById('question');
    if (box.hidden || !document.getElementById('question-deny')) return null;
    return {
        want: document.getElementById('question-want').textContent,
        reason: document.getElementById('question-reason').textContent,
        hint: document.getElementById('question-hint').textContent,
        buttons: [...box.querySelectorAll('button')].map((b) => [b.id, b.textContent]),
        focused: document.activeElement.id,
    };
})()"""


async def _shown(panel: ExtensionContext) -> dict[str, Any]:
    with trio.fail_after(TIMEOUT):
        while (shown := await panel.evaluate(_SHOWN)) is None:
            await trio.sleep(0.05)
    return dict(shown)


async def _answered(host: SitesHost, count: int) -> dict[str, Any]:
    with trio.fail_after(TIMEOUT):
        while len(host.answers) < count:
            await trio.sleep(0.05)
    return host.answers[count - 1]


async def test_a_site_question_offers_no_once_always(
    faked: tuple[ExtensionBrowser, SitesHost], pages_server: StaticServer
) -> None:
    """A site question shows No, Once and Always with No focused; Always sends allow and
    always, Once allow only for the task, and Escape (like No) refuses."""
    ext, host = faked
    _, tab = await ext.open_tab(pages_server.url("consent-quoted.html"))
    await ext.wait_loaded(tab)
    panel = await ext.open_side_panel()
    site = "https://xn--exmple-4nf.com"
    ask = {
        "type": "ask", "client": "Trimtab agent", "session": "agent-1", "tab": tab,
        "what": "site", "tool": "navigate", "args": {"url": f"{site}/login"},
        "site": site, "choices": ["once", "always", "no"], "element": None, "eid": None,
        "reason": f"it opens {site}, which looks like example.com but is another site",
        "timeout": 50,
    }  # fmt: skip
    answers = []
    for number, press in enumerate(("question-always", "question-allow", "Escape"), 1):
        await host.fake.send({**ask, "ask": f"q{number}"})
        shown = await _shown(panel)
        if number == 1:
            shot = await panel.send("Page.captureScreenshot", {"format": "png"})
            ARTIFACTS.mkdir(exist_ok=True)
            (ARTIFACTS / "site-question.png").write_bytes(base64.b64decode(shot["data"]))
        if press == "Escape":
            await panel.send(
                "Input.dispatchKeyEvent",
                {"type": "keyDown", "key": "Escape", "code": "Escape",
                 "windowsVirtualKeyCode": 27},
            )  # fmt: skip
        else:
            await panel.evaluate(f"document.getElementById({json.dumps(press)}).click(); true")
        answers.append(await _answered(host, number))
        with trio.fail_after(TIMEOUT):
            while not await panel.evaluate("document.getElementById('question').hidden"):
                await trio.sleep(0.05)
    assert shown["buttons"] == [
        ["question-deny", "No"], ["question-allow", "Once"], ["question-always", "Always"],
    ]  # fmt: skip
    assert shown["focused"] == "question-deny"
    assert shown["want"] == f"Allow Trimtab agent to act on {site}?"
    assert "looks like example.com" in shown["reason"]
    assert "Always: remembered" in shown["hint"]
    picked = [(a["ask"], a["allow"], a.get("always")) for a in answers]
    assert picked == [("q1", True, True), ("q2", True, False), ("q3", False, False)]


async def _open_settings(panel: ExtensionContext) -> None:
    await panel.evaluate(
        "trimtabPanel.showView('agent'); document.getElementById('settings').open = true; true"
    )


_LISTS = """({
    always: [...document.querySelectorAll('#sites-always .site')].map((e) => e.textContent),
    never: [...document.querySelectorAll('#sites-never .site')].map((e) => e.textContent),
    note: document.getElementById('sites-note').textContent,
    form: !document.getElementById('sites-add').hidden,
    fits: document.getElementById('sites').getBoundingClientRect().right <= innerWidth,
})"""


async def _lists_until(panel: ExtensionContext, check: str) -> dict[str, Any]:
    with trio.fail_after(TIMEOUT):
        while not await panel.evaluate(f"(() => {{ const s = {_LISTS}; return {check}; }})()"):
            await trio.sleep(0.05)
    return dict(await panel.evaluate(_LISTS))


async def test_allowed_sites_round_trip_the_host_lists(
    faked: tuple[ExtensionBrowser, SitesHost],
) -> None:
    """The settings show the host's lists; Remove and "never allow" save the edited lists
    with sites_set and show what the host stored; a site that is not one is refused."""
    ext, host = faked
    host.lists = {"always": ["https://shop.example", "https://mail.example"], "never": []}
    panel = await ext.open_side_panel()
    await panel.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": 360, "height": 700, "deviceScaleFactor": 1, "mobile": False},
    )
    await _open_settings(panel)
    first = await _lists_until(panel, "s.always.length === 2")
    await panel.evaluate(
        """document.querySelector('#sites-always button[data-site="https://shop.example"]')
            .click(); true"""
    )
    removed = await _lists_until(panel, "s.always.length === 1")
    await panel.evaluate(
        """document.getElementById('sites-new').value = 'javascript:alert(1)';
        document.getElementById('sites-add').requestSubmit(); true"""
    )
    refused = await _lists_until(panel, "s.note.includes('http')")
    await panel.evaluate(
        """document.getElementById('sites-new').value = 'https://evil.example/steal?x=1';
        document.getElementById('sites-add').requestSubmit(); true"""
    )
    added = await _lists_until(panel, "s.never.length === 1")
    label = await panel.evaluate(
        "document.querySelector('#sites-never button').getAttribute('aria-label')"
    )
    await panel.evaluate("document.getElementById('sites').scrollIntoView(); true")
    shot = await panel.send("Page.captureScreenshot", {"format": "png"})
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "allowed-sites.png").write_bytes(base64.b64decode(shot["data"]))
    assert first["always"] == ["https://shop.example", "https://mail.example"]
    assert first["form"]
    assert first["fits"]  # the section fits the 360 px panel
    assert removed["always"] == ["https://mail.example"]
    assert removed["note"] == "Removed https://shop.example."
    assert refused["note"] == "Only http and https sites can be listed."
    assert added["never"] == ["https://evil.example"]
    assert added["note"] == "https://evil.example is never allowed now."
    assert label == "Remove https://evil.example from the never allowed sites"
    assert host.saved == [
        {"type": "sites_set", "id": host.saved[0]["id"],
         "always": ["https://mail.example"], "never": []},
        {"type": "sites_set", "id": host.saved[1]["id"],
         "always": ["https://mail.example"], "never": ["https://evil.example"]},
    ]  # fmt: skip


async def test_two_removes_in_a_row_both_hold(
    faked: tuple[ExtensionBrowser, SitesHost],
) -> None:
    """Two Removes clicked before the host answered the first both hold: each save edits
    the lists the host stored last, one at a time, so the second does not put back the
    site the first took off."""
    ext, host = faked
    host.lists = {
        "always": ["https://shop.example", "https://mail.example", "https://bank.example"],
        "never": [],
    }
    panel = await ext.open_side_panel()
    await _open_settings(panel)
    await _lists_until(panel, "s.always.length === 3")
    await panel.evaluate(
        """for (const site of ['https://shop.example', 'https://bank.example']) {
            document.querySelector(`#sites-always button[data-site="${site}"]`).click();
        }
        true"""
    )
    shown = await _lists_until(panel, "s.note === 'Removed https://bank.example.'")
    assert shown["always"] == ["https://mail.example"]
    assert host.lists == {"always": ["https://mail.example"], "never": []}
    assert [saved["always"] for saved in host.saved] == [
        ["https://mail.example", "https://bank.example"],
        ["https://mail.example"],
    ]


async def test_allowed_sites_say_plainly_when_the_host_does_not_know_them(
    faked: tuple[ExtensionBrowser, SitesHost],
) -> None:
    """A host without `sites` leaves the section without controls and with a message
    that says what to do."""
    ext, host = faked
    assert host.lists is None
    panel = await ext.open_side_panel()
    await _open_settings(panel)
    shown = await _lists_until(panel, "s.note !== ''")
    assert shown["note"].startswith("The Trimtab host that runs now does not keep site lists")
    assert not shown["form"]
    assert shown["always"] == shown["never"] == []
