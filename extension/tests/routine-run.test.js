// A routine run (from the side panel here; by its schedule in routine-scheduler.test.js),
// with a fake host, fake chrome APIs and a scripted model: the step the run could not do goes to the model in the run's own session and
// tab (its tokens the run's), then the run goes on from the next step; with "ask me",
// with no model, or past the model's turns, the run stops at that step for the person.
import { test } from "node:test";
import assert from "node:assert/strict";

import { runRoutine } from "../agent/routine-run.js";
import { MAX_HEAL_TURNS, RUNNING_KEY } from "../shared/routines.js";

const items = {};
/** chrome's storage.local, tabs and tabGroups, as the run gets them. */
const CHROME = {
  storage: {
    get: async (key) => (key in items ? { [key]: structuredClone(items[key]) } : {}),
    set: async (patch) => { Object.assign(items, structuredClone(patch)); },
  },
  tabs: {
    create: async (props) => ({ id: 11, status: "complete", url: props.url, title: "Shop" }),
    get: async (id) => ({ id, status: "complete", title: "Shop", url: "https://shop.example/" }),
    group: async () => 2,
  },
  groups: { update: async () => {} },
};

const ROUTINE = { name: "Order headlamps", task: "", start: "https://shop.example/", steps: 6,
  plan: [], parameters: [] };
const TOOLS = ["find", "click"].map((name) => ({ name, description: name,
  input_schema: { type: "object" } }));
const USAGE = { input: 10, cacheRead: 0, cacheWrite: 0, output: 2 };

/** The host: `routine_run` answers from `runs` in turn; the model's calls answered. */
function fakeHost(runs) {
  const requests = [];
  return { requests, host: async (request) => {
    requests.push(request);
    if (request.type === "routine_run") return runs.shift();
    if (request.type === "tools") return { tools: TOOLS, format: "format" };
    if (request.type === "tab_shown") return { title: request.title, url: request.url };
    return { kind: "diff", content: "<clicked/>", tab: request.tab };
  } };
}

/** A model that makes `calls` tool calls, one per turn, then answers. */
function model(calls = 1) {
  const sent = [];
  return { sent, send: async (request) => {
    sent.push(request);
    const toolCalls = sent.length <= calls
      ? [{ id: `c${sent.length}`, name: "click", args: { id: "b1" } }] : [];
    return { assistant: { role: "assistant", text: "", toolCalls, raw: {} },
      text: "Pressed it.", toolCalls, usage: USAGE };
  } };
}

const HELP = { status: "needs_help", steps: 6, done: 4, at: 5, why: "no the button 'Place order'",
  plan: ["click the button 'Place order'", "expand; region = 'main'"], results: [], content: "" };
const DONE = { status: "done", steps: 6, done: 1, at: null, why: "", plan: [],
  results: ["Total: $48.00"], content: "" };

async function run({ runs, heal = "model", settings = { apiKey: "k" }, client = model(),
  going = null, signal = new AbortController().signal }) {
  items.settings = settings;
  const worker = fakeHost(runs);
  const steps = [];
  const ran = await runRoutine({ worker, routine: ROUTINE, params: { account_password: "pw" },
    texts: { quantity: "3" }, heal, going, signal, ...CHROME, onStep: (s) => steps.push(s),
    makeClient: () => client });
  return { ...ran, requests: worker.requests, steps, client };
}

const HEALED = { id: 3, routine: "Order headlamps", at: 5, old: ["click the button 'Place order'"],
  new: ["click the button 'Buy now'"], parameters: [] };

test("the model does the one step in the run's session and tab, and the run goes on", async () => {
  const { record, going, requests, client, heals } = await run({
    runs: [HELP, { ...DONE, healed: HEALED, heal_problem: "" }] });
  const runs = requests.filter((r) => r.type === "routine_run");
  assert.deepEqual(runs.map((r) => [r.start_at, r.tab, r.params]),
    [[1, 11, { account_password: "pw" }], [6, 11, { account_password: "pw" }]]);
  assert.equal(runs[0].session, runs[1].session);
  const click = requests.find((r) => r.type === "tool");
  assert.deepEqual([click.session, click.tab, click.name], [runs[0].session, 11, "click"]);
  // The model saw the run's texts, never its secret.
  const told = JSON.stringify(client.sent[0].history);
  assert.match(told, /quantity = 3/);
  assert.doesNotMatch(told, /pw/);
  assert.deepEqual([record.outcome, record.done, record.steps, record.healed, record.totals.calls],
    ["done", 6, 6, 1, 2]);
  assert.deepEqual(record.results, ["Total: $48.00"]);
  assert.equal(going, null);
  assert.deepEqual(items[RUNNING_KEY], {});
  // What the model did, as the host would keep it: the person's to keep or not.
  assert.deepEqual(heals, [{ ...HEALED, session: runs[0].session }]);
});

