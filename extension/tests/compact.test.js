// Unit tests of the context compactor: what is replaced, what is kept, and that
// the prefix is stable again afterwards.
import { test } from "node:test";
import assert from "node:assert/strict";

import {
  compactHistory, estimateRequest, estimateTokens, pageFacts, recordLine,
} from "../agent/compact.js";
import { Agent } from "../agent/agent.js";
import { anthropicBody } from "../agent/requests.js";

let nextStep = 0;
const NONCE = "0123456789abcdef";

/** One model turn that calls `name`, and its result `content` (a page state of `url` when
 * it is one, as the host's `kind` says). */
function turn(name, args, content, { isError = false, url = "" } = {}) {
  nextStep += 1;
  const id = `t${nextStep}`;
  const call = { id, name, args };
  return [
    { role: "assistant", text: "", toolCalls: [call],
      raw: { role: "assistant", content: [{ type: "tool_use", id, name, input: args }] } },
    { role: "tool", results: [{ id, content, isError,
      meta: { step: nextStep, name, args,
        page: pageFacts({ kind: kindOf(content), is_error: isError }, url) } }] },
  ];
}

const page = (url, kind, body) =>
  `<page url="${url}" title="T" snapshot="${kind}">\n${body}\n</page>`;
/** The `kind` the host sends with such a result. */
const kindOf = (content) => /snapshot="(baseline|diff)"/.exec(content)?.[1] ?? "text";

function task() {
  nextStep = 0;
  return [
    { role: "user", text: "Buy the second book." },
    ...turn("capture_snapshot", {}, page("https://shop.test/", "baseline", "A".repeat(4000)),
      { url: "https://shop.test/" }),
    ...turn("click", { id: "k1" }, page("https://shop.test/", "diff", "<change/>"),
      { url: "https://shop.test/" }),
    ...turn("find", { text: "next" }, '<found count="1">\n<in region="main"><a id="n2">next</a></in>\n</found>'),
    ...turn("click", { id: "n2" }, page("https://shop.test/p2", "baseline", "B".repeat(4000)),
      { url: "https://shop.test/p2" }),
    ...turn("click", { id: "zz" }, "The id zz is not on the page.", { isError: true }),
    ...turn("type", { id: "q", text: "x" }, page("https://shop.test/p2", "diff", "<ins>x</ins>"),
      { url: "https://shop.test/p2" }),
  ];
}

const results = (history) => history.filter((e) => e.role === "tool").map((e) => e.results[0]);

