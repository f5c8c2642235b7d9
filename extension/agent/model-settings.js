// The agent's settings as chrome.storage.local keeps them (provider, model and key, tool
// groups, budgets, prices), their defaults, and the model client made from them: what
// both the side panel's agent and the service worker's scheduled runs need. The form
// that edits them is the panel's (panel/settings.js). The API key is read only to be
// sent to the chosen provider: never to the host, never to a log.

import { DEFAULT_GROUPS } from "./agent.js";
import { DEFAULT_BUDGET } from "./compact.js";
import { AnthropicClient } from "./llm/anthropic.js";
import { OPENAI_BASE_URL, OpenAIClient } from "./llm/openai.js";

/** How many finished tasks the panel's history keeps unless the person says otherwise. */
export const DEFAULT_KEEP = 20;

export const DEFAULT_MODELS = {
  anthropic: "claude-sonnet-4-5",
  openai: "gpt-4.1",
  compatible: "",
};

/**
 * The settings with a default for every field the stored ones lack.
 * @param {object | undefined} stored what chrome.storage.local holds, if anything
 */
export function withDefaults(stored) {
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
    pageBudget: /** @type {number|null} */ (null),
    prices: { input: null, cachedInput: null, output: null },
    keepTasks: DEFAULT_KEEP,
    // Whether the agent may call evaluate (run its JavaScript in the page): off by
    // default; on, every call is still asked about unless allowed for its site.
    allowEvaluate: false,
    ...(stored ?? {}),
  };
}

/**
 * The saved settings, with defaults.
 * @param {{get: (key: string) => Promise<Record<string, any>>}} storage where they are
 *   kept (chrome.storage.local)
 */
export async function loadSettings(storage = chrome.storage.local) {
  const { settings } = await storage.get("settings");
  return withDefaults(settings);
}

/** The provider's base URL the settings `s` call. */
export function baseUrlFor(s) {
  if (s.baseUrl) return s.baseUrl;
  return s.provider === "anthropic" ? "https://api.anthropic.com" : OPENAI_BASE_URL;
}

/** Whether the agent still lacks what it needs to call a model (first run). */
export function needsSetup(s) {
  return s.provider !== "compatible" ? !s.apiKey : !s.baseUrl;
}

/** The client for settings `s`; `maxTokens` for a short probe. */
export function clientFor(s, maxTokens = undefined) {
  if (s.provider !== "compatible" && !s.apiKey) {
    throw new Error("Add an API key in Settings first.");
  }
  const options = { apiKey: s.apiKey, model: s.model, baseUrl: s.baseUrl || undefined,
    ...(maxTokens ? { maxTokens } : {}) };
  return s.provider === "anthropic" ? new AnthropicClient(options) : new OpenAIClient(options);
}

/** The model client of the saved settings, and those settings. */
export async function makeClient() {
  const s = await loadSettings();
  return { client: clientFor(s), settings: s };
}
