// Unit tests of the task tabs' relay part, over recording chrome.tabs, chrome.windows,
// chrome.tabGroups and relay stand-ins.
import { test } from "node:test";
import assert from "node:assert/strict";

import { TabWatch, mayLoadTheWeb } from "../worker/tabs.js";

/**
 * A small browser: windows (normal or popup), tabs in them, groups; and a relay that
 * records what it is asked.
 */
function fakeBrowser() {
  const windows = new Map([[1, { type: "normal" }], [2, { type: "normal" }]]);
  const tabs = new Map();
  const groups = new Map();
  const calls = [];
  let nextTab = 100;
  let nextGroup = 500;
  const attached = new Set();
  const posted = [];
  const browser = {
    windows, tabs, groups, calls, attached, posted, owned: [],
    addTab(id, windowId = 1, extra = {}) {
      const index = [...tabs.values()].filter((t) => t.windowId === windowId).length;
      tabs.set(id, { id, windowId, index, groupId: -1, ...extra });
      return tabs.get(id);
    },
    tabsApi: {
      async get(id) {
        const tab = tabs.get(id);
        if (!tab) throw new Error(`No tab with id: ${id}.`);
        return tab;
      },
      async create(props) {
        calls.push(["create", props]);
        const id = nextTab++;
        return browser.addTab(id, props.windowId ?? 1, { url: props.url });
      },
      async remove(id) {
        calls.push(["remove", id]);
        if (!tabs.delete(id)) throw new Error(`No tab with id: ${id}.`);
      },
      async group({ tabIds, groupId, createProperties }) {
        calls.push(["group", tabIds, groupId]);
        // Chrome makes a new group in the window focused last unless told which.
        if (groupId === undefined && createProperties?.windowId !== tabs.get(tabIds[0]).windowId) {
          throw new Error("Tabs can only be moved to and from normal windows.");
        }
        for (const id of tabIds) {
          if (windows.get(tabs.get(id).windowId).type !== "normal") {
            throw new Error("Tabs can only be moved to and from normal windows.");
          }
        }
        const group = groupId ?? nextGroup++;
        if (!groups.has(group)) groups.set(group, { windowId: tabs.get(tabIds[0]).windowId });
        for (const id of tabIds) tabs.get(id).groupId = group;
        return group;
      },
    },
    windowsApi: {
      async get(id) {
        const win = windows.get(id);
        if (!win) throw new Error(`No window with id: ${id}.`);
        return win;
      },
    },
    groupsApi: {
      async get(id) {
        const group = groups.get(id);
        if (!group) throw new Error(`No group with id: ${id}.`);
        return group;
      },
      async update(id, props) {
        calls.push(["title", id, props.title]);
        Object.assign(groups.get(id), props);
        return groups.get(id);
      },
    },
    relay: {
      attachedTabs: () => [...attached],
      async hold(id) {
        calls.push(["hold", id]);
        if (!tabs.has(id)) throw new Error(`No tab with given id ${id}.`);
        attached.add(id);
      },
      async detach(id) {
        calls.push(["detach", id]);
        attached.delete(id);
        return {};
      },
    },
  };
  browser.watch = new TabWatch({
    post: (msg) => posted.push(msg),
    relay: browser.relay,
    tabs: browser.tabsApi,
    windows: browser.windowsApi,
    groups: browser.groupsApi,
    ownTab: async (tab) => { browser.owned.push(tab); },
  });
  return browser;
}

/** Send one host request and wait for its cdp_result. */
async function request(browser, msg) {
  const before = browser.posted.length;
  browser.watch.handle(msg);
  while (browser.posted.length === before) await new Promise((r) => setTimeout(r, 0));
  return browser.posted.pop();
}

test("a tab opened from an attached tab is held before the host hears of it", async () => {
  const b = fakeBrowser();
  b.addTab(7);
  b.attached.add(7);
  await request(b, { type: "tab_group", id: "c1", tabs: [7], title: "Sign in" });
  b.windows.set(3, { type: "popup" });
  const popup = b.addTab(8, 3, { openerTabId: 7, pendingUrl: "http://127.0.0.1:9/provider" });
  b.calls.length = 0;
  await b.watch.onCreated(popup);
  assert.deepEqual(b.posted, [{ type: "tab_opened", tab: 8, opener: 7,
    url: "http://127.0.0.1:9/provider", popup: true, waiting: true }]);
  assert.deepEqual(b.calls, [["hold", 8]]);
  // A pop-up's own pop-up is held too (the first one is attached).
  const second = b.addTab(9, 1, { openerTabId: 8 });
  await b.watch.onCreated(second);
  assert.equal(b.posted.at(-1).waiting, true);
});

