"""The request guard through the real extension: the side panel's agent clicks a
"1-Click buy" button whose script POSTs to the shop; the host holds the POST over the
extension's ``chrome.debugger`` relay, the person says no in the side panel, and the
shop never sees it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio

from tests.extension.test_consent_e2e import PlannedModel, Step, _id_of
from tests.support import TEST_PAGES
from tests.support.agent import run_task, serve_model
from tests.support.e2e import ExtensionBrowser, launch_with_extension
from tests.support.recorder import Recorder, serve_recorder

pytestmark = pytest.mark.browser


@pytest.fixture
async def ext(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[ExtensionBrowser]:
    monkeypatch.setenv("TRIMTAB_LOG_DIR", str(tmp_path / "logs"))
    async with launch_with_extension(tmp_path / "profile") as browser:
        yield browser


async def test_a_refused_purchase_never_leaves_the_browser(
    ext: ExtensionBrowser, nursery: trio.Nursery
) -> None:
    """The agent's click on "1-Click buy" is asked about in the side panel as a request
    (POST to the shop); the person's no fails it, the shop's log has no POST, and the
    model reads that it was held and not sent."""
    site: Recorder = await nursery.start(serve_recorder, TEST_PAGES)
    plan: list[Step] = [
        lambda seen: ("capture_snapshot", {}),
        lambda seen: ("click", {"id": _id_of(seen, r'<button id="[^"]+">1-Click buy')}),
    ]
    async with trio.open_nursery() as inner:
        model: PlannedModel = await inner.start(serve_model, PlannedModel(plan))
        run = await run_task(ext, model, site.url("127.0.0.1", "guard-shop.html"), "Buy it.")
        inner.cancel_scope.cancel()
    assert "sends a POST request to http://127.0.0.1" in run.question
    assert site.sent("/api/buy") == []
    results = model.results(model.requests[-1][1])
    assert "was held: not sent" in results[1], results[1]
    assert "The purchase failed (TypeError)" in results[1]
