// The side panel: Inspect (what the agent sees of this tab) and Agent (the chat), with
// a bar pinned at the bottom for the host's questions and the agent's controls.
// Page-derived text is put on screen only through textContent / text nodes.

import { Agent, DEFAULT_GROUPS } from "../agent/agent.js";
import { DEFAULT_BUDGET } from "../agent/compact.js";
import { AnthropicClient } from "../agent/llm/anthropic.js";
import { OPENAI_BASE_URL, OpenAIClient } from "../agent/llm/openai.js";
import { testConnection } from "../agent/llm/probe.js";
import { costOf, describeTotals, emptyTotals } from "../shared/cost.js";
import { closedReason } from "../shared/tab-access.js";
import { mountAgentsPanel } from "./agents-box.js";
import { DEFAULT_KEEP, clearTasks, describeRecord, listTasks, outcomeOf, saveTask }
  from "./history.js";
import { HostWatch, hostHelp } from "./host-watch.js";
import { mountQuestionBar, questionView } from "./question-bar.js";
import { mountSitesBox, sitesView } from "./sites-box.js";
import { WorkerClient } from "./worker-client.js";
import { describeCall, describePlanned, faviconOf, spansTabs, tabWords } from "./step-words.js";
import { renderXml } from "./xmlview.js";

const $ = (id) => document.getElementById(id);
const worker = new WorkerClient();

/** What the panel shows, readable by the end-to-end tests. */
const state = {
  view: "inspect",
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
  // The conversation the task box continues; null after "New task".
  agent: /** @type {Agent|null} */ (null),
  running: false,
  steps: /** @type {object[]} */ ([]),
  // The page XML the conversation's tool calls returned, newest first: what names the
  // elements of the steps in words.
  pages: /** @type {string[]} */ ([]),
  totals: emptyTotals(),
  costLine: "",
  // What the conversation runs with, for its cost and its history record.
  run: /** @type {{provider: string, model: string, prices: object, keep: number,
                   started: number, task: string} | null} */ (null),
  // The stored task shown after "reopen", when it is not the live conversation.
  reopened: /** @type {string|null} */ (null),
  refreshes: 0,
  // What the host says, as the status line shows it.
  host: /** @type {import("./host-watch.js").HostState|null} */ (null),
  // The page budget's limits as the host says them (`tools` reply), once known.
  pageBudget: /** @type {{default: number, min: number}|null} */ (null),
  // What the agent does now, for the live indicator: "" when idle.
  activity: "",
  // What the agent runs (the indicator's text unless a question of its own is open).
  working: "",
  // The task's tabs as last seen (title, URL), by tab id: a closed pop-up keeps its name.
  tabsSeen: /** @type {Map<number, {title: string, url: string}>} */ (new Map()),
  asking: false,
  // Why a new task cannot run in the active tab (a page Chrome keeps closed); "" if it can.
  closed: "",
};

// ---------------------------------------------------------------- host status

const hostWatch = new HostWatch({
  ping: () => worker.host({ type: "ping" }, { timeoutMs: 5_000 }),
  onChange: (host) => {
    state.host = host;
    // What to run when the browser cannot find the host; gone once it is back.
    const help = host.state === "connected" ? null : hostHelp(host.detail || "");
    $("host-help").hidden = !help;
    if (help) {
      $("host-help-why").textContent = help.why;
      $("host-command").textContent = help.command;
    }
    const el = $("host-status");
    if (host.state === "connected") {
      el.textContent = host.again ? "host connected again" : "host connected";
      el.className = "status ok";
      el.title = "";
      loadPageBudget();
      if ($("settings").open) sites.load();
      // What failed while the host was gone is stale now.
      // (Whatever the view: the error must not wait there for the next visit.)
      if (host.again && state.inspectError) refresh();
    } else {
      el.textContent = "host disconnected, retrying…";
      el.className = "status down";
      el.title = host.detail || "";
    }
  },
});

