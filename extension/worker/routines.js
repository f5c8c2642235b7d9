// Routines that run by themselves: each schedule (shared/schedule.js) is one
// chrome.alarms alarm, set for its next time. When it fires, the routine runs through
// the host in a tab of its own, in a tab group named for it, opened in the background:
// never the person's active tab. It always asks before a submit or a download (the
// host asks in the side panel; with no panel open, or no answer, that is a no), its
// run goes into the history with the panel's runs, and a notification says how it
// ended. A step the run cannot do as recorded goes to the model of the settings, as in
// a run from the panel (agent/routine-run.js); with no model set up, the run stops there.
// A run the browser's closing cut short is reported at the next start.
//
// Free of chrome.* (every API is passed in), so `node --test` runs it with fakes.

import {
  SCHEDULES_KEY, alarmName, armTime, checkRule, describeRule, routineOfAlarm, whenAlarm,
} from "../shared/schedule.js";
import { runRoutine } from "../agent/routine-run.js";
import {
  RUNS_KEY, describeRun, listRuns, runRecord, saveRuns, setHeals, takeUnfinished, textsOf,
} from "../shared/routines.js";
import { oneAtATime } from "../shared/serial.js";

/**
 * @typedef {import("../shared/schedule.js").Schedule} Schedule
 * @typedef {{request: (request: object, options?: {timeoutMs?: number}) => Promise<any>}} Host
 */

export class RoutineScheduler {
  /**
   * @param {{host: Host, storage: import("../shared/routines.js").Store,
   *          alarms: {create: Function, clear: Function, get: Function},
   *          tabs: {create: Function, get: Function, group: Function, remove: Function},
   *          groups: {update: Function},
   *          notify: (id: string, title: string, message: string) => void,
   *          now?: () => number, makeId?: () => string,
   *          sleep?: (ms: number) => Promise<void>,
   *          makeClient?: typeof import("../agent/model-settings.js").clientFor}} options
   *   `makeClient`: the model client of the settings (tests give their own)
   */
  constructor({ host, storage, alarms, tabs, groups, notify, now = Date.now,
    makeId = () => Math.random().toString(16).slice(2, 14), sleep = undefined,
    makeClient = undefined }) {
    Object.assign(this, { host, storage, alarms, tabs, groups, notify, now, makeId, sleep,
      makeClient });
    /** The routines running now by their schedule: one run of each at a time. */
    this.running = new Set();
    /** Runs the schedules' bookkeeping one change at a time (an alarm that fires while
     *  the worker starts and sets lost alarms must not run a time twice). */
    this.serial = oneAtATime();
  }

  /** @returns {Promise<Record<string, Schedule>>} */
  async schedules() {
    return (await this.storage.get(SCHEDULES_KEY))?.[SCHEDULES_KEY] ?? {};
  }

  async keep(/** @type {Record<string, Schedule>} */ all) {
    await this.storage.set({ [SCHEDULES_KEY]: all });
  }

  /**
   * The side panel's requests: `list`, `set` (routine, rule, params), `clear` (routine),
   * `rename` (routine, name, params: after the person renamed them).
   * @param {{action: string, routine?: string, rule?: object,
   *          params?: Record<string, string>}} msg
   */
  op(msg) {
    return this.serial(() => this.change(msg));
  }

  async change(msg) {
    const all = await this.schedules();
    if (msg.action === "set") {
      const name = String(msg.routine ?? "");
      if (!name) throw new Error("a schedule needs its routine's name");
      const rule = checkRule(msg.rule);
      const now = this.now();
      all[name] = { routine: name, rule, params: { ...(msg.params ?? {}) }, since: now,
        next: armTime(rule, now, now) };
      if (all[name].next === null) {
        throw new Error(`${describeRule(rule)} is in the past: choose a later time`);
      }
      await this.keep(all);
      await this.arm(all[name]);
    } else if (msg.action === "clear") {
      const name = String(msg.routine ?? "");
      delete all[name];
      await this.keep(all);
      await this.alarms.clear(alarmName(name));
    } else if (msg.action === "rename") {
      await this.renamed(all, msg);
    } else if (msg.action !== "list") {
      throw new Error(`unknown routines action ${JSON.stringify(msg.action)}`);
    }
    return { schedules: all };
  }

  /**
   * The person renamed routine `msg.routine` to `msg.name` and its parameters
   * (`msg.params`, old name → new): its schedule runs it by its new names, and its last
   * runs go with it.
   * @param {Record<string, Schedule>} all
   * @param {{routine?: string, name?: string, params?: Record<string, string>}} msg
   */
  async renamed(all, msg) {
    const from = String(msg.routine ?? "");
    const to = String(msg.name || from);
    const params = msg.params ?? {};
    const schedule = all[from];
    if (schedule) {
      delete all[from];
      all[to] = { ...schedule, routine: to, params: Object.fromEntries(Object.entries(
        schedule.params).map(([key, value]) => [params[key] ?? key, value])) };
      await this.keep(all);
      if (to !== from) await this.alarms.clear(alarmName(from));
      await this.arm(all[to]);
    }
    if (to !== from) {
      const runs = await listRuns(this.storage);
      await this.storage.set({ [RUNS_KEY]: runs.map((r) => (r.routine === from
        ? { ...r, routine: to } : r)) });
    }
  }

