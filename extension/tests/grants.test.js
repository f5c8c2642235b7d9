// A routine's grants as the panel offers and shows them: nothing checked by default,
// what the person granted (even lapsed) checked again, the checked choices as the host
// takes them, the list's summary, and a run's record of the steps that submitted unasked.
import { test } from "node:test";
import assert from "node:assert/strict";

import { chosenGrants, grantChoices, grantsSummary, unaskedWords } from "../shared/grants.js";
import { describeRun, runRecord } from "../shared/routines.js";

const GRANTABLE = {
  sites: ["http://pay.test", "http://shop.test"],
  submits: [{ step: 6, action: "http://shop.test/done.html", site: "http://shop.test",
    method: "GET", words: "click the button 'Place order' (region main)" }],
};

test("nothing is checked until the person checks it", () => {
  const choices = grantChoices(GRANTABLE);
  assert.deepEqual(choices.map((c) => [c.kind, c.checked]),
    [["site", false], ["site", false], ["submit", false]]);
  assert.equal(choices[0].label, "Act on http://pay.test without asking");
  assert.equal(choices[2].label, "Step 6: don't ask again for this routine");
  assert.equal(choices[2].detail, "click the button 'Place order' (region main) — only while "
    + "it sends its form by GET to http://shop.test/done.html");
  assert.deepEqual(chosenGrants(choices), { sites: [], unasked: [] });
});

test("what the person granted is checked again, lapsed or not, and read back", () => {
  const grants = { state: "lapsed", sites: ["http://pay.test"], unasked: [6] };
  const choices = grantChoices(GRANTABLE, grants);
  assert.deepEqual(choices.map((c) => c.checked), [true, false, true]);
  assert.deepEqual(chosenGrants(choices), { sites: ["http://pay.test"], unasked: [6] });
});

test("the list's summary says what is allowed, or that it must be confirmed again", () => {
  assert.equal(grantsSummary({ state: "none", sites: [], unasked: [] }),
    "Allowed without asking: nothing (it asks as any task)");
  assert.equal(grantsSummary({ state: "granted", sites: ["a", "b"], unasked: [6] }),
    "Allowed without asking: 2 sites, 1 submit");
  assert.equal(grantsSummary({ state: "lapsed", sites: ["a"], unasked: [6] }),
    "Allowed without asking: the routine changed since you allowed it; confirm again");
});

test("a run's record says which steps submitted without asking", () => {
  const record = runRecord({ id: "r", routine: "R", started: 0, ended: 1000,
    reply: { status: "done", steps: 7, done: 7, at: null, why: "", plan: [], results: [],
      unasked: [6, "x"], content: "" } });
  assert.deepEqual(record.unasked, [6]);
  assert.match(describeRun(record),
    / · step 6 submitted without asking \(you marked “don't ask again”\)$/);
  assert.equal(unaskedWords([2, 6]),
    "steps 2, 6 submitted without asking (you marked “don't ask again”)");
  assert.equal(unaskedWords([]), "");
  const old = runRecord({ id: "o", routine: "R", started: 0, ended: 1000, error: { message: "x" } });
  assert.deepEqual(old.unasked, []);
});
