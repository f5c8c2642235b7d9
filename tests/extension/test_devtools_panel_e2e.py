"""The tool groups in the real side panel: by default the model is given no console
or network tool; with "Console and network" ticked in the settings, the agent reads
the page's uncaught error through `console`. Real extension, host and Chromium, a
scripted model on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio

from tests.extension.test_consent_e2e import PlannedModel, Step, _id_of
from tests.support import TEST_PAGES
from tests.support.agent import run_task, serve_model
from tests.support.devtools_site import DevtoolsSite, serve_devtools_site
from tests.support.e2e import ExtensionBrowser, launch_with_extension

pytestmark = pytest.mark.browser


@pytest.fixture
async def ext(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[ExtensionBrowser]:
    monkeypatch.setenv("TRIMTAB_LOG_DIR", str(tmp_path / "logs"))
    async with launch_with_extension(tmp_path / "profile") as browser:
        yield browser


def _tool_names(model: PlannedModel) -> set[str]:
    return {tool["name"] for tool in model.requests[0][1]["tools"]}


@pytest.mark.deadline(240)
async def test_console_is_given_only_when_the_person_enabled_it(
    ext: ExtensionBrowser, nursery: trio.Nursery
) -> None:
    """Default settings: no console or network tool reaches the model. With the
    devtools group on: a click whose handler fails, then `console`, whose answer holds
    the TypeError with its stack inside the page-data block."""
    site: DevtoolsSite = await nursery.start(serve_devtools_site, TEST_PAGES)
    url = site.url("devtools-app.html")
    with trio.fail_after(200):
        async with trio.open_nursery() as inner:
            plain: PlannedModel = await inner.start(serve_model, PlannedModel([]))
            first = await run_task(ext, plain, url, "Why do the orders not show?")
            # A new conversation: the tools are the prefix of a whole conversation.
            await first.panel.evaluate("document.getElementById('new-task').click(); true")
            assert "capture_snapshot" in _tool_names(plain)
            assert not {"console", "network"} & _tool_names(plain)

            plan: list[Step] = [
                lambda seen: ("capture_snapshot", {}),
                lambda seen: ("click", {"id": _id_of(seen, r'<button id="[^"]+">Refresh orders')}),
                lambda seen: ("console", {"level": "error"}),
            ]
            developer: PlannedModel = await inner.start(serve_model, PlannedModel(plan))
            settings = {"groups": ["core", "devtools"]}
            await run_task(ext, developer, url, "Why do the orders not show?", settings=settings)
            inner.cancel_scope.cancel()
    assert {"console", "network"} <= _tool_names(developer)
    answer = developer.results(developer.requests[-1][1])[2]
    assert answer.startswith("<<<PAGE DATA ")
    assert "TypeError: Cannot read properties of undefined (reading 'toFixed')" in answer
    assert "at renderOrders (" in answer
