// The Agent view's conversation and the bar's controls: the task box (Run, then Reply
// to carry the conversation on), Stop, New task, the live indicator, the site the
// agent acts on and the cost line. It runs the agent loop (agent/agent.js) with the
// saved settings, draws each step (panel/steps.js), and stores each finished task in
// the history (panel/history.js); a stored task can be shown again (`reopen`).

import { Agent } from "../agent/agent.js";
import { loadSettings, makeClient } from "../agent/model-settings.js";
import { costOf, describeTotals, emptyTotals } from "../shared/cost.js";
import { closedReason } from "../shared/tab-access.js";
import { $, activeTab, el } from "./dom.js";
import { listTasks, outcomeOf, saveTask } from "./history.js";
import { detachReason } from "./status.js";
import { siteName, spansTabs } from "./step-words.js";
import { retryWords, stepItem } from "./steps.js";

/**
 * What the live indicator says the agent waits for.
 * @param {string} working what the agent runs now ("" when idle)
 * @param {boolean} asking whether a question of its own tool call is open
 */
export function activityWords(working, asking) {
  return asking && working.startsWith("running ") ? "waiting for your answer…" : working;
}

/**
 * What the agent runs, from the loop's `onActivity` report.
 * @param {{what: string, name?: string} & Record<string, any>} report
 */
export function workingWords({ what, name, ...retry }) {
  return what === "model" ? "the model is thinking…"
    : what === "tool" ? `running ${name}…`
    : what === "retry" ? retryWords(/** @type {any} */ (retry)) : "";
}

/**
 * @param {{store: import("./store.js").Store<ReturnType<typeof import("./store.js").panelState>>,
 *          worker: import("./worker-client.js").WorkerClient,
 *          openSettings: () => void, afterRecord: () => Promise<void>}} parts
 *   `afterRecord` runs once a task is stored (the history list shows it)
 */
