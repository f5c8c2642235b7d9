// The pure part of panel/agents-box.js: every agent acting now, as the box lists it.
import { test } from "node:test";
import assert from "node:assert/strict";

import { actingNow } from "../panel/agents-box.js";

test("actingNow lists the side panel's task first, then each connected client", () => {
  const clients = [
    { session: 1, client: "claude-code 1", connected: true,
      acting: [{ call: 3, tab: 7, tool: "click" }, { call: 4, tab: 7, tool: "click" },
        { call: 5, tab: 9, tool: "type" }] },
    { session: 2, client: "cursor 1", connected: true, acting: [] },
    { session: 3, client: "gone 1", connected: false, acting: [] },
  ];
  assert.deepEqual(actingNow(clients, { tab: 4, working: "running navigate…" }), [
    { who: "Trimtab's agent (this side panel)", session: null, tabs: [4],
      doing: "running navigate…" },
    { who: "claude-code 1", session: 1, tabs: [7, 9], doing: "running click, type" },
    { who: "cursor 1", session: 2, tabs: [], doing: "connected, no call now" },
  ]);
});

test("actingNow without a task in the side panel lists the clients alone", () => {
  assert.deepEqual(actingNow([], null), []);
  const rows = actingNow([{ session: 5, client: "c", connected: true }], null);
  assert.deepEqual(rows, [{ who: "c", session: 5, tabs: [], doing: "connected, no call now" }]);
});
