// The Routines view: the routines the host keeps (and the files that do not read),
// each with its steps in words, a form for its parameters (a secret is a password
// field, never kept), Run and Stop, Delete, its schedule (schedule-form.js) and its
// last runs. A run goes through agent/routine-run.js; one runs at a time from here.
// A run that stopped before a step offers to try it again or, once the person did it,
// to go on from the next. Page-derived words (the steps, the results) go on screen
// through textContent only. After a run in which the model did a step, that step is
// offered to keep in the routine (routine-heals.js); a routine's names and parameters
// are edited in place (routine-edit.js).

import {
  describeRun, formFields, listHeals, listRuns, paramsFrom, runsOf, setHeals,
} from "../shared/routines.js";
import { $, el } from "./dom.js";
import { grantsBox } from "./routine-grants.js";
import { runRoutine } from "../agent/routine-run.js";
import { followEdit } from "../shared/routine-edits.js";
import { mountRoutineEdit } from "./routine-edit.js";
import { healList } from "./routine-heals.js";
import { mountScheduleForm } from "./schedule-form.js";
import { siteName } from "./step-words.js";
import { stepItem } from "./steps.js";

/**
 * @param {{store: import("./store.js").Store<ReturnType<typeof import("./store.js").panelState>>,
 *          worker: import("./worker-client.js").WorkerClient,
 *          openSettings: () => void}} parts
 */
