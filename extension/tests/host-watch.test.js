// The side panel's host watch (panel/host-watch.js): it pings with backoff while the
// host is unreachable, and says "connected again" when the host is back.
import { test } from "node:test";
import assert from "node:assert/strict";

import { HostWatch, RETRY_FIRST_MS, RETRY_MAX_MS, retryDelay } from "../panel/host-watch.js";

/** A watch over fake timers and a ping that fails `failures` times, then answers. */
function watch(failures) {
  const timers = [];
  const changes = [];
  let pings = 0;
  const w = new HostWatch({
    ping: async () => {
      pings += 1;
      if (pings <= failures) throw new Error(`host not found (${pings})`);
      return { pong: true };
    },
    onChange: (s) => changes.push(s),
    setTimer: (fn, ms) => { timers.push({ fn, ms }); return timers.length; },
    clearTimer: () => {},
  });
  const fire = async () => { await timers.at(-1).fn(); };
  return { w, timers, changes, fire, pings: () => pings };
}

test("retryDelay doubles from the first delay up to the cap", () => {
  assert.equal(retryDelay(0), RETRY_FIRST_MS);
  assert.equal(retryDelay(1), RETRY_FIRST_MS * 2);
  assert.equal(retryDelay(50), RETRY_MAX_MS);
});

test("a disconnected host is pinged with backoff until it answers, then connected again", async () => {
  const { w, timers, changes, fire, pings } = watch(2);
  w.report("connected");
  w.report("disconnected", "the host exited");
  assert.deepEqual(timers.map((t) => t.ms), [RETRY_FIRST_MS]);
  await fire();
  await fire();
  assert.deepEqual(timers.map((t) => t.ms), [RETRY_FIRST_MS, RETRY_FIRST_MS * 2, RETRY_FIRST_MS * 4]);
  await fire();
  assert.equal(pings(), 3);
  assert.deepEqual(changes.map((c) => [c.state, c.again]), [
    ["connected", false],
    ["disconnected", false],
    ["disconnected", false], // host not found (1): a new reason is shown
    ["disconnected", false],
    ["connected", true],
  ]);
  assert.equal(timers.length, 3, "no ping once connected");
});

test("the worker's own report ends the retries and starts the next outage afresh", async () => {
  const { w, timers, changes } = watch(100);
  w.report("disconnected", "x");
  w.report("connected");
  assert.equal(changes.at(-1).again, true);
  w.report("disconnected", "y");
  assert.equal(timers.at(-1).ms, RETRY_FIRST_MS);
});

test("the same report twice changes nothing on screen and schedules one ping", () => {
  const { w, timers, changes } = watch(0);
  w.report("disconnected", "gone");
  w.report("disconnected", "gone");
  assert.equal(changes.length, 1);
  assert.equal(timers.length, 1);
});

test("a host the browser cannot find or may not start comes with the command to run", async () => {
  const { INSTALL_COMMAND, hostHelp } = await import("../panel/host-watch.js");
  assert.deepEqual(hostHelp("Specified native messaging host not found."), {
    why: "The Trimtab host is not installed for this browser.", command: INSTALL_COMMAND });
  assert.match(hostHelp("Access to the specified native messaging host is forbidden.").why,
    /not for this extension/);
  assert.equal(hostHelp("Native host has exited."), null);
});
