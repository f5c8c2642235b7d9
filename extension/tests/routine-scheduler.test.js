// The service worker's scheduled runs with fake chrome APIs and a fake clock: a schedule
// sets its alarm; the alarm runs the routine in a background tab of its own, grouped,
// through the host, always asking, a step it cannot do handed to the model; the run goes
// into the history with a notification; late alarms note what was missed; the next start
// reports a run the browser cut short.
import { test } from "node:test";
import assert from "node:assert/strict";

import {
  HEALS_KEY, RUNNING_KEY, listHeals, listRuns, markRunning, setHeals,
} from "../shared/routines.js";
import { SCHEDULES_KEY, alarmName } from "../shared/schedule.js";
import { RoutineScheduler } from "../worker/routines.js";

process.env.TZ = "Europe/Berlin";
const at = (text) => new Date(text).getTime();

const ROUTINE = { name: "Order headlamps", task: "Order 2 headlamps", start:
  "http://127.0.0.1:8000/routines/shop.html", steps: 7, plan: [],
  parameters: [{ name: "quantity", kind: "text", default: "2", about: "" }] };

function fakes({ now, reply = { status: "done", steps: 7, done: 7, at: null, why: "",
  plan: [], results: ["Total: $48.00"], content: "" }, settings = undefined,
  makeClient = undefined } = {}) {
  const items = settings ? { settings } : {};
  const clock = { now };
  const log = { requests: [], created: [], grouped: [], titles: [], removed: [], alarms: {},
    notes: [], sets: [] };
  const scheduler = new RoutineScheduler({
    host: { request: async (request, options) => {
      log.requests.push({ request, options });
      if (request.type === "routines") return { routines: [ROUTINE], problems: [] };
      if (reply instanceof Error) throw reply;
      return typeof reply === "function" ? reply(request) : reply;
    } },
    storage: {
      get: async (key) => (key in items ? { [key]: structuredClone(items[key]) } : {}),
      set: async (patch) => {
        log.sets.push(...Object.keys(patch));
        Object.assign(items, structuredClone(patch));
      },
    },
    alarms: {
      create: async (name, info) => { log.alarms[name] = info.when; },
      clear: async (name) => { delete log.alarms[name]; },
      get: async (name) => (name in log.alarms ? { name, scheduledTime: log.alarms[name] }
        : undefined),
    },
    tabs: {
      create: async (props) => { log.created.push(props); return { id: 40, status: "loading" }; },
      get: async (id) => ({ id, status: "complete", title: "Trail shop", url: ROUTINE.start }),
      group: async ({ tabIds }) => { log.grouped.push(tabIds); return 3; },
      remove: async (id) => { log.removed.push(id); },
    },
    groups: { update: async (group, { title }) => { log.titles.push([group, title]); } },
    notify: (id, title, message) => log.notes.push({ id, title, message }),
    now: () => clock.now,
    makeId: (() => { let n = 0; return () => String(++n); })(),
    sleep: async () => {},
    makeClient,
  });
  return { scheduler, items, clock, log };
}

test("a schedule sets its alarm for the next time; clearing it takes the alarm away", async () => {
  const { scheduler, items, log } = fakes({ now: at("2026-12-02T10:00") });
  const { schedules } = await scheduler.op({ action: "set", routine: "Order headlamps",
    rule: { every: "day", time: "09:00" }, params: { quantity: "3" } });
  assert.deepEqual(schedules["Order headlamps"].params, { quantity: "3" });
  assert.equal(log.alarms[alarmName("Order headlamps")], at("2026-12-03T09:00"));
  assert.equal(items[SCHEDULES_KEY]["Order headlamps"].next, at("2026-12-03T09:00"));
  await assert.rejects(scheduler.op({ action: "set", routine: "Order headlamps",
    rule: { every: "once", at: "2026-12-01T09:00" } }), /in the past/);
  await assert.rejects(scheduler.op({ action: "set", routine: "Order headlamps",
    rule: { every: "day", time: "9" } }), /is not HH:MM/);
  await scheduler.op({ action: "clear", routine: "Order headlamps" });
  assert.deepEqual(log.alarms, {});
  assert.deepEqual((await scheduler.op({ action: "list" })).schedules, {});
});