export function mountRoutines({ store, worker, openSettings }) {
  const { state } = store;
  /** Each routine's item by name, to draw its runs and its run's state. */
  const items = new Map();
  /** What the person typed in each routine's text fields (never a secret), by routine
   *  and parameter: a list drawn again keeps it. */
  const typed = new Map();
  /** The steps the model did in each routine's last run (the panel's or a scheduled
   *  one), to keep or not, by routine; kept in chrome.storage.local until answered. */
  const heals = new Map();
  /** Set routine `name`'s waiting steps, here and in storage. */
  async function keepHeals(name, left) {
    heals.set(name, left);
    await setHeals(chrome.storage.local, name, left);
  }
  let controller = null;

  /** The list as the host has it now; one refresh at a time (a second joins it). */
  let listing = null;
  function refresh() {
    // Not while a run goes on: its item shows how it goes.
    if (state.routineRun) return Promise.resolve();
    listing ??= list().finally(() => {
      listing = null;
      store.update({ routinesLoading: false });
    });
    return listing;
  }

  async function list() {
    store.update({ routinesLoading: true });
    $("routines-note").textContent = "";
    try {
      const { routines, problems } = await worker.host({ type: "routines" });
      const { schedules } = await worker.call("routines", { action: "list" });
      store.update({ routines, routineProblems: problems, schedules,
        routineRuns: await listRuns(chrome.storage.local) });
      heals.clear();
      for (const [name, waiting] of Object.entries(await listHeals(chrome.storage.local))) {
        heals.set(name, waiting);
      }
    } catch (err) {
      $("routines-note").textContent = `The routines could not be listed: ${err.message}`;
      return;
    }
    drawList();
  }

  function drawList() {
    const problems = $("routine-problems");
    problems.replaceChildren(...state.routineProblems.map((p) => {
      const li = el("li", "error", `${p.file} cannot be run: ${p.problem}`);
      li.append(button("Delete the file", () => remove({ file: p.file })));
      return li;
    }));
    items.clear();
    $("routine-list").replaceChildren(...state.routines.map((routine) => {
      const item = routineItem(routine);
      items.set(routine.name, item);
      return item.li;
    }));
    $("routines-empty").hidden = state.routines.length > 0 || state.routineProblems.length > 0;
    drawRuns();
    drawRunning();
  }

  /** One routine: its words, steps, parameters, buttons, schedule and last runs. */
  function routineItem(routine) {
    const li = el("li", "routine");
    li.dataset.routine = routine.name;
    const where = siteName(routine.start);
    const facts = [`${routine.steps} step${routine.steps === 1 ? "" : "s"}`,
      where ? `starts on ${where}` : "", routine.task ? `“${routine.task}”` : ""];
    const plan = el("details");
    const planList = el("ol", "plan");
    planList.append(...routine.plan.map((words) => el("li", "", words)));
    plan.append(el("summary", "", "Steps"), planList);
    li.append(el("h3", "routine-name", routine.name),
      el("p", "muted", facts.filter(Boolean).join(" · ")), plan, grantsBox(routine, { worker }));

    const form = el("form", "routine-form");
    const inputs = {};
    for (const field of formFields(routine)) {
      const label = el("label", "", field.name);
      const input = el("input");
      input.type = field.secret ? "password" : "text";
      input.name = field.name;
      input.value = field.secret ? "" : typed.get(routine.name)?.[field.name] ?? field.value;
      input.autocomplete = "off";
      if (!field.secret) {
        input.addEventListener("input", () => {
          typed.set(routine.name, { ...typed.get(routine.name), [field.name]: input.value });
        });
      }
      input.dataset.param = field.name;
      inputs[field.name] = input;
      label.append(input, el("span", "muted", field.secret
        ? `asked each run, never kept · ${field.about}` : field.about));
      form.append(label);
    }
    const heal = el("select", "routine-heal");
    heal.append(new Option("let the model do that step", "model"), new Option("ask me", "ask"));
    const healLabel = el("label", "", "When a step cannot be done as recorded");
    healLabel.append(heal);
    const run = el("button", "routine-run", "Run");
    run.type = "submit";
    const stop = button("Stop", () => controller?.abort(), "routine-stop");
    const del = button("Delete", () => remove({ name: routine.name }), "routine-delete");
    const bar = el("div", "toolbar");
    bar.append(run, stop, del);
    form.append(healLabel, bar);
    const texts = () => Object.fromEntries(Object.entries(inputs)
      .filter(([, input]) => input.type !== "password").map(([k, input]) => [k, input.value]));
    const values = () => Object.fromEntries(Object.entries(inputs)
      .map(([k, input]) => [k, input.value]));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      start(routine, values(), texts(), heal.value, null);
    });

    const status = el("p", "routine-status muted");
    status.setAttribute("role", "status");
    const steps = el("ol", "steps routine-steps");
    const goOn = el("div", "toolbar routine-go-on");
    goOn.hidden = true;
    const runs = el("ul", "routine-runs");
    const schedule = mountScheduleForm({ routine, worker, store, values });
    const edit = mountRoutineEdit({ routine, worker, onSaved: async (reply) => {
      // The steps waiting to be kept go with the routine's name and read as the host
      // now words them (a renamed parameter by its new name).
      const name = reply.routine.name;
      const waiting = heals.get(routine.name) ?? [];
      const followed = followEdit(waiting, reply);
      if (name !== routine.name) await keepHeals(routine.name, []);
      if (name !== routine.name || JSON.stringify(followed) !== JSON.stringify(waiting)) {
        await keepHeals(name, followed);
      }
      typed.delete(routine.name);
      await refresh();
      $("routines-note").textContent = `Saved “${reply.routine.name}”.`;
    } });
    const healed = el("div", "routine-healed");
    li.append(form, schedule, edit.box, status, steps, healed, goOn, el("h4", "", "Last runs"),
      runs);
    const item = { li, routine, run, stop, del, status, steps, goOn, runs, values, texts, heal,
      healed, editSave: edit.save };
    drawHeals(item);
    return item;
  }

  /** The steps the model did in the routine's last run, each to keep or not. */
  function drawHeals(item) {
    const name = item.routine.name;
    const left = heals.get(name) ?? [];
    item.healed.replaceChildren(...(left.length ? [healList({ heals: left, worker,
      onKept: async (heal) => {
        await keepHeals(name, (heals.get(name) ?? []).filter((h) => h !== heal));
        await refresh();
        $("routines-note").textContent = `Kept in “${name}”: the next run does step `
          + `${heal.at} as the model did it.`;
      },
      onDropped: async (heal) => {
        await keepHeals(name, (heals.get(name) ?? []).filter((h) => h !== heal));
        drawHeals(item);
      } })] : []));
  }

  /** Run a routine (or go on with one that stopped) and draw how it goes. */
  async function start(routine, values, texts, heal, going) {
    if (state.routineRun) return;
    const item = items.get(routine.name);
    const { params, missing } = paramsFrom(routine, values);
    if (missing.length) {
      item.status.textContent = `Fill in ${missing.join(", ")} first.`;
      return;
    }
    controller = new AbortController();
    store.update({ routineRun: { routine: routine.name, status: "starting…" } });
    item.steps.replaceChildren();
    item.goOn.hidden = true;
    const pages = [];
    let ran;
    try {
      ran = await runRoutine({
        worker, routine, params, texts, heal, going, signal: controller.signal,
        storage: chrome.storage.local, tabs: chrome.tabs, groups: chrome.tabGroups,
        onStatus: (words) => {
          store.update({ routineRun: { routine: routine.name, status: words } });
        },
        onStep: (step) => {
          if (step.kind === "tool" && step.content) pages.unshift(step.content);
          item.steps.append(stepItem(step, { live: true, pages, tabsSeen: new Map(),
            openSettings }));
        },
      });
    } catch (err) {
      // Nothing was kept of it (the history could not be written): said here at least.
      ran = { record: null, going: null, error: String(err?.message ?? err) };
    } finally {
      controller = null;
      store.update({ routineRun: null, routineRuns: await listRuns(chrome.storage.local) });
    }
    const { record, going: next } = ran;
    await keepHeals(routine.name, ran.heals ?? []);
    drawHeals(item);
    item.status.textContent = !record ? `The run failed: ${ran.error}`
      : record.outcome === "done" ? `Done: ${record.done} of ${record.steps} steps.`
      : `${record.outcome[0].toUpperCase()}${record.outcome.slice(1)}`
        + (record.at ? ` at step ${record.at}` : "") + (record.why ? `: ${record.why}` : ".");
    if (next) offerGoingOn(item, next);
  }

  /** After a stop before step `at`: try it again, or go on once the person did it. */
  function offerGoingOn(item, going) {
    const { routine } = item;
    const again = () => start(routine, item.values(), item.texts(), item.heal.value, going);
    const after = () => start(routine, item.values(), item.texts(), item.heal.value,
      { ...going, at: going.at + 1 });
    item.goOn.replaceChildren(el("p", "routine-step", `Step ${going.at}: ${going.step}`),
      button(`Try step ${going.at} again`, again, "routine-again"),
      ...(going.at < routine.steps
        ? [button(`I did step ${going.at}: go on from step ${going.at + 1}`, after,
          "routine-after")] : []));
    item.goOn.hidden = false;
  }

  async function remove(which) {
    if (state.routineRun) return;
    try {
      await worker.host({ type: "routine_delete", ...which });
      if (which.name) await worker.call("routines", { action: "clear", routine: which.name });
    } catch (err) {
      $("routines-note").textContent = `Could not delete it: ${err.message}`;
    }
    await refresh();
  }

  function drawRuns() {
    for (const item of items.values()) {
      item.runs.replaceChildren(...runsOf(state.routineRuns, item.routine.name).map((r) => {
        const li = el("li", `run ${r.outcome.replace(" ", "-")}`);
        li.dataset.outcome = r.outcome;
        li.append(el("div", "", describeRun(r)));
        const said = [r.at && r.outcome !== "done" ? `stopped before step ${r.at}` : "",
          r.why].filter(Boolean).join(": ");
        if (said) li.append(el("div", "muted", said));
        for (const result of r.results) li.append(el("pre", "routine-result", result));
        return li;
      }));
    }
  }

  function drawRunning() {
    const run = state.routineRun;
    for (const item of items.values()) {
      const mine = run?.routine === item.routine.name;
      item.run.disabled = Boolean(run);
      item.del.disabled = Boolean(run);
      item.editSave.disabled = Boolean(run);
      item.stop.disabled = !mine;
      if (mine) item.status.textContent = run.status;
    }
  }

  store.subscribe(["routineRun"], drawRunning);
  store.subscribe(["routineRuns"], drawRuns);
  store.subscribe(["view"], ({ view }) => {
    if (view === "routines") refresh();
  });
  // A scheduled run (the service worker's) leaves its record here too.
  chrome.storage.onChanged.addListener((changes, area) => {
    if (area === "local" && changes.routineRuns) {
      store.update({ routineRuns: changes.routineRuns.newValue ?? [] });
    }
    // A scheduled run's steps by the model: offered under its routine at once.
    if (area === "local" && changes.routineHeals && !state.routineRun) {
      for (const [name, item] of items) {
        const waiting = changes.routineHeals.newValue?.[name] ?? [];
        if (JSON.stringify(waiting) !== JSON.stringify(heals.get(name) ?? [])) {
          heals.set(name, waiting);
          drawHeals(item);
        }
      }
    }
  });
  $("routines-refresh").addEventListener("click", () => refresh());

  return { refresh };
}

/** A plain button with its handler. */
function button(text, onClick, className = "") {
  const b = el("button", className, text);
  b.type = "button";
  b.addEventListener("click", onClick);
  return b;
}
