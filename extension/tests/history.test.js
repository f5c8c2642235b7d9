// Unit tests of the task history store, over an in-memory chrome.storage.local.
import { test } from "node:test";
import assert from "node:assert/strict";

import { CONTENT_LIMIT, HISTORY_KEY, clearTasks, listTasks, saveTask } from "../panel/history.js";
import { emptyTotals } from "../shared/cost.js";

function memoryStore() {
  const data = {};
  return {
    data,
    async get(key) { return key in data ? { [key]: structuredClone(data[key]) } : {}; },
    async set(items) { Object.assign(data, structuredClone(items)); },
  };
}

const record = (id, steps = []) => ({ id, started: 1, task: `task ${id}`, title: "", url: "",
  provider: "anthropic", model: "m", steps, totals: emptyTotals(), ok: true });

test("tasks are listed newest first and only the last few are kept", async () => {
  const store = memoryStore();
  for (const id of ["a", "b", "c", "d"]) await saveTask(store, record(id), 3);
  assert.deepEqual((await listTasks(store)).map((r) => r.id), ["d", "c", "b"]);
});

test("saving a task again updates it in place of a second copy", async () => {
  const store = memoryStore();
  await saveTask(store, record("a"));
  await saveTask(store, record("b"));
  await saveTask(store, { ...record("a"), ok: false });
  const list = await listTasks(store);
  assert.deepEqual(list.map((r) => [r.id, r.ok]), [["a", false], ["b", true]]);
});

test("long page content is cut in the stored steps; short steps are kept as they are", async () => {
  const store = memoryStore();
  const short = { kind: "tool", content: "<page/>" };
  await saveTask(store, record("a", [short, { kind: "tool", content: "x".repeat(10_000) }]));
  const [saved] = await listTasks(store);
  assert.deepEqual(saved.steps[0], short);
  assert.ok(saved.steps[1].content.length < CONTENT_LIMIT + 40);
});

test("a record with an API key is refused, and clearing empties the list", async () => {
  const store = memoryStore();
  await assert.rejects(saveTask(store, { ...record("a"), apiKey: "sk" }), /API key/);
  await saveTask(store, record("a"));
  await clearTasks(store);
  assert.deepEqual(await listTasks(store), []);
  assert.deepEqual(store.data[HISTORY_KEY], []);
});

test("keeping zero tasks stores none", async () => {
  const store = memoryStore();
  await saveTask(store, record("a"), 0);
  assert.deepEqual(await listTasks(store), []);
});

test("an entry says how the task ended, when, what it cost and where", async () => {
  const { describeRecord, outcomeOf } = await import("../panel/history.js");
  assert.equal(outcomeOf([{ kind: "done" }], true), "answered");
  assert.equal(outcomeOf([{ kind: "error", message: "Stopped: stopped by you" }], false),
    "stopped");
  assert.equal(outcomeOf([{ kind: "error", message: "HTTP 500" }], false), "failed");
  const started = new Date(2026, 10, 26, 9, 5).getTime();
  const totals = { calls: 3, input: 100, cacheRead: 2000, cacheWrite: 50, output: 30 };
  const base = { ...record("a"), started, totals, url: "https://shop.example/cart" };
  assert.deepEqual(describeRecord({ ...base, outcome: "answered", cost: 0.0123 }), {
    outcome: "answered",
    line: "answered · 2026-11-26 09:05 · cost 0.01 · 3 calls · shop.example",
  });
  assert.equal(describeRecord({ ...base, ok: false, cost: null,
    steps: [{ kind: "error", message: "Stopped: the tab was closed" }] }).line,
  "stopped · 2026-11-26 09:05 · 2,180 tokens · 3 calls · shop.example");
});

test("a screenshot's image is not kept in the history; its size and tokens are", async () => {
  const store = memoryStore();
  const shot = { kind: "tool", content: "<screenshot/>",
    image: { width: 1280, height: 720, tokens: 1229, url: "data:image/jpeg;base64,QUJD" } };
  await saveTask(store, record("a", [shot]));
  const [saved] = await listTasks(store);
  assert.deepEqual(saved.steps[0].image, { width: 1280, height: 720, tokens: 1229 });
  assert.equal(shot.image.url, "data:image/jpeg;base64,QUJD");  // the live step keeps it
});