  /** Set the alarm of one schedule for its next time (none: the rule is spent). */
  async arm(/** @type {Schedule} */ schedule) {
    const when = armTime(schedule.rule, schedule.since, this.now());
    await this.alarms.clear(alarmName(schedule.routine));
    if (when !== null) await this.alarms.create(alarmName(schedule.routine), { when });
  }

  /** Every schedule has its alarm (Chrome may drop alarms when it restarts). */
  restore() {
    return this.serial(async () => {
      for (const schedule of Object.values(await this.schedules())) {
        if (!(await this.alarms.get(alarmName(schedule.routine)))) await this.arm(schedule);
      }
    });
  }

  /**
   * The browser started: runs its closing cut short go into the history as not
   * finished (a scheduled one with a notification), and every alarm is set.
   */
  async onStartup() {
    for (const record of await takeUnfinished(this.storage, this.now())) {
      if (record.scheduled) {
        this.notify(`routine-${record.id}`, `Routine “${record.routine}” did not finish`,
          "The browser closed while it ran.");
      }
    }
    await this.restore();
  }

  /**
   * An alarm fired: run the routine for its latest time (unless far too late), note
   * the times missed while the browser was closed, set the next alarm.
   * @param {{name: string}} alarm
   */
  async onAlarm(alarm) {
    const name = routineOfAlarm(alarm.name);
    if (name === null) return null;
    const due = await this.serial(() => this.handled(name));
    return due === null ? null : await this.runNow(name, due.params);
  }

  /**
   * Note the times of routine `name`'s schedule up to now as handled: the missed ones in
   * the history, the next alarm set; the schedule to run now, or null.
   * @param {string} name
   * @returns {Promise<Schedule|null>}
   */
  async handled(name) {
    const all = await this.schedules();
    const schedule = all[name];
    if (!schedule) return null;
    const now = this.now();
    const { run, missed, next } = whenAlarm(schedule.rule, schedule.since, now);
    if (missed.length) {
      await saveRuns(this.storage, missed.reverse().map((t) => ({
        ...runRecord({ id: `missed-${this.makeId()}`, routine: name, started: t, ended: t,
          scheduled: true, error: { message: "the browser was closed (or asleep) at that time" } }),
        outcome: /** @type {const} */ ("missed"),
      })));
    }
    // Handled up to now: the next alarm is for the next time after it.
    if (next === null) delete all[name];
    else all[name] = { ...schedule, since: now, next };
    await this.keep(all);
    if (next !== null) await this.arm(all[name]);
    else await this.alarms.clear(alarmName(name));
    return run === null ? null : schedule;
  }

  /**
   * Run routine `name` now in a background tab of its own, through the host, as a run
   * from the panel goes (agent/routine-run.js): a step it cannot do as recorded goes to
   * the model of the settings, if one is set up; else the run stops there.
   * @param {string} name
   * @param {Record<string, string>} params
   * @returns {Promise<import("../shared/routines.js").RunRecord|null>}
   */
  async runNow(name, params) {
    if (this.running.has(name)) return null;
    this.running.add(name);
    let record;
    let tab = null;
    let waiting = 0;
    try {
      const { routines } = await this.host.request({ type: "routines" });
      const routine = routines.find((r) => r.name === name);
      if (!routine) throw new Error(`there is no routine “${name}” any more`);
      const ran = await runRoutine({
        worker: { host: (request, options) => this.host.request(request, options) },
        routine, params, texts: textsOf(routine, params), heal: "model",
        signal: new AbortController().signal, storage: this.storage,
        tabs: this.tabs, groups: this.groups, scheduled: true, sleep: this.sleep, now: this.now,
        makeClient: this.makeClient,
      });
      ({ record, tab } = ran);
      waiting = ran.heals.length;
      // The steps the model did wait in the Routines view for the person to keep or not.
      if (waiting) await setHeals(this.storage, name, ran.heals);
    } catch (err) {
      // No routine to run (or the history could not be written): said in the history.
      const now = this.now();
      record = runRecord({ id: `sched-${this.makeId()}`, routine: name, started: now,
        ended: now, error: { code: err?.code, message: String(err?.message ?? err) },
        scheduled: true });
      await saveRuns(this.storage, [record]).catch(() => {});
    } finally {
      this.running.delete(name);
    }
    // A run that ended well leaves nothing to look at; any other keeps its tab.
    if (record.outcome === "done" && tab !== null) await this.tabs.remove(tab).catch(() => {});
    this.notify(`routine-${record.id}`, `Routine “${name}”: ${record.outcome}`,
      [describeRun(record), record.why, ...record.results.slice(0, 1),
        waiting ? "Keep the model's step in the routine, or not, in the Routines view." : ""]
        .filter(Boolean).join("\n").slice(0, 300));
    return record;
  }
}
