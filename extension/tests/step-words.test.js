// Steps in words: the element's role and name come from the page XML the panel saw.
import { test } from "node:test";
import assert from "node:assert/strict";

import { describeCall, describePlanned, elementIn, faviconOf, spansTabs, tabWords }
  from "../panel/step-words.js";

const PAGE = `<page url="https://shop.example/cart" title="Cart" snapshot="baseline">
<region name="main">
Colour <radio id="r1" label="Slate" checked="true"/> <radio id="r2" label="Sand"/>
Quantity <input id="q9" type="number" value="1"/>
Password <input id="pw" type="password"/>
<button id="b2" type="submit">Place order &amp; pay</button>
<a id="k3">Back to the shop</a>
<select id="s4" label="Country" value="Portugal" options="2" first="Portugal|Spain"/>
<input id="e5" placeholder="you@example.org"/>
</region>
</page>`;

test("the role and name of an element come from its tag, label, text or line", () => {
  assert.deepEqual(elementIn(PAGE, "r1"), { role: "radio", name: "Slate", secret: false });
  assert.deepEqual(elementIn(PAGE, "q9"), { role: "number field", name: "Quantity",
    secret: false });
  assert.deepEqual(elementIn(PAGE, "b2"), { role: "submit button", name: "Place order & pay",
    secret: false });
  assert.equal(elementIn(PAGE, "e5").name, "you@example.org");
  assert.equal(elementIn(PAGE, "zz"), null);
});

test("calls read as sentences", () => {
  const pages = [PAGE];
  assert.equal(describeCall("check", { id: "r1" }, pages), "Checked “Slate” (radio)");
  assert.equal(describeCall("type", { id: "q9", text: "2" }, pages), "Typed 2 into Quantity");
  assert.equal(describeCall("navigate", { url: "https://checkout.example.com/pay?x=1" }, pages),
    "Opened checkout.example.com");
  assert.equal(describeCall("click", { id: "k3" }, pages), "Clicked “Back to the shop” (link)");
  assert.equal(describeCall("select", { id: "s4", value: "Spain" }, pages),
    "Chose “Spain” in Country");
  assert.equal(describeCall("press", { key: "Enter", modifiers: ["Control"] }, pages),
    "Pressed Control+Enter");
  assert.equal(describeCall("capture_snapshot", {}, pages), "Read the page");
});

test("a secret is not repeated, and an unseen element is named by its id", () => {
  assert.equal(describeCall("type", { id: "pw", text: "hunter2" }, [PAGE]),
    "Typed a secret into Password");
  assert.equal(describeCall("click", { id: "x7" }, [PAGE]), "Clicked element x7");
});

test("the newest page that has the element names it", () => {
  const newer = '<page snapshot="diff">\n<radio id="r1" label="Slate grey"/>\n</page>';
  assert.equal(describeCall("check", { id: "r1" }, [newer, PAGE]),
    "Checked “Slate grey” (radio)");
  assert.equal(describeCall("check", { id: "r2", on: false }, [newer, PAGE]),
    "Unchecked “Sand” (radio)");
});

test("a call that did not happen reads as what it would have done", () => {
  assert.equal(describePlanned("click", { id: "b2" }, [PAGE]),
    "click “Place order & pay” (submit button)");
  assert.equal(describePlanned("type", { id: "q9", text: "3" }, [PAGE]), "type 3 into Quantity");
});

test("an outside agent's call reads in words from the element the host named", () => {
  assert.equal(describeCall("click", { id: "z1" }, [], { role: "button", name: "Buy now" }),
    "Clicked “Buy now” (button)");
  assert.equal(describeCall("click", { id: "z2" }, [], { role: "a", name: "Returns" }),
    "Clicked “Returns” (link)");
  // The log is not told what an outside agent typed.
  assert.equal(describeCall("type", { id: "z3" }, [], { role: "textbox", name: "E-mail" }),
    "Typed into E-mail");
  assert.equal(describeCall("click", { id: "z4" }, [], null), "Clicked element z4");
});

test("a step's tab is named by its title and site, quoted, cut, or by its id", () => {
  assert.equal(tabWords({ title: "Provider: sign in", url: "http://127.0.0.1:8001/p?x=1" }, 8),
    "in “Provider: sign in” (127.0.0.1:8001)");
  assert.equal(tabWords({ title: "", url: "https://shop.test/" }, 8), "in “shop.test”");
  assert.equal(tabWords(null, 8), "in tab 8");
  const long = tabWords({ title: "x".repeat(200), url: "" }, 8);
  assert.ok(long.length < 70 && long.endsWith("…”"), long);
});

test("steps name their tab once the task has acted in a second tab", () => {
  assert.equal(spansTabs([{ kind: "task" }, { kind: "tool", tab: 5 }, { kind: "tool", tab: 5 }]),
    false);
  assert.equal(spansTabs([{ kind: "tool", tab: 5 }, { kind: "declined", tab: 8 }]), false);
  assert.equal(spansTabs([{ kind: "tool", tab: 5 }, { kind: "tool", tab: 8 }]), true);
  assert.equal(spansTabs([{ kind: "tool" }, { kind: "tool" }]), false);
});

test("a favicon comes from the browser's cache, for web pages only", () => {
  const getURL = (path) => `chrome-extension://id${path}`;
  assert.equal(faviconOf("https://shop.test/a?b=1", getURL),
    "chrome-extension://id/_favicon/?pageUrl=https%3A%2F%2Fshop.test%2Fa%3Fb%3D1&size=16");
  for (const url of ["javascript:alert(1)", "data:text/html,x", "", undefined, "chrome://x"]) {
    assert.equal(faviconOf(url, getURL), "");
  }
});