test("a tab opened from a tab attached for the inspector is held too: the host lets it run", async () => {
  const b = fakeBrowser();
  b.addTab(7);
  b.attached.add(7);
  const opened = b.addTab(9, 1, { openerTabId: 7, url: "" });
  await b.watch.onCreated(opened);
  assert.deepEqual(b.posted, [{ type: "tab_opened", tab: 9, opener: 7, url: "", popup: false,
    waiting: true }]);
  assert.deepEqual(b.calls, [["hold", 9]]);
});

test("tabs opened from tabs the relay is not attached to, or by nobody, are not reported", async () => {
  const b = fakeBrowser();
  b.addTab(7);
  await b.watch.onCreated(b.addTab(9, 1, { openerTabId: 7 }));
  await b.watch.onCreated(b.addTab(10, 1));
  b.watch.onRemoved(9);
  b.watch.onRemoved(10);
  assert.deepEqual(b.posted, []);
});

test("a pop-up that closes before it can be attached is reported as not held", async () => {
  const b = fakeBrowser();
  b.addTab(7);
  b.attached.add(7);
  await request(b, { type: "tab_group", id: "c1", tabs: [7], title: "T" });
  b.posted.length = 0;
  const gone = { id: 8, windowId: 1, openerTabId: 7 }; // never in the browser's tab list
  await b.watch.onCreated(gone);
  assert.deepEqual(b.posted, [{ type: "tab_opened", tab: 8, opener: 7, url: "", popup: false,
    waiting: false }]);
  b.watch.onRemoved(8);
  assert.deepEqual(b.posted.at(-1), { type: "tab_closed", tab: 8 });
});

test("tab_group makes one group with the task's title and extends it later", async () => {
  const b = fakeBrowser();
  b.addTab(7);
  b.addTab(8);
  const first = await request(b, { type: "tab_group", id: "c1", tabs: [7], title: "Book a table" });
  assert.deepEqual(first, { type: "cdp_result", id: "c1", result: { group: 500, outside: [] } });
  const second = await request(b, { type: "tab_group", id: "c2", tabs: [7, 8],
    title: "Book a table" });
  assert.deepEqual(second.result, { group: 500, outside: [] });
  assert.equal(b.groups.get(500).title, "Book a table");
  assert.equal(b.tabs.get(8).groupId, 500);
  assert.deepEqual(b.calls.filter(([kind]) => kind === "group"),
    [["group", [7], undefined], ["group", [7, 8], 500]]);
});

test("a pop-up window's tab cannot join a group: it is named outside, the rest is grouped", async () => {
  const b = fakeBrowser();
  b.windows.set(3, { type: "popup" });
  b.addTab(7);
  b.addTab(8, 3);
  const reply = await request(b, { type: "tab_group", id: "c1", tabs: [7, 8], title: "Sign in" });
  assert.deepEqual(reply.result, { group: 500, outside: [8] });
  const alone = await request(b, { type: "tab_group", id: "c2", tabs: [8], title: "Other" });
  assert.deepEqual(alone.result, { group: null, outside: [8] });
});

test("a group the person closed is made again; a tab in another window starts no second group", async () => {
  const b = fakeBrowser();
  b.addTab(7);
  b.addTab(9, 2);
  await request(b, { type: "tab_group", id: "c1", tabs: [7], title: "T" });
  b.groups.delete(500);
  const again = await request(b, { type: "tab_group", id: "c2", tabs: [7, 9], title: "T" });
  assert.deepEqual(again.result, { group: 501, outside: [9] });
});

test("bad tab requests are answered with an error, never thrown", async () => {
  const b = fakeBrowser();
  for (const msg of [
    { type: "tab_group", id: "e1", tabs: [], title: "T" },
    { type: "tab_group", id: "e2", tabs: ["7"], title: "T" },
    { type: "tab_group", id: "e3", tabs: [7], title: null },
    { type: "tab_group", id: "e4", tabs: [404], title: "T" },
    { type: "cdp_new_tab", id: "e5", url: "" },
    { type: "cdp_close_tab", id: "e6", tab: "x" },
  ]) {
    const reply = await request(b, msg);
    assert.equal(reply.id, msg.id);
    assert.equal(typeof reply.error?.message, "string", JSON.stringify(reply));
  }
});

