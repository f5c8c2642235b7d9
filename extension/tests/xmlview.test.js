// The Inspect view's reading of a `<links>` or `<buttons>` list: one per line, its id first.
import { test } from "node:test";
import assert from "node:assert/strict";

import { listedLinks } from "../panel/xmlview.js";

test("each line of a list is an id and the element's text", () => {
  assert.deepEqual(listedLinks("\nk3x Compare all models\nqsx Tents & shelters\n"), [
    { eid: "k3x", text: "Compare all models" },
    { eid: "qsx", text: "Tents & shelters" },
  ]);
});

test("a link's text keeps its own spaces, and blank lines are no links", () => {
  assert.deepEqual(listedLinks("ab  two  spaces\n\n"), [{ eid: "ab", text: " two  spaces" }]);
  assert.deepEqual(listedLinks(""), []);
});
