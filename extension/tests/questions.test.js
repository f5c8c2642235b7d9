// The host's questions to the person: their words (shared/questions.js) and the
// worker's one queue of them (worker/questions.js), with a recording fake host.
import { test } from "node:test";
import assert from "node:assert/strict";

import {
  ANSWERED_TOO_LATE, ARGS_SHOWN, PANEL_AGENT, describeQuestion, questionOf, withdrawnLine,
} from "../shared/questions.js";
import { NO_PANEL, PANEL_CLOSED, QuestionQueue } from "../worker/questions.js";

const ASK = {
  type: "ask", ask: "q7", client: "cursor 1.0", session: 4, tab: 42, what: "submit",
  tool: "press", args: { key: "Enter" }, reason: "Enter in a form's field submits the form",
  element: '<input id="m2" type="email"/>', timeout: 50,
};

test("questionOf keeps the host's fields, typed, and refuses a message without an id", () => {
  assert.deepEqual(questionOf(ASK), {
    ask: "q7", client: "cursor 1.0", session: "4", tab: 42, what: "submit", tool: "press",
    args: { key: "Enter" }, reason: "Enter in a form's field submits the form",
    element: '<input id="m2" type="email"/>', timeout: 50,
  });
  const bare = questionOf({ type: "ask", ask: 3, tab: "9", what: "tab", element: null });
  assert.equal(bare.ask, "3");
  assert.equal(bare.tab, 9);
  assert.equal(bare.what, "tab");
  assert.equal(bare.element, null);
  assert.equal(bare.timeout, null);
  assert.equal(questionOf({ type: "ask" }), null);
  assert.equal(questionOf({ type: "withdraw", ask: "q7" }), null);
  assert.equal(questionOf(null), null);
});

test("describeQuestion says who asks, what would run where, why, on what, and how long", () => {
  const words = describeQuestion(questionOf(ASK), { title: "Checkout", url: "https://shop/" });
  assert.equal(words.who, "cursor 1.0");
  assert.equal(words.want, 'cursor 1.0 wants to run press({"key":"Enter"}) in “Checkout”. Allow?');
  assert.equal(words.reason, "What would happen: Enter in a form's field submits the form.");
  assert.equal(words.element, '<input id="m2" type="email"/>');
  assert.match(words.wait, /waits 50 s .* no answer counts as no/);
});

test("describeQuestion words a tab question, the panel's agent, and missing facts", () => {
  const tab = describeQuestion(questionOf({ type: "ask", ask: "a", client: "claude-code 1.0",
    tab: 5, what: "tab" }), { url: "https://mail/" });
  assert.match(tab.want, /^claude-code 1\.0 asks to read and act in “https:\/\/mail\/”, which is not shared/);
  assert.equal(tab.reason, "");
  assert.equal(tab.element, "");
  const own = describeQuestion(questionOf({ ...ASK, client: PANEL_AGENT }), undefined);
  assert.match(own.want, /^Trimtab agent wants to run press\(.*\) in “tab 42”/);
  const nameless = describeQuestion(questionOf({ type: "ask", ask: "b", tab: 7 }), undefined);
  assert.equal(nameless.want, "An outside agent wants to run an action in “tab 7”. Allow?");
  const long = describeQuestion(questionOf({ ...ASK, args: { text: "x".repeat(1000) } }), {});
  assert.ok(long.want.length < ARGS_SHOWN + 100, long.want);
});

test("withdrawnLine and the late answer say what happened in plain words", () => {
  assert.equal(withdrawnLine({ client: "cursor 1.0" }, "the call was cancelled"),
    "The question from cursor 1.0 was withdrawn: the call was cancelled.");
  assert.equal(withdrawnLine(undefined, ""), "The question from an agent was withdrawn: its call ended.");
  assert.match(ANSWERED_TOO_LATE, /already been withdrawn; nothing was done/);
});

/** A queue over a recording host that answers `answer` with `waiting`. */
function queue({ panels = 1, tabs = [42], waiting = true } = {}) {
  const sent = [];
  const events = [];
  const q = new QuestionQueue({
    host: { request: async (r) => { sent.push(r); return { waiting }; } },
    broadcast: (e) => events.push(e),
    panelCount: () => panels,
    tabExists: async (tab) => tabs.includes(tab),
  });
  return { q, sent, events };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

test("an ask is shown to the panels, and the answer goes to the host and says if it counted", async () => {
  const { q, sent, events } = queue();
  assert.equal(q.handle(ASK), true);
  await settle();
  assert.deepEqual(q.list().map((x) => x.ask), ["q7"]);
  assert.deepEqual(events.at(-1).questions.map((x) => x.ask), ["q7"]);
  assert.deepEqual(await q.answer("q7", true), { waiting: true });
  assert.deepEqual(sent, [{ type: "answer", ask: "q7", allow: true }]);
  assert.deepEqual(q.list(), []);
  assert.deepEqual(events.at(-1).questions, []);
});

test("a withdrawn question leaves the panels at once, with the host's reason", async () => {
  const { q, sent, events } = queue({ waiting: false });
  q.handle(ASK);
  q.handle({ ...ASK, ask: "q8" });
  await settle();
  q.handle({ type: "withdraw", ask: "q7", why: "the call was cancelled" });
  assert.deepEqual(q.list().map((x) => x.ask), ["q8"]);
  assert.deepEqual(events.at(-1).withdrawn,
    { ask: "q7", client: "cursor 1.0", why: "the call was cancelled" });
  // A late answer still reaches the host, which says nothing was waiting for it.
  assert.deepEqual(await q.answer("q7", true), { waiting: false });
  assert.deepEqual(sent, [{ type: "answer", ask: "q7", allow: true }]);
});

test("with no side panel open, or no such tab, the worker says no at once", async () => {
  const none = queue({ panels: 0 });
  none.q.handle(ASK);
  await settle();
  assert.deepEqual(none.sent, [{ type: "answer", ask: "q7", allow: false, why: NO_PANEL }]);
  assert.deepEqual(none.q.list(), []);
  const gone = queue({ tabs: [] });
  gone.q.handle(ASK);
  await settle();
  assert.equal(gone.sent[0].allow, false);
  assert.match(gone.sent[0].why, /no tab 42/);
  assert.deepEqual(gone.q.list(), []);
});

test("a question withdrawn before its tab was checked is never shown", async () => {
  const { q, sent, events } = queue();
  q.handle(ASK);
  q.handle({ type: "withdraw", ask: "q7", why: "the client disconnected" });
  await settle();
  assert.deepEqual(q.list(), []);
  assert.deepEqual(sent, []);
  assert.equal(events.length, 0);
});

test("the last panel closing refuses what is open; the host leaving drops it", async () => {
  const closing = queue();
  closing.q.handle(ASK);
  await settle();
  closing.q.onPanelsGone();
  assert.deepEqual(closing.sent, [{ type: "answer", ask: "q7", allow: false, why: PANEL_CLOSED }]);
  assert.deepEqual(closing.q.list(), []);
  const leaving = queue();
  leaving.q.handle(ASK);
  await settle();
  leaving.q.onHost("disconnected");
  assert.deepEqual(leaving.q.list(), []);
  assert.deepEqual(leaving.events.at(-1).questions, []);
  assert.deepEqual(leaving.sent, []);
});

test("messages that are not questions are left to others", () => {
  const { q } = queue();
  assert.equal(q.handle({ type: "cdp" }), false);
  assert.equal(q.handle({ type: "agents_event" }), false);
});