worker.onEvent((event) => {
  if (event.event === "host") {
    hostWatch.report(event.state, event.detail || "");
  } else if (event.event === "worker") {
    hostWatch.report("disconnected", "the extension's service worker stopped");
  } else if (event.event === "questions") {
    // A question's highlight (the worker's) replaced or cleared the inspector's: the
    // next hover draws it again.
    state.highlighted = null;
    // The agent's own tool call waits for the person: the indicator says so.
    state.asking = Array.isArray(event.questions) && event.questions
      .some((q) => state.agent && q.session === state.agent.session);
    renderActivity();
  } else if (event.event === "detached") {
    const why = detachReason(event.reason);
    if (state.tab?.id === event.tab || state.shownTab === event.tab) {
      showInspectError(`Trimtab lost access to this tab: ${why}.`);
    }
    // A tab of the task that closed is the tabs' listener's (a pop-up closes itself
    // when its sign-in is done); any other loss ends the task, in all its tabs.
    if (state.agent?.tabs.includes(event.tab) && event.reason !== "target_closed") {
      state.agent.stop(`the agent lost access to its tab: ${why}`);
    }
  }
});

/** @param {string} reason chrome.debugger's DetachReason */
function detachReason(reason) {
  if (reason === "canceled_by_user") return "the debugging was canceled from the browser's bar";
  if (reason === "target_closed") return "the tab was closed";
  return `the debugger was detached (${reason})`;
}

// ---------------------------------------------------------------- views

function showView(name) {
  state.view = name;
  for (const v of ["inspect", "agent"]) {
    $(`view-${v}`).hidden = v !== name;
    $(`tab-${v}`).setAttribute("aria-selected", String(v === name));
    // One tab stop for the tab list: the selected tab; arrows reach the other.
    $(`tab-${v}`).tabIndex = v === name ? 0 : -1;
  }
  // The agent's controls stay in the bar while it runs, whatever the view.
  $("agent-bar").hidden = name !== "agent" && !state.running;
}
$("tab-inspect").addEventListener("click", () => showView("inspect"));
$("tab-agent").addEventListener("click", () => showView("agent"));
// The tab bar as a tab list: arrow keys, Home and End move between the views.
document.querySelector("nav[role=tablist]").addEventListener("keydown", (e) => {
  const views = ["inspect", "agent"];
  const at = views.indexOf(state.view);
  const next = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: views.length - 1 }[e.key];
  if (next === undefined) return;
  e.preventDefault();
  const view = views[(next + views.length) % views.length];
  showView(view);
  $(`tab-${view}`).focus();
});

async function activeTab() {
  const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
  return tab ?? null;
}

// ---------------------------------------------------------------- inspect

function showInspectError(message) {
  state.inspectError = message;
  const el = $("inspect-error");
  el.textContent = message;
  el.hidden = !message;
}

const FIGURES = [
  ["tokens", "our tokens"],
  ["raw_tokens", "raw DOM tokens"],
  ["text_tokens", "visible text tokens"],
  ["dedup_saved", "dedup saved"],
  ["trim_saved", "trim saved"],
  ["elements", "elements in → out"],
];

function renderFigures(stats, kind) {
  const dl = $("figures");
  dl.replaceChildren();
  const value = (key) => {
    if (key === "elements") {
      return `${stats.elements_in ?? "?"} → ${stats.elements_out ?? "?"}`;
    }
    const v = stats[key];
    return typeof v === "number" ? v.toLocaleString("en-US") : "–";
  };
  for (const [key, label] of FIGURES) {
    const div = document.createElement("div");
    const dt = document.createElement("dt");
    const dd = document.createElement("dd");
    dt.textContent = label;
    dd.textContent = value(key);
    dd.dataset.figure = key;
    div.append(dt, dd);
    dl.append(div);
  }
  const note = [];
  if (kind) note.push(kind);
  if (typeof stats.tokens === "number" && typeof stats.raw_tokens === "number"
      && stats.tokens > 0) {
    note.push(`${(stats.raw_tokens / stats.tokens).toFixed(1)}× smaller than the DOM`);
  }
  $("inspect-tab").textContent = [state.tab?.title ?? "", ...note].filter(Boolean).join(" · ");
}

