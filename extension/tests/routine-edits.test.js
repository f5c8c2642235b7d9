// A routine changed by the person: a healed step in words before it is kept, the
// `routine_edit` request from the edit form (only what changed, a secret never given a
// default), and the service worker's schedule and runs following a rename.
import { test } from "node:test";
import assert from "node:assert/strict";

import { editRequest, followEdit, healWords } from "../shared/routine-edits.js";
import { RUNS_KEY } from "../shared/routines.js";
import { SCHEDULES_KEY, alarmName } from "../shared/schedule.js";
import { RoutineScheduler } from "../worker/routines.js";

const ROUTINE = {
  name: "Order headlamps", task: "", start: "https://shop.example/", steps: 7, plan: [],
  parameters: [
    { name: "quantity", kind: "text", default: "2", about: "the spinbutton 'Quantity'" },
    { name: "account_password", kind: "secret", default: null, about: "the password" },
  ],
};

test("a healed step says the step as recorded, the steps done instead and what it asks", () => {
  const heal = { id: 1, routine: "Order headlamps", at: 6,
    old: ["click the button 'Place order'"], new: ["click the button 'Buy now'"],
    parameters: [{ name: "pin", kind: "secret", default: null, about: "the PIN" }] };
  assert.deepEqual(healWords(heal), {
    was: "Step 6 as recorded: click the button 'Place order'",
    now: ["click the button 'Buy now'"], none: "",
    asks: ["Each run then asks for a new secret, “pin” (never kept)."],
  });
  const gone = healWords({ ...heal, old: ["click A", "click B"], new: [], parameters: [] });
  assert.equal(gone.was, "Steps 6–7 as recorded: click A; click B");
  assert.equal(gone.none, "Nothing: the step is no longer needed.");
});

test("after an edit a waiting heal reads as the host words it, else moves to the new name", () => {
  const step = { id: 4, session: "agent-1", routine: "Order", at: 3, parameters: [],
    old: ["type {quantity} into the textbox 'Qty'"], new: ["type {quantity} into 'Amount'"] };
  const unknown = { ...step, id: 5 };
  const problem = { problem: "the routine changed", at: 2, session: "agent-1" };
  const reply = { routine: { name: "Order lamps" }, heals: [{ ...step, routine: "Order lamps",
    old: ["type {count} into the textbox 'Qty'"], new: ["type {count} into 'Amount'"] }] };
  const [worded, moved, kept] = followEdit([step, unknown, problem], reply);
  assert.deepEqual(worded.new, ["type {count} into 'Amount'"]);
  assert.equal(worded.routine, "Order lamps");
  assert.deepEqual(moved, { ...unknown, routine: "Order lamps" });
  assert.equal(kept, problem);
  // An answer of an older host, without heals: each moves under the new name as it was.
  assert.deepEqual(followEdit([step], { routine: { name: "Order" } }), [step]);
});

test("the edit form sends only what changed, an empty default as none", () => {
  const same = editRequest(ROUTINE, { name: " Order  headlamps ", parameters: {} });
  assert.deepEqual(same, { fields: {}, problem: "" });
  const changed = editRequest(ROUTINE, { name: "Order lamps", parameters: {
    quantity: { name: "count", default: "", about: "how  many" },
    account_password: { name: "account_password", default: "x", about: "the password" },
  } });
  assert.deepEqual(changed, { problem: "", fields: { new_name: "Order lamps", parameters: {
    quantity: { name: "count", default: null, about: "how many" } } } });
});

test("a blank name and two parameters of one name are said before anything is sent", () => {
  assert.equal(editRequest(ROUTINE, { name: " ", parameters: {} }).problem,
    "Give the routine a name");
  assert.equal(editRequest(ROUTINE, { name: "R", parameters: {
    quantity: { name: "", about: "" } } }).problem, "Give the parameter “quantity” a name");
  assert.equal(editRequest(ROUTINE, { name: "R", parameters: {
    quantity: { name: "account_password", about: "" } } }).problem,
  "Two parameters would be called “account_password”");
});

test("a renamed routine's schedule runs it by its new names and its runs go with it", async () => {
  const items = { [SCHEDULES_KEY]: { "Order headlamps": { routine: "Order headlamps",
    rule: { every: "day", time: "07:30" }, params: { quantity: "3" }, since: 0, next: 1 } },
  [RUNS_KEY]: [{ id: "a", routine: "Order headlamps" }, { id: "b", routine: "Other" }] };
  const alarms = { [alarmName("Order headlamps")]: 1 };
  const scheduler = new RoutineScheduler({
    host: { request: async () => ({}) },
    storage: { get: async (key) => (key in items ? { [key]: structuredClone(items[key]) } : {}),
      set: async (patch) => { Object.assign(items, structuredClone(patch)); } },
    alarms: { create: async (name, info) => { alarms[name] = info.when; },
      clear: async (name) => { delete alarms[name]; }, get: async () => undefined },
    tabs: {}, groups: {}, notify: () => {}, now: () => new Date("2026-12-02T10:00").getTime(),
  });
  const { schedules } = await scheduler.op({ action: "rename", routine: "Order headlamps",
    name: "Order lamps", params: { quantity: "count" } });
  assert.deepEqual(Object.keys(schedules), ["Order lamps"]);
  assert.deepEqual([schedules["Order lamps"].routine, schedules["Order lamps"].params],
    ["Order lamps", { count: "3" }]);
  assert.deepEqual(Object.keys(alarms), [alarmName("Order lamps")]);
  assert.deepEqual(items[RUNS_KEY].map((r) => r.routine), ["Order lamps", "Other"]);
});
