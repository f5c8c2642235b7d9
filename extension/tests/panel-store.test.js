// The side panel's state store (panel/store.js): updates reach the views that listen
// to the fields they name, and the state object the end-to-end tests read stays one.
import { test } from "node:test";
import assert from "node:assert/strict";

import { createStore, panelState } from "../panel/store.js";

test("an update calls each listener of a named field once, in the order they subscribed", () => {
  const store = createStore({ a: 1, b: 2, c: 3 });
  const heard = [];
  store.subscribe(["a", "b"], (s) => heard.push(`first a=${s.a} b=${s.b}`));
  store.subscribe(["c"], () => heard.push("second"));
  store.subscribe(["b"], () => heard.push("third"));
  store.update({ a: 10, b: 20 });
  assert.deepEqual(heard, ["first a=10 b=20", "third"]);
});

test("a field set to the value it has is announced again, so views redraw", () => {
  const store = createStore({ closed: "" });
  let draws = 0;
  store.subscribe(["closed"], () => { draws += 1; });
  store.update({ closed: "" });
  store.update({ closed: "" });
  assert.equal(draws, 2);
});

test("the state object stays the same one while its fields change", () => {
  const state = { view: "inspect" };
  const store = createStore(state);
  store.update({ view: "agent" });
  assert.equal(store.state, state);
  assert.equal(state.view, "agent");
});

test("a listener that unsubscribes hears no more updates", () => {
  const store = createStore({ a: 0 });
  const heard = [];
  const leave = store.subscribe(["a"], (s) => heard.push(s.a));
  store.update({ a: 1 });
  leave();
  store.update({ a: 2 });
  assert.deepEqual(heard, [1]);
});

test("a field the state lacks is refused by name, in an update or a subscription", () => {
  const store = createStore(panelState());
  assert.throws(() => store.update({ runing: true }), /no field "runing"/);
  assert.throws(() => store.subscribe(["veiw"], () => {}), /no field "veiw"/);
  assert.equal(store.state.running, false);
});

test("each panel gets a state of its own, with nothing shared between two", () => {
  const one = panelState();
  const two = panelState();
  one.steps.push({ kind: "task" });
  one.tabsSeen.set(1, { title: "t", url: "u" });
  assert.deepEqual(two.steps, []);
  assert.equal(two.tabsSeen.size, 0);
  assert.equal(one.view, "inspect");
});
