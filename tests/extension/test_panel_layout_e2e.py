"""The side panel at 360 px, as a person sees it: every view fits the panel's width,
the settings put provider, model and key first, and guide a first run. Real extension
and host, a scripted model on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from tests.support import StaticServer
from tests.support.agent import (
    Refusal,
    ScriptedModel,
    open_agent,
    send_message,
    serve_model,
    use_model,
)
from tests.support.e2e import ExtensionBrowser, ExtensionContext, launch_with_extension

pytestmark = pytest.mark.browser

WIDTH = 360
HEIGHT = 665

#: Every element drawn outside the panel's width (each named), and how far the page and
#: its scrolled part could scroll sideways.
OVERFLOW = """(() => {
    const limit = document.documentElement.clientWidth;
    const wide = [];
    for (const el of document.querySelectorAll('body *')) {
        const r = el.getBoundingClientRect();
        if (r.width === 0 && r.height === 0) continue;
        if (r.right > limit + 0.5 || r.left < -0.5) {
            wide.push(`${el.tagName.toLowerCase()}#${el.id}.${el.className}`
                + ` [${Math.round(r.left)}, ${Math.round(r.right)}]`);
        }
    }
    const sideways = [...document.querySelectorAll('*')]
        .filter((el) => el.scrollWidth > el.clientWidth + 1
            && ['auto', 'scroll'].includes(getComputedStyle(el).overflowX))
        .map((el) => `${el.tagName.toLowerCase()}#${el.id}`);
    return {limit, wide, sideways,
            page: document.documentElement.scrollWidth - limit};
})()"""


@attrs.define
class Probed(ScriptedModel):
    """The scripted model, which also answers a connection test (a request without
    tools) with "OK"."""

    def answer(self, body: dict[str, Any]) -> dict[str, Any] | Refusal:  # type: ignore[override]
        if "tools" not in body:
            return self._text("OK")
        return super().answer(body)


@pytest.fixture
async def ext(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[ExtensionBrowser]:
    monkeypatch.setenv("TRIMTAB_LOG_DIR", str(tmp_path / "logs"))
    async with launch_with_extension(tmp_path / "profile") as browser:
        yield browser


async def at_width(panel: ExtensionContext, width: int = WIDTH) -> None:
    """Give the panel the side panel's usual size."""
    await panel.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False},
    )


async def overflow(panel: ExtensionContext) -> dict[str, Any]:
    found: dict[str, Any] = await panel.evaluate(OVERFLOW)
    return found


async def test_no_view_is_wider_than_the_panel(
    ext: ExtensionBrowser, pages_server: StaticServer
) -> None:
    """At 360 px (and 320 and 400), Inspect with a page's XML, the Agent view after a
    task with every step's details open, the settings with Advanced open, and the
    history: no element reaches past the panel's edge and nothing scrolls sideways."""
    async with trio.open_nursery() as nursery:
        model = await nursery.start(serve_model, ScriptedModel("anthropic"))
        panel, _ = await open_agent(
            ext,
            model,
            pages_server.url("e2e-agent-start.html"),
            settings={"prices": {"input": 3, "cachedInput": 0.3, "output": 15}},
        )
        await at_width(panel)
        run = await send_message(panel, "What is the forecast for Lisbon?")
        nursery.cancel_scope.cancel()
    assert run.steps[-1]["kind"] == "done", run.steps
    seen = {}
    for width in (WIDTH, 320, 400):
        await at_width(panel, width)
        await panel.evaluate("trimtabPanel.showView('inspect'); trimtabPanel.refresh()")
        assert await panel.evaluate("trimtabPanel.state.xml.length") > 0
        seen[f"inspect@{width}"] = await overflow(panel)
        await panel.evaluate(
            """trimtabPanel.showView('agent');
            for (const d of document.querySelectorAll('#steps details')) d.open = true;
            true"""
        )
        seen[f"agent@{width}"] = await overflow(panel)
        await panel.evaluate(
            """document.getElementById('settings').open = true;
            document.getElementById('advanced').open = true; true"""
        )
        seen[f"settings@{width}"] = await overflow(panel)
        await panel.evaluate(
            """document.getElementById('settings').open = false;
            document.getElementById('history').open = true; true"""
        )
        seen[f"history@{width}"] = await overflow(panel)
        await panel.evaluate("document.getElementById('history').open = false; true")
    for view, found in seen.items():
        assert found["wide"] == [], view
        assert found["sideways"] == [], view
        assert found["page"] <= 0, view


