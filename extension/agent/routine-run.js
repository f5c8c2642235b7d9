// One run of a routine, from the side panel or by its schedule (the service worker's
// worker/routines.js): in a tab of its own (a tab group named for it), through the host
// without a model, asked in the side panel like any task. A step it cannot do as
// recorded (`needs_help`) goes, when a model is set up and the person did not choose
// "ask me", to the agent loop as one short task in the same host session and tab (its
// tokens counted as the run's, at most MAX_HEAL_TURNS model turns per run); then the run
// goes on from the next step. Otherwise the run stops there, and the person may do the
// step and go on (`going`). The host answers the run that goes on after the model's step
// with that step as the steps that would replace it in the routine (`healed`): the run
// returns them for the person to keep or not (after the last step, a run past it, which
// runs nothing, asks the host for them).
//
// Free of chrome.* (the storage, tabs and tab groups are passed in), so `node --test`
// runs it with fakes.

import { Agent } from "./agent.js";
import { clientFor, loadSettings, needsSetup } from "./model-settings.js";
import { makeNonce, wrapUntrusted } from "./untrusted.js";
import { costOf } from "../shared/cost.js";
import {
  MAX_HEAL_TURNS, RUN_TIMEOUT_MS, endRunning, healTask, markRunning, openRunTab, runRecord,
  runTitle, saveRuns,
} from "../shared/routines.js";

/**
 * @typedef {{session: string, tab: number, at: number, step: string}} Going where a
 *   run that stopped before step `at` (`step`: its words) goes on: its session and tab
 */

/**
 * @typedef {import("../shared/routine-edits.js").Heal & {session: string}
 *   | {problem: string, at: number, session: string}} Healed  a heal the person may
 *   keep (`routine_amend` with its session and id), or why the model's step cannot be
 */

/**
 * Run `routine` to its end, keep the run in the history and return it.
 * @param {{worker: {host: (request: object, options?: object) => Promise<any>},
 *          routine: import("../shared/routines.js").Routine,
 *          params: Record<string, string>, texts: Record<string, string>,
 *          heal: "model"|"ask", going?: Going|null, signal: AbortSignal,
 *          storage: import("../shared/routines.js").Store,
 *          tabs: {create: Function, get: Function, group: Function},
 *          groups: {update: Function}, scheduled?: boolean,
 *          sleep?: (ms: number) => Promise<void>, now?: () => number,
 *          onStep?: (step: object) => void, onStatus?: (words: string) => void,
 *          makeClient?: typeof clientFor}} o
 *   `worker.host` sends a request to the host; `params`: the run's values (secrets too,
 *   never kept); `texts`: its text values, the only ones a model may see; `going`: go on
 *   from `going.at`, in its session and tab; `storage`, `tabs`, `groups`: chrome's
 *   (storage.local, tabs, tabGroups); `scheduled`: run by its schedule, in a tab opened
 *   in the background, asking before every submit whatever the settings say;
 *   `makeClient`: the model client of the settings (tests give their own)
 * @returns {Promise<{record: import("../shared/routines.js").RunRecord,
 *                    going: Going|null, heals: Healed[], tab: number|null}>} `heals`: the
 *   steps the model did, each as the host would keep it in the routine (or why it
 *   cannot); `tab`: the tab it ran in (null: none was opened)
 */
