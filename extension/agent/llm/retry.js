// Retrying a model call the provider turned away for now (rate limit, overload), and
// naming the errors a person can fix themselves.

/** HTTP statuses that say "try again later": rate-limited, unavailable, overloaded. */
export const RETRY_STATUSES = new Set([429, 503, 529]);
/** Retries after the first attempt. */
export const RETRIES = 3;
/** The longest wait between attempts, in seconds, whatever the provider asks. */
export const MAX_WAIT_S = 30;

/**
 * Seconds to wait before retry `attempt` (1-based): the provider's Retry-After when it
 * gave one, else 2, 4, 8 s; never more than MAX_WAIT_S.
 * @param {number} attempt
 * @param {number|null|undefined} retryAfter
 */
export function retryWait(attempt, retryAfter) {
  const wait = Number.isFinite(retryAfter) && /** @type {number} */ (retryAfter) >= 0
    ? Math.ceil(/** @type {number} */ (retryAfter)) : 2 ** attempt;
  return Math.min(MAX_WAIT_S, wait);
}

/** Whether an error from a model call is worth retrying as it is. */
export function retryable(err) {
  return RETRY_STATUSES.has(err?.status);
}

/** Whether the provider refused the key (the person must fix it in Settings). */
export function keyRejected(err) {
  return err?.status === 401 || err?.status === 403;
}

/**
 * Call `send` until it answers, retrying RETRIES times on a retryable error.
 * @template T
 * @param {() => Promise<T>} send
 * @param {{onRetry?: (retry: {attempt: number, of: number, seconds: number,
 *                             status: number}) => void,
 *          sleep?: (ms: number, signal?: AbortSignal) => Promise<void>,
 *          signal?: AbortSignal}} [options]
 *   `onRetry`: before each wait, so the person sees it
 *   `sleep`: waits (aborted with the signal)
 * @returns {Promise<T>}
 */
export async function withRetries(send, { onRetry = () => {}, sleep = abortableSleep,
  signal } = {}) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (err) {
      if (!retryable(err) || attempt > RETRIES || signal?.aborted) throw err;
      const seconds = retryWait(attempt, err.retryAfter);
      onRetry({ attempt, of: RETRIES, seconds, status: err.status });
      await sleep(seconds * 1000, signal);
    }
  }
}

/** setTimeout as a promise that rejects when `signal` aborts. */
export function abortableSleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason ?? new Error("aborted"));
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason ?? new Error("aborted"));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
