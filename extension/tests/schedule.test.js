// A routine's schedule with a fake clock: the next time a rule fires, across a change of
// daylight saving time, and what a late alarm runs and reports as missed.
import { test } from "node:test";
import assert from "node:assert/strict";

import {
  alarmName, armTime, checkRule, describeRule, dueTimes, nextFire, routineOfAlarm, timeWords,
  whenAlarm,
} from "../shared/schedule.js";

// A zone with daylight saving time (Berlin: 2026-03-29 02:00 → 03:00), whatever the
// machine's: every time below is local time there.
process.env.TZ = "Europe/Berlin";
const at = (text) => new Date(text).getTime(); // "2026-12-02T09:00" is local time
const HOUR = 60 * 60 * 1000;

test("a rule is checked field by field, the bad value named", () => {
  assert.deepEqual(checkRule({ every: "day", time: "09:30", extra: 1 }),
    { every: "day", time: "09:30" });
  assert.deepEqual(checkRule({ every: "week", day: 1, time: "07:05" }),
    { every: "week", day: 1, time: "07:05" });
  assert.deepEqual(checkRule({ every: "once", at: "2026-12-24T18:00" }),
    { every: "once", at: "2026-12-24T18:00" });
  assert.throws(() => checkRule({ every: "hour", time: "09:00" }), /not "hour"/);
  assert.throws(() => checkRule({ every: "day", time: "9:00" }), /"9:00" is not HH:MM/);
  assert.throws(() => checkRule({ every: "day", time: "24:00" }), /"24:00" is not HH:MM/);
  assert.throws(() => checkRule({ every: "week", day: 7, time: "09:00" }), /day 7 is not/);
  assert.throws(() => checkRule({ every: "once", at: "2026-02-30T09:00" }),
    /"2026-02-30T09:00" is not YYYY-MM-DDTHH:MM/);
  assert.throws(() => checkRule(null), /not undefined/);
});

test("a daily rule fires later today, else tomorrow, at the same local time across DST", () => {
  const rule = { every: "day", time: "09:00" };
  assert.equal(nextFire(rule, at("2026-12-02T08:59")), at("2026-12-02T09:00"));
  assert.equal(nextFire(rule, at("2026-12-02T09:00")), at("2026-12-03T09:00"));
  // The night the clocks go forward is an hour short: still 09:00 on the clock.
  const before = at("2026-03-28T09:00");
  const after = nextFire(rule, before);
  assert.equal(after, at("2026-03-29T09:00"));
  assert.equal(after - before, 23 * HOUR);
  assert.equal(timeWords(after), "2026-03-29 09:00");
});

test("a weekly rule fires on its weekday; a once-rule once, then never", () => {
  const monday = { every: "week", day: 1, time: "07:30" };
  // 2026-12-02 is a Wednesday.
  assert.equal(nextFire(monday, at("2026-12-02T12:00")), at("2026-12-07T07:30"));
  assert.equal(nextFire(monday, at("2026-12-07T07:29")), at("2026-12-07T07:30"));
  assert.equal(nextFire(monday, at("2026-12-07T07:30")), at("2026-12-14T07:30"));
  const once = { every: "once", at: "2026-12-24T18:00" };
  assert.equal(nextFire(once, at("2026-12-01T00:00")), at("2026-12-24T18:00"));
  assert.equal(nextFire(once, at("2026-12-24T18:00")), null);
});

test("the due times in a span are each time the rule fired, oldest first", () => {
  const rule = { every: "day", time: "09:00" };
  assert.deepEqual(dueTimes(rule, at("2026-12-01T10:00"), at("2026-12-04T09:00")),
    [at("2026-12-02T09:00"), at("2026-12-03T09:00"), at("2026-12-04T09:00")]);
  assert.deepEqual(dueTimes(rule, at("2026-12-01T10:00"), at("2026-12-02T08:00")), []);
  // Months closed: only the latest 100 are counted.
  const many = dueTimes(rule, at("2025-01-01T10:00"), at("2026-12-04T10:00"));
  assert.equal(many.length, 100);
  assert.equal(many[99], at("2026-12-04T09:00"));
});

