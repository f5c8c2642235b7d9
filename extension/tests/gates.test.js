// Unit tests of the gates, over recording declarativeNetRequest and chrome.tabs stand-ins.
import { test } from "node:test";
import assert from "node:assert/strict";

import { TabGates, gateRule, keptByRule } from "../worker/gates.js";

/** Session rules, tabs and what the gates posted, recorded. */
function fakeBrowser({ stale = [], told = new Map(), own = new Set() } = {}) {
  const rules = new Map(stale.map((id) => [id, { id }]));
  const updated = [];
  const posted = [];
  const tabIds = [1, 2, 3];
  const rulesApi = {
    async updateSessionRules({ removeRuleIds = [], addRules = [] }) {
      for (const id of removeRuleIds) rules.delete(id);
      for (const rule of addRules) {
        if (rules.has(rule.id)) throw new Error(`Rule with id ${rule.id} does not have a unique ID.`);
        rules.set(rule.id, rule);
      }
    },
    async getSessionRules() {
      return [...rules.values()];
    },
  };
  const tabsApi = {
    async query() {
      return tabIds.map((id) => ({ id }));
    },
    async update(id, props) {
      updated.push([id, props.url]);
      return { id };
    },
  };
  const gates = new TabGates({
    post: (msg) => { posted.push(msg); },
    rules: rulesApi,
    tabs: tabsApi,
    told: async (tab) => told.get(tab) ?? null,
    hostsOwn: (tab) => own.has(tab),
  });
  return { gates, rules, updated, posted, tabIds };
}

/** Wait for the replies `handle` posts on its own. */
const settled = () => new Promise((resolve) => setTimeout(resolve, 0));

test("a gate blocks main frames in tabs other than those that existed, except to its domains", () => {
  assert.deepEqual(gateRule(4, [1, 2], ["shop.test", "127.0.0.1"]), {
    id: 4,
    priority: 1,
    action: { type: "block" },
    condition: {
      resourceTypes: ["main_frame"],
      excludedTabIds: [1, 2],
      excludedRequestDomains: ["shop.test", "127.0.0.1"],
    },
  });
  // No domain the task may use yet: a new tab may load no first document at all.
  assert.equal(gateRule(4, [1], []).condition.excludedRequestDomains, undefined);
});

test("only a main frame's ERR_BLOCKED_BY_CLIENT counts as kept by a rule", () => {
  assert.equal(keptByRule({ frameId: 0, error: "net::ERR_BLOCKED_BY_CLIENT" }), true);
  assert.equal(keptByRule({ frameId: 3, error: "net::ERR_BLOCKED_BY_CLIENT" }), false);
  assert.equal(keptByRule({ frameId: 0, error: "net::ERR_NAME_NOT_RESOLVED" }), false);
});

test("rules a previous worker left are removed before the first gate is set", async () => {
  const { gates, rules } = fakeBrowser({ stale: [1, 9] });
  await gates.gate({ tab: 2, domains: ["shop.test"] });
  assert.deepEqual([...rules.keys()], [1]);
  assert.deepEqual(rules.get(1).condition.excludedTabIds, [1, 2, 3]);
});

test("a gate is set, replaced and lifted as one rule per acting tab", async () => {
  const { gates, rules } = fakeBrowser();
  await gates.gate({ tab: 2, domains: ["shop.test"] });
  await gates.gate({ tab: 3, domains: ["bank.test"] });
  await gates.gate({ tab: 2, domains: ["shop.test", "pay.test"] });
  assert.equal(rules.size, 2);
  assert.deepEqual(rules.get(1).condition.excludedRequestDomains, ["shop.test", "pay.test"]);
  await gates.gate({ tab: 2, domains: null });
  await gates.gate({ tab: 3, domains: null });
  assert.equal(rules.size, 0);
  assert.equal(gates.gates.size, 0);
});

test("letting a kept tab through takes it out of every gate before loading its URL", async () => {
  const { gates, rules, updated } = fakeBrowser();
  await gates.gate({ tab: 2, domains: ["shop.test"] });
  await gates.gate({ tab: 3, domains: ["bank.test"] });
  await gates.pass({ tab: 7, url: "https://idp.test/sign-in" });
  for (const rule of rules.values()) assert.ok(rule.condition.excludedTabIds.includes(7));
  assert.deepEqual(updated, [[7, "https://idp.test/sign-in"]]);
  // A gate set later leaves it alone too.
  await gates.gate({ tab: 2, domains: ["shop.test"] });
  assert.ok(rules.get(1).condition.excludedTabIds.includes(7));
});

test("a kept document is reported with its opener once the host heard of the tab", async () => {
  const { gates, posted } = fakeBrowser({ told: new Map([[7, 2]]) });
  await gates.gate({ tab: 2, domains: ["shop.test"] });
  await gates.onNavigationError({
    tabId: 7, frameId: 0, url: "http://attacker.test/steal?d=1", error: "net::ERR_BLOCKED_BY_CLIENT",
  });
  assert.deepEqual(posted, [
    { type: "tab_gated", tab: 7, opener: 2, url: "http://attacker.test/steal?d=1" },
  ]);
});

test("the host's own tab leaves every gate, not reloaded; another extension's block is not ours", async () => {
  const { gates, posted, updated, rules } = fakeBrowser({ own: new Set([8]) });
  await gates.gate({ tab: 2, domains: ["shop.test"] });
  const kept = { frameId: 0, error: "net::ERR_BLOCKED_BY_CLIENT" };
  await gates.onNavigationError({ ...kept, tabId: 8, url: "https://news.test/" });
  // The host loads its own tabs under its guard: a kept URL (maybe a redirect's) is
  // not loaded here behind its back.
  assert.deepEqual(updated, []);
  assert.ok(rules.get(1).condition.excludedTabIds.includes(8));
  await gates.gate({ tab: 2, domains: null });
  await gates.onNavigationError({ ...kept, tabId: 9, url: "https://ads.test/" });
  assert.deepEqual(posted, []);
  // A tab let through is never reported again (the other extension blocks it anew).
  await gates.onNavigationError({ ...kept, tabId: 8, url: "https://news.test/" });
  assert.deepEqual(posted, []);
});

test("bad requests are answered with errors that name the bad value", async () => {
  const { gates, posted } = fakeBrowser();
  gates.handle({ type: "tab_gate", id: "c1", tab: "2", domains: [] });
  gates.handle({ type: "tab_gate", id: "c2", tab: 2, domains: "shop.test" });
  gates.handle({ type: "tab_pass", id: "c3", tab: 2, url: "javascript:alert(1)" });
  await settled();
  await settled();
  assert.deepEqual(posted.map((m) => m.id), ["c1", "c2", "c3"]);
  assert.match(posted[0].error.message, /integer "tab", got "2"/);
  assert.match(posted[1].error.message, /list of domains or null, got "shop.test"/);
  assert.match(posted[2].error.message, /http\(s\) "url", got "javascript:alert\(1\)"/);
  assert.equal(gates.handle({ type: "cdp", id: "c4" }), false);
});