async def test_settings_put_the_essentials_first_and_test_the_connection(
    ext: ExtensionBrowser, pages_server: StaticServer
) -> None:
    """With no key, the Agent view opens on a first-run card whose button opens the
    settings; they show provider, model and key first, budgets and prices under
    Advanced; "Test connection" sends one tiny request without tools and says what the
    provider answered; once a key is saved, the card goes away."""
    async with trio.open_nursery() as nursery:
        model = await nursery.start(serve_model, Probed("anthropic"))
        panel, _ = await open_agent(
            ext, model, pages_server.url("e2e-agent-start.html"), settings={"apiKey": ""}
        )
        await at_width(panel)
        with trio.fail_after(20):
            while await panel.evaluate("document.getElementById('first-run').hidden"):
                await trio.sleep(0.05)
        card = await panel.evaluate(
            """(() => {
                const card = document.getElementById('first-run');
                const box = card.getBoundingClientRect();
                document.getElementById('first-run-open').click();
                return {text: card.textContent, top: box.top, bottom: box.bottom,
                        open: document.getElementById('settings').open,
                        focused: document.activeElement.id};
            })()"""
        )
        layout = await panel.evaluate(
            """(() => {
                const form = document.getElementById('settings-form');
                const fields = [...form.querySelectorAll('input, select')]
                    .filter((f) => !f.closest('#advanced')).map((f) => f.id);
                const advanced = [...document.querySelectorAll('#advanced input')]
                    .map((f) => f.id);
                return {fields, advanced,
                        advancedOpen: document.getElementById('advanced').open};
            })()"""
        )
        await panel.evaluate(
            "document.getElementById('api-key').value = 'sk-typed-not-saved';"
            "document.getElementById('test-connection').click(); true"
        )
        note = "document.getElementById('connection-note').textContent"
        with trio.fail_after(20):
            while not (await panel.evaluate(note)).startswith("Connected"):
                await trio.sleep(0.05)
        said = await panel.evaluate(note)
        await use_model(ext, model)
        with trio.fail_after(20):
            while not await panel.evaluate("document.getElementById('first-run').hidden"):
                await trio.sleep(0.05)
        nursery.cancel_scope.cancel()
    assert "Set up the agent" in card["text"]
    assert 0 <= card["top"] < card["bottom"] <= HEIGHT
    assert card["open"] is True
    assert card["focused"] == "api-key"
    assert layout["fields"][:3] == ["provider", "model", "api-key"]
    assert {"budget", "page-budget", "price-input", "price-output", "keep-tasks"} <= set(
        layout["advanced"]
    )
    assert layout["advancedOpen"] is False
    assert said == "Connected: scripted answered “OK”."
    [(headers, body)] = model.requests
    assert headers["x-api-key"] == "sk-typed-not-saved"
    assert "tools" not in body
    assert body["max_tokens"] == 16


#: The focused element, named, with its focus ring as the browser draws it.
FOCUSED = """(() => {
    const el = document.activeElement;
    if (!el || el === document.body) return null;
    const style = getComputedStyle(el);
    const eid = el.dataset.eid ? '@' + el.dataset.eid : '';
    return {name: `${el.tagName.toLowerCase()}#${el.id}${eid}`,
            outline: style.outlineStyle, width: parseFloat(style.outlineWidth),
            view: trimtabPanel.state.view};
})()"""


async def press(panel: ExtensionContext, key: str, code: int, *, shift: bool = False) -> None:
    """One key press the browser handles as a person's (focus moves on Tab)."""
    for kind in ("rawKeyDown", "keyUp"):
        await panel.send(
            "Input.dispatchKeyEvent",
            {
                "type": kind,
                "key": key,
                "code": key,
                "windowsVirtualKeyCode": code,
                "modifiers": 8 if shift else 0,
            },
        )


