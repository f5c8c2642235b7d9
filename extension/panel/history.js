// The last tasks, kept in chrome.storage.local (or any object with the same
// get/set) so the side panel can list, reopen and clear them. A record holds the
// task, where it ran, what the panel showed and what it cost; never settings, so
// never the API key.

export const HISTORY_KEY = "taskHistory";
export const DEFAULT_KEEP = 20;
/** A step's page content is cut to this many characters in the stored record. */
export const CONTENT_LIMIT = 2_000;

/**
 * @typedef {{id: string, started: number, task: string, title: string, url: string,
 *            provider: string, model: string, steps: object[],
 *            totals: import("./cost.js").Totals, ok: boolean|null}} TaskRecord
 * @typedef {{get: (key: string) => Promise<Record<string, any>>,
 *            set: (items: Record<string, any>) => Promise<void>}} Store
 */

/**
 * A step as it is stored: long page content cut, so that many tasks fit.
 * @param {object} step
 */
export function storedStep(step) {
  if (typeof step.content !== "string" || step.content.length <= CONTENT_LIMIT) return step;
  return { ...step, content: `${step.content.slice(0, CONTENT_LIMIT)}\n… (cut in the history)` };
}

/** @param {Store} store @returns {Promise<TaskRecord[]>} */
export async function listTasks(store) {
  const got = await store.get(HISTORY_KEY);
  const list = got?.[HISTORY_KEY];
  return Array.isArray(list) ? list : [];
}

/**
 * Add or update a record (same id), newest first, keeping at most `keep`.
 * @param {Store} store
 * @param {TaskRecord} record
 * @param {number} keep
 * @returns {Promise<TaskRecord[]>}
 */
export async function saveTask(store, record, keep = DEFAULT_KEEP) {
  if ("apiKey" in record) throw new Error("a task record must not hold an API key");
  const others = (await listTasks(store)).filter((r) => r.id !== record.id);
  const clean = { ...record, steps: record.steps.map(storedStep) };
  const list = keep > 0 ? [clean, ...others].slice(0, keep) : [];
  await store.set({ [HISTORY_KEY]: list });
  return list;
}

/** @param {Store} store */
export async function clearTasks(store) {
  await store.set({ [HISTORY_KEY]: [] });
}
