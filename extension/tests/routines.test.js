// Routines as the panel and the worker handle them: a run's parameters from its form
// (a secret always given, never kept), the renames of a save, the runs kept and their
// words, a run the browser's closing cut short, the tab a run opens, and the one step
// the model is handed with the page's words in their block.
import { test } from "node:test";
import assert from "node:assert/strict";

import {
  KEEP_RUNS, RESULT_LIMIT, RUNNING_KEY, describeRun, durationWords, endRunning, formFields,
  healTask, listRuns, markRunning, openRunTab, paramsFrom, renameFrom, routineName, runRecord,
  runTitle, runsOf, saveRuns, scheduleParams, takeUnfinished,
} from "../shared/routines.js";

const ROUTINE = {
  name: "Order headlamps", task: "Order 2 headlamps for Ada", start: "https://shop.example/",
  steps: 7, plan: [],
  parameters: [
    { name: "quantity", kind: "text", default: "2", about: "the spinbutton 'Quantity'" },
    { name: "note", kind: "text", default: null, about: "" },
    { name: "account_password", kind: "secret", default: null, about: "the textbox 'Password'" },
  ],
};

function memory() {
  const items = {};
  return { items, get: async (k) => (k in items ? { [k]: structuredClone(items[k]) } : {}),
    set: async (p) => { Object.assign(items, structuredClone(p)); } };
}

test("a routine's name comes from the task's words, on one line and cut", () => {
  assert.equal(routineName("  Order 2\nheadlamps  "), "Order 2 headlamps");
  const long = routineName("x".repeat(80));
  assert.equal(long.length, 60);
  assert.ok(long.endsWith("…"));
  assert.equal(runTitle("Order headlamps"), "Routine: Order headlamps");
});

test("the run form has a field per parameter; a secret is a password field that starts empty", () => {
  assert.deepEqual(formFields(ROUTINE), [
    { name: "quantity", secret: false, value: "2", required: false,
      about: "the spinbutton 'Quantity'" },
    { name: "note", secret: false, value: "", required: true, about: "" },
    { name: "account_password", secret: true, value: "", required: true,
      about: "the textbox 'Password'" },
  ]);
});

test("a run's parameters: a default left as it is stays out, a secret and a text without default are needed", () => {
  assert.deepEqual(paramsFrom(ROUTINE, { quantity: "2", note: "", account_password: "" }),
    { params: {}, missing: ["note", "account_password"] });
  assert.deepEqual(paramsFrom(ROUTINE, { quantity: "3", note: "gift", account_password: "pw" }),
    { params: { quantity: "3", note: "gift", account_password: "pw" }, missing: [] });
  assert.deepEqual(paramsFrom(ROUTINE, { quantity: "", note: "x", account_password: "pw" }),
    { params: { note: "x", account_password: "pw" }, missing: [] });
});

test("a routine that takes a secret cannot run by itself; one without keeps its texts", () => {
  assert.match(scheduleParams(ROUTINE, {}).problem,
    /“account_password” is a secret, asked at each run and never kept/);
  const plain = { ...ROUTINE, parameters: ROUTINE.parameters.slice(0, 2) };
  assert.deepEqual(scheduleParams(plain, { quantity: "4", note: "x" }),
    { params: { quantity: "4", note: "x" }, problem: "" });
  assert.equal(scheduleParams(plain, { quantity: "4", note: "" }).problem, "Fill in note first");
});

test("renames leave out blank and unchanged names, and refuse two parameters of one name", () => {
  assert.deepEqual(renameFrom(ROUTINE.parameters, { quantity: " count ", note: "",
    account_password: "account_password" }), { rename: { quantity: "count" }, problem: "" });
  assert.deepEqual(renameFrom(ROUTINE.parameters, { quantity: "note" }),
    { rename: {}, problem: "Two parameters would be called “note”" });
});

test("a run's record says its outcome from the host's status, or from the error", () => {
  const base = { id: "r1", routine: "Order headlamps", started: 1000, ended: 5000 };
  const done = runRecord({ ...base, reply: { status: "done", steps: 7, done: 7, at: null,
    why: "", plan: [], results: ["x".repeat(RESULT_LIMIT + 5)], content: "" } });
  assert.equal(done.outcome, "done");
  assert.equal(done.results[0].length, RESULT_LIMIT + "\n… (cut in the history)".length);
  const help = runRecord({ ...base, reply: { status: "needs_help", steps: 7, done: 5, at: 6,
    why: "no button", plan: [], results: [], content: "" } });
  assert.deepEqual([help.outcome, help.at, help.why], ["needs help", 6, "no button"]);
  assert.equal(runRecord({ ...base, error: { code: "cancelled", message: "x" } }).outcome,
    "stopped");
  const failed = runRecord({ ...base, error: { code: "bad_request", message: "no routine" } });
  assert.deepEqual([failed.outcome, failed.why, failed.steps], ["failed", "no routine", 0]);
});

