// The side panel: Inspect (what the agent sees of this tab) and Agent (the chat), with
// a bar pinned at the bottom for the host's questions and the agent's controls. This
// starts the views up around one state (panel/store.js); each view is its own module:
//   status.js      the host status line and the command to run without a host
//   inspector.js   the Inspect view
//   settings.js    Settings (and the Allowed sites, sites-box.js), the model client
//   chat.js        the conversation and the bar's controls; steps.js draws a step
//   history-box.js the History box (history.js keeps the tasks)
//   save-routine.js "Save as routine" after a task
//   routines-box.js the Routines view (agent/routine-run.js runs one, schedule-form.js)
// with the question bar (question-bar.js) and the outside agents (agents-box.js).
// Page-derived text is put on screen only through textContent / text nodes.

import { mountAgentsPanel } from "./agents-box.js";
import { mountChat } from "./chat.js";
import { $ } from "./dom.js";
import { mountHistoryBox } from "./history-box.js";
import { mountInspector } from "./inspector.js";
import { mountQuestionBar, questionView } from "./question-bar.js";
import { mountRoutines } from "./routines-box.js";
import { mountSaveRoutine } from "./save-routine.js";
import { mountSettings } from "./settings.js";
import { sitesView } from "./sites-box.js";
import { mountStatus } from "./status.js";
import { createStore, panelState } from "./store.js";
import { WorkerClient } from "./worker-client.js";

const VIEWS = ["inspect", "agent", "routines"];
const store = createStore(panelState());
const { state } = store;
const worker = new WorkerClient();

// The two views as a tab list: one shown, one tab stop (the selected tab).
store.subscribe(["view"], ({ view }) => {
  for (const v of VIEWS) {
    $(`view-${v}`).hidden = v !== view;
    $(`tab-${v}`).setAttribute("aria-selected", String(v === view));
    $(`tab-${v}`).tabIndex = v === view ? 0 : -1;
  }
  // The agent's controls stay in the bar while it runs, whatever the view.
  $("agent-bar").hidden = view !== "agent" && !state.running;
});
const showView = (view) => store.update({ view });
$("tab-inspect").addEventListener("click", () => showView("inspect"));
$("tab-agent").addEventListener("click", () => showView("agent"));
$("tab-routines").addEventListener("click", () => showView("routines"));
// Arrow keys, Home and End move between the views.
document.querySelector("nav[role=tablist]").addEventListener("keydown", (e) => {
  const at = VIEWS.indexOf(state.view);
  const next = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: VIEWS.length - 1 }[e.key];
  if (next === undefined) return;
  e.preventDefault();
  const view = VIEWS[(next + VIEWS.length) % VIEWS.length];
  showView(view);
  $(`tab-${view}`).focus();
});

// In this order, which is the order each hears the worker's events and the host's
// state: the status line first, the views after.
mountStatus({ store, worker });
const settings = mountSettings({ store, worker });
const { refresh } = mountInspector({ store, worker });
const chat = mountChat({ store, worker, openSettings: settings.openSettings,
  afterRecord: async () => {
    await history.showHistory();
    saveRoutine.offer();
  } });
const history = mountHistoryBox({ store, reopen: chat.reopen });
const routines = mountRoutines({ store, worker, openSettings: settings.openSettings });
const saveRoutine = mountSaveRoutine({ store, worker, afterSave: routines.refresh });
const questions = mountQuestionBar(document, worker, {
  afterAnswer: () => (state.view === "agent" ? $("task").focus() : undefined),
});

globalThis.trimtabPanel = {
  state, store, refresh, worker, showView, showHistory: history.showHistory,
  questions: questionView, answerQuestion: questions.answer, sites: sitesView,
  loadSites: settings.loadSites, refreshRoutines: routines.refresh,
};
worker.connect();
mountAgentsPanel($("agents"), worker, store);
settings.loadPageBudget();
settings.fillForm();
settings.showFirstRun();
history.showHistory();
refresh();
