// "Save as routine" after a task in the Agent view: the host previews what the task's
// session would make (`routine_save` with `preview`), the person names it (the task's
// words at first) and renames the parameters found (a secret one is shown as asked at
// each run, never kept), checks what its runs may do without asking (routine-grants.js:
// nothing by default), then saves it. Page-derived words go on screen through
// textContent only.

import { renameFrom, routineName } from "../shared/routines.js";
import { $, el } from "./dom.js";
import { drawSaveGrants } from "./routine-grants.js";

/**
 * @param {{store: import("./store.js").Store<ReturnType<typeof import("./store.js").panelState>>,
 *          worker: import("./worker-client.js").WorkerClient,
 *          afterSave: () => Promise<void>}} parts `afterSave`: the Routines list is redrawn
 */
export function mountSaveRoutine({ store, worker, afterSave }) {
  const { state } = store;
  const note = (text) => { $("save-routine-note").textContent = text; };
  /** What the person checked of the draft's grants. */
  let grantsChecked = () => ({ sites: [], unasked: [] });

  function hide() {
    $("save-routine").hidden = true;
    store.update({ routineOffer: null, routineDraft: null });
  }

  /** A task ended: offer to keep what it did, if it did anything. */
  function offer() {
    const agent = state.agent;
    if (!agent || !state.run || state.running || agent.toolSteps === 0) return;
    store.update({ routineOffer: { session: agent.session, task: state.run.task },
      routineDraft: null });
    $("save-routine").hidden = false;
    $("save-routine-open").hidden = false;
    $("save-routine-form").hidden = true;
    note("");
  }

  async function open() {
    const offered = state.routineOffer;
    if (!offered) return;
    note("");
    try {
      const draft = await worker.host({ type: "routine_save", session: offered.session,
        name: routineName(offered.task) || "Routine", task: offered.task, preview: true });
      store.update({ routineDraft: draft.routine });
      $("save-routine-name").value = draft.routine.name;
      $("save-routine-replace").checked = false;
      drawDraft(draft.routine);
      $("save-routine-open").hidden = true;
      $("save-routine-form").hidden = false;
      $("save-routine-name").focus();
    } catch (err) {
      note(`This task cannot be a routine: ${err.message}`);
    }
  }

  function drawDraft(routine) {
    $("save-routine-steps").textContent = `${routine.steps} step${routine.steps === 1 ? "" : "s"}`
      + ", each found again by what it shows (its role, name and place), run without the "
      + "model; it asks before a submit or a download as this task did.";
    const list = $("save-routine-param-list");
    list.replaceChildren(...routine.parameters.map((p) => {
      const li = el("li");
      const label = el("label", "", "Parameter");
      const input = el("input");
      input.type = "text";
      input.value = p.name;
      input.dataset.param = p.name;
      input.autocomplete = "off";
      label.append(input);
      const about = p.kind === "secret" ? "a secret: asked each run, never kept"
        : `this task's value: “${p.default ?? ""}”`;
      li.append(label, el("div", "muted", [about, p.about].filter(Boolean).join(" · ")));
      return li;
    }));
    $("save-routine-params").hidden = routine.parameters.length === 0;
    $("save-routine-none").hidden = routine.parameters.length > 0;
    grantsChecked = drawSaveGrants(routine.grantable);
  }

  async function save() {
    const offered = state.routineOffer;
    const draft = state.routineDraft;
    if (!offered || !draft) return;
    const typed = Object.fromEntries([...$("save-routine-param-list").querySelectorAll("input")]
      .map((input) => [input.dataset.param, input.value]));
    const { rename, problem } = renameFrom(draft.parameters, typed);
    if (problem) return note(`${problem}: give each its own name.`);
    const name = $("save-routine-name").value.trim();
    if (!name) return note("Give the routine a name.");
    try {
      const saved = await worker.host({ type: "routine_save", session: offered.session, name,
        task: offered.task, rename, replace: $("save-routine-replace").checked,
        grant: grantsChecked() });
      $("save-routine-form").hidden = true;
      note(`Saved “${saved.routine.name}” (${saved.routine.steps} steps): run it from `
        + "Routines.");
      await afterSave();
    } catch (err) {
      note(`Not saved: ${err.message}`);
    }
  }

  $("save-routine-open").addEventListener("click", open);
  $("save-routine-form").addEventListener("submit", (e) => {
    e.preventDefault();
    save();
  });
  $("save-routine-cancel").addEventListener("click", () => {
    $("save-routine-form").hidden = true;
    $("save-routine-open").hidden = false;
  });
  // A new task, a reply or a stored task shown: this offer was for the one before.
  store.subscribe(["running", "agent", "reopened"], () => {
    if (state.running || !state.agent || state.reopened) hide();
  });

  return { offer };
}
