// Steps in words: the element's role and name come from the page XML the panel saw.
import { test } from "node:test";
import assert from "node:assert/strict";

import { describeCall, describePlanned, elementIn } from "../panel/step-words.js";

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
