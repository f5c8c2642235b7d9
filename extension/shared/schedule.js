// When a routine runs by itself: a rule (daily, weekly, or once at a time, in the
// browser's local time), the next time it fires, and what to do when an alarm comes
// late because the browser was closed at the time (one run for the latest time if it
// is not too late, the earlier times reported as missed). Pure: the clock is passed
// in, so `node --test` runs it with a fake one.

/** chrome.storage.local key of the schedules, by routine name. */
export const SCHEDULES_KEY = "routineSchedules";
/** The prefix of a routine's alarm name; the routine's name follows. */
export const ALARM_PREFIX = "routine:";
export const DAYS = Object.freeze(["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday",
  "Friday", "Saturday"]);

const DAY_MS = 24 * 60 * 60 * 1000;
/** How many past times one late alarm counts at most (a browser closed for months). */
export const MAX_DUE = 100;

/**
 * @typedef {{every: "day", time: string}
 *   | {every: "week", day: number, time: string}
 *   | {every: "once", at: string}} Rule
 *   `time` is "HH:MM", `day` 0 (Sunday) to 6, `at` "YYYY-MM-DDTHH:MM", all local time
 * @typedef {{routine: string, rule: Rule, params: Record<string, string>,
 *            since: number, next: number|null}} Schedule
 *   `since`: the time up to which every due time was handled (run or missed)
 */

/** The alarm of routine `name`. @param {string} name */
export function alarmName(name) {
  return `${ALARM_PREFIX}${name}`;
}

/** The routine an alarm is for, or null when it is not a routine's. @param {string} alarm */
export function routineOfAlarm(alarm) {
  return String(alarm).startsWith(ALARM_PREFIX) ? String(alarm).slice(ALARM_PREFIX.length)
    : null;
}

/** @param {unknown} raw @returns {[number, number] | null} hours and minutes */
function clock(raw) {
  const m = /^(\d{2}):(\d{2})$/.exec(String(raw));
  if (!m) return null;
  const [h, min] = [Number(m[1]), Number(m[2])];
  return h < 24 && min < 60 ? [h, min] : null;
}

/** @param {unknown} raw @returns {Date | null} the local date and time "YYYY-MM-DDTHH:MM" */
function localTime(raw) {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/.exec(String(raw));
  if (!m) return null;
  const [y, mo, d, h, min] = m.slice(1).map(Number);
  const date = new Date(y, mo - 1, d, h, min);
  // 2026-02-30 is not a day: Date would make it March 2.
  return date.getMonth() === mo - 1 && date.getDate() === d && h < 24 && min < 60
    ? date : null;
}

/**
 * The rule as kept, checked; an Error naming the field that is wrong.
 * @param {any} rule
 * @returns {Rule}
 */
export function checkRule(rule) {
  const every = rule?.every;
  if (every === "once") {
    if (!localTime(rule.at)) {
      throw new Error(`the schedule's date and time ${JSON.stringify(rule.at)} is not `
        + "YYYY-MM-DDTHH:MM");
    }
    return { every, at: rule.at };
  }
  if (every !== "day" && every !== "week") {
    throw new Error(`a schedule runs every "day", every "week" or "once", not `
      + `${JSON.stringify(every)}`);
  }
  if (!clock(rule.time)) {
    throw new Error(`the schedule's time ${JSON.stringify(rule.time)} is not HH:MM`);
  }
  if (every === "day") return { every, time: rule.time };
  if (!Number.isInteger(rule.day) || rule.day < 0 || rule.day > 6) {
    throw new Error(`the schedule's day ${JSON.stringify(rule.day)} is not 0 (Sunday) to 6`);
  }
  return { every, day: rule.day, time: rule.time };
}

/**
 * The first time the rule fires strictly after `after` (ms since the epoch), or null
 * for a once-rule whose time has passed. Local time, so "09:00" stays 09:00 across a
 * change of daylight saving time.
 * @param {Rule} rule
 * @param {number} after
 * @returns {number|null}
 */
export function nextFire(rule, after) {
  if (rule.every === "once") {
    const at = /** @type {Date} */ (localTime(rule.at)).getTime();
    return at > after ? at : null;
  }
  const [h, min] = /** @type {[number, number]} */ (clock(rule.time));
  const day = new Date(after);
  // At most 8 days ahead: a weekly rule's day comes within a week, a daily's tomorrow.
  for (let i = 0; i <= 8; i++) {
    const candidate = new Date(day.getFullYear(), day.getMonth(), day.getDate() + i, h, min);
    const weekdayOk = rule.every === "day" || candidate.getDay() === rule.day;
    if (weekdayOk && candidate.getTime() > after) return candidate.getTime();
  }
  throw new Error(`no time for the schedule ${JSON.stringify(rule)} after ${after}`);
}

/**
 * Every time the rule fired in (since, now], oldest first, at most `MAX_DUE` (the
 * latest ones).
 * @param {Rule} rule
 * @param {number} since
 * @param {number} now
 */
export function dueTimes(rule, since, now) {
  const due = [];
  for (let t = nextFire(rule, since); t !== null && t <= now; t = nextFire(rule, t)) {
    due.push(t);
    if (due.length > MAX_DUE) due.shift();
  }
  return due;
}

/** How late a run may still start: half the rule's period (a once-rule: any time). */
export function graceOf(/** @type {Rule} */ rule) {
  return rule.every === "day" ? DAY_MS / 2 : rule.every === "week" ? 3.5 * DAY_MS : Infinity;
}

/**
 * What an alarm of the rule means at `now`, when every time up to `since` was
 * handled: `run` the latest due time (null when none, or when it is later than
 * `graceOf` the rule: the next one is near), the earlier ones (and a run too late)
 * `missed`, and the `next` time to set the alarm for (null: the rule is spent).
 * @param {Rule} rule
 * @param {number} since
 * @param {number} now
 * @returns {{run: number|null, missed: number[], next: number|null}}
 */
export function whenAlarm(rule, since, now) {
  const due = dueTimes(rule, since, now);
  const latest = due.length ? due[due.length - 1] : null;
  const run = latest !== null && now - latest <= graceOf(rule) ? latest : null;
  return { run, missed: due.filter((t) => t !== run), next: nextFire(rule, now) };
}

/**
 * When to set a schedule's alarm: its next time after `since`, or at once (`now`)
 * when that time has passed already (the browser was closed, an alarm lost): the
 * alarm then sorts out what was missed.
 * @param {Rule} rule
 * @param {number} since
 * @param {number} now
 */
export function armTime(rule, since, now) {
  const next = nextFire(rule, since);
  return next === null ? null : Math.max(next, now);
}

const pad = (n) => String(n).padStart(2, "0");

/** A time as the person reads it: "2026-12-02 09:00" (local). @param {number} t */
export function timeWords(t) {
  const d = new Date(t);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} `
    + `${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** The rule in words: "daily at 09:00", "weekly on Monday at 09:00", "once on …". */
export function describeRule(/** @type {Rule} */ rule) {
  if (rule.every === "day") return `daily at ${rule.time}`;
  if (rule.every === "week") return `weekly on ${DAYS[rule.day]} at ${rule.time}`;
  return `once on ${rule.at.replace("T", " at ")}`;
}
