// Unit tests of the CDP relay's input bookkeeping, over a recording chrome.debugger.
import { test } from "node:test";
import assert from "node:assert/strict";

import { CdpRelay } from "../lib/relay.js";

function recordingDebugger() {
  const sent = [];
  const listeners = () => ({ addListener() {} });
  return {
    sent,
    onEvent: listeners(),
    onDetach: listeners(),
    async attach(target) { sent.push(["attach", target.tabId]); },
    async detach(target) { sent.push(["detach", target.tabId]); },
    async sendCommand(target, method, params) {
      sent.push([method, target.tabId, params.type]);
      return {};
    },
  };
}

test("a host lost mid-click leaves no button or key down and no tab attached", async () => {
  const dbg = recordingDebugger();
  const detached = [];
  const relay = new CdpRelay({ send() { return true; }, debuggerApi: dbg,
    onDetached: (tab, reason) => detached.push([tab, reason]) });
  await relay.attach(7);
  await relay.command({ tab: 7, method: "Input.dispatchMouseEvent",
    params: { type: "mousePressed", x: 5, y: 6, button: "left", clickCount: 1 } });
  await relay.command({ tab: 7, method: "Input.dispatchKeyEvent",
    params: { type: "keyDown", key: "Shift", code: "ShiftLeft" } });
  await relay.command({ tab: 7, method: "Input.dispatchKeyEvent",
    params: { type: "keyDown", key: "a", code: "KeyA" } });
  await relay.command({ tab: 7, method: "Input.dispatchKeyEvent",
    params: { type: "keyUp", key: "a", code: "KeyA" } });
  dbg.sent.length = 0;
  await relay.releaseAll("host_disconnected");
  assert.deepEqual(dbg.sent, [
    ["Input.dispatchMouseEvent", 7, "mouseReleased"],
    ["Input.dispatchKeyEvent", 7, "keyUp"],
    ["detach", 7],
  ]);
  assert.deepEqual(relay.attachedTabs(), []);
  assert.deepEqual(detached, [[7, "host_disconnected"]]);
});

test("a finished click holds nothing", async () => {
  const dbg = recordingDebugger();
  const relay = new CdpRelay({ send() { return true; }, debuggerApi: dbg });
  await relay.attach(3);
  for (const type of ["mousePressed", "mouseReleased"]) {
    await relay.command({ tab: 3, method: "Input.dispatchMouseEvent",
      params: { type, x: 1, y: 1, button: "left", clickCount: 1 } });
  }
  assert.equal(relay.held.size, 0);
});