test("a run in words: outcome, steps, when, how long, what the model cost", () => {
  const started = new Date(2026, 11, 2, 9, 5).getTime();
  const record = runRecord({ id: "r", routine: "R", started, ended: started + 125_000,
    reply: { status: "done", steps: 7, done: 7, at: null, why: "", plan: [], results: [],
      content: "" }, healed: 1, scheduled: true,
    totals: { input: 100, cacheRead: 1000, cacheWrite: 50, output: 10, calls: 2, images: 0,
      imageTokens: 0 } });
  assert.equal(describeRun(record), "done · 7 of 7 steps · 2026-12-02 09:05 · 2 min 5 s · "
    + "1,160 model tokens · 1 step done by the model · scheduled");
  assert.equal(describeRun({ ...record, totals: null, healed: 0, scheduled: false,
    outcome: "needs help" }), "needs help · 7 of 7 steps · 2026-12-02 09:05 · 2 min 5 s · no model");
  assert.equal(describeRun({ ...record, cost: 0.0042 }).split(" · ")[4], "model cost 0.0042");
  assert.equal(durationWords(4_400), "4 s");
});

test("runs are kept newest first, at most KEEP_RUNS, and read back per routine", async () => {
  const store = memory();
  for (let i = 0; i < KEEP_RUNS + 3; i++) {
    await saveRuns(store, [{ id: `r${i}`, routine: i % 2 ? "A" : "B", started: i }]);
  }
  const runs = await listRuns(store);
  assert.equal(runs.length, KEEP_RUNS);
  assert.equal(runs[0].id, `r${KEEP_RUNS + 2}`);
  assert.deepEqual(runsOf(runs, "A", 2).map((r) => r.id), [`r${KEEP_RUNS + 1}`,
    `r${KEEP_RUNS - 1}`]);
  await saveRuns(store, [{ id: `r${KEEP_RUNS + 2}`, routine: "B", started: 0, outcome: "x" }]);
  assert.equal((await listRuns(store)).filter((r) => r.id === `r${KEEP_RUNS + 2}`).length, 1);
});

test("a run still marked at the browser's start is kept as not finished", async () => {
  const store = memory();
  await markRunning(store, { id: "a", routine: "A", started: 10, scheduled: false });
  await markRunning(store, { id: "b", routine: "B", started: 20, scheduled: true });
  await endRunning(store, "a");
  const unfinished = await takeUnfinished(store, 99);
  assert.deepEqual(unfinished.map((r) => [r.id, r.outcome, r.scheduled, r.ended]),
    [["b", "not finished", true, 99]]);
  assert.deepEqual(store.items[RUNNING_KEY], {});
  assert.deepEqual((await listRuns(store)).map((r) => r.id), ["b"]);
  assert.deepEqual(await takeUnfinished(store, 100), []);
});

test("a run's tab opens on its start page, waits for the load, joins a group named for it", async () => {
  const calls = [];
  let polls = 0;
  const tabs = {
    create: async (props) => { calls.push(["create", props]); return { id: 5, status: "loading" }; },
    get: async (id) => ({ id, status: ++polls > 2 ? "complete" : "loading", title: "Shop",
      url: "https://shop.example/" }),
    group: async ({ tabIds }) => { calls.push(["group", tabIds]); return 9; },
  };
  const groups = { update: async (id, props) => { calls.push(["title", id, props.title]); } };
  const tab = await openRunTab({ tabs, groups, url: "", title: "Routine: R", active: false,
    sleep: async () => {} });
  assert.deepEqual(tab, { id: 5, title: "Shop", url: "https://shop.example/" });
  assert.deepEqual(calls, [["create", { url: "about:blank", active: false }], ["group", [5]],
    ["title", 9, "Routine: R"]]);
});

test("the model gets the one step, why and the plan inside the page-data block, no secret", () => {
  const reply = { status: "needs_help", steps: 7, done: 5, at: 6,
    why: "no the button 'Place order' on the page",
    plan: ["click the button 'Place order'", "expand; region = 'main'"], results: [],
    content: "" };
  const task = healTask("Order headlamps", reply, { quantity: "3" },
    (text) => `<<<PAGE DATA X>>>\n${text}\n<<<END PAGE DATA X>>>`);
  const [before, block] = task.split("<<<PAGE DATA X>>>");
  assert.match(before, /until step 6, which it could not do as recorded\. Do that one step/);
  assert.match(before, /Never type a password/);
  assert.doesNotMatch(before, /Place order|Order headlamps/);
  assert.match(block, /Step 6 of 7: click the button 'Place order'/);
  assert.match(block, /Why it could not be done as recorded: no the button/);
  assert.match(block, /7\. expand; region = 'main'/);
  assert.match(block, /quantity = 3/);
  assert.ok(block.trimEnd().endsWith("<<<END PAGE DATA X>>>"));
});
