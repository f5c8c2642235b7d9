"""The trailing window through the real extension: the side panel's agent types a
comment and ends its task; the page saves a draft 1.2 s after typing stops, and the
host, over the extension's ``chrome.debugger`` relay, holds that POST and asks in the
side panel, in words that say the page sends it after the agent typed. A no keeps it
from the forum; a yes sends it once."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio

from tests.extension.test_consent_e2e import PlannedModel, Step, _id_of
from tests.support import TEST_PAGES
from tests.support.agent import ENDED, open_agent, serve_model, submit_message
from tests.support.e2e import ExtensionBrowser, answer_question, launch_with_extension
from tests.support.recorder import Recorder, serve_recorder
from trimtab.tab import TRAILING_SECONDS

pytestmark = pytest.mark.browser

PLAN: list[Step] = [
    lambda seen: ("capture_snapshot", {}),
    lambda seen: ("type", {"id": _id_of(seen, r'<textarea id="[^"]+"'), "text": "A clinch knot"}),
]


@pytest.fixture
async def ext(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[ExtensionBrowser]:
    monkeypatch.setenv("TRIMTAB_LOG_DIR", str(tmp_path / "logs"))
    async with launch_with_extension(tmp_path / "profile") as browser:
        yield browser


async def _autosave_question(ext: ExtensionBrowser, site: Recorder, *, allow: bool) -> str:
    """Run the plan (type into the comment, then done) and answer the question about the
    draft the page sends afterwards with ``allow``; its words."""
    async with trio.open_nursery() as inner:
        model: PlannedModel = await inner.start(serve_model, PlannedModel(list(PLAN)))
        panel, _ = await open_agent(ext, model, site.url("127.0.0.1", "guard-later.html"))
        before = await panel.evaluate(ENDED)
        await submit_message(panel, "Reply to the thread.")
        question = None
        while question is None:
            question = await answer_question(panel, allow=allow)
            await trio.sleep(0.1)
        # The task ends: the draft was held and asked about past its last call.
        while await panel.evaluate(ENDED) == before:
            await trio.sleep(0.1)
        inner.cancel_scope.cancel()
    return question


async def test_a_no_after_the_task_keeps_the_autosave_from_the_forum(
    ext: ExtensionBrowser, nursery: trio.Nursery
) -> None:
    """The autosave the agent's typing set off is asked about in the side panel as sent
    after the action; the person's no keeps the forum's log free of it."""
    site: Recorder = await nursery.start(serve_recorder, TEST_PAGES)
    question = await _autosave_question(ext, site, allow=False)
    assert "After Trimtab agent typed into the text box below" in question, question
    assert "the page wants to send POST to http://127.0.0.1" in question
    assert "Sent after the action ended" in question
    await trio.sleep(TRAILING_SECONDS + 1)
    assert site.sent("/api/drafts") == []


async def test_a_yes_after_the_task_sends_the_autosave_once(
    ext: ExtensionBrowser, nursery: trio.Nursery
) -> None:
    """The person's yes sends the held draft once: the forum's log has it exactly once."""
    site: Recorder = await nursery.start(serve_recorder, TEST_PAGES)
    await _autosave_question(ext, site, allow=True)
    with trio.fail_after(15):
        await site.wait_for("/api/drafts")
    await trio.sleep(TRAILING_SECONDS)
    assert [r.body for r in site.sent("/api/drafts")] == ['{"draft":"A clinch knot"}']
