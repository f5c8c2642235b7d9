// "Test connection" says what the provider answered, in words a person acts on.
import { test } from "node:test";
import assert from "node:assert/strict";

import { LlmError } from "../agent/llm/common.js";
import { PROBE, testConnection } from "../agent/llm/probe.js";
import { anthropicBody, openaiBody } from "../agent/requests.js";

test("an answer is quoted with the model's name", async () => {
  const sent = [];
  const client = { send: async (r) => { sent.push(r); return { text: " OK \n" }; } };
  assert.deepEqual(await testConnection(client, { model: "m-1" }),
    { ok: true, message: "Connected: m-1 answered “OK”." });
  assert.deepEqual(sent[0].tools, []);
});

test("a refused key and a busy provider are told apart", async () => {
  const failing = (status) => ({ send: async () => { throw new LlmError(`HTTP ${status}`, status); } });
  assert.match((await testConnection(failing(401), { model: "m" })).message, /refused the API key/);
  assert.match((await testConnection(failing(529), { model: "m" })).message, /busy/);
  assert.match((await testConnection(failing(null), { model: "m" })).message, /No answer/);
});

test("the probe's bodies carry no tool list", () => {
  const a = anthropicBody({ model: "m", maxTokens: 16, ...PROBE });
  const o = openaiBody({ model: "m", maxTokens: 16, tokenField: "max_tokens", ...PROBE });
  assert.ok(!("tools" in a));
  assert.ok(!("tools" in o));
});
