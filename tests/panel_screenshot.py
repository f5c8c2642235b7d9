"""Retake the README's screenshot of the side panel from the real panel.

Run ``make screenshot`` (or ``.venv/bin/python -m tests.panel_screenshot``): real
headless Chromium with the extension and the host, a scripted model on 127.0.0.1, the
panel at 360 x 665 px. The agent reads a sandwich shop's page and asks before it
submits the order: the picture shows the steps in words, the cost line and the
question in the bar pinned at the bottom. It writes extension/screenshots/sidepanel.png
(the question) and sidepanel-answer.png (the task's end, after "No").
"""

from __future__ import annotations

import base64
import os
import sys
import tempfile
from pathlib import Path

import trio

from tests.support import serve_static
from tests.support.agent import ENDED, ScriptedModel, open_agent, serve_model, submit_message
from tests.support.e2e import answer_question, launch_with_extension

REPO = Path(__file__).resolve().parent.parent
PAGES = REPO / "tests" / "pages"
OUT = REPO / "extension" / "screenshots"
WIDTH, HEIGHT = 360, 665


async def take(out: Path) -> list[Path]:
    """Run the task in the real panel and save its two pictures under ``out``."""
    shots = []
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["TRIMTAB_LOG_DIR"] = str(Path(tmp) / "logs")
        async with trio.open_nursery() as nursery:
            pages = await nursery.start(serve_static, PAGES)
            model = await nursery.start(serve_model, ScriptedModel("anthropic", task="order"))
            async with launch_with_extension(Path(tmp) / "profile") as ext:
                panel, _ = await open_agent(
                    ext,
                    model,
                    pages.url("e2e-relay.html"),
                    settings={"prices": {"input": 3, "cachedInput": 0.3, "output": 15}},
                )
                await panel.send(
                    "Emulation.setDeviceMetricsOverride",
                    {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False},
                )
                await submit_message(panel, "Order a sandwich for Ana.")
                with trio.fail_after(60):
                    while await panel.evaluate("document.getElementById('question').hidden"):
                        await trio.sleep(0.05)
                shots.append(await save(panel, out / "sidepanel.png"))
                await answer_question(panel, allow=False)
                with trio.fail_after(60):
                    while not await panel.evaluate(ENDED) or await panel.evaluate(
                        "trimtabPanel.state.running"
                    ):
                        await trio.sleep(0.05)
                shots.append(await save(panel, out / "sidepanel-answer.png"))
            nursery.cancel_scope.cancel()
    return shots


async def save(panel, path: Path) -> Path:  # type: ignore[no-untyped-def]
    # Let the panel settle its layout (a frame) before the picture.
    await panel.evaluate("new Promise((r) => requestAnimationFrame(() => r(true)))")
    shot = await panel.send("Page.captureScreenshot", {"format": "png"})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(base64.b64decode(shot["data"]))
    return path


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    for path in trio.run(take, out):
        print(path)


if __name__ == "__main__":
    main()
