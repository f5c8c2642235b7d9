// Model calls turned away for now (429/503/529) are retried a few times, visibly;
// other errors are not.
import { test } from "node:test";
import assert from "node:assert/strict";

import { LlmError } from "../agent/llm/common.js";
import { RETRIES, keyRejected, retryWait, withRetries } from "../agent/llm/retry.js";

/** A send that fails with the given statuses, then answers "ok". */
function failing(statuses, retryAfter = null) {
  let calls = 0;
  const send = async () => {
    const status = statuses[calls++];
    if (status) throw new LlmError(`HTTP ${status}`, status, retryAfter);
    return "ok";
  };
  return { send, calls: () => calls };
}

test("an overloaded provider is retried with the waits shown, then answers", async () => {
  const { send, calls } = failing([529, 429]);
  const retries = [];
  const waits = [];
  const answer = await withRetries(send, {
    onRetry: (r) => retries.push(r), sleep: async (ms) => { waits.push(ms); },
  });
  assert.equal(answer, "ok");
  assert.equal(calls(), 3);
  assert.deepEqual(retries, [
    { attempt: 1, of: RETRIES, seconds: 2, status: 529 },
    { attempt: 2, of: RETRIES, seconds: 4, status: 429 },
  ]);
  assert.deepEqual(waits, [2000, 4000]);
});

test("the provider's Retry-After sets the wait, within the cap", async () => {
  assert.equal(retryWait(1, 1), 1);
  assert.equal(retryWait(1, 0.2), 1);
  assert.equal(retryWait(2, 600), 30);
  assert.equal(retryWait(3, null), 8);
});

test("after RETRIES retries the last error is thrown", async () => {
  const { send, calls } = failing([503, 503, 503, 503, 503]);
  await assert.rejects(withRetries(send, { sleep: async () => {} }), /HTTP 503/);
  assert.equal(calls(), RETRIES + 1);
});

test("a rejected key is not retried, and is named as such", async () => {
  const { send, calls } = failing([401]);
  let error = null;
  await withRetries(send, { sleep: async () => {} }).catch((err) => { error = err; });
  assert.equal(calls(), 1);
  assert.ok(keyRejected(error));
  assert.ok(!keyRejected(new LlmError("x", 500)));
});

test("a stop during the wait ends the retries", async () => {
  const { send, calls } = failing([529, 529]);
  const controller = new AbortController();
  const pending = withRetries(send, { signal: controller.signal,
    onRetry: () => controller.abort(new Error("stopped")) });
  await assert.rejects(pending, /stopped/);
  assert.equal(calls(), 1);
});
