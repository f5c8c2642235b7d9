// The untrusted block: where page data begins and ends in what the model reads.
// The syntax is the host's for outside agents (host/link/server/_untrusted.py), described
// once in the format page (host/FORMAT.md): <<<PAGE DATA X>>>, the data,
// <<<END PAGE DATA X>>>, X a random marker per conversation. No page can read the
// marker, and no page string can write a marker at all: inside a block, every "<"
// that starts "<<<" is written "&lt;", so the block ends exactly once.

/** The first "<" of every run of three, wherever it starts ("<<<<" → "&lt;&lt;<<"). */
const OPENS_A_MARKER = /<(?=<<)/g;

/**
 * A random marker the page cannot guess: 64 bits from the browser's
 * cryptographic generator.
 * @returns {string}
 */
export function makeNonce() {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Page data as one untrusted block marked with `nonce`.
 * @param {string} content
 * @param {string} nonce
 * @returns {string}
 */
export function wrapUntrusted(content, nonce) {
  const inside = String(content).replace(OPENS_A_MARKER, "&lt;");
  return `<<<PAGE DATA ${nonce}>>>\n${inside}\n<<<END PAGE DATA ${nonce}>>>`;
}