test("cdp_new_tab opens beside its opener, and the tab is never reported as a page's", async () => {
  const b = fakeBrowser();
  b.addTab(7);
  b.attached.add(7);
  const reply = await request(b, { type: "cdp_new_tab", id: "c1", url: "http://127.0.0.1:1/",
    opener: 7, active: false });
  assert.deepEqual(reply, { type: "cdp_result", id: "c1", result: { tab: 100 } });
  assert.deepEqual(b.calls[0], ["create", { url: "http://127.0.0.1:1/", active: false,
    windowId: 1, index: 1 }]);
  // Even if Chrome reported an opener for it, it is the host's own tab.
  await b.watch.onCreated({ ...b.tabs.get(100), openerTabId: 7 });
  assert.deepEqual(b.posted, []);
  // Out of every gate before the host hears of it: the host judges its loads itself.
  assert.deepEqual(b.owned, [100]);
});

test("cdp_new_tab from a pop-up opens where Chrome puts new tabs, not in the pop-up", async () => {
  const b = fakeBrowser();
  b.windows.set(3, { type: "popup" });
  b.addTab(8, 3);
  await request(b, { type: "cdp_new_tab", id: "c1", url: "http://127.0.0.1:1/", opener: 8 });
  assert.deepEqual(b.calls[0], ["create", { url: "http://127.0.0.1:1/", active: true }]);
});

test("cdp_close_tab closes the tab; a tab already gone counts as closed", async () => {
  const b = fakeBrowser();
  b.addTab(7);
  assert.deepEqual((await request(b, { type: "cdp_close_tab", id: "c1", tab: 7 })).result, {});
  assert.deepEqual((await request(b, { type: "cdp_close_tab", id: "c2", tab: 7 })).result, {});
  assert.equal(b.tabs.size, 0);
});

test("a tab dragged out of its task's group leaves the task, once", async () => {
  const b = fakeBrowser();
  b.addTab(7);
  b.addTab(8);
  await request(b, { type: "tab_group", id: "c1", tabs: [7, 8], title: "T" });
  b.posted.length = 0;
  b.watch.onUpdated(8, { status: "complete" });
  b.watch.onUpdated(8, { groupId: 500 });
  assert.deepEqual(b.posted, []);
  b.watch.onUpdated(8, { groupId: -1 });
  b.watch.onUpdated(8, { groupId: 777 });
  assert.deepEqual(b.posted, [{ type: "tab_left", tab: 8 }]);
});

test("a known tab that closes is reported closed; the host's memory of it can go", async () => {
  const b = fakeBrowser();
  b.addTab(7);
  b.attached.add(7);
  b.watch.onRemoved(7);
  b.attached.delete(7);
  b.watch.onRemoved(7);
  assert.deepEqual(b.posted, [{ type: "tab_closed", tab: 7 }]);
  assert.equal(b.watch.known.size + b.watch.grouped.size + b.watch.mine.size, 0);
});

test("messages that are not tab requests are left to the others", () => {
  const b = fakeBrowser();
  assert.equal(b.watch.handle({ type: "cdp", id: "c1", tab: 1 }), false);
  assert.equal(b.watch.handle({ type: "ask" }), false);
});

test("a held tab whose opening could not reach the host is let go at once", async () => {
  const b = fakeBrowser();
  b.addTab(7);
  b.attached.add(7);
  b.watch.post = () => false; // the host went away
  await b.watch.onCreated(b.addTab(8, 1, { openerTabId: 7 }));
  assert.deepEqual(b.calls, [["hold", 8], ["detach", 8]]);
});

test("a tab opened on an extension's page or the new tab page is reported, not held", async () => {
  const b = fakeBrowser();
  b.addTab(7);
  b.attached.add(7);
  await b.watch.onCreated(b.addTab(8, 1, { openerTabId: 7,
    pendingUrl: "chrome-extension://abc/panel/sidepanel.html?opener=1" }));
  await b.watch.onCreated(b.addTab(9, 1, { openerTabId: 7, pendingUrl: "chrome://newtab/" }));
  assert.deepEqual(b.calls, []);
  assert.deepEqual(b.posted.map((m) => [m.tab, m.waiting]), [[8, false], [9, false]]);
  for (const url of ["", "about:blank", "http://127.0.0.1:1/", "HTTPS://shop.test/"]) {
    assert.equal(mayLoadTheWeb(url), true, url);
  }
  for (const url of ["chrome://newtab/", "chrome-extension://x/y", "devtools://d", "file:///x"]) {
    assert.equal(mayLoadTheWeb(url), false, url);
  }
});
