// Unit tests of the cost meter.
import { test } from "node:test";
import assert from "node:assert/strict";

import { addUsage, costOf, describeTotals, emptyTotals } from "../shared/cost.js";

const two = () => addUsage(addUsage(emptyTotals(),
  { input: 100, cacheRead: 0, cacheWrite: 5000, output: 20 }),
{ input: 50, cacheRead: 5000, cacheWrite: 400, output: 30 });

test("totals add up every call's tokens and count the calls", () => {
  assert.deepEqual(two(), { calls: 2, input: 150, cacheRead: 5000, cacheWrite: 5400, output: 50 });
});

test("Anthropic cache writes cost 1.25x the input price, reads the cached price", () => {
  const prices = { input: 3, cachedInput: 0.3, output: 15 };
  const expected = (150 * 3 + 5400 * 3.75 + 5000 * 0.3 + 50 * 15) / 1e6;
  assert.ok(Math.abs(costOf(two(), prices, "anthropic") - expected) < 1e-12);
  const openai = (150 * 3 + 5400 * 3 + 5000 * 0.3 + 50 * 15) / 1e6;
  assert.ok(Math.abs(costOf(two(), prices, "openai") - openai) < 1e-12);
});

test("no cost is shown until input and output prices are set", () => {
  assert.equal(costOf(two(), {}, "anthropic"), null);
  assert.equal(costOf(two(), { input: 3 }, "anthropic"), null);
  assert.notEqual(costOf(two(), { input: 3, output: 15 }, "anthropic"), null);
});

test("the line for the panel names calls, cached and uncached input, output and cost", () => {
  const line = describeTotals(two(), 0.0345);
  assert.equal(line, "2 model calls · input 10,550 tokens (5,000 read from cache, 5,400 "
    + "written to it, 150 uncached) · output 50 · cost 0.03");
  assert.ok(!describeTotals(two(), null).includes("cost"));
});
