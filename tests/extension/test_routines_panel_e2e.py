"""Routines through the real side panel, service worker and host, on the routines shop
(tests/pages/routines/) with a scripted model on 127.0.0.1: a finished task saved as a
routine, run again from the Routines view without the model, a changed button done by
the model for that one step, and the same routine run by its schedule in a background
tab of its own, where the service worker hands the model the step it cannot do."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from tests.extension.test_panel_layout_e2e import at_width, overflow
from tests.routines.test_routines_link import eid
from tests.support import StaticServer
from tests.support.agent import ENDED, ScriptedModel, open_agent, serve_model, submit_message
from tests.support.e2e import (
    ExtensionBrowser,
    ExtensionContext,
    answer_question,
    launch_with_extension,
)

pytestmark = pytest.mark.browser

TASK = "Order 2 headlamps for Ada"
NAME = "Order headlamps"
HEAL = "A saved routine ran without a model until step"
RUNS = "trimtabPanel.state.routineRuns.length"


@attrs.define
class ShopModel(ScriptedModel):
    """Orders the headlamps as a model would; handed a routine's step it could not do,
    finds the renamed button and presses it."""

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        results = self.tool_results(body["messages"])
        seen = "\n".join(reversed(results))
        step = len(results)
        if HEAL in self.person_said(body["messages"])[0][1]:
            if step == 0:
                return self._call(step, "find", {"text": "Buy now"})
            if step == 1:
                return self._call(step, "click", {"id": eid(seen, "button", "Buy now")})
            return self._text("Pressed “Buy now”.")
        script = [
            ("capture_snapshot", lambda: {}),
            ("type", lambda: {"id": eid(seen, "input", "Quantity"), "text": "2"}),
            ("click", lambda: {"id": eid(seen, "button", "Add to cart", row="Headlamp")}),
            ("click", lambda: {"id": eid(seen, "a", "Checkout")}),
            ("type", lambda: {"id": eid(seen, "input", "Name"), "text": "Ada"}),
            ("click", lambda: {"id": eid(seen, "button", "Place order")}),
            ("expand", lambda: {"region": "main"}),
        ]
        if step < len(script):
            name, args = script[step]
            return self._call(step, name, args())
        return self._text("Ordered: " + ("$48.00" if "$48.00" in seen else "?"))


@pytest.fixture
async def ext(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[ExtensionBrowser]:
    monkeypatch.setenv("TRIMTAB_LOG_DIR", str(tmp_path / "logs"))
    async with launch_with_extension(tmp_path / "profile") as browser:
        yield browser


async def until(panel: ExtensionContext, condition: str, *, allow: bool = True) -> list[str]:
    """Answer every question the panel shows (``allow``) until ``condition`` holds in the
    panel; the questions answered."""
    asked = []
    while not await panel.evaluate(condition):
        said = await answer_question(panel, allow=allow)
        if said is not None:
            asked.append(said)
        await trio.sleep(0.1)
    return asked


async def click(panel: ExtensionContext, selector: str) -> None:
    await panel.evaluate(f"document.querySelector({json.dumps(selector)}).click(); true")


async def shop_storage(shop: ExtensionContext, **items: str) -> None:
    """The shop's site as the test wants it: an empty cart, nothing ordered, ``items``."""
    await shop.evaluate(
        f"localStorage.clear(); Object.entries({json.dumps(items)})"
        ".forEach(([k, v]) => localStorage.setItem(k, v)); true"
    )


async def placed(shop: ExtensionContext) -> Any:
    return json.loads(await shop.evaluate("localStorage.getItem('placed') || 'null'"))


ITEM = f"document.querySelector('li.routine[data-routine={json.dumps(NAME)}]')"