test("page states before the newest baseline become short records; the rest is kept", () => {
  const history = task();
  const { history: out, replaced } = compactHistory(history, NONCE);
  assert.equal(replaced, 2);
  const [first, second, found, newest, error, diff] = results(out);
  assert.equal(first.content, recordLine(results(history)[0].meta, 4, NONCE));
  assert.match(first.content, /^\[Step 1: capture_snapshot\(\{\}\) returned a page baseline/);
  assert.match(first.content, /expand\(region\)/);
  assert.match(first.content, /Its ids stay valid; expand\(region\) shows a region a later/);
  assert.ok(first.content.endsWith(
    `Its URL:]\n<<<PAGE DATA ${NONCE}>>>\nhttps://shop.test/\n<<<END PAGE DATA ${NONCE}>>>`));
  assert.match(second.content, /^\[Step 2: click\(\{"id":"k1"\}\) .* page diff/);
  // Not page states, the newest baseline, and what came after it: untouched objects.
  for (const [i, kept] of [[2, found], [3, newest], [4, error], [5, diff]]) {
    assert.equal(kept, results(history)[i]);
  }
  // Every model turn and the person's message are the same objects.
  out.forEach((entry, i) => {
    if (entry.role !== "tool") assert.equal(entry, history[i]);
  });
});

test("compaction does not change the history it was given", () => {
  const history = task();
  const copy = structuredClone(history);
  compactHistory(history, NONCE);
  assert.deepEqual(history, copy);
});

test("a second compaction with no newer baseline changes nothing", () => {
  const once = compactHistory(task(), NONCE).history;
  const twice = compactHistory(once, NONCE);
  assert.equal(twice.replaced, 0);
  assert.equal(twice.history, once);
});

test("a history with one baseline has nothing superseded", () => {
  nextStep = 0;
  const history = [{ role: "user", text: "x" },
    ...turn("capture_snapshot", {}, page("https://a.test/", "baseline", "A")),
    ...turn("click", { id: "b" }, page("https://a.test/", "diff", "B"))];
  assert.equal(compactHistory(history, NONCE).replaced, 0);
});

test("compaction shrinks the context, and the next request begins with the compacted one", () => {
  const history = task();
  const fixed = { system: "sys", tools: [] };
  const before = estimateRequest({ ...fixed, history });
  const compacted = compactHistory(history, NONCE).history;
  const after = estimateRequest({ ...fixed, history: compacted });
  // The first baseline's 4,000 characters are gone; the newest one's are not.
  assert.ok(before - after > 1100 && after > 1250, `${after} vs ${before}`);
  const grown = [...compacted, ...turn("capture_snapshot", {}, page("https://shop.test/p2", "diff", "C"))];
  const strip = (b) => JSON.parse(JSON.stringify(b, (k, v) => (k === "cache_control" ? undefined : v)));
  const a = strip(anthropicBody({ model: "m", maxTokens: 1, ...fixed, history: compacted }));
  const b = strip(anthropicBody({ model: "m", maxTokens: 1, ...fixed, history: grown }));
  assert.deepEqual(b.messages.slice(0, a.messages.length), a.messages);
});

test("page facts come from the host's kind and only for page states", () => {
  assert.deepEqual(pageFacts({ kind: "diff", is_error: false }, 'https://x.test/?a=1&b="2"'),
    { url: 'https://x.test/?a=1&b="2"', snapshot: "diff" });
  assert.deepEqual(pageFacts({ kind: "baseline" }, "https://x.test/"),
    { url: "https://x.test/", snapshot: "baseline" });
  assert.equal(pageFacts({ kind: "text", is_error: false }, "https://x.test/"), null);
  // An error's content may even quote a <page> line: it is not a page state.
  assert.equal(pageFacts({ kind: "baseline", is_error: true }, "https://x.test/"), null);
  assert.equal(pageFacts({}, ""), null);
});

test("the token estimate errs high for XML and counts non-ASCII characters one each", () => {
  const xml = '<a id="k3x">Compare all models</a>\n'.repeat(10);
  assert.ok(estimateTokens(xml) >= xml.length / 4);
  assert.equal(estimateTokens("日本語"), 3);
  assert.equal(estimateTokens(""), 0);
});

test("a screenshot counts its image tokens, and its image goes once a newer page supersedes it", () => {
  const history = task();
  const [call, answer] = turn("screenshot", {}, "<screenshot/>");
  answer.results[0].image = { mime: "image/png", data: "QUJD", width: 1280, height: 720 };
  const withShot = [history[0], call, answer, ...history.slice(1)];
  const plain = estimateRequest({ system: "", tools: [], history: [history[0], call,
    { role: "tool", results: [{ ...answer.results[0], image: undefined }] }] });
  const pictured = estimateRequest({ system: "", tools: [], history: [history[0], call, answer] });
  assert.equal(pictured - plain, Math.ceil(1280 * 720 / 750));
  const { history: compacted } = compactHistory(withShot, NONCE);
  const kept = compacted[2].results[0];
  assert.equal(kept.image, undefined);
  assert.match(kept.content, /^<screenshot\/>\n\[Its 1280x720 image was removed/);
});

/** A model that makes `calls` one per turn, then answers "done"; it keeps each history it
 * was sent (a copy). */
function scriptedModel(calls) {
  const seen = [];
  let turn = 0;
  return { seen, send: async ({ history }) => {
    seen.push(structuredClone(history));
    const toolCalls = turn < calls.length ? [{ id: `c${turn}`, ...calls[turn] }] : [];
    turn += 1;
    return { assistant: { role: "assistant", text: "", toolCalls, raw: { turn } }, text: "done",
      toolCalls, usage: { input: 1, cacheRead: 0, cacheWrite: 0, output: 1 } };
  } };
}

/** A host that answers `tool` requests with `replies` in turn, `forget_views` with
 * `forget` (a function), and keeps every request in order. */
function recordingHost(replies, forget = async () => ({ tabs: [5] })) {
  const requests = [];
  let answered = 0;
  return { requests, host: async (request) => {
    if (request.type === "tools") {
      return { tools: ["capture_snapshot", "click"].map((name) => ({ name, description: name,
        input_schema: { type: "object" } })), format: "format" };
    }
    if (request.type === "tab_shown") return { title: request.title, url: request.url };
    requests.push(request);
    if (request.type === "forget_views") return forget(request);
    answered += 1;
    return replies[answered - 1];
  } };
}

const long = (url, kind, letter) => ({ kind, url, content: page(url, kind, letter.repeat(4000)) });

test("the agent tells the host before it sends a compacted history, naming its session and tab", async () => {
  const worker = recordingHost([long("https://shop.test/", "baseline", "A"),
    long("https://shop.test/p2", "baseline", "B"), long("https://shop.test/p2", "diff", "C")]);
  const model = scriptedModel([{ name: "capture_snapshot", args: {} },
    { name: "click", args: { id: "k1" } }, { name: "click", args: { id: "k2" } }]);
  const steps = [];
  const agent = new Agent({ worker, client: model, askBeforeSubmit: true, budget: 2000,
    onStep: (step) => steps.push(step), tab: { id: 5, title: "Shop", url: "https://shop.test/" } });
  const done = await agent.run("buy");
  assert.ok(done.ok, done.text);
  // Two page states in, the context passed the budget: the host heard of the compaction
  // before the request that carried it, and once.
  assert.deepEqual(worker.requests.map((r) => r.type), ["tool", "tool", "forget_views", "tool"]);
  assert.deepEqual(worker.requests[2], { type: "forget_views", session: agent.session, tab: 5 });
  assert.equal(steps.filter((s) => s.kind === "compacted").length, 1);
  const sent = model.seen[2].filter((e) => e.role === "tool").map((e) => e.results[0].content);
  assert.match(sent[0], /^\[Step 1: capture_snapshot\(\{\}\) returned a page baseline/);
  assert.ok(sent[1].includes("B".repeat(4000)));
});

test("a host that cannot forget leaves the history whole and stops the task with its error", async () => {
  const worker = recordingHost([long("https://shop.test/", "baseline", "A"),
    long("https://shop.test/p2", "baseline", "B")], async () => {
    throw new Error("the host is not connected");
  });
  const model = scriptedModel([{ name: "capture_snapshot", args: {} },
    { name: "click", args: { id: "k1" } }, { name: "click", args: { id: "k2" } }]);
  const steps = [];
  const agent = new Agent({ worker, client: model, askBeforeSubmit: true, budget: 2000,
    onStep: (step) => steps.push(step), tab: { id: 5 } });
  const done = await agent.run("buy");
  assert.equal(done.ok, false);
  assert.match(done.text, /the host is not connected/);
  // No request went out with page states the host still believes the model holds.
  assert.equal(model.seen.length, 2);
  assert.ok(!steps.some((s) => s.kind === "compacted"));
  const kept = agent.history.filter((e) => e.role === "tool").map((e) => e.results[0].content);
  assert.ok(kept[0].includes("A".repeat(4000)));
});
