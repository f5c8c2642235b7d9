// Unit tests of the downloads relay: chrome.downloads items become the host's messages.
import { test } from "node:test";
import assert from "node:assert/strict";

import { downloadMessage, relayDownloads } from "../worker/downloads.js";

test("a finished download names its file, size, type and path", () => {
  const message = downloadMessage({ id: 4, url: "http://127.0.0.1:9/export",
    finalUrl: "http://127.0.0.1:9/export/report.csv", filename: "/home/p/Downloads/report.csv",
    mime: "text/csv", totalBytes: 84, fileSize: 84, state: "complete" });
  assert.deepEqual(message, { type: "download", tab: null, download: 4,
    url: "http://127.0.0.1:9/export/report.csv", name: "report.csv", size: 84,
    mime: "text/csv", path: "/home/p/Downloads/report.csv", state: "complete" });
});

test("a download just begun has no path and takes its name from the URL", () => {
  const message = downloadMessage({ id: 5, url: "http://127.0.0.1:9/files/a%20b.zip",
    filename: "", mime: "", totalBytes: -1, fileSize: -1, state: "in_progress" });
  assert.equal(message.name, "a b.zip");
  assert.equal(message.size, null);
  assert.equal(message.path, null);
  assert.equal(message.state, "in_progress");
});

test("an interrupted download keeps no path, and an unknown state is in progress", () => {
  const item = { id: 6, url: "http://127.0.0.1:9/x.zip", filename: "C:\\Users\\p\\x.zip",
    totalBytes: 10, state: "interrupted" };
  assert.equal(downloadMessage(item).path, null);
  assert.equal(downloadMessage(item).name, "x.zip");
  assert.equal(downloadMessage({ ...item, state: "paused" }).state, "in_progress");
});

test("starts and changes are relayed; a host that is away drops them", async () => {
  const listeners = {};
  const api = {
    onCreated: { addListener: (f) => { listeners.created = f; } },
    onChanged: { addListener: (f) => { listeners.changed = f; } },
    async search({ id }) {
      return [{ id, url: "http://127.0.0.1:9/r.csv", filename: "/d/r.csv", totalBytes: 3,
        state: "complete" }];
    },
  };
  const sent = [];
  let away = false;
  relayDownloads(api, (m) => { if (away) throw new Error("not connected"); sent.push(m); });
  listeners.created({ id: 1, url: "http://127.0.0.1:9/r.csv", filename: "", totalBytes: 3,
    state: "in_progress" });
  await listeners.changed({ id: 1, state: { current: "complete" } });
  assert.deepEqual(sent.map((m) => [m.download, m.state, m.path]),
    [[1, "in_progress", null], [1, "complete", "/d/r.csv"]]);
  away = true;
  listeners.created({ id: 2, url: "http://127.0.0.1:9/s.csv", state: "in_progress" });
  assert.equal(sent.length, 2);
});

test("a download question says a file would be saved and quotes the site's words", async () => {
  const { describeQuestion } = await import("../shared/questions.js");
  const words = describeQuestion({ client: "cursor 1.0", tab: 3, what: "download",
    tool: "click", args: { id: "a1" }, reason: "Clicking it saves a file from http://127.0.0.1",
    element: '<download name="report&lt;1&gt;.csv" size="84" type="text/csv"/>', eid: null,
    timeout: 50, request: { method: "GET", url: "http://127.0.0.1:9/export/report.csv",
      site: "http://127.0.0.1" } }, { title: "Orders", url: "http://127.0.0.1:9/" });
  assert.equal(words.want, "cursor 1.0's click in a tab on http://127.0.0.1:9 would save a file "
    + "from http://127.0.0.1 on this computer. Allow?");
  const quoted = words.quotes.map((q) => q.text).join(" ");
  assert.match(quoted, /report<1>\.csv/);
  assert.match(quoted, /export\/report\.csv/);
});

test("a download an acting tab starts is held, reported, and let go or cancelled", async () => {
  const { DownloadHolds, schemeOf } = await import("../worker/downloads.js");
  assert.equal(schemeOf("blob:http://127.0.0.1:9/x"), "blob");
  assert.equal(schemeOf("data:text/plain,a"), "data");
  const done = [];
  const api = { cancel: async (id) => done.push(["cancel", id]),
    erase: async ({ id }) => done.push(["erase", id]) };
  const sent = [];
  let acting = [];
  const holds = new DownloadHolds({ downloads: api, post: (m) => { sent.push(m); return true; },
    acting: () => acting, tabUrl: async (tab) => (tab === 8 ? "http://127.0.0.1:9/p" : "https://b.example/") });
  const suggested = [];
  const item = (id, url) => ({ id, url, filename: "/d/itinerary.csv", mime: "text/csv",
    totalBytes: 52, state: "in_progress" });
  // No action runs: the person's download goes on at once.
  assert.equal(holds.onDetermining(item(1, "blob:http://127.0.0.1:9/u"), () => suggested.push(1)), false);
  acting = [7, 8];
  assert.equal(holds.onDetermining(item(2, "blob:http://127.0.0.1:9/u"), () => suggested.push(2)), true);
  assert.equal(holds.onDetermining(item(3, "blob:http://other.test/u"), () => suggested.push(3)), true);
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.deepEqual(sent, [{ type: "download_held", tab: 8, download: 2,
    url: "blob:http://127.0.0.1:9/u", name: "itinerary.csv", size: 52, mime: "text/csv",
    scheme: "blob" }]);
  assert.deepEqual(suggested, [3]); // no acting tab of its origin: not the agent's
  await holds.decide({ download: 2, allow: true });
  assert.deepEqual(suggested, [3, 2]);
  acting = [7];
  holds.onDetermining(item(4, "data:text/plain,a"), () => suggested.push(4));
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(sent.at(-1).tab, 7);
  await holds.decide({ download: 4, allow: false });
  assert.deepEqual(done, [["cancel", 4], ["erase", 4]]);
  assert.deepEqual(suggested, [3, 2]);
  await assert.rejects(holds.decide({ download: "4", allow: true }), /integer "download", got "4"/);
  await assert.rejects(holds.decide({ download: 4, allow: 1 }), /boolean "allow", got 1/);
});

test("what the host left undecided when it went is cancelled, never saved", async () => {
  const { DownloadHolds } = await import("../worker/downloads.js");
  const done = [];
  const api = { cancel: async (id) => done.push(id), erase: async () => {} };
  const holds = new DownloadHolds({ downloads: api, post: () => false, acting: () => [5],
    tabUrl: async () => "" });
  const suggested = [];
  holds.onDetermining({ id: 9, url: "blob:http://a.test/u", state: "in_progress" },
    () => suggested.push(9));
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.deepEqual(done, [9]); // no host to tell: cancelled at once
  assert.deepEqual(suggested, []);
});
