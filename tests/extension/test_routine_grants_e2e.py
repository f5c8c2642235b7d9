"""A routine's grants through the real side panel, service worker and host, on the
routines shop whose order form sends the order to another site (``perturb=offsite``,
tests/pages/routines/), with a scripted model on 127.0.0.1: the task asks before the
order and about the payment site; saved with that site and the order's "don't ask
again" checked, the routine runs from the Routines view with no question at all, and
its run says the order was submitted unasked.

Two sites without leaving the machine: every ``*.test`` name is 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio

from tests.extension.test_routines_panel_e2e import (
    RUNS,
    TASK,
    ShopModel,
    click,
    placed,
    shop_storage,
    until,
)
from tests.support import LOCAL_NAMES, StaticServer
from tests.support.agent import ENDED, open_agent, serve_model, submit_message
from tests.support.e2e import ExtensionBrowser, launch_with_extension

pytestmark = pytest.mark.browser

PLACE = 5  # the routine's step that clicks "Place order"
# A name of its own: the hosts of one test session share their state folder (routines).
NAME = "Order headlamps, paid on pay.test"
ITEM = f"document.querySelector('li.routine[data-routine={json.dumps(NAME)}]')"


@pytest.fixture
async def ext(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[ExtensionBrowser]:
    monkeypatch.setenv("TRIMTAB_LOG_DIR", str(tmp_path / "logs"))
    async with launch_with_extension(tmp_path / "profile", extra_args=(LOCAL_NAMES,)) as browser:
        yield browser


async def test_a_routine_saved_with_a_site_and_a_submit_allowed_runs_without_a_question(
    ext: ExtensionBrowser, pages_server: StaticServer
) -> None:
    """The save form offers the routine's sites and its order step, none checked; with
    pay.test and "don't ask again" for the order checked, the Routines list says what is
    allowed, and the run orders with no question asked and no model call, its line
    saying the order was submitted without asking; unchecked there, the next run asks."""
    async with trio.open_nursery() as nursery:
        model: ShopModel = await nursery.start(serve_model, ShopModel("anthropic"))
        url = f"http://shop.test:{pages_server.port}/routines/shop.html"
        panel, _ = await open_agent(ext, model, url)
        [target] = [
            t["targetId"]
            for t in (await ext.browser.send("Target.getTargets"))["targetInfos"]
            if t["url"] == url
        ]
        shop = await ext.attach(target)
        await shop_storage(shop, perturb="offsite")
        await submit_message(panel, TASK)
        first = await until(panel, f"{ENDED} > 0 && !trimtabPanel.state.running")
        assert any("Place order" in q for q in first), first
        assert any("pay.test" in q for q in first), first

        await until(panel, "!document.getElementById('save-routine').hidden")
        await click(panel, "#save-routine-open")
        await until(panel, "!document.getElementById('save-routine-form').hidden")
        offered = await panel.evaluate(
            """[...document.querySelectorAll('#save-routine-grant-list input')]
              .map((i) => [i.dataset.grant, i.checked])"""
        )
        assert offered == [
            ["http://pay.test", False],
            ["http://shop.test", False],
            [f"step-{PLACE}", False],
        ]
        await panel.evaluate(
            f"""document.getElementById('save-routine-name').value = {json.dumps(NAME)};
            for (const grant of ['http://pay.test', 'step-{PLACE}']) {{
              document.querySelector(`#save-routine-grant-list input[data-grant="${{grant}}"]`)
                .checked = true;
            }}
            true"""
        )
        await click(panel, "#save-routine-save")
        note = "document.getElementById('save-routine-note').textContent"
        await until(panel, f"/^Saved/.test({note})")

        # Back on the shop, its cart empty, its form still sending to pay.test.
        await shop.evaluate(f"location.href = {json.dumps(url)}; true")
        await shop.wait_ready(url)
        await shop_storage(shop, perturb="offsite")
        model_calls = len(model.requests)
        await panel.evaluate("trimtabPanel.showView('routines'); true")
        await until(panel, f"Boolean({ITEM}) && !trimtabPanel.state.routinesLoading")
        summary = await panel.evaluate(
            f"{ITEM}.querySelector('.routine-grants summary').textContent"
        )
        assert summary == "Allowed without asking: 1 site, 1 submit"
        await click(panel, f"li.routine[data-routine={json.dumps(NAME)}] button.routine-run")
        asked = await until(panel, f"{RUNS} === 1 && !trimtabPanel.state.routineRun")
        assert asked == []
        run = (await panel.evaluate("trimtabPanel.state.routineRuns"))[0]
        assert (run["outcome"], run["done"], run["steps"]) == ("done", 6, 6), run
        assert run["unasked"] == [PLACE]
        assert len(model.requests) == model_calls
        assert (await placed(shop))["name"] == "Ada"
        line = await panel.evaluate(f"{ITEM}.querySelector('.routine-runs li').textContent")
        assert f"step {PLACE} submitted without asking" in line, line

        # Taken back in the Routines list: the next run asks as the first task did.
        await panel.evaluate(
            f"""{ITEM}.querySelector('.routine-grants').open = true;
            for (const box of {ITEM}.querySelectorAll('.routine-grant-list input')) {{
              box.checked = false;
            }}
            true"""
        )
        await click(panel, f"li.routine[data-routine={json.dumps(NAME)}] .routine-grant-save")
        summary = f"{ITEM}.querySelector('.routine-grants summary').textContent"
        await until(panel, f"{summary}.endsWith('nothing (it asks as any task)')")
        await shop_storage(shop, perturb="offsite")
        await click(panel, f"li.routine[data-routine={json.dumps(NAME)}] button.routine-run")
        asked = await until(panel, f"{RUNS} === 2 && !trimtabPanel.state.routineRun")
        assert any("Place order" in q for q in asked), asked
        assert any("pay.test" in q for q in asked), asked
        run = (await panel.evaluate("trimtabPanel.state.routineRuns"))[0]
        assert (run["outcome"], run["unasked"]) == ("done", []), run
        nursery.cancel_scope.cancel()
