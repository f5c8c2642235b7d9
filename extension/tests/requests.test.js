// Unit tests of the request builder: cache marks, a prefix that does not move, usage.
import { test } from "node:test";
import assert from "node:assert/strict";

import {
  MAX_BREAKPOINTS, anthropicBody, anthropicUsage, inputTotal, openaiBody, openaiUsage,
} from "../agent/requests.js";

const TOOLS = [
  { name: "click", description: "Click.", input_schema: { type: "object" } },
  { name: "capture_snapshot", description: "Look.", input_schema: { type: "object" } },
];

/** A conversation of `turns` tool turns in the neutral form the agent keeps. */
function conversation(turns, provider = "anthropic") {
  const history = [{ role: "user", text: "Find the price." }];
  for (let i = 0; i < turns; i++) {
    const call = { id: `t${i}`, name: "capture_snapshot", args: {} };
    const raw = provider === "anthropic"
      ? { role: "assistant", content: [{ type: "tool_use", id: call.id, name: call.name, input: {} }] }
      : { role: "assistant", content: null, tool_calls: [{ id: call.id, type: "function",
        function: { name: call.name, arguments: "{}" } }] };
    history.push({ role: "assistant", text: "", toolCalls: [call], raw });
    history.push({ role: "tool", results: [{ id: call.id, content: `<page n="${i}"/>`,
      isError: false }] });
  }
  return history;
}

const body = (history) => anthropicBody({ model: "m", maxTokens: 100, system: "sys",
  tools: TOOLS, history });

/** Every cache_control in a body, as paths. */
function marks(value, path = "") {
  if (Array.isArray(value)) return value.flatMap((v, i) => marks(v, `${path}[${i}]`));
  if (value && typeof value === "object") {
    return Object.entries(value).flatMap(([k, v]) =>
      (k === "cache_control" ? [path] : marks(v, `${path}.${k}`)));
  }
  return [];
}

const strip = (value) => JSON.parse(JSON.stringify(value, (k, v) =>
  (k === "cache_control" ? undefined : v)));

test("the Anthropic body marks the tools, the system prompt and the two newest tool results", () => {
  const sent = body(conversation(5));
  assert.deepEqual(marks(sent), [
    ".system[0]", ".messages[8].content[0]", ".messages[10].content[0]", ".tools[1]",
  ]);
  assert.ok(marks(sent).length <= MAX_BREAKPOINTS);
  assert.deepEqual(sent.system[0], { type: "text", text: "sys", cache_control: { type: "ephemeral" } });
});

test("a first request with no tool result yet marks only the fixed prefix", () => {
  assert.deepEqual(marks(body(conversation(0))), [".system[0]", ".tools[1]"]);
});

test("each Anthropic request begins with the previous one, cache marks aside", () => {
  const history = conversation(6);
  for (let n = 3; n < history.length; n += 2) {
    const before = strip(body(history.slice(0, n)));
    const after = strip(body(history.slice(0, n + 2)));
    assert.deepEqual(after.messages.slice(0, before.messages.length), before.messages);
    assert.deepEqual(after.system, before.system);
    assert.deepEqual(after.tools, before.tools);
  }
});

test("where one request writes the cache, the next one reads it at the same breakpoint", () => {
  const history = conversation(4);
  const first = body(history.slice(0, 7));
  const next = body(history);
  const written = marks(first).filter((m) => m.startsWith(".messages")).pop();
  assert.ok(marks(next).includes(written), `${written} not in ${marks(next)}`);
});

test("building a body does not mark the conversation it was built from", () => {
  const history = conversation(3);
  const copy = structuredClone(history);
  body(history);
  assert.deepEqual(history, copy);
});

test("a follow-up after tool results joins the same user message, as roles must alternate", () => {
  const history = conversation(1);
  history.push({ role: "user", text: "And the tax?" });
  const sent = body(history);
  const last = sent.messages[sent.messages.length - 1];
  assert.equal(last.role, "user");
  assert.deepEqual(last.content.map((b) => b.type), ["tool_result", "text"]);
  assert.equal(sent.messages.filter((m) => m.role === "user").length, 2);
});

test("the OpenAI body keeps system and tools first, and names its cache with prompt_cache_key", () => {
  const history = conversation(3, "openai");
  const make = (h) => openaiBody({ model: "m", maxTokens: 10, tokenField: "max_tokens",
    system: "sys", tools: TOOLS, history: h, cacheKey: "agent-1" });
  const before = make(history.slice(0, 5));
  const after = make(history);
  assert.equal(after.prompt_cache_key, "agent-1");
  assert.deepEqual(after.messages[0], { role: "system", content: "sys" });
  assert.deepEqual(after.messages.slice(0, before.messages.length), before.messages);
  assert.deepEqual(after.tools, before.tools);
  assert.equal(after.messages[2].tool_calls[0].function.arguments, "{}");
});

test("Anthropic usage is read with its cache reads and writes", () => {
  const usage = anthropicUsage({ input_tokens: 12, cache_read_input_tokens: 4000,
    cache_creation_input_tokens: 300, output_tokens: 40 });
  assert.deepEqual(usage, { input: 12, cacheRead: 4000, cacheWrite: 300, output: 40 });
  assert.equal(inputTotal(usage), 4312);
  assert.deepEqual(anthropicUsage(undefined), { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 });
});

test("OpenAI usage separates the cached prompt tokens from the rest", () => {
  const usage = openaiUsage({ prompt_tokens: 5000, completion_tokens: 30,
    prompt_tokens_details: { cached_tokens: 4864 } });
  assert.deepEqual(usage, { input: 136, cacheRead: 4864, cacheWrite: 0, output: 30 });
  assert.deepEqual(openaiUsage({ prompt_tokens: 70, completion_tokens: 3 }),
    { input: 70, cacheRead: 0, cacheWrite: 0, output: 3 });
});

/** A turn whose tool result carries a screenshot. */
function withImage(provider) {
  const history = conversation(1, provider);
  history[2].results[0] = { ...history[2].results[0], content: "<screenshot/>",
    image: { mime: "image/jpeg", data: "QUJD", width: 2, height: 1 } };
  return history;
}

test("Anthropic gets a screenshot as an image block inside its tool result", () => {
  const sent = body(withImage("anthropic"));
  const result = sent.messages[2].content[0];
  assert.equal(result.type, "tool_result");
  assert.deepEqual(result.content, [{ type: "text", text: "<screenshot/>" }, {
    type: "image", source: { type: "base64", media_type: "image/jpeg", data: "QUJD" } }]);
});

test("OpenAI gets a screenshot as an image_url data URL right after the tool messages", () => {
  const sent = openaiBody({ model: "m", maxTokens: 1, tokenField: "max_tokens", system: "s",
    tools: TOOLS, history: [...withImage("openai"), { role: "user", text: "next" }],
    cacheKey: "k" });
  const [, , , tool, images, next] = sent.messages;
  assert.deepEqual(tool, { role: "tool", tool_call_id: "t0", content: "<screenshot/>" });
  assert.deepEqual(images, { role: "user", content: [
    { type: "text", text: "The image of tool call t0:" },
    { type: "image_url", image_url: { url: "data:image/jpeg;base64,QUJD" } }] });
  assert.deepEqual(next, { role: "user", content: "next" });
});
