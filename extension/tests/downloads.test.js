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
