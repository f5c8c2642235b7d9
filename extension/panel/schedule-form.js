// A routine's schedule in the Routines view: never, daily, weekly or once, at a time
// (local), run with the texts its form holds when the schedule is saved. The service
// worker keeps the schedules and their alarms (worker/routines.js); a routine that
// takes a secret cannot run by itself (a secret is never kept).

import { DAYS, describeRule, timeWords } from "../shared/schedule.js";
import { scheduleParams } from "../shared/routines.js";
import { el } from "./dom.js";

/**
 * The rule the controls say, or null for "never".
 * @param {{every: string, day: string, time: string, date: string}} controls
 */
export function ruleFrom({ every, day, time, date }) {
  if (every === "") return null;
  if (every === "once") return { every, at: `${date}T${time}` };
  return every === "week" ? { every, day: Number(day), time } : { every, time };
}

/**
 * What a schedule's summary says: off, or its rule and next time.
 * @param {import("../shared/schedule.js").Schedule|undefined} schedule
 */
export function scheduleWords(schedule) {
  if (!schedule) return "Schedule: off";
  const next = schedule.next ? ` · next ${timeWords(schedule.next)}` : "";
  return `Schedule: ${describeRule(schedule.rule)}${next}`;
}

/**
 * @param {{routine: import("../shared/routines.js").Routine,
 *          worker: import("./worker-client.js").WorkerClient,
 *          store: import("./store.js").Store<ReturnType<typeof import("./store.js").panelState>>,
 *          values: () => Record<string, string>}} parts `values`: the run form's
 * @returns {HTMLElement}
 */
export function mountScheduleForm({ routine, worker, store, values }) {
  const box = el("details", "routine-schedule");
  const summary = el("summary", "", scheduleWords(store.state.schedules[routine.name]));
  const every = el("select", "schedule-every");
  every.append(new Option("never", ""), new Option("daily", "day"),
    new Option("weekly", "week"), new Option("once", "once"));
  const day = el("select", "schedule-day");
  day.append(...DAYS.map((name, i) => new Option(name, String(i))));
  const time = el("input", "schedule-time");
  time.type = "time";
  time.value = "09:00";
  const date = el("input", "schedule-date");
  date.type = "date";
  const labelled = (words, control) => {
    const label = el("label", "", words);
    label.append(control);
    return label;
  };
  const dayLabel = labelled("on", day);
  const dateLabel = labelled("on", date);
  const save = el("button", "schedule-save", "Save schedule");
  save.type = "button";
  const note = el("p", "muted schedule-note");
  note.setAttribute("role", "status");
  const bar = el("div", "toolbar");
  bar.append(save);
  box.append(summary, labelled("Runs by itself", every), dayLabel, labelled("at", time),
    dateLabel, bar, note, el("p", "muted", "It runs in a tab of its own while the browser "
      + "is open, with the values above, and asks before a submit or a download: a "
      + "question nobody answers is a no."));

  const kept = store.state.schedules[routine.name];
  if (kept) {
    every.value = kept.rule.every;
    if (kept.rule.every === "once") [date.value, time.value] = kept.rule.at.split("T");
    else time.value = kept.rule.time;
    if (kept.rule.every === "week") day.value = String(kept.rule.day);
  }
  const show = () => {
    dayLabel.hidden = every.value !== "week";
    dateLabel.hidden = every.value !== "once";
  };
  every.addEventListener("change", show);
  show();
  if (routine.parameters.some((p) => p.kind === "secret")) {
    for (const control of [every, day, time, date, save]) control.disabled = true;
    note.textContent = scheduleParams(routine, {}).problem;
  }

  save.addEventListener("click", async () => {
    const rule = ruleFrom({ every: every.value, day: day.value, time: time.value,
      date: date.value });
    const { params, problem } = scheduleParams(routine, values());
    if (rule && problem) {
      note.textContent = `${problem}.`;
      return;
    }
    try {
      const { schedules } = await worker.call("routines", rule
        ? { action: "set", routine: routine.name, rule, params }
        : { action: "clear", routine: routine.name });
      store.update({ schedules });
      summary.textContent = scheduleWords(schedules[routine.name]);
      note.textContent = rule ? "Saved." : "It no longer runs by itself.";
    } catch (err) {
      note.textContent = `Not saved: ${err.message}`;
    }
  });
  return box;
}
