// Unit tests of the cost meter.
import { test } from "node:test";
import assert from "node:assert/strict";

import {
  addImage, addUsage, costOf, describeTotals, emptyTotals, imageTokens,
} from "../shared/cost.js";

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

test("image tokens follow each provider's published formula", () => {
  // Anthropic: w x h / 750, the image first scaled to 1,568 px and about 1.19 megapixels.
  assert.equal(imageTokens("anthropic", 1280, 720), Math.ceil(1280 * 720 / 750));
  assert.equal(imageTokens("anthropic", 200, 100), 27);
  const big = imageTokens("anthropic", 4000, 3000);
  assert.ok(big <= 1590 && big >= 1580, String(big));
  // OpenAI: fit in 2,048, short side to 768, 85 + 170 per 512 px tile.
  assert.equal(imageTokens("openai", 1280, 720), 85 + 170 * 3 * 2);
  assert.equal(imageTokens("openai", 2048, 4096), 85 + 170 * 2 * 3); // 768 x 1536
  assert.equal(imageTokens("compatible", 512, 512), 85 + 170);
  assert.equal(imageTokens("openai", 0, 100), 0);
});

test("images are counted in the totals and named in the cost line", () => {
  const totals = addImage(addImage(two(), 1229), 100);
  assert.equal(totals.images, 2);
  assert.equal(totals.imageTokens, 1329);
  const after = addUsage(totals, { input: 1, cacheRead: 0, cacheWrite: 0, output: 1 });
  assert.equal(after.images, 2);
  assert.equal(after.calls, 3);
  assert.equal(describeTotals(totals, null), "2 model calls · input 10,550 tokens (5,000 read "
    + "from cache, 5,400 written to it, 150 uncached; 2 images ≈ 1,329) · output 50");
});