export async function runRoutine({ worker, routine, params, texts, heal, going = null, signal,
  storage, tabs, groups, scheduled = false, sleep = undefined, now = Date.now,
  onStep = () => {}, onStatus = () => {}, makeClient = clientFor }) {
  const settings = await loadSettings(storage);
  const id = `${scheduled ? "sched" : "run"}-${makeNonce()}`;
  const started = now();
  const session = going?.session ?? `agent-routine-${makeNonce()}`;
  const title = runTitle(routine.name);
  await markRunning(storage, { id, routine: routine.name, started, scheduled });
  /** @type {any} */
  let reply = null;
  let error = null;
  let results;
  /** @type {Agent|null} */
  let agent = null;
  let turns = 0;
  let healed = 0;
  let doneBefore = 0;
  /** The steps that submitted without asking, by the person's "don't ask again". */
  const unasked = [];
  let tabId = going?.tab ?? null;
  /** @type {Healed[]} */
  const heals = [];
  /** Whether the model did the step the run goes on after. */
  let modelDid = false;
  const noteHeal = (/** @type {any} */ answer, /** @type {number} */ at) => {
    if (modelDid && answer?.healed) heals.push({ ...answer.healed, session });
    else if (modelDid && answer?.heal_problem) {
      heals.push({ problem: answer.heal_problem, at, session });
    }
    modelDid = false;
  };
  const stop = () => {
    agent?.stop("stopped by you");
    worker.host({ type: "task_stop", session }).catch(() => {});
  };
  signal.addEventListener("abort", stop, { once: true });
  try {
    if (tabId === null) {
      onStatus("opening its tab…");
      tabId = (await openRunTab({ tabs, groups, url: routine.start, title,
        active: !scheduled, sleep })).id;
    }
    for (let at = going?.at ?? 1; ;) {
      onStatus(`running step ${at} of ${routine.steps} and on, without the model…`);
      const request = {
        type: "routine_run", session, tab: tabId, name: routine.name, params,
        ask_before_submit: scheduled || settings.askBeforeSubmit, task: title,
        ...(settings.pageBudget ? { budget: settings.pageBudget } : {}),
      };
      reply = await worker.host({ ...request, start_at: at },
        { signal, timeoutMs: RUN_TIMEOUT_MS });
      unasked.push(...(reply.unasked ?? []));
      noteHeal(reply, at - 1);
      if (reply.status !== "needs_help" || heal !== "model") break;
      if (needsSetup(settings)) {
        reply = { ...reply, why: `${reply.why}; no model is set up (Settings) to do it` };
        break;
      }
      if (turns >= MAX_HEAL_TURNS) {
        reply = { ...reply, why: `${reply.why}; the model's ${MAX_HEAL_TURNS} turns for `
          + "this run are spent" };
        break;
      }
      const tab = await tabs.get(tabId);
      agent ??= new Agent({
        worker, client: makeClient(settings), tab: { id: tabId, title: tab.title, url: tab.url },
        askBeforeSubmit: settings.askBeforeSubmit, session, budget: settings.budget,
        pageBudget: settings.pageBudget ?? undefined, groups: settings.groups,
        onStep: (step) => {
          if (step.kind === "model") turns += 1;
          onStep(step);
        },
      });
      agent.groupName = title;
      agent.maxSteps = MAX_HEAL_TURNS - turns;
      onStatus(`the model does step ${reply.at}…`);
      const nonce = agent.nonce;
      const did = await agent.run(healTask(routine.name, reply, texts,
        (text) => wrapUntrusted(text, nonce)));
      if (!did.ok) {
        reply = { ...reply, why: `${reply.why}; the model could not do it: ${did.text}` };
        break;
      }
      healed += 1;
      doneBefore += reply.done + 1;
      modelDid = true;
      if (reply.at >= reply.steps) {
        // The step the model did was the last: a run past it runs nothing but answers
        // with the heal.
        try {
          noteHeal(await worker.host({ ...request, start_at: reply.at + 1 },
            { signal, timeoutMs: RUN_TIMEOUT_MS }), reply.at);
        } catch {
          modelDid = false;  // the run is done all the same; nothing to keep is offered
        }
        // Its answer is the run's result.
        reply = { ...reply, status: "done", done: 0, at: null, why: "", plan: [] };
        results = [did.text];
        break;
      }
      at = reply.at + 1;
    }
  } catch (err) {
    error = { code: err?.code, message: String(err?.message ?? err) };
    reply = null;
  } finally {
    signal.removeEventListener("abort", stop);
  }
  const totals = agent?.totals ?? null;
  const record = runRecord({
    id, routine: routine.name, started, ended: now(), error, healed, totals,
    reply: reply && { ...reply, done: doneBefore + reply.done, unasked },
    cost: totals ? costOf(totals, settings.prices ?? {}, settings.provider) : null, scheduled,
    ...(results ? { results } : {}),
  });
  await saveRuns(storage, [record]);
  await endRunning(storage, id);
  const stopped = reply?.status === "needs_help" && tabId !== null;
  return { record, heals, tab: tabId, going: stopped
    ? { session, tab: /** @type {number} */ (tabId), at: reply.at, step: reply.plan[0] ?? "" }
    : null };
}