async function refresh() {
  state.refreshes += 1;
  const tab = await activeTab();
  state.tab = tab;
  if (!tab?.id) {
    showInspectError("No active tab in this window.");
    return;
  }
  showClosed(tab);
  state.shownTab = tab.id;
  if (state.closed) {
    // Nothing of the previous tab stays on screen under the reason.
    clearInspect(tab);
    showInspectError(state.closed);
    return;
  }
  $("refresh").disabled = true;
  try {
    const { pageBudget } = await loadSettings();
    const result = await worker.host({ type: "snapshot", tab: tab.id,
      ...(pageBudget === null ? {} : { budget: pageBudget }) });
    if (state.tab?.id !== tab.id) return; // the person switched tabs meanwhile
    state.xml = String(result.xml ?? "");
    state.kind = String(result.kind ?? "");
    state.stats = result.stats ?? {};
    showInspectError("");
    renderFigures(state.stats, state.kind);
    const parsed = renderXml(state.xml, $("xml"));
    if (!parsed.ok) showInspectError(`The host's XML did not parse: ${parsed.error}`);
  } catch (err) {
    if (state.tab?.id !== tab.id) return;
    // The tab may have become a page Chrome keeps closed meanwhile: say that instead.
    const now = await chrome.tabs.get(tab.id).catch(() => tab);
    showClosed(now);
    clearInspect(now);
    showInspectError(state.closed || `Could not read this tab: ${err.message}`);
  } finally {
    $("refresh").disabled = false;
  }
}

/** Empty the Inspect view of another page's XML and figures; title the tab shown. */
function clearInspect(tab) {
  state.xml = "";
  state.kind = "";
  state.stats = {};
  state.pinned = null;
  $("figures").replaceChildren();
  $("xml").replaceChildren();
  $("inspect-tab").textContent = tab?.title ?? "";
}

/**
 * Say up front when the active tab is one Chrome keeps closed: Run (for a new task)
 * is disabled, with the reason beside it.
 * @param {chrome.tabs.Tab|null} tab
 */
function showClosed(tab) {
  state.closed = closedReason(tab?.url || tab?.pendingUrl);
  const note = $("closed-note");
  note.textContent = state.closed;
  note.hidden = !state.closed || Boolean(state.agent);
  $("run").disabled = state.running || (Boolean(state.closed) && !state.agent);
  $("copy").disabled = Boolean(state.closed);
}

async function highlight(eid) {
  if (!state.tab?.id || state.highlighted === eid) return;
  state.highlighted = eid;
  try {
    const result = await worker.host({ type: "highlight", tab: state.tab.id, eid });
    if (eid && result?.found === false) {
      showInspectError(`Element ${eid} is no longer on the page; refresh.`);
    }
  } catch (err) {
    showInspectError(`Could not highlight ${eid}: ${err.message}`);
  }
}

const xmlView = $("xml");
xmlView.addEventListener("mouseover", (e) => {
  const eid = e.target?.dataset?.eid;
  if (eid) highlight(eid);
});
xmlView.addEventListener("mouseout", (e) => {
  if (e.target?.dataset?.eid) highlight(state.pinned);
});
// By keyboard as by mouse: focus highlights, Enter or Space pins.
xmlView.addEventListener("focusin", (e) => {
  const eid = e.target?.dataset?.eid;
  if (eid) highlight(eid);
});
xmlView.addEventListener("focusout", (e) => {
  if (e.target?.dataset?.eid) highlight(state.pinned);
});
xmlView.addEventListener("keydown", (e) => {
  if ((e.key === "Enter" || e.key === " ") && e.target?.dataset?.eid) {
    e.preventDefault();
    e.target.click();
  }
});
xmlView.addEventListener("click", (e) => {
  const eid = e.target?.dataset?.eid;
  if (!eid) return;
  for (const el of xmlView.querySelectorAll(".eid.pinned")) el.classList.remove("pinned");
  state.pinned = state.pinned === eid ? null : eid;
  if (state.pinned) e.target.classList.add("pinned");
  highlight(state.pinned);
});

