// "Test connection": one tiny request to the provider, and what came of it in words.

import { keyRejected, retryable } from "./retry.js";

/** What the test asks: a one-word answer, no tools, a handful of tokens. */
export const PROBE = {
  system: "This is a connection test. Answer with the single word OK.",
  history: [{ role: "user", text: "Connection test: answer OK." }],
  tools: [],
  cacheKey: "trimtab-connection-test",
};

/**
 * Send the probe with `client` and say what the provider answered.
 * @param {{send: (request: object) => Promise<{text: string}>}} client
 * @param {{model: string, signal?: AbortSignal}} facts
 * @returns {Promise<{ok: boolean, message: string}>}
 */
export async function testConnection(client, { model, signal }) {
  try {
    const turn = await client.send({ ...PROBE, signal });
    const said = turn.text.trim().slice(0, 80) || "(no text)";
    return { ok: true, message: `Connected: ${model} answered “${said}”.` };
  } catch (err) {
    const message = String(err?.message ?? err);
    if (keyRejected(err)) {
      return { ok: false, message: `The provider refused the API key: ${message}` };
    }
    if (retryable(err)) {
      return { ok: false, message: `The key works but the provider is busy now: ${message}` };
    }
    return { ok: false, message: `No answer from the provider: ${message}` };
  }
}