@pytest.mark.long
async def test_a_finished_task_is_saved_as_a_routine_and_runs_again_from_the_routines_view(
    ext: ExtensionBrowser, pages_server: StaticServer
) -> None:
    """The task done with the model is saved with its parameter renamed; the Routines
    view runs it again with another quantity, without a model call and asking before the
    order; on the changed site the model does only the renamed button's step (its tokens
    the run's) and the run goes on; a schedule sets its alarm, and the scheduled run
    opens a background tab of its own in a group, asks in the panel, and leaves its
    outcome in the history with a notification; on the changed site, a scheduled run has
    the model do the renamed button's step, which the person keeps from the Routines
    view. At 360 px neither the save form nor the
    Routines view reaches past the panel's edge."""
    async with trio.open_nursery() as nursery:
        model: ShopModel = await nursery.start(serve_model, ShopModel("anthropic"))
        url = pages_server.url("routines/shop.html")
        panel, _ = await open_agent(ext, model, url)
        [target] = [
            t["targetId"]
            for t in (await ext.browser.send("Target.getTargets"))["targetInfos"]
            if t["url"] == url
        ]
        shop = await ext.attach(target)
        await shop_storage(shop)
        await submit_message(panel, TASK)
        first = await until(panel, f"{ENDED} > 0 && !trimtabPanel.state.running")
        assert any("Place order" in q for q in first), first
        assert (await placed(shop))["name"] == "Ada"
        model_calls = len(model.requests)

        # Save as routine: the values the task named are parameters, one renamed.
        await until(panel, "!document.getElementById('save-routine').hidden")
        await click(panel, "#save-routine-open")
        await until(panel, "!document.getElementById('save-routine-form').hidden")
        draft = await panel.evaluate(
            """({name: document.getElementById('save-routine-name').value,
                 params: [...document.querySelectorAll('#save-routine-param-list input')]
                   .map((i) => i.value)})"""
        )
        assert draft == {"name": TASK, "params": ["quantity", "name"]}
        await at_width(panel)
        wide = {"agent": await overflow(panel)}
        await panel.evaluate(
            f"""document.getElementById('save-routine-name').value = {json.dumps(NAME)};
            document.querySelector('#save-routine-param-list input[data-param=name]')
              .value = 'customer'; true"""
        )
        await click(panel, "#save-routine-save")
        note = "document.getElementById('save-routine-note').textContent"
        await until(panel, f"/^Saved/.test({note})")

        # The Routines view runs it with another quantity, without the model.
        await shop_storage(shop)
        await panel.evaluate("trimtabPanel.showView('routines'); true")
        await until(panel, f"Boolean({ITEM}) && !trimtabPanel.state.routinesLoading")
        fields = await panel.evaluate(
            f"[...{ITEM}.querySelectorAll('input[data-param]')]"
            ".map((i) => [i.dataset.param, i.type, i.value])"
        )
        assert fields == [["quantity", "text", "2"], ["customer", "text", "Ada"]]
        await panel.evaluate(
            f"""const quantity = {ITEM}.querySelector('input[data-param=quantity]');
            quantity.value = '3'; quantity.dispatchEvent(new Event('input')); true"""
        )
        await click(panel, f"li.routine[data-routine={json.dumps(NAME)}] button.routine-run")
        asked = await until(panel, f"{RUNS} === 1 && !trimtabPanel.state.routineRun")
        assert any("Place order" in q for q in asked), asked
        run = (await panel.evaluate("trimtabPanel.state.routineRuns"))[0]
        assert (run["outcome"], run["done"], run["steps"], run["healed"]) == ("done", 6, 6, 0)
        assert "$72.00" in run["results"][0]
        assert len(model.requests) == model_calls  # no model call
        assert await placed(shop) == {"cart": {"Headlamp": {"qty": 3, "price": 24}}, "name": "Ada"}

        # On the changed site, the model does the one step a person would still find.
        await shop_storage(shop, perturb="wording")
        await click(panel, f"li.routine[data-routine={json.dumps(NAME)}] button.routine-run")
        await until(panel, f"{RUNS} === 2 && !trimtabPanel.state.routineRun")
        healed = (await panel.evaluate("trimtabPanel.state.routineRuns"))[0]
        assert (healed["outcome"], healed["healed"], healed["done"]) == ("done", 1, 6), healed
        assert "$72.00" in healed["results"][0]  # the form kept the quantity 3
        assert healed["totals"]["calls"] == 3  # find, click, the answer: the run's tokens
        handed = model.person_said(model.requests[-1][1]["messages"])[0][1]
        words, _, block = handed.rpartition("<<<PAGE DATA")
        assert "Step 5 of 6: click the button 'Place order'" in block
        assert "Place order" not in words  # the page's words only inside the block
        line = await panel.evaluate(f"{ITEM}.querySelector('.routine-runs li').textContent")
        assert line.startswith("done · 6 of 6 steps"), line
        assert "1 step done by the model" in line

        # A schedule: its alarm is set; its run (as the alarm runs it) opens a background
        # tab of its own, in a group, and a no to its question stops it before the order.
        await shop_storage(shop)
        await panel.evaluate(
            f"""{ITEM}.querySelector('.routine-schedule').open = true;
            const every = {ITEM}.querySelector('.schedule-every');
            every.value = 'day'; every.dispatchEvent(new Event('change'));
            {ITEM}.querySelector('.schedule-time').value = '07:30'; true"""
        )
        await click(panel, f"li.routine[data-routine={json.dumps(NAME)}] .schedule-save")
        await until(panel, f"{ITEM}.querySelector('.schedule-note').textContent === 'Saved.'")
        alarm = await ext.worker.evaluate(f"chrome.alarms.get({json.dumps('routine:' + NAME)})")
        assert alarm is not None
        summary = await panel.evaluate(
            f"{ITEM}.querySelector('.routine-schedule summary').textContent"
        )
        assert summary.startswith("Schedule: daily at 07:30 · next ")
        tab_ids = "chrome.tabs.query({}).then((tabs) => tabs.map((t) => t.id))"
        before = set(await ext.worker.evaluate(tab_ids))
        await ext.worker.evaluate(
            f"trimtab.routines.runNow({json.dumps(NAME)}, {{quantity: '4'}}); true"
        )
        scheduled = await until(panel, f"{RUNS} === 3", allow=False)
        assert any("Place order" in q for q in scheduled), scheduled
        record = (await panel.evaluate("trimtabPanel.state.routineRuns"))[0]
        assert (record["outcome"], record["scheduled"], record["at"]) == ("refused", True, 5)
        assert await placed(shop) is None
        tabs = await ext.worker.evaluate("chrome.tabs.query({})")
        [opened] = [t for t in tabs if t["id"] not in before]
        assert not opened["active"]
        assert opened["groupId"] != -1
        group = await ext.worker.evaluate(f"chrome.tabGroups.get({opened['groupId']})")
        assert group["title"] == f"Routine: {NAME}"
        # The run's record is kept before its notification is shown: waited for.
        with trio.fail_after(30):
            while not any(
                key.startswith("routine-sched-")
                for key in await ext.worker.evaluate("chrome.notifications.getAll()")
            ):
                await trio.sleep(0.1)

        # By its schedule on the changed site: the worker hands the model the one step
        # (the agent loop runs in the service worker too), and the person allows the order.
        await shop_storage(shop, perturb="wording")
        model_calls = len(model.requests)
        heal_ids = f"[...{ITEM}.querySelectorAll('.healed-step')].map((li) => li.dataset.heal)"
        offered = await panel.evaluate(heal_ids)
        await ext.worker.evaluate(
            f"trimtab.routines.runNow({json.dumps(NAME)}, {{quantity: '4'}}); true"
        )
        asked = await until(panel, f"{RUNS} === 4")
        assert any("Buy now" in q for q in asked), asked
        record = (await panel.evaluate("trimtabPanel.state.routineRuns"))[0]
        assert (record["outcome"], record["scheduled"], record["healed"]) == ("done", True, 1)
        assert len(model.requests) == model_calls + 3  # find, click, the answer
        assert await placed(shop) == {"cart": {"Headlamp": {"qty": 4, "price": 24}}, "name": "Ada"}
        # Its step waits under the routine, as after a run from here; the person keeps it.
        await until(panel, f"(({heal_ids}).join()) !== {json.dumps(','.join(offered))}")
        [heal] = await panel.evaluate(heal_ids)
        await click(panel, f"li.healed-step[data-heal='{heal}'] .healed-keep")
        await until(
            panel, "document.getElementById('routines-note').textContent.startsWith('Kept in')"
        )
        assert (
            await ext.worker.evaluate(
                "chrome.storage.local.get('routineHeals').then((r) => r.routineHeals)"
            )
            == {}
        )
        await panel.evaluate(
            f"for (const d of {ITEM}.querySelectorAll('details')) d.open = true; true"
        )
        wide["routines"] = await overflow(panel)
        for view, found in wide.items():
            assert (found["wide"], found["sideways"], found["page"] <= 0) == ([], [], True), view
        nursery.cancel_scope.cancel()