$("refresh").addEventListener("click", refresh);
$("host-copy").addEventListener("click", async () => {
  try {
    await navigator.clipboard.writeText($("host-command").textContent);
    $("host-copy").textContent = "Copied";
  } catch {
    // No clipboard (the panel lost focus): the command stays on screen to select.
    $("host-copy").textContent = "Select and copy";
  }
});
$("copy").addEventListener("click", async () => {
  try {
    await navigator.clipboard.writeText(state.xml);
    $("inspect-tab").textContent = "Copied the XML.";
  } catch (err) {
    showInspectError(`Could not copy: ${err.message}`);
  }
});

chrome.tabs.onActivated.addListener(async ({ windowId }) => {
  const win = await chrome.windows.getCurrent();
  if (windowId !== win.id) return;
  if (state.view === "inspect") refresh();
  else showClosed(await activeTab());
});
chrome.tabs.onUpdated.addListener(async (tabId, change, tab) => {
  if (change.url && tab.active) {
    const win = await chrome.windows.getCurrent();
    if (tab.windowId !== win.id) return;
    // A tab that turns into a closed page (or out of one) is seen at once.
    const closed = closedReason(tab.url || tab.pendingUrl);
    if (state.view === "inspect" && closed !== state.closed && !state.running) refresh();
    else showClosed(tab);
  }
});
chrome.tabs.onUpdated.addListener((tabId, change) => {
  if (tabId === state.tab?.id && change.status === "complete" && state.view === "inspect"
      && !state.running) {
    refresh();
  }
});

// ---------------------------------------------------------------- settings

const DEFAULT_MODELS = {
  anthropic: "claude-sonnet-4-5",
  openai: "gpt-4.1",
  compatible: "",
};

/**
 * Settings live in chrome.storage.local. The API key is read only to be sent to
 * the chosen provider: never to the host, never to a log.
 */
async function loadSettings() {
  const { settings } = await chrome.storage.local.get("settings");
  return {
    provider: "anthropic",
    baseUrl: "",
    model: DEFAULT_MODELS.anthropic,
    apiKey: "",
    askBeforeSubmit: true,
    // The tool groups the agent gets besides the core ones.
    groups: [...DEFAULT_GROUPS],
    budget: DEFAULT_BUDGET,
    // Tokens one snapshot may take (the host's `budget` field); null: the host's default.
    pageBudget: null,
    prices: { input: null, cachedInput: null, output: null },
    keepTasks: DEFAULT_KEEP,
    // Whether the agent may call evaluate (run its JavaScript in the page): off by
    // default; on, every call is still asked about unless allowed for its site.
    allowEvaluate: false,
    ...(settings ?? {}),
  };
}

/** The page budget's limits from the host (its `tools` reply), shown in the settings. */
async function loadPageBudget() {
  if (state.pageBudget) return state.pageBudget;
  try {
    const { budget } = await worker.host({ type: "tools" });
    if (Number.isFinite(budget?.default) && Number.isFinite(budget?.min)) {
      state.pageBudget = { default: budget.default, min: budget.min };
      const field = $("page-budget");
      field.placeholder = String(budget.default);
      field.title = `At least ${budget.min}, or 0 for no budget; empty: the host's default `
        + `(${budget.default}).`;
    }
  } catch {
    // the host is unreachable: the limits come with the next connection
  }
  return state.pageBudget;
}

/**
 * The page budget entered in the settings: null (empty: the host's default), 0 (no
 * budget), or at least the host's minimum when the host has said it.
 * @param {{default: number, min: number}|null} limits
 */
function pageBudgetIn(limits) {
  const value = numberIn("page-budget");
  if (value === null || value === 0) return value;
  return Math.round(limits ? Math.max(limits.min, value) : value);
}

/** A number from a settings field, or null when it is empty or not a number. */
function numberIn(id) {
  const raw = $(id).value.trim();
  const value = raw === "" ? NaN : Number(raw);
  return Number.isFinite(value) && value >= 0 ? value : null;
}

