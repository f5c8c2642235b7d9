// worker/agents.js: the pure parts (the shared list, the activity log), and the hub over
// a fake chrome and a fake host.
import { test } from "node:test";
import assert from "node:assert/strict";

import { AgentsHub, RECENT_ACTIONS, RECENT_CLIENTS, applyEvent, elementsOf, sharedList }
  from "../worker/agents.js";

test("sharedList gives id, title and URL in id order, as strings", () => {
  const shared = new Map([
    [9, { id: 9, title: "B", url: "https://b/" }],
    [3, { id: 3, title: undefined, url: "https://a/", extra: true }],
  ]);
  assert.deepEqual(sharedList(shared), [
    { id: 3, title: "", url: "https://a/" },
    { id: 9, title: "B", url: "https://b/" },
  ]);
});

test("applyEvent tracks connections and keeps only the recent actions", () => {
  let clients = applyEvent(new Map(), { event: "connected", session: 1, client: "claude-code 1" }, 0);
  for (let i = 0; i < RECENT_ACTIONS + 5; i++) {
    clients = applyEvent(clients, { event: "call", session: 1, tool: `t${i}`, tab: 4, error: null }, i);
  }
  const entry = clients.get(1);
  assert.equal(entry.client, "claude-code 1");
  assert.equal(entry.connected, true);
  assert.equal(entry.actions.length, RECENT_ACTIONS);
  assert.equal(entry.actions.at(-1).tool, `t${RECENT_ACTIONS + 4}`);
  const left = applyEvent(clients, { event: "disconnected", session: 1 }, 99);
  assert.equal(left.get(1).connected, false);
  assert.equal(clients.get(1).connected, true, "the old map is not changed");
});

test("applyEvent forgets the oldest clients that left, never connected ones", () => {
  let clients = new Map();
  for (let s = 1; s <= RECENT_CLIENTS + 3; s++) {
    clients = applyEvent(clients, { event: "connected", session: s, client: `c${s}` }, s);
    clients = applyEvent(clients, { event: "disconnected", session: s }, s);
  }
  clients = applyEvent(clients, { event: "connected", session: 100, client: "live" }, 100);
  assert.equal([...clients.values()].filter((c) => !c.connected).length, RECENT_CLIENTS);
  assert.ok(clients.has(100));
  assert.ok(!clients.has(1));
});

test("applyEvent ignores events without a session or of an unknown kind", () => {
  const clients = new Map();
  assert.equal(applyEvent(clients, { event: "call" }, 0).size, 0);
  assert.equal(applyEvent(clients, { event: "weird", session: 2 }, 0), clients);
});

test("applyEvent keeps the elements the host named and the arguments it may show", () => {
  let clients = applyEvent(new Map(), { event: "connected", session: 2, client: "cursor 1" }, 0);
  clients = applyEvent(clients, { event: "call", session: 2, tool: "click", tab: 4,
    args: { id: "k99" }, elements: { k99: { tag: "button", type: "submit", name: "Buy now",
      extra: 1 } }, error: null }, 5);
  clients = applyEvent(clients, { event: "call", session: 2, tool: "tabs", tab: 4,
    args: ["odd"], elements: "not an object", error: null }, 6);
  const [click, odd] = clients.get(2).actions;
  assert.deepEqual(click.elements, { k99: { tag: "button", type: "submit", name: "Buy now" } });
  assert.deepEqual(click.args, { id: "k99" });
  assert.deepEqual(odd.elements, {});
  assert.deepEqual(odd.args, {});
});

test("elementsOf keeps string facts by id and drops what is not an element", () => {
  assert.deepEqual(elementsOf({ a1: { tag: "input", type: 7, name: null }, b2: "x", c3: null }),
    { a1: { tag: "input", type: "7", name: "" } });
  assert.deepEqual(elementsOf(JSON.parse('{"__proto__": {"tag": "a"}}')), {});
  assert.deepEqual(elementsOf([{ tag: "a" }]), {});
  const many = Object.fromEntries([...Array(80).keys()].map((i) => [`e${i}`, { tag: "a" }]));
  assert.equal(Object.keys(elementsOf(many)).length, 50);
});

test("applyEvent keeps each client's calls acting now until their call event", () => {
  let clients = applyEvent(new Map(), { event: "connected", session: 2, client: "cursor 1" }, 0);
  clients = applyEvent(clients, { event: "acting", session: 2, tab: 7, tool: "click", call: 11 }, 1);
  clients = applyEvent(clients, { event: "acting", session: 2, tab: 9, tool: "type", call: 12 }, 2);
  assert.deepEqual(clients.get(2).acting.map((a) => [a.call, a.tab, a.tool]),
    [[11, 7, "click"], [12, 9, "type"]]);
  const ended = applyEvent(clients,
    { event: "call", session: 2, tab: 7, tool: "click", call: 11, error: null }, 3);
  assert.deepEqual(ended.get(2).acting.map((a) => a.call), [12]);
  assert.equal(ended.get(2).actions.at(-1).tool, "click");
  assert.equal(clients.get(2).acting.length, 2, "the old map is not changed");
  // An acting event without a number is not the host's: nothing changes.
  assert.equal(applyEvent(ended, { event: "acting", session: 2, tab: 1, tool: "x" }, 4), ended);
  const left = applyEvent(ended, { event: "disconnected", session: 2 }, 5);
  assert.deepEqual(left.get(2).acting, [], "a client that left acts no more");
});

/** Enough of chrome.* for an AgentsHub: tabs that exist, storage, the toolbar icon. */
function fakeChrome() {
  const listen = { addListener: () => {} };
  globalThis.chrome = {
    tabs: { onRemoved: listen, onUpdated: listen,
      get: async (id) => ({ id, title: `Tab ${id}`, url: `http://127.0.0.1/${id}` }) },
    storage: { session: { get: async () => ({}), set: async () => {} } },
    action: { setBadgeText: async () => {}, setTitle: async () => {} },
  };
}

/** A host that answers when told to and applies each list of shared tabs as it
 *  answers it, in any order: the worst a host could do with lists in flight at once. */
function slowHost() {
  return {
    connected: true,
    waiting: [],
    mostWaiting: 0,
    applied: null,
    request(msg) {
      return new Promise((resolve) => {
        this.waiting.push(() => { this.applied = msg.tabs.map((t) => t.id); resolve({}); });
        this.mostWaiting = Math.max(this.mostWaiting, this.waiting.length);
      });
    },
    /** Answer the request at `index` of those waiting, once the hub has had its turn. */
    async answer(index) {
      await new Promise((r) => setTimeout(r, 0));
      this.waiting.splice(index, 1)[0]?.();
      await new Promise((r) => setTimeout(r, 0));
    },
  };
}

test("AgentsHub sends one list of shared tabs at a time, so the host keeps the newest", async () => {
  fakeChrome();
  const host = slowHost();
  const hub = new AgentsHub({ host, broadcast: () => {} });
  // The person shares a tab while the host starts; the host's start asks for the list.
  const shared = hub.share(5);
  await new Promise((r) => setTimeout(r, 0));
  hub.onHost("connected");
  // The share's list answered first, then always the newest: the order in which a host
  // that took two lists at once could apply the older one last.
  await host.answer(0);
  while (host.waiting.length) await host.answer(-1);
  await shared;
  assert.equal(host.mostWaiting, 1, "a list waits for the host's answer to the one before");
  assert.deepEqual(host.applied, [5]);
  assert.ok(hub.isShared(5));
});
