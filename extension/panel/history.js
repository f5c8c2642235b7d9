// The last tasks, kept in chrome.storage.local (or any object with the same
// get/set) so the side panel can list, reopen and clear them. A record holds the
// task, where it ran, what the panel showed and what it cost; never settings, so
// never the API key.

import { DEFAULT_KEEP } from "../agent/model-settings.js";

export const HISTORY_KEY = "taskHistory";
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
 * A step as it is stored: long page content cut and a screenshot's image left out,
 * so that many tasks fit.
 * @param {object} step
 */
export function storedStep(step) {
  if (step.image?.url) {
    // A screenshot's pixels are not kept: its size and tokens are.
    const { url, ...image } = step.image;
    return storedStep({ ...step, image });
  }
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

/**
 * How a task ended, in one word: "answered" (the model gave its answer), "stopped"
 * (the person or a lost tab stopped it) or "failed" (an error ended it).
 * @param {{kind: string, message?: string}[]} steps
 * @param {boolean|null} ok
 * @returns {"answered"|"stopped"|"failed"}
 */
export function outcomeOf(steps, ok) {
  if (ok) return "answered";
  const last = steps[steps.length - 1];
  return last?.kind === "error" && String(last.message ?? "").startsWith("Stopped:")
    ? "stopped" : "failed";
}

const pad = (n) => String(n).padStart(2, "0");

/**
 * A history entry's line under its task: outcome, date, cost (tokens without prices)
 * and where it ran.
 * @param {TaskRecord & {outcome?: string, cost?: number|null}} record
 * @returns {{outcome: string, line: string}}
 */
export function describeRecord(record) {
  const outcome = record.outcome ?? outcomeOf(record.steps ?? [], record.ok);
  const d = new Date(record.started);
  const date = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} `
    + `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  const t = record.totals;
  const tokens = t.input + t.cacheRead + t.cacheWrite + t.output;
  const cost = typeof record.cost === "number"
    ? `cost ${record.cost < 0.01 ? record.cost.toFixed(4) : record.cost.toFixed(2)}`
    : `${tokens.toLocaleString("en-US")} tokens`;
  let site = record.url || record.title || "";
  try {
    site = new URL(record.url).host || site;
  } catch {
    // not a URL: the title or the text as it is
  }
  return { outcome, line: [outcome, date, cost, `${t.calls} calls`, site].filter(Boolean)
    .join(" · ") };
}