async def walk(panel: ExtensionContext, steps: int) -> list[dict[str, Any]]:
    """Press Tab ``steps`` times; what had the focus after each press."""
    seen = []
    for _ in range(steps):
        await press(panel, "Tab", 9)
        found = await panel.evaluate(FOCUSED)
        if found is not None:
            seen.append(found)
    return seen


async def test_every_control_shows_a_focus_ring_and_the_tabs_take_arrow_keys(
    ext: ExtensionBrowser, pages_server: StaticServer
) -> None:
    """Walking the panel with Tab alone (Inspect with a page's element ids, then the
    Agent view with its settings and Advanced open), every control that takes the focus
    draws a solid ring of at least 2 px; the arrow keys move between the two tabs."""
    async with trio.open_nursery() as nursery:
        model = await nursery.start(serve_model, ScriptedModel("anthropic"))
        panel, _ = await open_agent(ext, model, pages_server.url("e2e-agent-aisle.html"))
        nursery.cancel_scope.cancel()
    await at_width(panel)
    await panel.send("Emulation.setFocusEmulationEnabled", {"enabled": True})
    await panel.evaluate("trimtabPanel.showView('inspect'); trimtabPanel.refresh()")
    await panel.evaluate("document.getElementById('tab-inspect').focus(); true")
    await press(panel, "ArrowRight", 39)
    after_right = await panel.evaluate(FOCUSED)
    await press(panel, "ArrowLeft", 37)
    after_left = await panel.evaluate(FOCUSED)
    inspect = await walk(panel, 12)
    await panel.evaluate(
        """trimtabPanel.showView('agent');
        document.getElementById('settings').open = true;
        document.getElementById('advanced').open = true;
        document.getElementById('tab-agent').focus(); true"""
    )
    agent = await walk(panel, 40)
    assert after_right is not None
    assert (after_right["name"], after_right["view"]) == ("button#tab-agent", "agent")
    assert after_left is not None
    assert (after_left["name"], after_left["view"]) == ("button#tab-inspect", "inspect")
    names = [f["name"] for f in inspect + agent]
    assert any("@" in name for name in names), names  # an element id of the XML
    for wanted in (
        "button#refresh",
        "select#provider",
        "input#api-key",
        "input#price-output",
        "button#test-connection",
        "textarea#task",
    ):
        assert wanted in names, (wanted, names)
    without = [f for f in inspect + agent if f["outline"] != "solid" or f["width"] < 2]
    assert without == []


async def test_the_outside_agents_box_is_a_one_line_chip_while_idle(
    ext: ExtensionBrowser, pages_server: StaticServer
) -> None:
    """With nothing shared and nobody connected, the outside agents box is one line
    (its title and the Share button); sharing the tab opens it into the full box."""
    _, tab = await ext.open_tab(pages_server.url("e2e-agent-start.html"))
    await ext.wait_loaded(tab)
    panel = await ext.open_side_panel()
    await at_width(panel)
    box = """(() => {
        const root = document.getElementById('agents');
        return {idle: root.classList.contains('idle'),
                height: root.getBoundingClientRect().height,
                title: root.querySelector('h2').textContent,
                share: document.getElementById('agents-share').getBoundingClientRect().height,
                note: document.getElementById('agents-note').getBoundingClientRect().height};
    })()"""
    with trio.fail_after(30):
        while not (await panel.evaluate(box))["idle"]:
            await trio.sleep(0.05)
    idle = await panel.evaluate(box)
    await panel.evaluate("document.getElementById('agents-share').click(); true")
    with trio.fail_after(30):
        while (await panel.evaluate(box))["idle"]:
            await trio.sleep(0.05)
    shared = await panel.evaluate(box)
    assert idle["title"] == "Outside agents: none"
    assert idle["share"] > 0
    assert idle["note"] == 0
    assert idle["height"] <= 40
    assert shared["title"] == "Outside agents"
    assert shared["note"] > 0
    assert shared["height"] > idle["height"]
