// The Settings box of the Agent view: provider, model and key, the tool groups, the
// budgets and prices, and the "Allowed sites" (panel/sites-box.js); the first-run
// prompt. What the settings are, their defaults and the model client made from them
// are agent/model-settings.js's.

import { DEFAULT_BUDGET } from "../agent/compact.js";
import {
  DEFAULT_KEEP, DEFAULT_MODELS, baseUrlFor, clientFor, loadSettings, needsSetup,
} from "../agent/model-settings.js";
import { testConnection } from "../agent/llm/probe.js";
import { $ } from "./dom.js";
import { mountSitesBox } from "./sites-box.js";
import { siteName } from "./step-words.js";

/**
 * A number as a settings field holds it, or null when it is empty, not a number or
 * negative.
 * @param {string} raw
 */
export function numberFrom(raw) {
  const text = raw.trim();
  const value = text === "" ? NaN : Number(text);
  return Number.isFinite(value) && value >= 0 ? value : null;
}

/**
 * The page budget entered: null (empty: the host's default), 0 (no budget), or at
 * least the host's minimum when the host has said it.
 * @param {number|null} value
 * @param {{default: number, min: number}|null} limits
 */
export function pageBudgetFrom(value, limits) {
  if (value === null || value === 0) return value;
  return Math.round(limits ? Math.max(limits.min, value) : value);
}

/**
 * @param {{store: import("./store.js").Store<ReturnType<typeof import("./store.js").panelState>>,
 *          worker: import("./worker-client.js").WorkerClient}} parts
 */
export function mountSettings({ store, worker }) {
  const { state } = store;
  const numberIn = (id) => numberFrom($(id).value);

  /** The page budget's limits from the host (its `tools` reply), shown in the settings. */
  async function loadPageBudget() {
    if (state.pageBudget) return state.pageBudget;
    try {
      const { budget } = await worker.host({ type: "tools" });
      if (Number.isFinite(budget?.default) && Number.isFinite(budget?.min)) {
        store.update({ pageBudget: { default: budget.default, min: budget.min } });
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

  async function fillForm() {
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

  async function showFirstRun() {
    $("first-run").hidden = !needsSetup(await loadSettings());
  }

  /** Open the settings with the API key field in view and focused. */
  function openSettings() {
    store.update({ view: "agent" });
    $("settings").open = true;
    $("settings").scrollIntoView({ block: "start" });
    $("api-key").focus();
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
      pageBudget: pageBudgetFrom(numberIn("page-budget"), await loadPageBudget()),
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
    note.textContent = `Asking ${siteName(baseUrlFor(s))}…`;
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

  // The person's site lists, read from the host whenever the settings open.
  const sites = mountSitesBox(document, worker);
  $("settings").addEventListener("toggle", () => {
    if ($("settings").open) sites.load();
  });
  store.subscribe(["host"], ({ host }) => {
    if (host?.state !== "connected") return;
    loadPageBudget();
    if ($("settings").open) sites.load();
  });

  return { loadPageBudget, fillForm, showFirstRun, openSettings, loadSites: sites.load };
}
