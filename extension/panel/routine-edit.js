// "Edit names and parameters" in the Routines list: the routine's name (its file
// follows), each parameter's name (the steps that use it follow), a text parameter's
// default (empty: asked at each run) and any parameter's description. A secret never
// gets a default. The host checks and writes it (`routine_edit`); the service worker's
// schedule and last runs follow the new names.

import { editRequest } from "../shared/routine-edits.js";
import { el } from "./dom.js";

/**
 * @param {{routine: import("../shared/routines.js").Routine,
 *          worker: import("./worker-client.js").WorkerClient,
 *          onSaved: (reply: {routine: import("../shared/routines.js").Routine,
 *                            renamed: Record<string, string>}) => Promise<void>}} parts
 * @returns {{box: HTMLElement, save: HTMLButtonElement}}
 */
export function mountRoutineEdit({ routine, worker, onSaved }) {
  const box = el("details", "routine-edit");
  const form = el("form", "routine-form");
  const name = field("routine-edit-name", routine.name);
  name.maxLength = 100;
  form.append(labelled("Name", name));
  const inputs = {};
  for (const p of routine.parameters) {
    const group = el("fieldset", "routine-edit-param");
    group.dataset.param = p.name;
    group.append(el("legend", "", `Parameter “${p.name}”`));
    const own = { name: field("param-name", p.name), about: field("param-about", p.about) };
    group.append(labelled("Name", own.name));
    if (p.kind === "secret") {
      group.append(el("p", "muted", "A secret: asked at each run, never kept, no default."));
    } else {
      own.default = field("param-default", p.default ?? "");
      group.append(labelled("Default (empty: asked at each run)", own.default));
    }
    group.append(labelled("Description", own.about));
    inputs[p.name] = own;
    form.append(group);
  }
  const save = el("button", "routine-edit-save", "Save changes");
  save.type = "submit";
  const note = el("p", "muted routine-edit-note");
  note.setAttribute("role", "status");
  const bar = el("div", "toolbar");
  bar.append(save);
  form.append(bar, note);
  box.append(el("summary", "", "Edit names and parameters"), form);

  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const typed = { name: name.value, parameters: Object.fromEntries(Object.entries(inputs)
      .map(([key, own]) => [key, { name: own.name.value, about: own.about.value,
        ...(own.default ? { default: own.default.value } : {}) }])) };
    const { fields, problem } = editRequest(routine, typed);
    if (problem) return void (note.textContent = `${problem}.`);
    if (!Object.keys(fields).length) return void (note.textContent = "Nothing changed.");
    save.disabled = true;
    let reply;
    try {
      reply = await worker.host({ type: "routine_edit", name: routine.name, ...fields });
    } catch (err) {
      note.textContent = `Not saved: ${err.message}`;
      save.disabled = false;
      return;
    }
    try {
      if (fields.new_name || Object.keys(reply.renamed).length) {
        await worker.call("routines", { action: "rename", routine: routine.name,
          name: reply.routine.name, params: reply.renamed });
      }
    } catch (err) {
      note.textContent = `Saved, but its schedule did not follow: ${err.message}`;
    }
    save.disabled = false;
    await onSaved(reply);
  });
  return { box, save };
}

function field(className, value) {
  const input = el("input", className);
  input.type = "text";
  input.value = value;
  input.autocomplete = "off";
  return input;
}

function labelled(words, control) {
  const label = el("label", "", words);
  label.append(control);
  return label;
}
