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
 * browser at any time; requests in flight then fail and the next one reconnects.
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
    });
    this.port = port;
    return port;
  }

  /**
   * @param {string} op
   * @param {object} fields
   * @returns {Promise<any>}
   */
  call(op, fields = {}) {
    const port = this.connect();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.inflight.set(id, { resolve, reject });
      port.postMessage({ id, op, ...fields });
    });
  }

  /**
   * Send one request to the host through the worker's native port.
   * @param {{type: string} & Record<string, unknown>} request
   * @param {number} [timeoutMs]
   * @returns {Promise<any>} the reply's `result`
   */
  host(request, timeoutMs) {
    return this.call("host", { request, timeoutMs });
  }

  /** @returns {Promise<{connected: boolean, lastError: string, attached: number[]}>} */
  status() {
    return this.call("status");
  }
}
