// The worker's host connection (worker/native.js) over a fake port: it counts as
// connected once the host answers, and a cancelled request asks the host to cancel it.
import { test } from "node:test";
import assert from "node:assert/strict";

import { HostConnection } from "../worker/native.js";

/** A fake native port: what the connection posts, and a way to answer as the host. */
function fakePort() {
  const listeners = { message: [], disconnect: [] };
  return {
    posted: [],
    postMessage(msg) { this.posted.push(msg); },
    onMessage: { addListener: (fn) => listeners.message.push(fn) },
    onDisconnect: { addListener: (fn) => listeners.disconnect.push(fn) },
    reply(msg) { for (const fn of listeners.message) fn(msg); },
    close() { for (const fn of listeners.disconnect) fn(); },
  };
}

/** Let go of the timers of requests left unanswered (the first ping's, at least). */
function forget(host) {
  for (const entry of host.inflight.values()) clearTimeout(entry.timer);
  clearTimeout(host.reconnectTimer);
}

function connection() {
  globalThis.chrome ??= { runtime: {} };
  const port = fakePort();
  const states = [];
  const host = new HostConnection({
    onMessage: () => {},
    onStateChange: (state) => states.push(state),
    connect: () => port,
  });
  return { host, port, states };
}

test("the host counts as connected once it answers the first ping, not when the port opens", () => {
  const { host, port, states } = connection();
  host.ensureConnected();
  assert.equal(host.alive, false);
  assert.deepEqual(states, []);
  const [ping] = port.posted;
  assert.equal(ping.type, "ping");
  port.reply({ type: "result", id: ping.id, result: { pong: true } });
  assert.equal(host.alive, true);
  assert.deepEqual(states, ["connected"]);
  assert.equal(host.status().connected, true);
  forget(host);
});

test("a port that closes before any answer is a host that is not there", async () => {
  const { host, port, states } = connection();
  host.ensureConnected();
  port.close();
  assert.deepEqual(states, ["disconnected"]);
  assert.equal(host.alive, false);
  forget(host);
});

test("aborting a request sends the host cancel for its id; the request ends with the host's error", async () => {
  const { host, port } = connection();
  host.ensureConnected();
  const controller = new AbortController();
  const pending = host.request({ type: "tool", name: "click" }, { signal: controller.signal });
  const tool = port.posted.find((m) => m.type === "tool");
  controller.abort();
  const cancel = port.posted.find((m) => m.type === "cancel");
  assert.equal(cancel.request, tool.id);
  port.reply({ type: "result", id: cancel.id, result: { cancelled: true } });
  port.reply({ type: "error", id: tool.id, error: { code: "cancelled", message: "cancelled" } });
  await assert.rejects(pending, (err) => err.code === "cancelled");
  // An already aborted signal sends nothing.
  const before = port.posted.length;
  await assert.rejects(host.request({ type: "tool" }, { signal: controller.signal }),
    (err) => err.code === "cancelled");
  assert.equal(port.posted.length, before);
  forget(host);
});

test("aborting after the reply came sends nothing", async () => {
  const { host, port } = connection();
  host.ensureConnected();
  const controller = new AbortController();
  const pending = host.request({ type: "tool" }, { signal: controller.signal });
  const tool = port.posted.find((m) => m.type === "tool");
  port.reply({ type: "result", id: tool.id, result: { content: "ok" } });
  assert.deepEqual(await pending, { content: "ok" });
  controller.abort();
  assert.equal(port.posted.filter((m) => m.type === "cancel").length, 0);
  forget(host);
});

test("a request sent while the host starts gets its own time only once the host answers", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const { host, port } = connection();
  host.ensureConnected();
  const pending = host.request({ type: "ping" });
  let outcome = null;
  pending.then(() => { outcome = "answered"; }, (err) => { outcome = err.message; });
  // Starting takes longer than a ping's 5 s: the ping is not timed out meanwhile.
  t.mock.timers.tick(20_000);
  await Promise.resolve();
  assert.equal(outcome, null);
  const [first, second] = port.posted;
  port.reply({ type: "result", id: first.id, result: { pong: true } });
  // From the host's first answer, the second ping has its 5 s.
  t.mock.timers.tick(4_999);
  await Promise.resolve();
  assert.equal(outcome, null);
  t.mock.timers.tick(1);
  await new Promise((resolve) => setImmediate(resolve));
  assert.match(outcome, /did not answer "ping" within 5 s/);
  assert.equal(second.type, "ping");
  forget(host);
});

test("a host that never starts fails its requests after the start-up limit, naming it", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const { host } = connection();
  host.ensureConnected();
  const pending = host.request({ type: "tools" });
  t.mock.timers.tick(30_000);
  await assert.rejects(pending, (err) => err.code === "timeout"
    && /did not start within 30 s to answer "tools"/.test(err.message));
  forget(host);
});
