// shared/serial.js: changes run one at a time, in the order given, past failures.
import { test } from "node:test";
import assert from "node:assert/strict";

import { oneAtATime } from "../shared/serial.js";

test("oneAtATime runs each change after the one before settled, even a failed one", async () => {
  const inOrder = oneAtATime();
  const log = [];
  let release;
  const first = inOrder(() => new Promise((resolve) => { release = resolve; }))
    .then((value) => log.push(`first ${value}`));
  const second = inOrder(() => { log.push("second"); throw new Error("no"); });
  const third = inOrder(() => { log.push("third"); return 3; });
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(log, [], "nothing after the first runs while it waits");
  release(1);
  await first;
  await assert.rejects(second, /no/);
  assert.equal(await third, 3);
  assert.deepEqual(log, ["first 1", "second", "third"]);
});
