// A routine changed by the person, free of the DOM: a healed step in words (the step as
// recorded, what was done in its place) for the person to keep or not, and the
// `routine_edit` request from what the Routines list's edit form holds (only what
// changed; a secret parameter never gets a default).

/**
 * @typedef {import("./routines.js").Parameter} Parameter
 * @typedef {import("./routines.js").Routine} Routine
 * @typedef {{id: number, routine: string, at: number, old: string[], new: string[],
 *            parameters: Parameter[]}} Heal  a run's `healed` (host/PROTOCOL.md)
 * @typedef {{name: string, default?: string, about: string}} TypedParameter
 */

/**
 * A heal as the person reads it before keeping it.
 * @param {Heal} heal
 * @returns {{was: string, now: string[], none: string, asks: string[]}} `none`: said
 *   when no step replaces the old one
 */
export function healWords(heal) {
  const last = heal.at + heal.old.length - 1;
  const was = heal.old.length === 1 ? `Step ${heal.at} as recorded: ${heal.old[0]}`
    : `Steps ${heal.at}–${last} as recorded: ${heal.old.join("; ")}`;
  const asks = heal.parameters.map((p) => (p.kind === "secret"
    ? `Each run then asks for a new secret, “${p.name}” (never kept).`
    : `A new parameter, “${p.name}”, “${p.default ?? ""}” unless a run gives another.`));
  return { was, now: [...heal.new],
    none: heal.new.length ? "" : "Nothing: the step is no longer needed.", asks };
}

/**
 * The `routine_edit` fields (besides `name`) for what the form holds: the new name when
 * it changed, and per parameter its changed fields (a text's empty default: none, the
 * run must give it). `problem` says what the form cannot send.
 * @param {Routine} routine
 * @param {{name: string, parameters: Record<string, TypedParameter>}} typed by the
 *   parameter's name in `routine`
 * @returns {{fields: {new_name?: string, parameters?: Record<string, Record<string,
 *   string|null>>}, problem: string}}
 */
export function editRequest(routine, typed) {
  const name = String(typed.name ?? "").replace(/\s+/g, " ").trim();
  if (!name) return { fields: {}, problem: "Give the routine a name" };
  /** @type {Record<string, Record<string, string|null>>} */
  const parameters = {};
  const names = [];
  for (const p of routine.parameters) {
    const form = typed.parameters?.[p.name] ?? { name: p.name, about: p.about };
    const wanted = String(form.name ?? "").trim();
    if (!wanted) return { fields: {}, problem: `Give the parameter “${p.name}” a name` };
    names.push(wanted);
    /** @type {Record<string, string|null>} */
    const change = {};
    if (wanted !== p.name) change.name = wanted;
    if (p.kind !== "secret" && form.default !== undefined) {
      const value = form.default === "" ? null : String(form.default);
      if (value !== p.default) change.default = value;
    }
    const about = String(form.about ?? "").replace(/\s+/g, " ").trim();
    if (about !== p.about) change.about = about;
    if (Object.keys(change).length) parameters[p.name] = change;
  }
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) {
    return { fields: {}, problem: `Two parameters would be called “${twice}”` };
  }
  return { fields: { ...(name !== routine.name ? { new_name: name } : {}),
    ...(Object.keys(parameters).length ? { parameters } : {}) }, problem: "" };
}

/**
 * A routine's waiting heals after the person edited it: each as the host's answer to the
 * edit words it now (the parameters' new names), else as it was under the routine's new
 * name. A heal that cannot be kept (`problem`) is not the host's to word: it stays.
 * @param {Array<Heal & {session: string} | {problem: string, at: number, session: string}>}
 *   waiting the heals shown before the edit
 * @param {{routine: {name: string}, heals?: Array<Heal & {session: string}>}} reply
 *   `routine_edit`'s answer
 */
export function followEdit(waiting, reply) {
  const name = reply.routine.name;
  const key = (/** @type {{session: string, id?: number}} */ h) => `${h.session} ${h.id}`;
  const worded = new Map((reply.heals ?? []).map((h) => [key(h), h]));
  return waiting.map((h) => ("problem" in h ? h : worded.get(key(h)) ?? { ...h, routine: name }));
}
