// Steps in words: the element's role and name come from the page XML the panel saw.
import { test } from "node:test";
import assert from "node:assert/strict";

import { describeCall, describePlanned, elementIn, faviconOf, fromHost, spansTabs, tabWords }
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

test("an element of a <links> or <buttons> list is named by its line's text", () => {
  const listed = `<page url="https://shop.example/" title="Shop">
<region name="nav">
k3 is also how this line of page text starts
<links>
k3 Tents &amp; shelters
qsx Sleeping bags
</links>
<buttons type="submit">
ab Deutsch
cd Français
</buttons>
</region>
</page>`;
  assert.deepEqual(elementIn(listed, "k3"), { role: "link", name: "Tents & shelters",
    secret: false });
  assert.equal(describeCall("click", { id: "qsx" }, [listed]), "Clicked “Sleeping bags” (link)");
  assert.equal(elementIn(listed, "is"), null);
  assert.deepEqual(elementIn(listed, "cd"), { role: "submit button", name: "Français",
    secret: false });
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

test("an outside agent's call reads in the same words from the elements the host named", () => {
  // The host names each element as the agent's snapshot showed it: tag, type, name.
  const told = { b2: { tag: "button", type: "submit", name: "Place order & pay" },
    k3: { tag: "a", type: "", name: "Back to the shop" },
    q9: { tag: "input", type: "number", name: "Quantity" },
    pw: { tag: "input", type: "password", name: "Password" },
    s4: { tag: "select", type: "", name: "Country" },
    r1: { tag: "radio", type: "", name: "Slate" } };
  // The panel's own steps over the page XML and an outside agent's over the host's
  // facts read alike.
  const calls = [["click", { id: "b2" }], ["click", { id: "k3" }], ["check", { id: "r1" }],
    ["select", { id: "s4", value: "Spain" }], ["type", { id: "q9", text: "2" }],
    ["type", { id: "pw", text: "hunter2" }], ["hover", { id: "k3" }],
    ["drag", { id: "r1", to: "b2" }], ["double_click", { id: "q9" }]];
  for (const [tool, args] of calls) {
    assert.equal(describeCall(tool, args, [], told), describeCall(tool, args, [PAGE]), tool);
  }
  assert.equal(describeCall("click", { id: "b2" }, [], told),
    "Clicked “Place order & pay” (submit button)");
  // The log is not told what an outside agent typed.
  assert.equal(describeCall("type", { id: "q9" }, [], told), "Typed into Quantity");
  assert.equal(describeCall("type", { id: "pw" }, [], told), "Typed a secret into Password");
  assert.equal(describeCall("click", { id: "z4" }, [], {}), "Clicked element z4");
  assert.deepEqual(fromHost({ tag: "textarea", type: "", name: "Note" }),
    { role: "text box", name: "Note", secret: false });
  assert.equal(fromHost("nonsense"), null);
});

test("a click without an id reads as what it aimed at, never as undefined", () => {
  assert.equal(describeCall("click", {}, []), "Clicked an element");
  assert.equal(describeCall("click", { text: "Add to bag" }, []), "Clicked “Add to bag”");
  assert.equal(describeCall("click", { x: 120.4, y: 48 }, []), "Clicked the point (120, 48)");
  assert.equal(describeCall("hover", { x: 3, y: 4 }, []), "Pointed at the point (3, 4)");
  assert.equal(describeCall("type", { text: "x" }, []), "Typed x into a field");
  assert.equal(describeCall("wait_for", {}, []), "Waited for an element");
  for (const tool of ["click", "double_click", "check", "hover", "drag", "select", "type",
    "upload", "select_text", "screenshot", "wait_for", "read", "scroll", "fill"]) {
    assert.ok(!/undefined|null/.test(describeCall(tool, {}, [])), tool);
  }
});

test("every tool an outside agent may call has words of its own", () => {
  const told = { f1: { tag: "input", type: "email", name: "E-mail" },
    f2: { tag: "input", type: "", name: "Name" } };
  const says = (tool, args) => describeCall(tool, args, [], told);
  assert.equal(says("fill", { fields: [{ id: "f1" }, { id: "f2" }] }), "Filled E-mail, Name");
  assert.equal(says("fill", { fields: [1, 2, 3, 4, 5].map(() => ({ id: "f2" })) }),
    "Filled Name, Name, Name and 2 more");
  assert.equal(says("upload", { id: "f2", files: 2 }), "Attached 2 files to “Name” (field)");
  assert.equal(says("screenshot", {}), "Took a screenshot");
  assert.equal(says("screenshot", { full_page: true }), "Took a screenshot of the whole page");
  assert.equal(says("new_tab", { url: "https://shop.test/a" }), "Opened shop.test in a new tab");
  assert.equal(says("close_tab", { tab: 7 }), "Closed tab 7");
  assert.equal(says("evaluate", {}), "Ran JavaScript on the page");
  assert.equal(says("console", {}), "Read the console");
  assert.equal(says("network", {}), "Read the network log");
  assert.equal(says("answer_dialog", { accept: true }), "Answered OK to the page's dialog");
  assert.equal(describePlanned("fill", { fields: [{ id: "q9" }] }, [PAGE]), "fill Quantity");
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