test("an alarm runs the routine in a background tab of its own, grouped, always asking", async () => {
  const { scheduler, items, clock, log } = fakes({ now: at("2026-12-02T10:00") });
  await scheduler.op({ action: "set", routine: "Order headlamps",
    rule: { every: "day", time: "09:00" }, params: { quantity: "3" } });
  clock.now = at("2026-12-03T09:00") + 2000;
  const record = await scheduler.onAlarm({ name: alarmName("Order headlamps") });
  assert.deepEqual(log.created, [{ url: ROUTINE.start, active: false }]);
  assert.deepEqual(log.grouped, [[40]]);
  assert.deepEqual(log.titles, [[3, "Routine: Order headlamps"]]);
  const run = log.requests.find((r) => r.request.type === "routine_run");
  assert.match(run.request.session, /^agent-routine-/);
  assert.deepEqual(run.request, { type: "routine_run", session: run.request.session, tab: 40,
    name: "Order headlamps", params: { quantity: "3" }, ask_before_submit: true,
    task: "Routine: Order headlamps", start_at: 1 });
  assert.ok(run.options.timeoutMs >= 10 * 60_000);
  assert.equal(record.outcome, "done");
  assert.deepEqual(log.removed, [40]); // nothing to look at after a run that went well
  assert.deepEqual((await listRuns({ get: async (k) => ({ [k]: items[k] }) }))
    .map((r) => [r.outcome, r.scheduled, r.results[0]]), [["done", true, "Total: $48.00"]]);
  assert.deepEqual(items[RUNNING_KEY], {});
  assert.equal(log.notes.length, 1);
  assert.equal(log.notes[0].title, "Routine “Order headlamps”: done");
  assert.match(log.notes[0].message, /^done · 7 of 7 steps · 2026-12-03 09:00/);
  // The next alarm is tomorrow's.
  assert.equal(log.alarms[alarmName("Order headlamps")], at("2026-12-04T09:00"));
});

test("a run the person said no to keeps its tab and says where it stopped", async () => {
  const reply = { status: "refused", steps: 7, done: 5, at: 6, why: "the person said no",
    plan: [], results: [], content: "" };
  const { scheduler, clock, log } = fakes({ now: at("2026-12-02T10:00"), reply });
  await scheduler.op({ action: "set", routine: "Order headlamps",
    rule: { every: "once", at: "2026-12-02T11:00" }, params: {} });
  clock.now = at("2026-12-02T11:00");
  const record = await scheduler.onAlarm({ name: alarmName("Order headlamps") });
  assert.equal(record.outcome, "refused");
  assert.equal(record.at, 6);
  assert.deepEqual(log.removed, []);
  assert.match(log.notes[0].message, /the person said no/);
  // A once-rule is spent: no schedule, no alarm.
  assert.deepEqual((await scheduler.op({ action: "list" })).schedules, {});
  assert.deepEqual(log.alarms, {});
});