test("a step the model did last answers for the run; a run past it asks for the heal", async () => {
  const last = { ...HELP, done: 5, at: 6, plan: ["expand; region = 'main'"] };
  const past = { ...DONE, done: 0, results: [], healed: { ...HEALED, at: 6 } };
  const { record, requests, heals } = await run({ runs: [last, past] });
  assert.deepEqual(requests.filter((r) => r.type === "routine_run").map((r) => r.start_at),
    [1, 7]);
  assert.deepEqual([record.outcome, record.done, record.results], ["done", 6, ["Pressed it."]]);
  assert.deepEqual(heals.map((h) => h.at), [6]);
});

test("a step the person did is not offered, and a heal that cannot be kept says why", async () => {
  const mine = await run({ runs: [{ ...DONE, healed: HEALED }],
    going: { session: "s", tab: 11, at: 6 } });
  assert.deepEqual(mine.heals, []);
  const code = await run({ runs: [HELP, { ...DONE, healed: null,
    heal_problem: "what was done for step 5: the heal of step 5 used evaluate" }] });
  assert.deepEqual(code.heals.map((h) => [h.at, h.problem]),
    [[5, "what was done for step 5: the heal of step 5 used evaluate"]]);
});

test("with “ask me”, the run stops before the step and says how to go on", async () => {
  const client = model();
  const { record, going } = await run({ runs: [HELP], heal: "ask", client });
  assert.equal(client.sent.length, 0);
  assert.deepEqual([record.outcome, record.at, record.healed], ["needs help", 5, 0]);
  assert.deepEqual({ ...going, session: "s" },
    { session: "s", tab: 11, at: 5, step: "click the button 'Place order'" });
  // Going on after the person did step 5: the same session and tab, from step 6.
  const rest = await run({ runs: [DONE], going: { ...going, at: 6 } });
  const again = rest.requests.find((r) => r.type === "routine_run");
  assert.deepEqual([again.session, again.tab, again.start_at], [going.session, 11, 6]);
  assert.equal(rest.record.outcome, "done");
});

test("with no model set up, the run stops at the step and says why", async () => {
  const { record } = await run({ runs: [HELP], settings: { apiKey: "" } });
  assert.equal(record.outcome, "needs help");
  assert.match(record.why, /no model is set up \(Settings\) to do it$/);
});

test("a model that does not finish within the run's turns leaves the step to the person", async () => {
  const client = model(1000);
  const { record, going } = await run({ runs: [HELP], client });
  assert.equal(client.sent.length, MAX_HEAL_TURNS);
  assert.equal(record.outcome, "needs help");
  assert.match(record.why, /the model could not do it: the task took more than 10 model turns/);
  assert.equal(going.at, 5);
});

test("a host that refuses the run, and Stop, are kept as failed and stopped", async () => {
  items.settings = { apiKey: "k" };
  const refusing = { host: async () => {
    throw Object.assign(new Error("there is no routine 'X'"), { code: "bad_request" });
  } };
  const failed = await runRoutine({ worker: refusing, routine: ROUTINE, params: {}, texts: {},
    heal: "model", signal: new AbortController().signal, ...CHROME });
  assert.deepEqual([failed.record.outcome, failed.record.why],
    ["failed", "there is no routine 'X'"]);
  const controller = new AbortController();
  const sent = [];
  const stopping = { host: async (request) => {
    sent.push(request.type);
    if (request.type !== "routine_run") return {};
    controller.abort();
    throw Object.assign(new Error("cancelled"), { code: "cancelled" });
  } };
  const stopped = await runRoutine({ worker: stopping, routine: ROUTINE, params: {}, texts: {},
    heal: "model", signal: controller.signal, ...CHROME });
  assert.equal(stopped.record.outcome, "stopped");
  assert.deepEqual(sent, ["routine_run", "task_stop"]);
});
