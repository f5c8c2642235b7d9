// Tabs the debugger cannot attach to are named up front, with the reason.
import { test } from "node:test";
import assert from "node:assert/strict";

import { closedReason } from "../shared/tab-access.js";

test("Chrome's own pages, other extensions and the Web Store are closed", () => {
  for (const url of ["chrome://version/", "chrome://newtab/", "chrome-extension://abc/x.html",
    "devtools://devtools/bundled/inspector.html", "view-source:https://example.org/",
    "about:settings", "https://chromewebstore.google.com/detail/x",
    "https://chrome.google.com/webstore/category/extensions"]) {
    assert.match(closedReason(url), /Chrome does not let extensions/, url);
  }
});

test("web pages, about:blank and unknown URLs are left to the attach itself", () => {
  for (const url of ["https://example.org/", "http://127.0.0.1:8000/a.html", "about:blank",
    "file:///tmp/a.html", "", undefined, "not a url"]) {
    assert.equal(closedReason(url), "", String(url));
  }
});
