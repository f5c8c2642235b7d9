// After a run in which the model did a step the routine could not do as recorded: each
// such step beside the step as recorded, with "Keep this in the routine" (the host
// writes it, `routine_amend`) and "Don't keep". Nothing is written without the click.
// The steps' words come from the pages: on screen through textContent only.

import { healWords } from "../shared/routine-edits.js";
import { el } from "./dom.js";

/**
 * @typedef {import("../agent/routine-run.js").Healed} Healed
 * @param {{heals: Healed[], worker: import("./worker-client.js").WorkerClient,
 *          onKept: (heal: Healed) => Promise<void>,
 *          onDropped: (heal: Healed) => Promise<void>}} parts
 * @returns {HTMLElement}
 */
export function healList({ heals, worker, onKept, onDropped }) {
  const list = el("ul", "routine-heals");
  list.setAttribute("aria-label", "Steps the model did");
  list.append(...heals.map((heal) => healItem(heal, worker, onKept, onDropped)));
  return list;
}

function healItem(heal, worker, onKept, onDropped) {
  const li = el("li", "healed-step");
  if ("problem" in heal) {
    li.append(el("p", "", `The model did step ${heal.at}; it cannot be kept in the `
      + `routine: ${heal.problem}`));
    return li;
  }
  li.dataset.heal = String(heal.id);
  const { was, now, none, asks } = healWords(heal);
  li.append(el("p", "healed-was", was), el("p", "", "The model did instead:"));
  if (now.length) {
    const steps = el("ol", "healed-now");
    steps.append(...now.map((words) => el("li", "", words)));
    li.append(steps);
  } else {
    li.append(el("p", "healed-now", none));
  }
  for (const words of asks) li.append(el("p", "muted", words));
  const note = el("p", "muted healed-note");
  note.setAttribute("role", "status");
  const keep = el("button", "healed-keep", "Keep this in the routine");
  keep.type = "button";
  const drop = el("button", "healed-drop", "Don't keep");
  drop.type = "button";
  keep.addEventListener("click", async () => {
    keep.disabled = drop.disabled = true;
    try {
      await worker.host({ type: "routine_amend", session: heal.session, heal: heal.id });
      await onKept(heal);
    } catch (err) {
      note.textContent = `Not kept: ${err.message}`;
      keep.disabled = drop.disabled = false;
    }
  });
  drop.addEventListener("click", () => onDropped(heal));
  const bar = el("div", "toolbar");
  bar.append(keep, drop);
  li.append(bar, note);
  return li;
}
