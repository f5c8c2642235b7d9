// What a task cost: tokens in (cached or not) and out, model calls, and money
// when the person has entered prices.

/**
 * @typedef {{calls: number, input: number, cacheRead: number, cacheWrite: number,
 *            output: number}} Totals
 * @typedef {{input?: number|null, cachedInput?: number|null, output?: number|null}} Prices
 *   US dollars (or any currency) per million tokens; missing means unknown.
 */

/** @returns {Totals} */
export function emptyTotals() {
  return { calls: 0, input: 0, cacheRead: 0, cacheWrite: 0, output: 0 };
}

/**
 * The totals after one more model call.
 * @param {Totals} totals
 * @param {{input: number, cacheRead: number, cacheWrite: number, output: number}} usage
 *   one call's usage, as agent/requests.js reads it
 * @returns {Totals}
 */
export function addUsage(totals, usage) {
  return {
    calls: totals.calls + 1,
    input: totals.input + usage.input,
    cacheRead: totals.cacheRead + usage.cacheRead,
    cacheWrite: totals.cacheWrite + usage.cacheWrite,
    output: totals.output + usage.output,
  };
}

/**
 * How much writing the cache costs, as a multiple of the input price: Anthropic
 * charges 1.25x for its 5-minute cache; OpenAI does not charge for it.
 * @param {string} provider "anthropic", "openai" or "compatible"
 */
export function cacheWriteFactor(provider) {
  return provider === "anthropic" ? 1.25 : 1;
}

const positive = (v) => typeof v === "number" && Number.isFinite(v) && v >= 0;

/**
 * The cost of the totals, or null while a price it needs is missing. Cached input
 * without its own price costs the input price.
 * @param {Totals} totals
 * @param {Prices} prices
 * @param {string} provider
 * @returns {number|null}
 */
export function costOf(totals, prices, provider) {
  if (!positive(prices.input) || !positive(prices.output)) return null;
  const cached = positive(prices.cachedInput) ? prices.cachedInput : prices.input;
  return (totals.input * prices.input
    + totals.cacheWrite * prices.input * cacheWriteFactor(provider)
    + totals.cacheRead * cached
    + totals.output * prices.output) / 1_000_000;
}

/**
 * The totals in one line for the panel.
 * @param {Totals} totals
 * @param {number|null} cost
 */
export function describeTotals(totals, cost) {
  const n = (v) => v.toLocaleString("en-US");
  const cached = totals.cacheRead + totals.cacheWrite;
  const parts = [
    `${n(totals.calls)} model call${totals.calls === 1 ? "" : "s"}`,
    `input ${n(totals.input + cached)} tokens (${n(totals.cacheRead)} read from cache, `
      + `${n(totals.cacheWrite)} written to it, ${n(totals.input)} uncached)`,
    `output ${n(totals.output)}`,
  ];
  if (cost !== null) parts.push(`cost ${cost < 0.01 ? cost.toFixed(4) : cost.toFixed(2)}`);
  return parts.join(" · ");
}
