// Unit tests of the CDP relay's input bookkeeping, over a recording chrome.debugger.
import { test } from "node:test";
import assert from "node:assert/strict";

import { CdpRelay } from "../worker/relay.js";

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

test("a result is handed to the port as chrome.debugger returned it, never serialized here", async () => {
  // Chrome serializes a posted message itself; a large page's DOM serialized twice
  // costs the relay time on every snapshot.
  const posted = [];
  let serialized = 0;
  const dbg = recordingDebugger();
  const result = { nodes: [1, 2, 3], toJSON() { serialized += 1; return { nodes: this.nodes }; } };
  dbg.sendCommand = async () => result;
  const relay = new CdpRelay({ send(msg) { posted.push(msg); }, debuggerApi: dbg });
  await relay.run({ type: "cdp", id: "c1", tab: 4 }, () => relay.command(
    { type: "cdp", id: "c1", tab: 4, method: "DOMSnapshot.captureSnapshot", params: {} }));
  assert.equal(posted.length, 1);
  assert.equal(posted[0].id, "c1");
  assert.equal(posted[0].result, result);
  assert.equal(serialized, 0);
});

test("a result the port refuses (over Chrome's 64 MiB) reaches the host as an error result", async () => {
  const posted = [];
  const dbg = recordingDebugger();
  dbg.sendCommand = async () => ({ huge: true });
  const relay = new CdpRelay({
    send(msg) {
      if (msg.result?.huge) throw new Error("Message exceeded maximum allowed size of 64MiB.");
      posted.push(msg);
    },
    debuggerApi: dbg,
  });
  relay.handle({ type: "cdp", id: "c9", tab: 2, method: "DOM.getDocument", params: {} });
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(posted.length, 1);
  assert.equal(posted[0].type, "cdp_result");
  assert.equal(posted[0].id, "c9");
  assert.equal(posted[0].error.code, -32000);
  assert.match(posted[0].error.message, /64MiB/);
});

test("an event or a detach the port refuses is dropped without breaking the relay", async () => {
  let events;
  let detaches;
  const dbg = recordingDebugger();
  dbg.onEvent = { addListener(fn) { events = fn; } };
  dbg.onDetach = { addListener(fn) { detaches = fn; } };
  const posted = [];
  let refuse = true;
  const relay = new CdpRelay({
    send(msg) {
      if (refuse) throw new Error("Attempting to use a disconnected port object");
      posted.push(msg);
    },
    debuggerApi: dbg,
  });
  await relay.attach(5);
  events({ tabId: 5 }, "DOM.documentUpdated", {});
  detaches({ tabId: 5 }, "target_closed");
  assert.deepEqual(posted, []);
  refuse = false;
  await relay.attach(5);
  events({ tabId: 5 }, "Page.loadEventFired", { timestamp: 1 });
  assert.deepEqual(posted, [{ type: "cdp_event", tab: 5, session: null,
    method: "Page.loadEventFired", params: { timestamp: 1 } }]);
});

