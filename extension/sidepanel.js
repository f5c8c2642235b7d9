// The side panel: Inspect (what the agent sees of this tab) and Agent (the chat).
// Page-derived text is put on screen only through textContent / text nodes.

import { Agent } from "./agent.js";
import { AnthropicClient } from "./llm/anthropic.js";
import { OPENAI_BASE_URL, OpenAIClient } from "./llm/openai.js";
import { WorkerClient } from "./lib/worker-client.js";
import { renderXml } from "./lib/xmlview.js";

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
  agent: /** @type {Agent|null} */ (null),
  steps: /** @type {object[]} */ ([]),
  refreshes: 0,
};

// ---------------------------------------------------------------- host status

worker.onEvent((event) => {
  if (event.event === "host") {
    const el = $("host-status");
    el.textContent = event.state === "connected" ? "host connected" : "host disconnected";
    el.className = `status ${event.state === "connected" ? "ok" : "down"}`;
    el.title = event.detail || "";
  } else if (event.event === "detached") {
    const why = detachReason(event.reason);
    if (state.tab?.id === event.tab || state.shownTab === event.tab) {
      showInspectError(`Trimtab lost access to this tab: ${why}.`);
    }
    if (state.agent?.tab.id === event.tab) {
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
  }
}
$("tab-inspect").addEventListener("click", () => showView("inspect"));
$("tab-agent").addEventListener("click", () => showView("agent"));

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
  $("refresh").disabled = true;
  state.shownTab = tab.id;
  try {
    const result = await worker.host({ type: "snapshot", tab: tab.id });
    if (state.tab?.id !== tab.id) return; // the person switched tabs meanwhile
    state.xml = String(result.xml ?? "");
    state.kind = String(result.kind ?? "");
    state.stats = result.stats ?? {};
    showInspectError("");
    renderFigures(state.stats, state.kind);
    const parsed = renderXml(state.xml, $("xml"));
    if (!parsed.ok) showInspectError(`The host's XML did not parse: ${parsed.error}`);
  } catch (err) {
    showInspectError(`Could not read this tab: ${err.message}`);
  } finally {
    $("refresh").disabled = false;
  }
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
xmlView.addEventListener("click", (e) => {
  const eid = e.target?.dataset?.eid;
  if (!eid) return;
  for (const el of xmlView.querySelectorAll(".eid.pinned")) el.classList.remove("pinned");
  state.pinned = state.pinned === eid ? null : eid;
  if (state.pinned) e.target.classList.add("pinned");
  highlight(state.pinned);
});

$("refresh").addEventListener("click", refresh);
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
  if (windowId === win.id && state.view === "inspect") refresh();
});
chrome.tabs.onUpdated.addListener((tabId, change) => {
  if (tabId === state.tab?.id && change.status === "complete" && state.view === "inspect"
      && !state.agent) {
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
    ...(settings ?? {}),
  };
}

async function fillSettingsForm() {
  const s = await loadSettings();
  $("provider").value = s.provider;
  $("base-url").value = s.baseUrl;
  $("model").value = s.model;
  $("api-key").value = s.apiKey;
  $("ask-submit").checked = s.askBeforeSubmit;
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

async function makeClient() {
  const s = await loadSettings();
  if (s.provider !== "compatible" && !s.apiKey) {
    throw new Error("Add an API key in Settings first.");
  }
  const options = { apiKey: s.apiKey, model: s.model, baseUrl: s.baseUrl || undefined };
  const client = s.provider === "anthropic" ? new AnthropicClient(options)
    : new OpenAIClient(options);
  return { client, askBeforeSubmit: s.askBeforeSubmit };
}

// ---------------------------------------------------------------- agent

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function renderStep(step) {
  state.steps.push(step);
  const li = el("li", `step ${step.kind}`);
  li.dataset.kind = step.kind;
  if (step.kind === "model") {
    if (step.text) li.append(el("div", "", step.text));
    li.append(el("div", "meta",
      `model: ${step.usage.input} tokens in, ${step.usage.output} out`));
  } else if (step.kind === "tool") {
    const head = el("div");
    head.append(el("code", "", `${step.name}(${JSON.stringify(step.args)})`));
    if (step.cached) {
      const badge = el("span", "badge", "cached");
      badge.title = step.cachedFrom ? `from ${JSON.stringify(step.cachedFrom)}` : "";
      head.append(badge);
    }
    if (step.isError) head.append(el("span", "badge", "error"));
    li.append(head);
    li.dataset.cached = String(step.cached);
    li.append(el("div", "meta",
      `${step.cached ? "answered from cache" : "ran"} · ${step.chars.toLocaleString("en-US")}`
      + ` chars ≈ ${Math.ceil(step.chars / 4).toLocaleString("en-US")} tokens`
      + (step.note ? ` · ${step.note}` : "")));
    const details = el("details");
    details.append(el("summary", "", "result"), el("pre", "", step.content));
    li.append(details);
  } else if (step.kind === "declined") {
    li.append(el("div", "", `You declined ${step.name}: ${step.reason}.`));
  } else if (step.kind === "done") {
    li.append(el("div", "", step.text || "Done."));
  } else if (step.kind === "error") {
    li.classList.add("error");
    li.append(el("div", "", step.message));
  }
  $("steps").append(li);
  li.scrollIntoView({ block: "nearest" });
  $("progress").textContent = step.kind === "tool" ? `ran ${step.name}` : "";
}

/** Ask the person about a submit; resolves when they answer or the agent stops. */
function askPerson({ name, args, reason, element }) {
  return new Promise((resolve) => {
    const box = $("confirm");
    const what = element ? ` <${element.tag}> ${JSON.stringify(element.attrs)}` : "";
    $("confirm-text").textContent =
      `The agent wants to run ${name}(${JSON.stringify(args)})${what}. Allow? (${reason})`;
    box.hidden = false;
    const done = (answer) => {
      box.hidden = true;
      $("confirm-yes").onclick = null;
      $("confirm-no").onclick = null;
      resolve(answer);
    };
    $("confirm-yes").onclick = () => done(true);
    $("confirm-no").onclick = () => done(false);
    state.agent?.controller.signal.addEventListener("abort", () => done(false));
  });
}

function setActing(tab) {
  const banner = $("acting");
  if (tab) {
    banner.textContent = `Agent is acting in: ${tab.title || tab.url || `tab ${tab.id}`}`;
    chrome.action.setBadgeText({ tabId: tab.id, text: "AI" }).catch(() => {});
  } else if (state.agent) {
    chrome.action.setBadgeText({ tabId: state.agent.tab.id, text: "" }).catch(() => {});
  }
  banner.hidden = !tab;
  $("run").disabled = Boolean(tab);
  $("stop").disabled = !tab;
}

$("task-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  if (state.agent) return;
  const task = $("task").value.trim();
  if (!task) return;
  $("steps").replaceChildren();
  state.steps = [];
  let agent;
  try {
    const tab = await activeTab();
    if (!tab?.id) throw new Error("No active tab in this window.");
    const { client, askBeforeSubmit } = await makeClient();
    agent = new Agent({
      worker, client, tab: { id: tab.id, title: tab.title, url: tab.url },
      askBeforeSubmit, confirm: askPerson, onStep: renderStep,
    });
  } catch (err) {
    renderStep({ kind: "error", message: err.message });
    return;
  }
  state.agent = agent;
  setActing(agent.tab);
  $("progress").textContent = "working…";
  try {
    await agent.run(task);
  } finally {
    setActing(null);
    state.agent = null;
    $("progress").textContent = "";
  }
});

$("stop").addEventListener("click", () => state.agent?.stop("stopped by you"));
chrome.tabs.onRemoved.addListener((tabId) => {
  if (state.agent?.tab.id === tabId) state.agent.stop("the agent's tab was closed");
});

// ---------------------------------------------------------------- start

globalThis.trimtabPanel = { state, refresh, worker, showView };
worker.connect();
fillSettingsForm();
refresh();
