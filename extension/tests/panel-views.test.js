// The pure parts of the side panel's views: the inspector's figures, the settings'
// defaults and fields, the status words, the steps and the live indicator in words.
import { test } from "node:test";
import assert from "node:assert/strict";

import { DEFAULT_GROUPS } from "../agent/agent.js";
import { OPENAI_BASE_URL } from "../agent/llm/openai.js";
import { activityWords, workingWords } from "../panel/chat.js";
import {
  DEFAULT_KEEP, DEFAULT_MODELS, baseUrlFor, clientFor, needsSetup, withDefaults,
} from "../agent/model-settings.js";
import { FIGURES, figuresOf } from "../panel/inspector.js";
import { numberFrom, pageBudgetFrom } from "../panel/settings.js";
import { detachReason } from "../panel/status.js";
import { siteName } from "../panel/step-words.js";
import { compactedWords, modelWords, retryWords, toolMeta } from "../panel/steps.js";

test("the figures list every figure, a dash for one not known, elements in and out", () => {
  const { rows, line } = figuresOf({ tokens: 1200, raw_tokens: 6000, elements_in: 40 },
    "article", "Cart");
  assert.deepEqual(rows.map((r) => r.key), FIGURES.map(([key]) => key));
  const by = Object.fromEntries(rows.map((r) => [r.key, r.value]));
  assert.equal(by.tokens, "1,200");
  assert.equal(by.text_tokens, "–");
  assert.equal(by.elements, "40 → ?");
  assert.equal(line, "Cart · article · 5.0× smaller than the DOM");
});

test("the figures' line leaves out the ratio when there are no tokens, and an empty title", () => {
  assert.equal(figuresOf({ tokens: 0, raw_tokens: 10 }, "", "").line, "");
  assert.equal(figuresOf({}, "form", "").line, "form");
});

test("stored settings keep their values and get defaults for the fields they lack", () => {
  const s = withDefaults({ provider: "openai", model: "gpt-x" });
  assert.equal(s.provider, "openai");
  assert.equal(s.model, "gpt-x");
  assert.equal(s.askBeforeSubmit, true);
  assert.equal(s.allowEvaluate, false);
  assert.equal(s.pageBudget, null);
  assert.equal(s.keepTasks, DEFAULT_KEEP);
  assert.deepEqual(s.groups, [...DEFAULT_GROUPS]);
  assert.equal(withDefaults(undefined).model, DEFAULT_MODELS.anthropic);
});

test("a settings field's number is null when empty, not a number or negative", () => {
  assert.equal(numberFrom(" 12.5 "), 12.5);
  assert.equal(numberFrom("0"), 0);
  assert.equal(numberFrom(""), null);
  assert.equal(numberFrom("abc"), null);
  assert.equal(numberFrom("-3"), null);
});

test("the page budget is the host's default when empty, none at 0, at least the minimum", () => {
  const limits = { default: 6000, min: 500 };
  assert.equal(pageBudgetFrom(null, limits), null);
  assert.equal(pageBudgetFrom(0, limits), 0);
  assert.equal(pageBudgetFrom(100, limits), 500);
  assert.equal(pageBudgetFrom(1234.6, limits), 1235);
  assert.equal(pageBudgetFrom(100, null), 100);
});

test("the provider's URL is the one set, else the provider's own", () => {
  assert.equal(baseUrlFor({ provider: "anthropic", baseUrl: "" }), "https://api.anthropic.com");
  assert.equal(baseUrlFor({ provider: "openai", baseUrl: "" }), OPENAI_BASE_URL);
  assert.equal(baseUrlFor({ provider: "compatible", baseUrl: "http://127.0.0.1:8080/v1" }),
    "http://127.0.0.1:8080/v1");
});

test("the agent needs a key to start, or a base URL for a compatible server", () => {
  assert.equal(needsSetup(withDefaults({})), true);
  assert.equal(needsSetup(withDefaults({ apiKey: "k" })), false);
  assert.equal(needsSetup(withDefaults({ provider: "compatible" })), true);
  assert.equal(needsSetup(withDefaults({ provider: "compatible", baseUrl: "http://127.0.0.1:1" })),
    false);
  assert.throws(() => clientFor(withDefaults({})), /Add an API key in Settings first/);
});

test("a lost tab is said in words, the debugger's reason named when it is another", () => {
  assert.equal(detachReason("target_closed"), "the tab was closed");
  assert.match(detachReason("canceled_by_user"), /canceled from the browser's bar/);
  assert.equal(detachReason("other_reason"), "the debugger was detached (other_reason)");
});

test("the live indicator says the agent waits for an answer only while its tool runs", () => {
  assert.equal(workingWords({ what: "model" }), "the model is thinking…");
  assert.equal(workingWords({ what: "tool", name: "click" }), "running click…");
  assert.equal(workingWords({ what: "idle" }), "");
  assert.equal(workingWords({ what: "retry", status: 529, seconds: 2, attempt: 1, of: 3 }),
    retryWords({ status: 529, seconds: 2, attempt: 1, of: 3 }));
  assert.equal(activityWords("running click…", true), "waiting for your answer…");
  assert.equal(activityWords("the model is thinking…", true), "the model is thinking…");
  assert.equal(activityWords("running click…", false), "running click…");
});

test("a step's figures are in words: tokens, cache, compaction, a tool's size and image", () => {
  assert.equal(modelWords({ input: 1000, cacheRead: 500, cacheWrite: 0, output: 20 }, 3000),
    "1,500 tokens in (500 from cache, 0 written to it), 20 out · context ≈ 3,000 tokens");
  assert.equal(compactedWords({ replaced: 1, before: 9000, after: 4000, budget: 8000 }),
    "Context compacted: 1 earlier page state replaced by one line each (≈ 9,000 → 4,000 "
    + "tokens; budget 8,000).");
  assert.equal(toolMeta({ cached: true, chars: 4001 }),
    "answered from cache · 4,001 chars ≈ 1,001 tokens");
  assert.equal(toolMeta({ cached: false, chars: 8, note: "cut",
    image: { width: 10, height: 20, tokens: 1500 } }),
  "ran · 8 chars ≈ 2 tokens · image 10x20 ≈ 1,500 tokens · cut");
  assert.equal(retryWords({ status: 429, seconds: 4, attempt: 2, of: 5 }),
    "The provider is busy (HTTP 429): retrying in 4 s, attempt 2 of 5.");
});

test("a site is named by its host, or by the URL itself when it has none", () => {
  assert.equal(siteName("https://shop.example:8443/cart"), "shop.example:8443");
  assert.equal(siteName("about:blank"), "about:blank");
  assert.equal(siteName("not a url"), "not a url");
});