async function fillSettingsForm() {
  const s = await loadSettings();
  $("provider").value = s.provider;
  $("base-url").value = s.baseUrl;
  $("model").value = s.model;
  $("api-key").value = s.apiKey;
  $("ask-submit").checked = s.askBeforeSubmit;
  $("group-pixels").checked = s.groups.includes("pixels");
  $("group-devtools").checked = s.groups.includes("devtools");
  $("budget").value = String(s.budget);
  $("page-budget").value = s.pageBudget === null ? "" : String(s.pageBudget);
  $("price-input").value = s.prices?.input ?? "";
  $("price-cached").value = s.prices?.cachedInput ?? "";
  $("price-output").value = s.prices?.output ?? "";
  $("keep-tasks").value = String(s.keepTasks);
  $("allow-evaluate").checked = Boolean(s.allowEvaluate);
}

function baseUrlFor(s) {
  if (s.baseUrl) return s.baseUrl;
  return s.provider === "anthropic" ? "https://api.anthropic.com" : OPENAI_BASE_URL;
}

$("provider").addEventListener("change", () => {
  const model = $("model");
  if (!model.value || Object.values(DEFAULT_MODELS).includes(model.value)) {
    model.value = DEFAULT_MODELS[$("provider").value];
  }
});

$("settings-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const s = {
    provider: $("provider").value,
    baseUrl: $("base-url").value.trim(),
    model: $("model").value.trim(),
    apiKey: $("api-key").value,
    askBeforeSubmit: $("ask-submit").checked,
    groups: ["core", ...["pixels", "devtools"].filter((group) => $(`group-${group}`).checked)],
    budget: Math.max(2000, numberIn("budget") ?? DEFAULT_BUDGET),
    pageBudget: pageBudgetIn(await loadPageBudget()),
    prices: { input: numberIn("price-input"), cachedInput: numberIn("price-cached"),
      output: numberIn("price-output") },
    keepTasks: Math.round(numberIn("keep-tasks") ?? DEFAULT_KEEP),
    allowEvaluate: $("allow-evaluate").checked,
  };
  if (s.provider === "compatible" && !s.baseUrl) {
    $("settings-note").textContent = "An OpenAI-compatible server needs its base URL.";
    return;
  }
  await chrome.storage.local.set({ settings: s });
  // Host permission for the provider lets the panel call it without CORS; it is
  // optional (manifest: optional_host_permissions) so the extension can read no
  // site until the person picks a provider, and it must be asked in this click.
  let note = "Saved.";
  try {
    const origin = new URL(baseUrlFor(s)).origin;
    const granted = await chrome.permissions.request({ origins: [`${origin}/*`] });
    if (!granted) note = `Saved. Without access to ${origin} the call relies on its CORS headers.`;
  } catch (err) {
    note = `Saved, but access to that URL cannot be granted: ${err.message}`;
  }
  $("settings-note").textContent = note;
});

/** The client for settings `s`; `maxTokens` for a short probe. */
function clientFor(s, maxTokens = undefined) {
  if (s.provider !== "compatible" && !s.apiKey) {
    throw new Error("Add an API key in Settings first.");
  }
  const options = { apiKey: s.apiKey, model: s.model, baseUrl: s.baseUrl || undefined,
    ...(maxTokens ? { maxTokens } : {}) };
  return s.provider === "anthropic" ? new AnthropicClient(options) : new OpenAIClient(options);
}

async function makeClient() {
  const s = await loadSettings();
  return { client: clientFor(s), settings: s };
}

/** Whether the agent still lacks what it needs to call a model (first run). */
function needsSetup(s) {
  return s.provider !== "compatible" ? !s.apiKey : !s.baseUrl;
}

async function showFirstRun() {
  const s = await loadSettings();
  $("first-run").hidden = !needsSetup(s);
}
$("first-run-open").addEventListener("click", openSettings);
chrome.storage.onChanged.addListener((changes, area) => {
  if (area === "local" && changes.settings) showFirstRun();
});

// One tiny request with what the form says now (saved or not).
$("test-connection").addEventListener("click", async () => {
  const note = $("connection-note");
  const s = { ...(await loadSettings()), provider: $("provider").value,
    baseUrl: $("base-url").value.trim(), model: $("model").value.trim(),
    apiKey: $("api-key").value };
  note.classList.remove("error");
  note.textContent = `Asking ${siteOf(baseUrlFor(s))}…`;
  $("test-connection").disabled = true;
  let result;
  try {
    result = await testConnection(clientFor(s, 16), { model: s.model });
  } catch (err) {
    result = { ok: false, message: err.message };
  } finally {
    $("test-connection").disabled = false;
  }
  note.textContent = result.message;
  note.classList.toggle("error", !result.ok);
});