test("two requests for an unattached tab share one attach and never detach each other", async () => {
  const dbg = recordingDebugger();
  let attaches = 0;
  let release;
  const gate = new Promise((resolve) => { release = resolve; });
  dbg.attach = async (target) => {
    attaches += 1;
    dbg.sent.push(["attach", target.tabId]);
    if (attaches > 1) throw new Error("Another debugger is already attached to the tab");
    await gate;
  };
  const relay = new CdpRelay({ send() {}, debuggerApi: dbg });
  const first = relay.attach(9);
  const second = relay.attach(9);
  release();
  await Promise.all([first, second]);
  assert.deepEqual(dbg.sent, [["attach", 9]]);
  assert.deepEqual(relay.attachedTabs(), [9]);
  // A failed attach is not remembered: the next request tries again.
  const failing = new CdpRelay({ send() {}, debuggerApi: { ...recordingDebugger(),
    async attach() { throw new Error("Cannot access a chrome:// URL"); } } });
  await assert.rejects(failing.attach(4), /chrome:\/\//);
  assert.equal(failing.attaching.size, 0);
});

test("a new host's attach waits for the gone host's release of the tab, then attaches", async () => {
  const dbg = recordingDebugger();
  let letGo;
  const busy = new Promise((resolve) => { letGo = resolve; });
  const sendCommand = dbg.sendCommand;
  dbg.sendCommand = async (target, method, params) => {
    if (params.type === "mouseReleased") await busy;  // the page is busy in its handler
    return sendCommand(target, method, params);
  };
  const relay = new CdpRelay({ send() {}, debuggerApi: dbg });
  await relay.attach(6);
  await relay.command({ tab: 6, method: "Input.dispatchMouseEvent",
    params: { type: "mousePressed", x: 1, y: 1, button: "left", clickCount: 1 } });
  const released = relay.releaseAll("host_disconnected");
  const again = relay.attach(6);  // the new host asks for the tab meanwhile
  letGo();
  await Promise.all([released, again]);
  const order = dbg.sent.filter(([what]) => what !== "Input.dispatchMouseEvent");
  assert.deepEqual(order, [["attach", 6], ["detach", 6], ["attach", 6]]);
  assert.deepEqual(relay.attachedTabs(), [6]);
});

/** A chrome.debugger whose events the test fires, recording commands. */
function eventfulDebugger() {
  const dbg = recordingDebugger();
  const on = { event: null, detach: null };
  dbg.onEvent = { addListener(f) { on.event = f; } };
  dbg.onDetach = { addListener(f) { on.detach = f; } };
  dbg.sendCommand = async (target, method, params) => {
    dbg.sent.push([method, target.tabId, params]);
    return {};
  };
  dbg.fire = (tabId, method, params) => on.event({ tabId }, method, params);
  dbg.detachNow = (tabId, reason) => on.detach({ tabId }, reason);
  return dbg;
}

const PAUSED = { requestId: "interception-1", resourceType: "Document",
  request: { url: "http://127.0.0.1:2/provider", method: "GET" } };

test("a held tab's events wait for the host's guard, which gets them once it lets the tab run", async () => {
  const dbg = eventfulDebugger();
  const posted = [];
  const relay = new CdpRelay({ send(msg) { posted.push(msg); }, debuggerApi: dbg });
  await relay.hold(8);
  assert.deepEqual(dbg.sent, [["attach", 8], ["Fetch.enable", 8,
    { patterns: [{ urlPattern: "*", requestStage: "Request" }] }]]);
  dbg.fire(8, "Fetch.requestPaused", PAUSED);
  assert.deepEqual(posted, [], "nothing reaches a host that has not set up yet");
  await relay.attach(8); // the host's cdp_attach: already attached
  await relay.command({ tab: 8, method: "Fetch.enable", params: { patterns: [] } });
  assert.deepEqual(posted, []);
  await relay.command({ tab: 8, method: "Runtime.runIfWaitingForDebugger", params: {} });
  assert.deepEqual(posted, [{ type: "cdp_event", tab: 8, session: null,
    method: "Fetch.requestPaused", params: PAUSED }]);
  dbg.fire(8, "Page.loadEventFired", {});
  assert.equal(posted.at(-1).method, "Page.loadEventFired", "then events flow as usual");
  assert.equal(relay.waiting.size, 0);
});

test("a held tab the host lets run without a guard of its own is let go by the hold", async () => {
  const dbg = eventfulDebugger();
  const posted = [];
  const relay = new CdpRelay({ send(msg) { posted.push(msg); }, debuggerApi: dbg });
  await relay.hold(8);
  dbg.fire(8, "Fetch.requestPaused", PAUSED);
  dbg.sent.length = 0;
  await relay.command({ tab: 8, method: "Runtime.runIfWaitingForDebugger", params: {} });
  assert.deepEqual(dbg.sent.map(([method]) => method), ["Fetch.disable"]);
  assert.deepEqual(posted, [], "the paused request went on in the browser, not to the host");
});

test("a held tab that closes, or that the host detaches, holds nothing more", async () => {
  const dbg = eventfulDebugger();
  const relay = new CdpRelay({ send() {}, debuggerApi: dbg });
  await relay.hold(8);
  dbg.detachNow(8, "target_closed");
  assert.equal(relay.waiting.size, 0);
  await relay.hold(9);
  await relay.detach(9);
  assert.equal(relay.waiting.size, 0);
  dbg.attach = async () => { throw new Error("No tab with given id 10."); };
  await assert.rejects(relay.hold(10), /No tab/);
  assert.equal(relay.waiting.size, 0);
});

test("requests the gone host had not decided are failed before the tab is detached", async () => {
  const dbg = eventfulDebugger();
  const relay = new CdpRelay({ send() {}, debuggerApi: dbg });
  await relay.attach(7);
  await relay.command({ tab: 7, method: "Fetch.enable", params: { patterns: [] } });
  dbg.fire(7, "Fetch.requestPaused", { requestId: "i-1", resourceType: "Fetch" });
  dbg.fire(7, "Fetch.requestPaused", { requestId: "i-2", resourceType: "Document" });
  dbg.fire(7, "Fetch.requestPaused", { requestId: "i-3", resourceType: "XHR" });
  // The host decided two of them (sent on, failed); one more pauses after.
  await relay.command({ tab: 7, method: "Fetch.continueRequest", params: { requestId: "i-1" } });
  await relay.command({ tab: 7, method: "Fetch.failRequest",
    params: { requestId: "i-3", errorReason: "BlockedByClient" } });
  dbg.fire(7, "Fetch.requestPaused", { requestId: "i-4", resourceType: "Fetch" });
  dbg.sent.length = 0;
  await relay.releaseAll("host_disconnected");
  assert.deepEqual(dbg.sent, [
    ["Fetch.failRequest", 7, { requestId: "i-2", errorReason: "Aborted" }],
    ["Fetch.failRequest", 7, { requestId: "i-4", errorReason: "BlockedByClient" }],
    ["detach", 7],
  ]);
  assert.equal(relay.paused.size, 0);
});

test("requests let go by Fetch.disable, or by a tab that detached, are not failed later", async () => {
  const dbg = eventfulDebugger();
  const relay = new CdpRelay({ send() {}, debuggerApi: dbg });
  await relay.attach(7);
  dbg.fire(7, "Fetch.requestPaused", { requestId: "i-1", resourceType: "Fetch" });
  await relay.command({ tab: 7, method: "Fetch.disable", params: {} });
  assert.equal(relay.paused.size, 0);
  dbg.fire(7, "Fetch.requestPaused", { requestId: "i-2", resourceType: "Fetch" });
  dbg.detachNow(7, "target_closed");
  assert.equal(relay.paused.size, 0);
  await relay.hold(8);
  dbg.fire(8, "Fetch.requestPaused", PAUSED);
  await relay.command({ tab: 8, method: "Runtime.runIfWaitingForDebugger", params: {} });
  dbg.sent.length = 0;
  await relay.releaseAll("host_disconnected");
  assert.deepEqual(dbg.sent, [["detach", 8]], "the hold let its own request go");
});
