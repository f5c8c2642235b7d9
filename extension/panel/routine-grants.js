// The person's grants for a routine in the side panel (shared/grants.js): the
// checkboxes offered when a task is saved as a routine (sent with `routine_save`), and
// each routine's "Allowed without asking" in the Routines list, where the person
// grants them, confirms them again after the routine's file changed, or takes them
// back (`routine_grant`, for the routine as the list showed it). Only this panel makes
// grants. Step words quote pages: they go on screen through textContent only.

import { chosenGrants, grantChoices, grantsSummary } from "../shared/grants.js";
import { $, el } from "./dom.js";

/**
 * A checkbox for each choice in `list`; returns what the checked ones grant.
 * @param {HTMLElement} list
 * @param {import("../shared/grants.js").Choice[]} choices
 */
function drawChoices(list, choices) {
  const boxes = choices.map((choice) => {
    const box = el("input");
    box.type = "checkbox";
    box.checked = choice.checked;
    box.dataset.grant = choice.kind === "site" ? choice.site : `step-${choice.step}`;
    return box;
  });
  list.replaceChildren(...choices.map((choice, i) => {
    const li = el("li");
    const label = el("label", "check");
    label.append(boxes[i], ` ${choice.label}`);
    li.append(label);
    if (choice.kind === "submit") li.append(el("div", "muted", choice.detail));
    return li;
  }));
  return () => chosenGrants(choices.map((c, i) => ({ ...c, checked: boxes[i].checked })));
}

/**
 * The save form's grants for the routine a preview drafted (none checked).
 * @param {import("../shared/grants.js").Grantable} grantable
 * @returns {() => {sites: string[], unasked: number[]}} what the person checked
 */
export function drawSaveGrants(grantable) {
  const read = drawChoices($("save-routine-grant-list"), grantChoices(grantable));
  $("save-routine-grants").hidden = false;
  return read;
}

/**
 * A routine's "Allowed without asking" in the Routines list.
 * @param {{name: string, digest: string, grantable: import("../shared/grants.js").Grantable,
 *          grants: import("../shared/grants.js").Grants}} routine
 * @param {{worker: import("./worker-client.js").WorkerClient}} parts
 */
export function grantsBox(routine, { worker }) {
  const box = el("details", "routine-grants");
  const summary = el("summary");
  const list = el("ul", "routine-grant-list");
  const save = el("button", "routine-grant-save");
  save.type = "button";
  const note = el("p", "routine-grant-note muted");
  note.setAttribute("role", "status");
  box.append(summary, list,
    el("p", "muted", "Unchecked, it asks as any task does. Downloads, secrets and code are "
      + "always asked about; a change to the routine's file ends these."),
    save, note);
  let shown = routine;
  let read = () => chosenGrants([]);

  function draw() {
    summary.textContent = grantsSummary(shown.grants);
    box.classList.toggle("lapsed", shown.grants.state === "lapsed");
    read = drawChoices(list, grantChoices(shown.grantable, shown.grants));
    save.textContent = shown.grants.state === "lapsed" ? "Confirm again" : "Allow these";
  }

  save.addEventListener("click", async () => {
    note.textContent = "";
    try {
      const reply = await worker.host({ type: "routine_grant", name: shown.name,
        digest: shown.digest, ...read() });
      shown = { ...shown, ...reply };
      draw();
      note.textContent = "Saved.";
    } catch (err) {
      note.textContent = `Not saved: ${err.message}`;
    }
  });
  draw();
  return box;
}