// ---------------------------------------------------------------- agent

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

const fmt = (n) => n.toLocaleString("en-US");

/** The live figures of the conversation: tokens, calls and, with prices, the cost. */
function showCost(totals) {
  state.totals = totals;
  const run = state.run;
  const cost = run ? costOf(totals, run.prices ?? {}, run.provider) : null;
  state.costLine = describeTotals(totals, cost);
  $("cost").textContent = state.costLine;
  $("cost").hidden = false;
}

function renderStep(step, { live = true } = {}) {
  state.steps.push(step);
  const li = el("li", `step ${step.kind}`);
  li.dataset.kind = step.kind;
  if (step.kind === "task") {
    li.append(el("div", "", step.text));
  } else if (step.kind === "model") {
    // The final answer is shown once, by the "done" step; here only what the model
    // said between its calls, and its tokens behind the toggle.
    if (step.text && !step.final) li.append(el("div", "say", step.text));
    const u = step.usage;
    const details = el("details");
    details.append(el("summary", "", step.final ? "model: answered" : "model: tokens"),
      el("div", "meta",
        `${fmt(u.input + u.cacheRead + u.cacheWrite)} tokens in (${fmt(u.cacheRead)} `
        + `from cache, ${fmt(u.cacheWrite)} written to it), ${fmt(u.output)} out`
        + (step.context ? ` · context ≈ ${fmt(step.context)} tokens` : "")));
    li.append(details);
    if (live && step.totals) showCost(step.totals);
  } else if (step.kind === "compacted") {
    li.append(el("div", "",
      `Context compacted: ${step.replaced} earlier page state${step.replaced === 1 ? "" : "s"} `
      + `replaced by one line each (≈ ${fmt(step.before)} → ${fmt(step.after)} tokens; `
      + `budget ${fmt(step.budget)}).`));
  } else if (step.kind === "tool") {
    // In words first, named from the pages seen before this call; then its own result.
    const head = el("div", "say", describeCall(step.name, step.args, state.pages));
    if (step.content) state.pages.unshift(step.content);
    if (step.cached) {
      const badge = el("span", "badge", "cached");
      badge.title = step.cachedFrom ? `from ${JSON.stringify(step.cachedFrom)}` : "";
      head.append(badge);
    }
    if (step.isError) head.append(el("span", "badge", "error"));
    li.append(head);
    if (Number.isInteger(step.tab)) li.append(tabLine(step, { live }));
    if (live && state.running && state.agent) {
      // The bar names the tab the agent acted in last (a pop-up it followed, the
      // opener again once the pop-up closed).
      const agent = state.agent;
      chrome.tabs.get(agent.current).then((tab) => {
        if (state.running && state.agent === agent) setActing(tab);
      }, () => {});
    }
    li.dataset.cached = String(step.cached);
    const details = el("details");
    details.append(el("summary", "", "details"),
      el("code", "", `${step.name}(${JSON.stringify(step.args)})`),
      el("div", "meta",
        `${step.cached ? "answered from cache" : "ran"} · ${step.chars.toLocaleString("en-US")}`
        + ` chars ≈ ${Math.ceil(step.chars / 4).toLocaleString("en-US")} tokens`
        + (step.image ? ` · image ${step.image.width}x${step.image.height} ≈ `
          + `${fmt(step.image.tokens)} tokens` : "")
        + (step.note ? ` · ${step.note}` : "")),
      el("pre", "", step.content));
    if (step.image?.url?.startsWith("data:image/")) {
      // What the model was shown, as it was shown (the host's JPEG or PNG).
      const picture = el("img", "shot");
      picture.src = step.image.url;
      picture.alt = `the screenshot the agent was shown (${step.image.width}x${step.image.height})`;
      details.append(picture);
    }
    li.append(details);
  } else if (step.kind === "declined") {
    // The host's words say why (refused, unanswered, nobody to ask).
    const head = el("div", "say",
      `Not done: ${describePlanned(step.name, step.args, state.pages)}`);
    const details = el("details");
    details.append(el("summary", "", "details"),
      el("code", "", `${step.name}(${JSON.stringify(step.args)})`));
    li.append(head, el("div", "meta", step.reason), details);
  } else if (step.kind === "unasked-submit") {
    li.classList.add("error");
    li.append(el("div", "", `${step.name} submitted a form that Trimtab did not expect to `
      + "submit, so you were not asked first. Check the page."));
  } else if (step.kind === "done") {
    // The answer, once, set apart from the steps that led to it.
    li.classList.add("answer");
    li.append(el("h3", "answer-title", "Answer"), el("div", "answer-text", step.text || "Done."));
  } else if (step.kind === "retry") {
    li.append(el("div", "", retryWords(step)));
  } else if (step.kind === "error") {
    li.classList.add("error");
    li.append(el("div", "", step.message));
    if (step.action === "settings") {
      // What to do about it, one click away: the key field, in view and focused.
      const open = el("button", "step-action", "Open Settings");
      open.type = "button";
      open.addEventListener("click", openSettings);
      li.append(el("div", "", "Check the API key (or the provider and model) in Settings, "
        + "save, then press Reply: the next call uses the new settings."), open);
    }
  }
  $("steps").append(li);
  // Once the task has acted in a second tab, every step names the tab it acted in.
  $("steps").classList.toggle("multi-tab", spansTabs(state.steps));
  li.scrollIntoView({ block: "nearest" });
  if (live) $("progress").textContent = step.kind === "tool" ? `ran ${step.name}` : "";
}

