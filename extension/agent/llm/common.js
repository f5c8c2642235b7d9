// What the LLM clients share: errors and the HTTP call.

/** A failed call to an LLM provider, in words a person can act on. */
export class LlmError extends Error {
  /**
   * @param {string} message
   * @param {number|null} status HTTP status, null when no response came
   * @param {number|null} retryAfter seconds the provider asked to wait (Retry-After)
   */
  constructor(message, status = null, retryAfter = null) {
    super(message);
    this.name = "LlmError";
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

/**
 * POST JSON and return the parsed JSON answer, or throw an LlmError carrying the
 * provider's own error message.
 * @param {string} url
 * @param {Record<string, string>} headers
 * @param {object} body
 * @param {AbortSignal} [signal]
 * @returns {Promise<any>}
 */
export async function postJson(url, headers, body, signal) {
  let response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
      signal,
    });
  } catch (err) {
    if (err?.name === "AbortError") throw err;
    throw new LlmError(`could not reach ${new URL(url).origin}: ${err?.message ?? err}`);
  }
  const text = await response.text();
  let data = null;
  try {
    data = JSON.parse(text);
  } catch {
    // reported below with the status
  }
  if (!response.ok) {
    const detail = data?.error?.message ?? text.slice(0, 300);
    const wait = Number(response.headers.get("retry-after"));
    throw new LlmError(`${new URL(url).origin} answered HTTP ${response.status}: ${detail}`,
      response.status, response.headers.has("retry-after") && Number.isFinite(wait)
        ? wait : null);
  }
  if (data === null || typeof data !== "object") {
    throw new LlmError(`${new URL(url).origin} answered with something that is not JSON`,
      response.status);
  }
  return data;
}

/**
 * Join a base URL and a path without doubling or dropping a slash.
 * @param {string} base
 * @param {string} path
 */
export function joinUrl(base, path) {
  return base.replace(/\/+$/, "") + "/" + path.replace(/^\/+/, "");
}
