// The side panel's link to the service worker, which owns the native port: every
// host request from the panel goes through here.

/** An error from the host or from the link, with the protocol's error code. */
export class RequestError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   */
  constructor(code, message) {
    super(message);
    this.name = "RequestError";
    this.code = code;
  }
}

/**
 * A reconnecting port to the service worker. The worker can be restarted by the
 * browser at any time; requests in flight then fail, listeners hear
 * `{event: "worker", state: "disconnected"}`, and the next call reconnects.
 */
export class WorkerClient {
  constructor() {
    this.port = null;
    this.nextId = 1;
    /** @type {Map<number, {resolve: Function, reject: Function}>} */
    this.inflight = new Map();
    /** @type {Set<(event: object) => void>} */
    this.listeners = new Set();
  }

  /** @param {(event: object) => void} listener receives worker events */
  onEvent(listener) {
    this.listeners.add(listener);
  }

  connect() {
    if (this.port) return this.port;
    const port = chrome.runtime.connect({ name: "sidepanel" });
    port.onMessage.addListener((msg) => {
      if (msg.event) {
        for (const listener of this.listeners) listener(msg);
        return;
      }
      const entry = this.inflight.get(msg.id);
      if (!entry) return;
      this.inflight.delete(msg.id);
      if (msg.ok) entry.resolve(msg.result);
      else entry.reject(new RequestError(msg.error?.code ?? "internal",
        msg.error?.message ?? "unknown error"));
    });
    port.onDisconnect.addListener(() => {
      if (this.port === port) this.port = null;
      const pending = [...this.inflight.values()];
      this.inflight.clear();
      for (const entry of pending) {
        entry.reject(new RequestError("host_unavailable",
          "the extension's service worker restarted; try again"));
      }
      for (const listener of this.listeners) listener({ event: "worker", state: "disconnected" });
    });
    this.port = port;
    return port;
  }

  /**
   * @param {string} op
   * @param {object} fields
   * @param {AbortSignal} [signal] when it aborts, the worker is asked to cancel the op
   * @returns {Promise<any>}
   */
  call(op, fields = {}, signal = undefined) {
    if (signal?.aborted) {
      return Promise.reject(new RequestError("cancelled", `"${op}" was cancelled`));
    }
    const port = this.connect();
    const id = this.nextId++;
    const onAbort = () => {
      if (this.inflight.has(id) && this.port === port) port.postMessage({ op: "cancel", of: id });
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    return new Promise((resolve, reject) => {
      const done = () => signal?.removeEventListener("abort", onAbort);
      this.inflight.set(id, {
        resolve: (value) => { done(); resolve(value); },
        reject: (err) => { done(); reject(err); },
      });
      port.postMessage({ id, op, ...fields });
    });
  }

  /**
   * Send one request to the host through the worker's native port.
   * @param {{type: string} & Record<string, unknown>} request
   * @param {{timeoutMs?: number, signal?: AbortSignal}} [options] aborting `signal`
   *   sends the host `cancel` for the request; it then ends with the code `cancelled`
   * @returns {Promise<any>} the reply's `result`
   */
  host(request, { timeoutMs, signal } = {}) {
    return this.call("host", { request, timeoutMs }, signal);
  }

  /** @returns {Promise<{connected: boolean, lastError: string, attached: number[]}>} */
  status() {
    return this.call("status");
  }
}