/**
 * The tab a step acted in: its favicon (from the browser's cache) and its title and
 * site, quoted as the page's words. Kept in the step (`tabLabel`) as it was then, so
 * the history shows it after the tab changed or closed.
 * @param {{tab: number, tabLabel?: {title: string, url: string}}} step
 * @param {{live: boolean}} options
 */
function tabLine(step, { live }) {
  const line = el("div", "step-tab");
  const icon = document.createElement("img");
  icon.alt = "";
  icon.width = icon.height = 16;
  const words = el("span", "", "");
  line.append(icon, words);
  const show = (tab) => {
    words.textContent = tabWords(tab, step.tab);
    const src = faviconOf(tab?.url, (path) => chrome.runtime.getURL(path));
    icon.hidden = !src;
    if (src) icon.src = src;
  };
  const known = step.tabLabel ?? state.tabsSeen.get(step.tab) ?? null;
  show(known);
  if (live) {
    step.tabLabel = known ?? undefined;
    chrome.action.setBadgeText({ tabId: step.tab, text: "AI" }).catch(() => {});
    chrome.tabs.get(step.tab).then((tab) => {
      step.tabLabel = { title: tab.title ?? "", url: tab.url ?? "" };
      show(step.tabLabel);
    }, () => {});
  }
  return line;
}

/** A retry as the person reads it. */
function retryWords({ status, seconds, attempt, of }) {
  return `The provider is busy (HTTP ${status}): retrying in ${seconds} s, `
    + `attempt ${attempt} of ${of}.`;
}

/** Open the settings with the API key field in view and focused. */
function openSettings() {
  showView("agent");
  $("settings").open = true;
  $("settings").scrollIntoView({ block: "start" });
  $("api-key").focus();
}

/** The live indicator in the bar: what the agent waits for now. */
function showActivity({ what, name, ...retry }) {
  state.working = what === "model" ? "the model is thinking…"
    : what === "tool" ? `running ${name}…`
    : what === "retry" ? retryWords(/** @type {any} */ (retry)) : "";
  if (what !== "tool") state.asking = false;
  renderActivity();
}

function renderActivity() {
  state.activity = state.asking && state.working.startsWith("running ")
    ? "waiting for your answer…" : state.working;
  $("activity").textContent = state.activity;
  $("activity").hidden = !state.activity;
}

/** The site of a URL as the bar names it: its host, or the URL itself. */
function siteOf(url) {
  try {
    return new URL(url).host || url;
  } catch {
    return url;
  }
}