test("an alarm on time runs that time and sets the next", () => {
  const rule = { every: "day", time: "09:00" };
  const fired = whenAlarm(rule, at("2026-12-01T09:00"), at("2026-12-02T09:00") + 1500);
  assert.deepEqual(fired, { run: at("2026-12-02T09:00"), missed: [],
    next: at("2026-12-03T09:00") });
});

test("a late alarm runs the latest time once and reports the earlier ones as missed", () => {
  const rule = { every: "day", time: "09:00" };
  // Closed from Tuesday evening to Friday 10:00: Wednesday's and Thursday's runs were
  // missed, Friday's runs an hour late.
  const late = whenAlarm(rule, at("2026-12-01T20:00"), at("2026-12-04T10:00"));
  assert.deepEqual(late, {
    run: at("2026-12-04T09:00"),
    missed: [at("2026-12-02T09:00"), at("2026-12-03T09:00")],
    next: at("2026-12-05T09:00"),
  });
});

test("a time more than half a period late is missed, not run: the next one is near", () => {
  const daily = { every: "day", time: "09:00" };
  const tooLate = whenAlarm(daily, at("2026-12-01T20:00"), at("2026-12-02T22:00"));
  assert.deepEqual(tooLate, { run: null, missed: [at("2026-12-02T09:00")],
    next: at("2026-12-03T09:00") });
  const weekly = { every: "week", day: 1, time: "09:00" };
  assert.equal(whenAlarm(weekly, at("2026-12-06T00:00"), at("2026-12-10T08:00")).run,
    at("2026-12-07T09:00"));
  assert.equal(whenAlarm(weekly, at("2026-12-06T00:00"), at("2026-12-11T08:00")).run, null);
  // A once-rule runs however late, and is spent after.
  const once = { every: "once", at: "2026-12-02T09:00" };
  assert.deepEqual(whenAlarm(once, at("2026-12-01T00:00"), at("2026-12-09T09:00")),
    { run: at("2026-12-02T09:00"), missed: [], next: null });
});

test("an alarm is set for the next time, or at once when that time has passed", () => {
  const rule = { every: "day", time: "09:00" };
  assert.equal(armTime(rule, at("2026-12-02T10:00"), at("2026-12-02T10:00")),
    at("2026-12-03T09:00"));
  const now = at("2026-12-05T12:00");
  assert.equal(armTime(rule, at("2026-12-02T10:00"), now), now);
  assert.equal(armTime({ every: "once", at: "2026-12-02T09:00" }, at("2026-12-02T09:00"), now),
    null);
});

test("a rule in words, and a routine's alarm by name", () => {
  assert.equal(describeRule({ every: "day", time: "09:00" }), "daily at 09:00");
  assert.equal(describeRule({ every: "week", day: 1, time: "07:30" }),
    "weekly on Monday at 07:30");
  assert.equal(describeRule({ every: "once", at: "2026-12-24T18:00" }),
    "once on 2026-12-24 at 18:00");
  assert.equal(routineOfAlarm(alarmName("Order: headlamps")), "Order: headlamps");
  assert.equal(routineOfAlarm("something-else"), null);
});

test("the schedule form's controls make a rule, and its summary says it and the next time", async () => {
  const { ruleFrom, scheduleWords } = await import("../panel/schedule-form.js");
  assert.equal(ruleFrom({ every: "", day: "1", time: "09:00", date: "" }), null);
  assert.deepEqual(ruleFrom({ every: "day", day: "1", time: "09:00", date: "" }),
    { every: "day", time: "09:00" });
  assert.deepEqual(ruleFrom({ every: "week", day: "1", time: "09:00", date: "" }),
    { every: "week", day: 1, time: "09:00" });
  assert.deepEqual(ruleFrom({ every: "once", day: "1", time: "18:00", date: "2026-12-24" }),
    { every: "once", at: "2026-12-24T18:00" });
  assert.equal(scheduleWords(undefined), "Schedule: off");
  assert.equal(scheduleWords({ routine: "R", rule: { every: "day", time: "09:00" }, params: {},
    since: 0, next: at("2026-12-03T09:00") }), "Schedule: daily at 09:00 · next 2026-12-03 09:00");
});
