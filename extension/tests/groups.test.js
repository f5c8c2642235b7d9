// The agent asks the host for the core tools and the groups the person enabled, and a
// tool outside them is refused without reaching the host.

import assert from "node:assert/strict";
import test from "node:test";

import { Agent, DEFAULT_GROUPS } from "../agent/agent.js";

const usage = { input: 1, cacheRead: 0, cacheWrite: 0, output: 1 };

function scripted(calls) {
  let turn = 0;
  return { send: async () => {
    const toolCalls = turn < calls.length ? [calls[turn]] : [];
    turn += 1;
    return { assistant: { role: "assistant", text: "", toolCalls, raw: {} }, text: "done",
      toolCalls, usage };
  } };
}

test("the tools request names the enabled groups; devtools is off by default", async () => {
  assert.deepEqual([...DEFAULT_GROUPS], ["core", "pixels"]);
  const requests = [];
  const worker = { host: async (request) => {
    requests.push(request);
    return request.type === "tools" ? { tools: [], format: "format" } : {};
  } };
  const agent = new Agent({ worker, client: scripted([]), askBeforeSubmit: true,
    onStep: () => {}, tab: { id: 1 }, groups: ["core", "devtools"] });
  await agent.run("look");
  assert.deepEqual(requests, [{ type: "tools", groups: ["core", "devtools"] },
    { type: "tab_shown", title: "", url: "" }]);
});

test("a tool the agent was not given is refused and never sent to the host", async () => {
  const sent = [];
  const worker = { host: async (request) => {
    sent.push(request.type);
    if (request.type === "tab_shown") return { title: "", url: "" };
    return request.type === "tools"
      ? { tools: [{ name: "capture_snapshot" }], format: "format" }
      : { kind: "text", content: "ran" };
  } };
  const agent = new Agent({ worker, client: scripted([{ id: "c1", name: "console", args: {} }]),
    askBeforeSubmit: true, onStep: () => {}, tab: { id: 1 },
    tabUrl: async () => "https://shop.test/" });
  const done = await agent.run("why does it fail?");
  assert.ok(done.ok, done.text);
  assert.deepEqual(sent, ["tools", "tab_shown"]);
  const [result] = agent.history.filter((e) => e.role === "tool")[0].results;
  assert.ok(result.isError);
  assert.match(result.content, /no tool "console"/);
});