/** Show (or clear) the site the agent acts on; the tab's URL as the browser knows it. */
function setActing(tab) {
  const banner = $("acting");
  if (tab) {
    banner.textContent = `Acting on ${siteOf(tab.url ?? "") || `tab ${tab.id}`}`;
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

/** Show a new, empty conversation. */
function clearConversation() {
  state.agent = null;
  state.run = null;
  state.reopened = null;
  state.steps = [];
  state.pages = [];
  state.tabsSeen.clear();
  $("steps").replaceChildren();
  $("steps").classList.remove("multi-tab");
  $("cost").hidden = true;
  state.totals = emptyTotals();
  state.costLine = "";
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
  state.run = { provider: settings.provider, model: settings.model, prices: settings.prices,
    keep: settings.keepTasks, started: Date.now(), task: "" };
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
  await showHistory();
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
    state.agent = agent;
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
  state.running = true;
  $("task").value = "";
  // A reply carries on in the tab the agent acted in last.
  setActing(await chrome.tabs.get(agent.current).catch(() => agent.tab));
  let ok = false;
  try {
    ok = (await agent.run(task)).ok;
  } finally {
    state.running = false;
    setActing(null);
    showActivity({ what: "idle" });
    $("progress").textContent = "";
    showView(state.view);
  }
  await recordConversation(agent, ok);
});

$("new-task").addEventListener("click", () => {
  if (state.running) return;
  clearConversation();
  setActing(null);
  $("task").focus();
});

// ---------------------------------------------------------------- history

async function showHistory() {
  const list = $("history-list");
  const tasks = await listTasks(chrome.storage.local);
  state.history = tasks;
  list.replaceChildren();
  for (const record of tasks) {
    const li = el("li");
    const button = el("button", "", "");
    button.type = "button";
    button.dataset.id = record.id;
    const { outcome, line } = describeRecord(record);
    button.dataset.outcome = outcome;
    button.className = `entry ${outcome}`;
    button.title = record.title || record.url;
    button.append(el("div", "", record.task), el("div", "meta muted", line));
    button.addEventListener("click", () => reopen(record.id));
    li.append(button);
    list.append(li);
  }
  $("history-clear").disabled = tasks.length === 0;
}

/** Show a stored task: its steps and what it cost. The live conversation stays
 *  live (a reply continues it); another one is shown to read. */
async function reopen(id) {
  if (state.running) return;
  const record = (await listTasks(chrome.storage.local)).find((r) => r.id === id);
  if (!record) return;
  const live = state.agent?.session === id ? state.agent : null;
  const run = live ? state.run : null;
  clearConversation();
  state.agent = live;
  state.run = run ?? { provider: record.provider, model: record.model, prices: {}, keep: 0,
    started: record.started, task: record.task };
  if (!live) {
    state.reopened = id;
    const { prices } = await loadSettings();
    state.run.prices = prices;
  }
  for (const step of record.steps) renderStep(step, { live: false });
  showCost(record.totals);
  setActing(null);
  if (!live) {
    // Said plainly: this conversation is over; Run starts a new one.
    const note = el("li", "step readonly",
      "Read-only: this task's conversation has ended. Run starts a new task in the active tab.");
    $("steps").append(note);
  }
  // A task only read back cannot be continued: a reply starts a new one.
  if (!live) state.run = null;
}

$("history-clear").addEventListener("click", async () => {
  await clearTasks(chrome.storage.local);
  await showHistory();
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

// ---------------------------------------------------------------- start

// The person's site lists, read from the host whenever the settings open.
const sites = mountSitesBox(document, worker);
$("settings").addEventListener("toggle", () => {
  if ($("settings").open) sites.load();
});

const questions = mountQuestionBar(document, worker, {
  afterAnswer: () => (state.view === "agent" ? $("task").focus() : undefined),
});
globalThis.trimtabPanel = {
  state, refresh, worker, showView, showHistory, questions: questionView,
  answerQuestion: questions.answer, sites: sitesView, loadSites: sites.load,
};
worker.connect();
mountAgentsPanel($("agents"), worker);
loadPageBudget();
fillSettingsForm();
showFirstRun();
showHistory();
refresh();