test("a step a scheduled run cannot do goes to the model of the settings, then the run goes on",
  async () => {
    const help = { status: "needs_help", steps: 7, done: 3, at: 4, why: "no the button 'Buy'",
      plan: ["click the button 'Buy'"], results: [], content: "" };
    const healed = { id: 2, routine: "Order headlamps", at: 4, old: ["click the button 'Buy'"],
      new: ["click the button 'Buy now'"], parameters: [] };
    const done = { status: "done", steps: 7, done: 3, at: null, why: "", plan: [],
      results: ["Total: $48.00"], content: "", healed, heal_problem: "" };
    const runs = [help, done];
    const sent = [];
    const usage = { input: 10, cacheRead: 0, cacheWrite: 0, output: 2 };
    const client = { send: async (request) => {
      sent.push(request);
      const toolCalls = sent.length === 1
        ? [{ id: "c1", name: "click", args: { id: "b1" } }] : [];
      return { assistant: { role: "assistant", text: "", toolCalls, raw: {} },
        text: "Pressed Buy now.", toolCalls, usage };
    } };
    const { scheduler, items, log } = fakes({
      now: at("2026-12-02T10:00"),
      // The person turned "ask before a submit" off: a scheduled run asks all the same.
      settings: { apiKey: "k", askBeforeSubmit: false },
      makeClient: () => client,
      reply: (request) => {
        if (request.type === "routine_run") return runs.shift();
        if (request.type === "tools") {
          return { tools: [{ name: "click", description: "click",
            input_schema: { type: "object" } }], format: "format" };
        }
        if (request.type === "tab_shown") return { title: request.title, url: request.url };
        return { kind: "diff", content: "<clicked/>", tab: request.tab };
      },
    });
    const record = await scheduler.runNow("Order headlamps", { quantity: "3" });
    const calls = log.requests.map((r) => r.request);
    const steps = calls.filter((r) => r.type === "routine_run");
    assert.deepEqual(steps.map((r) => [r.start_at, r.tab, r.ask_before_submit]),
      [[1, 40, true], [5, 40, true]]);
    const click = calls.find((r) => r.type === "tool");
    assert.deepEqual([click.session, click.tab, click.name], [steps[0].session, 40, "click"]);
    assert.match(JSON.stringify(sent[0].history), /quantity = 3/);
    assert.deepEqual([record.outcome, record.healed, record.scheduled, record.totals.calls],
      ["done", 1, true, 2]);
    assert.deepEqual(log.created, [{ url: ROUTINE.start, active: false }]);
    assert.deepEqual(log.removed, [40]);
    // What the model did waits in the Routines view for the person to keep or not.
    assert.deepEqual(await listHeals(scheduler.storage),
      { "Order headlamps": [{ ...healed, session: steps[0].session }] });
    assert.match(log.notes[0].message, /Keep the model's step in the routine, or not/);
    await setHeals(scheduler.storage, "Order headlamps", []);
    assert.deepEqual(items[HEALS_KEY], {});
  });

test("with no model set up, a scheduled run stops at the step it cannot do and keeps its tab",
  async () => {
    const help = { status: "needs_help", steps: 7, done: 3, at: 4, why: "no the button 'Buy'",
      plan: ["click the button 'Buy'"], results: [], content: "" };
    const { scheduler, log } = fakes({ now: at("2026-12-02T10:00"), reply: help });
    const record = await scheduler.runNow("Order headlamps", {});
    assert.deepEqual([record.outcome, record.at], ["needs help", 4]);
    assert.match(record.why, /no model is set up/);
    assert.deepEqual(log.removed, []);
    assert.match(log.notes[0].message, /no model is set up/);
  });

test("a late alarm runs once and notes each time missed while the browser was closed", async () => {
  const { scheduler, items, clock } = fakes({ now: at("2026-12-01T20:00") });
  await scheduler.op({ action: "set", routine: "Order headlamps",
    rule: { every: "day", time: "09:00" }, params: {} });
  clock.now = at("2026-12-04T10:00");
  await scheduler.onAlarm({ name: alarmName("Order headlamps") });
  const runs = items.routineRuns.map((r) => [r.outcome, new Date(r.started).getDate()]);
  assert.deepEqual(runs, [["done", 4], ["missed", 3], ["missed", 2]]);
});

test("a host that fails the run is a failed run, said in the notification", async () => {
  const down = Object.assign(new Error("the Trimtab host is not reachable"),
    { code: "host_unavailable" });
  const { scheduler, log } = fakes({ now: at("2026-12-02T10:00"), reply: down });
  const record = await scheduler.runNow("Order headlamps", {});
  assert.equal(record.outcome, "failed");
  assert.match(log.notes[0].message, /not reachable/);
});

test("the next start reports a run the browser's closing cut short, and sets lost alarms", async () => {
  const { scheduler, items, log } = fakes({ now: at("2026-12-02T10:00") });
  await scheduler.op({ action: "set", routine: "Order headlamps",
    rule: { every: "day", time: "09:00" }, params: {} });
  const storage = { get: async (k) => ({ [k]: items[k] }),
    set: async (p) => Object.assign(items, p) };
  await markRunning(storage, { id: "sched-9", routine: "Order headlamps",
    started: at("2026-12-02T09:00"), scheduled: true });
  delete log.alarms[alarmName("Order headlamps")]; // Chrome restarted without it
  await scheduler.onStartup();
  assert.deepEqual(items.routineRuns.map((r) => [r.id, r.outcome, r.why]),
    [["sched-9", "not finished", "the browser closed before the run ended"]]);
  assert.deepEqual(items[RUNNING_KEY], {});
  assert.equal(log.notes[0].title, "Routine “Order headlamps” did not finish");
  assert.equal(log.alarms[alarmName("Order headlamps")], at("2026-12-03T09:00"));
});

test("two alarms of one schedule at once run its time once and note each miss once", async () => {
  const { scheduler, items, clock, log } = fakes({ now: at("2026-12-01T20:00") });
  await scheduler.op({ action: "set", routine: "Order headlamps",
    rule: { every: "day", time: "09:00" }, params: {} });
  clock.now = at("2026-12-03T10:00");
  const alarm = { name: alarmName("Order headlamps") };
  await Promise.all([scheduler.onAlarm(alarm), scheduler.restore(), scheduler.onAlarm(alarm)]);
  assert.deepEqual(items.routineRuns.map((r) => r.outcome), ["done", "missed"]);
  // Kept twice: the miss, then the run (never a second miss lost to the first).
  assert.equal(log.sets.filter((key) => key === "routineRuns").length, 2);
  assert.equal(log.requests.filter((r) => r.request.type === "routine_run").length, 1);
});
