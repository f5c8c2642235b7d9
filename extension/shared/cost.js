// What a task cost: tokens in (cached or not) and out, model calls, and money
// when the person has entered prices.

/**
 * @typedef {{calls: number, input: number, cacheRead: number, cacheWrite: number,
 *            output: number, images?: number, imageTokens?: number}} Totals
 *   `images`, `imageTokens`: the screenshots sent and their estimated share of the input
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
    ...(totals.images ? { images: totals.images, imageTokens: totals.imageTokens ?? 0 } : {}),
  };
}

/**
 * The totals after one more image sent to the model (a screenshot), with its tokens
 * by `imageTokens`. Its tokens are in the input the provider reports; this says how
 * much of it was pictures.
 * @param {Totals} totals
 * @param {number} tokens
 * @returns {Totals}
 */
export function addImage(totals, tokens) {
  return { ...totals, images: (totals.images ?? 0) + 1,
    imageTokens: (totals.imageTokens ?? 0) + tokens };
}

/**
 * The input tokens one image costs, by the provider's published formula.
 * Anthropic: width x height / 750, after it scales the image to a long side of at
 * most 1,568 px and about 1.19 megapixels. OpenAI (and compatible servers, which
 * mostly follow it): the image fit in 2,048 x 2,048, then its short side to at most
 * 768; 85 tokens plus 170 per 512 px tile.
 * @param {string} provider "anthropic", "openai" or "compatible"
 * @param {number} width
 * @param {number} height
 * @returns {number}
 */
export function imageTokens(provider, width, height) {
  if (!(width > 0 && height > 0)) return 0;
  if (provider === "anthropic") {
    const scale = Math.min(1, 1568 / Math.max(width, height),
      Math.sqrt(1_192_464 / (width * height)));
    return Math.ceil((width * scale) * (height * scale) / 750);
  }
  let w = width;
  let h = height;
  const fit = Math.min(1, 2048 / Math.max(w, h));
  w *= fit;
  h *= fit;
  const shorter = Math.min(1, 768 / Math.min(w, h));
  w *= shorter;
  h *= shorter;
  return 85 + 170 * Math.ceil(w / 512) * Math.ceil(h / 512);
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
  const images = totals.images
    ? `; ${n(totals.images)} image${totals.images === 1 ? "" : "s"} ≈ ${n(totals.imageTokens ?? 0)}`
    : "";
  const parts = [
    `${n(totals.calls)} model call${totals.calls === 1 ? "" : "s"}`,
    `input ${n(totals.input + cached)} tokens (${n(totals.cacheRead)} read from cache, `
      + `${n(totals.cacheWrite)} written to it, ${n(totals.input)} uncached${images})`,
    `output ${n(totals.output)}`,
  ];
  if (cost !== null) parts.push(`cost ${cost < 0.01 ? cost.toFixed(4) : cost.toFixed(2)}`);
  return parts.join(" · ");
}