export function mountChat({ store, worker, openSettings, afterRecord }) {
  const { state } = store;

  /** The live figures of the conversation: tokens, calls and, with prices, the cost. */
  function showCost(totals) {
    const run = state.run;
    const cost = run ? costOf(totals, run.prices ?? {}, run.provider) : null;
    store.update({ totals, costLine: describeTotals(totals, cost) });
    $("cost").textContent = state.costLine;
    $("cost").hidden = false;
  }

  function renderStep(step, { live = true } = {}) {
    state.steps.push(step);
    const li = stepItem(step, { live, pages: state.pages, tabsSeen: state.tabsSeen,
      openSettings });
    if (step.kind === "model" && live && step.totals) showCost(step.totals);
    if (step.kind === "tool") {
      if (step.content) state.pages.unshift(step.content);
      if (live && state.running && state.agent) {
        // The bar names the tab the agent acted in last (a pop-up it followed, the
        // opener again once the pop-up closed).
        const agent = state.agent;
        chrome.tabs.get(agent.current).then((tab) => {
          if (state.running && state.agent === agent) setActing(tab);
        }, () => {});
      }
    }
    $("steps").append(li);
    // Once the task has acted in a second tab, every step names the tab it acted in.
    $("steps").classList.toggle("multi-tab", spansTabs(state.steps));
    li.scrollIntoView({ block: "nearest" });
    if (live) $("progress").textContent = step.kind === "tool" ? `ran ${step.name}` : "";
  }

  /** The live indicator in the bar: what the agent waits for now. */
  function showActivity(report) {
    store.update({ working: workingWords(report),
      ...(report.what !== "tool" ? { asking: false } : {}) });
    renderActivity();
  }

  function renderActivity() {
    store.update({ activity: activityWords(state.working, state.asking) });
    $("activity").textContent = state.activity;
    $("activity").hidden = !state.activity;
  }

  /** Show (or clear) the site the agent acts on; the tab's URL as the browser knows it. */
  function setActing(tab) {
    const banner = $("acting");
    if (tab) {
      banner.textContent = `Acting on ${siteName(tab.url ?? "") || `tab ${tab.id}`}`;
      banner.title = [tab.title, tab.url].filter(Boolean).join("\n");
      chrome.action.setBadgeText({ tabId: tab.id, text: "AI" }).catch(() => {});
    } else if (state.agent) {
      // The task ends in every tab it acted in: no tab keeps the agent's badge.
      for (const tabId of new Set([state.agent.tab.id, ...state.agent.tabs,
        ...state.agent.closed])) {
        chrome.action.setBadgeText({ tabId, text: "" }).catch(() => {});
      }
    }
    banner.hidden = !tab;
    $("run").disabled = Boolean(tab) || (Boolean(state.closed) && !state.agent);
    $("closed-note").hidden = !state.closed || Boolean(state.agent);
    $("stop").disabled = !tab;
    $("new-task").disabled = Boolean(tab) || (!state.agent && !state.reopened);
    $("run").textContent = state.agent && !tab ? "Reply" : "Run";
    $("task").placeholder = state.agent
      ? "Reply to the agent: the conversation carries on (New task starts afresh)"
      : "What should the agent do in this tab?";
  }

  // A tab Chrome keeps closed: Run (for a new task) is disabled, with the reason beside it.
  store.subscribe(["closed"], ({ closed }) => {
    const note = $("closed-note");
    note.textContent = closed;
    note.hidden = !closed || Boolean(state.agent);
    $("run").disabled = state.running || (Boolean(closed) && !state.agent);
  });

  /** Show a new, empty conversation. */
  function clearConversation() {
    state.tabsSeen.clear();
    store.update({ agent: null, run: null, reopened: null, steps: [], pages: [] });
    $("steps").replaceChildren();
    $("steps").classList.remove("multi-tab");
    $("cost").hidden = true;
    store.update({ totals: emptyTotals(), costLine: "" });
  }

  /** Start a conversation in the active tab with the saved settings. */
  async function startConversation() {
    const tab = await activeTab();
    if (!tab?.id) throw new Error("No active tab in this window.");
    // Before any model call: Chrome would refuse the first tool call anyway.
    const closed = closedReason(tab.url || tab.pendingUrl);
    if (closed) throw new Error(closed);
    clearConversation();
    const { client, settings } = await makeClient();
    store.update({ run: { provider: settings.provider, model: settings.model,
      prices: settings.prices, keep: settings.keepTasks, started: Date.now(), task: "" } });
    return new Agent({
      worker, client, tab: { id: tab.id, title: tab.title, url: tab.url },
      askBeforeSubmit: settings.askBeforeSubmit, onStep: renderStep, onActivity: showActivity,
      budget: settings.budget,
      pageBudget: settings.pageBudget ?? undefined,
      groups: settings.groups,
      allowEvaluate: Boolean(settings.allowEvaluate),
    });
  }

  /** Store the conversation as it stands in the history of tasks. */
  async function recordConversation(agent, ok) {
    const run = state.run;
    if (!run) return;
    try {
      await saveTask(chrome.storage.local, {
        id: agent.session, started: run.started, task: run.task,
        title: agent.tab.title ?? "", url: agent.tab.url ?? "",
        provider: run.provider, model: run.model, steps: state.steps,
        totals: agent.totals, ok, outcome: outcomeOf(state.steps, ok),
        cost: costOf(agent.totals, run.prices ?? {}, run.provider),
      }, run.keep);
    } catch (err) {
      renderStep({ kind: "error", message: `Could not save this task in the history: ${err.message}` },
        { live: false });
    }
    await afterRecord();
  }

  /**
   * Show a stored task: its steps and what it cost. The live conversation stays live
   * (a reply continues it); another one is shown to read.
   * @param {string} id
   */
  async function reopen(id) {
    if (state.running) return;
    const record = (await listTasks(chrome.storage.local)).find((r) => r.id === id);
    if (!record) return;
    const live = state.agent?.session === id ? state.agent : null;
    const run = live ? state.run : null;
    clearConversation();
    store.update({ agent: live, run: run ?? { provider: record.provider, model: record.model,
      prices: {}, keep: 0, started: record.started, task: record.task } });
    if (!live) {
      store.update({ reopened: id });
      const { prices } = await loadSettings();
      state.run.prices = prices;
    }
    for (const step of record.steps) renderStep(step, { live: false });
    showCost(record.totals);
    setActing(null);
    if (!live) {
      // Said plainly: this conversation is over; Run starts a new one.
      $("steps").append(el("li", "step readonly",
        "Read-only: this task's conversation has ended. Run starts a new task in the active tab."));
      // A task only read back cannot be continued: a reply starts a new one.
      store.update({ run: null });
    }
  }

  $("task-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    if (state.running) return;
    const task = $("task").value.trim();
    if (!task) return;
    let agent = state.agent;
    if (!agent) {
      try {
        agent = await startConversation();
      } catch (err) {
        renderStep({ kind: "error", message: err.message,
          ...(/API key/.test(err.message) ? { action: "settings" } : {}) });
        return;
      }
      store.update({ agent });
      state.run.task = task;
    } else {
      // A reply runs with the settings as they are now (a fixed key, another model).
      try {
        const { client, settings } = await makeClient();
        agent.client = client;
        agent.askBeforeSubmit = settings.askBeforeSubmit;
        agent.allowEvaluate = Boolean(settings.allowEvaluate);
        if (state.run) {
          Object.assign(state.run, { provider: settings.provider, model: settings.model,
            prices: settings.prices });
        }
      } catch (err) {
        renderStep({ kind: "error", message: err.message, action: "settings" });
        return;
      }
    }
    store.update({ running: true });
    $("task").value = "";
    // A reply carries on in the tab the agent acted in last.
    setActing(await chrome.tabs.get(agent.current).catch(() => agent.tab));
    let ok = false;
    try {
      ok = (await agent.run(task)).ok;
    } finally {
      store.update({ running: false });
      setActing(null);
      showActivity({ what: "idle" });
      $("progress").textContent = "";
      // The bar leaves with the run if the person is in another view.
      store.update({ view: state.view });
    }
    await recordConversation(agent, ok);
  });

  $("new-task").addEventListener("click", () => {
    if (state.running) return;
    clearConversation();
    setActing(null);
    $("task").focus();
  });

  $("stop").addEventListener("click", () => state.agent?.stop("stopped by you"));
  chrome.tabs.onRemoved.addListener(async (tabId) => {
    const agent = state.agent;
    if (!agent?.tabs.includes(tabId)) return;
    // A pop-up that closed itself leaves the task; the task goes on in the tabs left,
    // and ends when the last of them closed.
    if (!agent.tabClosed(tabId)) {
      agent.stop("the agent's tab was closed");
    } else if (state.running) {
      setActing(await chrome.tabs.get(agent.current).catch(() => null));
    }
  });
  chrome.tabs.onUpdated.addListener((tabId, change, tab) => {
    // What each of the task's tabs is called, for its steps, even after it closed.
    if (state.agent?.tabs.includes(tabId) && (change.title || change.url)) {
      state.tabsSeen.set(tabId, { title: tab.title ?? "", url: tab.url ?? "" });
    }
    // The bar names the site the agent acts on now, after a navigation too.
    if (state.running && state.agent?.current === tabId && change.url) setActing(tab);
  });

  worker.onEvent((event) => {
    if (event.event === "questions") {
      // The agent's own tool call waits for the person: the indicator says so.
      store.update({ asking: Array.isArray(event.questions) && event.questions
        .some((q) => state.agent && q.session === state.agent.session) });
      renderActivity();
    } else if (event.event === "detached") {
      // A tab of the task that closed is the tabs' listener's (a pop-up closes itself
      // when its sign-in is done); any other loss ends the task, in all its tabs.
      if (state.agent?.tabs.includes(event.tab) && event.reason !== "target_closed") {
        state.agent.stop(`the agent lost access to its tab: ${detachReason(event.reason)}`);
      }
    }
  });

  return { reopen };
}
