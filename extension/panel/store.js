// The side panel's one state: what each view shows, in one object, changed through
// `update` so the views that draw a field hear of it. Each view module writes only its
// own fields (listed below by owner) and reads the others'; the end-to-end tests read
// the same object as `trimtabPanel.state`, so it is kept, never replaced. Pure: no DOM,
// no chrome.*, so `node --test` runs it.

import { emptyTotals } from "../shared/cost.js";

/**
 * @template {object} S
 * @typedef {{
 *   state: S,
 *   update: (patch: Partial<S>) => void,
 *   subscribe: (keys: Array<keyof S>, listener: (state: S) => void) => () => void,
 * }} Store
 */

/**
 * A store over `state`: `update(patch)` assigns the patch and then calls, in the
 * order they subscribed, each listener of a key the patch names, once. A key named is
 * announced even when its value is the same: views draw what is, so a second draw is
 * harmless, and a view that must be drawn again (the Run button after the agent
 * changed) needs no trick to get it.
 * @template {object} S
 * @param {S} state
 * @returns {Store<S>}
 */
export function createStore(state) {
  /** @type {Array<{keys: Set<PropertyKey>, listener: (state: S) => void}>} */
  const listeners = [];
  return {
    state,
    update(patch) {
      const named = Object.keys(patch);
      for (const key of named) {
        if (!Object.hasOwn(state, key)) {
          throw new Error(`the panel's state has no field ${JSON.stringify(key)}`);
        }
      }
      Object.assign(state, patch);
      // A copy: a listener that subscribes or leaves meanwhile changes the next update.
      for (const { keys, listener } of [...listeners]) {
        if (named.some((key) => keys.has(key))) listener(state);
      }
    },
    subscribe(keys, listener) {
      for (const key of keys) {
        if (!Object.hasOwn(state, key)) {
          throw new Error(`the panel's state has no field ${JSON.stringify(key)}`);
        }
      }
      const entry = { keys: new Set(keys), listener };
      listeners.push(entry);
      return () => {
        const at = listeners.indexOf(entry);
        if (at >= 0) listeners.splice(at, 1);
      };
    },
  };
}

/** What the panel shows, readable by the end-to-end tests; grouped by the view that
 *  writes it. */
export function panelState() {
  return {
    // ---- the shell (sidepanel.js): which view is shown.
    view: "inspect",

    // ---- status.js: what the host says, as the status line shows it.
    host: /** @type {import("./host-watch.js").HostState|null} */ (null),

    // ---- inspector.js
    tab: /** @type {chrome.tabs.Tab|null} */ (null),
    // The tab last inspected: its detach must show even if the person already
    // switched to another tab.
    shownTab: /** @type {number|null} */ (null),
    xml: "",
    kind: "",
    stats: /** @type {Record<string, unknown>} */ ({}),
    inspectError: "",
    highlighted: /** @type {string|null} */ (null),
    pinned: /** @type {string|null} */ (null),
    refreshes: 0,
    // Why a new task cannot run in the active tab (a page Chrome keeps closed); "" if
    // it can. The inspector finds it out; the chat's Run button obeys it.
    closed: "",

    // ---- settings.js: the page budget's limits as the host says them (`tools`
    // reply), once known.
    pageBudget: /** @type {{default: number, min: number}|null} */ (null),

    // ---- chat.js
    // The conversation the task box continues; null after "New task".
    agent: /** @type {import("../agent/agent.js").Agent|null} */ (null),
    running: false,
    steps: /** @type {object[]} */ ([]),
    // The page XML the conversation's tool calls returned, newest first: what names
    // the elements of the steps in words.
    pages: /** @type {string[]} */ ([]),
    totals: emptyTotals(),
    costLine: "",
    // What the conversation runs with, for its cost and its history record.
    run: /** @type {{provider: string, model: string, prices: object, keep: number,
                     started: number, task: string} | null} */ (null),
    // The stored task shown after "reopen", when it is not the live conversation.
    reopened: /** @type {string|null} */ (null),
    // What the agent does now, for the live indicator: "" when idle.
    activity: "",
    // What the agent runs (the indicator's text unless a question of its own is open).
    working: "",
    // The task's tabs as last seen (title, URL), by tab id: a closed pop-up keeps its name.
    tabsSeen: /** @type {Map<number, {title: string, url: string}>} */ (new Map()),
    // Whether a question of the agent's own tool call waits for the person.
    asking: false,

    // ---- history-box.js: the stored tasks as last listed.
    history: /** @type {object[]} */ ([]),

    // ---- save-routine.js: the finished task offered as a routine (its host session and
    // first words), and the routine the host's preview made of it.
    routineOffer: /** @type {{session: string, task: string}|null} */ (null),
    routineDraft: /** @type {import("../shared/routines.js").Routine|null} */ (null),

    // ---- routines-box.js: the routines and the files that do not read, as the host last
    // listed them; the run going on ({routine, status}) or null; the runs kept
    // (shared/routines.js); the schedules, as the service worker keeps them.
    routines: /** @type {import("../shared/routines.js").Routine[]} */ ([]),
    routineProblems: /** @type {{file: string, problem: string}[]} */ ([]),
    // Whether the list is being fetched from the host (it is drawn again after).
    routinesLoading: false,
    routineRun: /** @type {{routine: string, status: string}|null} */ (null),
    routineRuns: /** @type {import("../shared/routines.js").RunRecord[]} */ ([]),
    schedules: /** @type {Record<string, import("../shared/schedule.js").Schedule>} */ ({}),
  };
}