def item_of(name: str) -> str:
    """The Routines view's item of routine ``name``, as a panel expression."""
    return f"document.querySelector('li.routine[data-routine={json.dumps(name)}]')"


async def test_a_step_the_model_did_is_kept_once_the_person_says_so_and_names_are_edited(
    ext: ExtensionBrowser, pages_server: StaticServer
) -> None:
    """On the changed site the model does the renamed button's step; after the run the
    Routines view shows that step as recorded beside what the model did, and the
    routine keeps its old step until the person presses "Keep this in the routine";
    then the next run on that site is done without the model. An edit in between (the
    routine and a parameter renamed, that parameter's default set) takes the waiting
    step along to the routine's new name, where it is kept."""
    # (The hosts of one test run share a state folder: a name of this test's own.)
    name, item = "Lamps for Ada", item_of("Lamps for Ada")
    async with trio.open_nursery() as nursery:
        model: ShopModel = await nursery.start(serve_model, ShopModel("anthropic"))
        url = pages_server.url("routines/shop.html")
        panel, _ = await open_agent(ext, model, url)
        [target] = [
            t["targetId"]
            for t in (await ext.browser.send("Target.getTargets"))["targetInfos"]
            if t["url"] == url
        ]
        shop = await ext.attach(target)
        await shop_storage(shop)
        await submit_message(panel, TASK)
        await until(panel, f"{ENDED} > 0 && !trimtabPanel.state.running")
        await until(panel, "!document.getElementById('save-routine').hidden")
        await click(panel, "#save-routine-open")
        await until(panel, "!document.getElementById('save-routine-form').hidden")
        await panel.evaluate(
            f"document.getElementById('save-routine-name').value = {json.dumps(name)}; true"
        )
        await click(panel, "#save-routine-save")
        note = "document.getElementById('save-routine-note').textContent"
        await until(panel, f"/^Saved/.test({note})")
        await panel.evaluate("trimtabPanel.showView('routines'); true")
        await until(panel, f"Boolean({item}) && !trimtabPanel.state.routinesLoading")
        plan = f"[...{item}.querySelectorAll('.plan li')].map((li) => li.textContent)"

        # The model does the renamed button's step; nothing is written yet.
        await shop_storage(shop, perturb="wording")
        await click(panel, f"li.routine[data-routine={json.dumps(name)}] button.routine-run")
        await until(panel, f"{RUNS} === 1 && !trimtabPanel.state.routineRun")
        run = (await panel.evaluate("trimtabPanel.state.routineRuns"))[0]
        assert (run["outcome"], run["healed"]) == ("done", 1), run
        heal = await panel.evaluate(
            f"""[...{item}.querySelectorAll('.healed-step')].map((li) => ({{
                was: li.querySelector('.healed-was').textContent,
                now: [...li.querySelectorAll('.healed-now li')].map((s) => s.textContent),
                keep: li.querySelector('.healed-keep').textContent}}))"""
        )
        assert len(heal) == 1, heal
        assert heal[0]["was"].startswith("Step 5 as recorded: click the button 'Place order'")
        assert [words.split(" (")[0] for words in heal[0]["now"]] == ["click the button 'Buy now'"]
        assert heal[0]["keep"] == "Keep this in the routine"
        assert (await panel.evaluate(plan))[4].startswith("click the button 'Place order'")

        # Edit before keeping: the routine and its quantity renamed, the quantity's
        # default set; the step the model did waits under the new name.
        await panel.evaluate(
            f"""const edit = {item}.querySelector('.routine-edit');
            edit.open = true;
            edit.querySelector('.routine-edit-name').value = 'Ada lamps';
            const quantity = edit.querySelector('fieldset[data-param=quantity]');
            quantity.querySelector('.param-name').value = 'count';
            quantity.querySelector('.param-default').value = '3';
            edit.querySelector('.routine-edit-save').click(); true"""
        )
        await until(
            panel, "document.getElementById('routines-note').textContent === 'Saved “Ada lamps”.'"
        )
        name, renamed = "Ada lamps", item_of("Ada lamps")
        fields = await panel.evaluate(
            f"[...{renamed}.querySelectorAll('input[data-param]')]"
            ".map((i) => [i.dataset.param, i.value])"
        )
        assert fields == [["count", "3"], ["name", "Ada"]]
        assert await panel.evaluate(f"{item} === null")
        assert await panel.evaluate(f"{renamed}.querySelectorAll('.healed-step').length") == 1
        plan = f"[...{renamed}.querySelectorAll('.plan li')].map((li) => li.textContent)"

        # Kept: the routine presses "Buy now", and runs on that site without the model.
        await click(panel, f"li.routine[data-routine={json.dumps(name)}] .healed-keep")
        await until(panel, "/^Kept in/.test(document.getElementById('routines-note').textContent)")
        assert (await panel.evaluate(plan))[4].startswith("click the button 'Buy now'")
        assert await panel.evaluate(f"{renamed}.querySelectorAll('.healed-step').length") == 0
        model_calls = len(model.requests)
        await shop_storage(shop, perturb="wording")
        await click(panel, f"li.routine[data-routine={json.dumps(name)}] button.routine-run")
        await until(panel, f"{RUNS} === 2 && !trimtabPanel.state.routineRun")
        again = (await panel.evaluate("trimtabPanel.state.routineRuns"))[0]
        assert (again["outcome"], again["healed"], again["done"]) == ("done", 0, 6), again
        assert again["totals"] is None
        assert len(model.requests) == model_calls  # no model call
        assert (await placed(shop))["name"] == "Ada"
        nursery.cancel_scope.cancel()
