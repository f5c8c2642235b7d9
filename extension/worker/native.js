// The one native-messaging port to the Trimtab host, shared by everything in the
// service worker. Requests get ids and timeouts and can be cancelled; `chunk` replies
// are reassembled; when the host exits the port reconnects with exponential backoff.
// The host counts as connected once it has answered, not when the port opens: Chrome
// opens a port to a host that is not installed, then closes it at once.

export const HOST_NAME = "com.trimtab.host";

/** Per-request-type timeouts in ms: a snapshot of a heavy page or a tool that
 * waits for a navigation can take much longer than a ping. */
const TIMEOUTS = {
  ping: 5_000,
  snapshot: 60_000,
  tool: 120_000,
  cancel: 15_000,
  tools: 15_000,
  highlight: 15_000,
  release: 15_000,
  // Every question of a run waits for the person (the caller gives its own limit).
  routine_run: 30 * 60_000,
};
const DEFAULT_TIMEOUT = 30_000;
// A request sent while the host is still starting (a Python process importing its
// modules, slow on a busy machine) starts its own timeout once the host first answers;
// until then it waits at most this long for the host to start.
const START_UP_MS = 30_000;

const BACKOFF_FIRST_MS = 250;
const BACKOFF_MAX_MS = 30_000;

/** An error reply from the host, or a local failure shaped like one. */
export class HostError extends Error {
  /**
   * @param {string} code one of the error codes of host/PROTOCOL.md, or
   *   "host_unavailable" / "timeout" for failures on this side
   * @param {string} message
   */
  constructor(code, message) {
    super(message);
    this.name = "HostError";
    this.code = code;
  }
}

/**
 * Reassembles `chunk` messages into the reply they carry.
 * Kept separate from the port so it can be tested on its own.
 */
export class ChunkAssembler {
  constructor() {
    /** @type {Map<string, {count: number, parts: string[], got: number}>} */
    this.pending = new Map();
  }

  /**
   * Add one chunk; return the parsed message once all chunks of its reply arrived.
   * @param {{id: string|number, index: number, count: number, data: string}} chunk
   * @returns {object|null}
   */
  add(chunk) {
    const { id, index, count, data } = chunk;
    if (!Number.isInteger(count) || count < 1 || !Number.isInteger(index)
        || index < 0 || index >= count || typeof data !== "string") {
      throw new HostError("bad_frame", `malformed chunk for id ${JSON.stringify(id)}: `
        + `index ${index}, count ${count}`);
    }
    const key = JSON.stringify(id);
    let entry = this.pending.get(key);
    if (!entry) {
      entry = { count, parts: new Array(count), got: 0 };
      this.pending.set(key, entry);
    }
    if (entry.count !== count) {
      this.pending.delete(key);
      throw new HostError("bad_frame", `chunk count changed from ${entry.count} to ${count} `
        + `for id ${key}`);
    }
    if (entry.parts[index] === undefined) entry.got += 1;
    entry.parts[index] = data;
    if (entry.got < count) return null;
    this.pending.delete(key);
    return JSON.parse(entry.parts.join(""));
  }

  /** Forget a reply that will never complete (its request timed out). */
  drop(id) {
    this.pending.delete(JSON.stringify(id));
  }
}

/**
 * The connection to the host. `onMessage` receives every message that is not a
 * reply to one of our requests (the host's `cdp*` commands to the relay).
 */
export class HostConnection {
  /**
   * @param {{onMessage: (msg: object) => void,
   *          onStateChange?: (state: "connected"|"disconnected", detail: string) => void,
   *          connect?: (name: string) => chrome.runtime.Port}} options
   *   `connect` is replaceable so the logic can run outside a browser.
   */
  constructor({ onMessage, onStateChange = () => {}, connect }) {
    this.onMessage = onMessage;
    this.onStateChange = onStateChange;
    this.connectFn = connect ?? ((name) => chrome.runtime.connectNative(name));
    /** @type {chrome.runtime.Port|null} */
    this.port = null;
    this.nextId = 1;
    /** @type {Map<string, {resolve: Function, reject: Function, timer: any, type: string,
     *                      start: (() => void)|null}>} */
    this.inflight = new Map();
    this.chunks = new ChunkAssembler();
    this.backoffMs = BACKOFF_FIRST_MS;
    this.reconnectTimer = null;
    this.lastError = "";
    this.connectCount = 0;
    /** Whether the host on the open port has answered anything yet. */
    this.answered = false;
  }

  /** A port is open (requests can be sent; the host may still turn out missing). */
  get connected() {
    return this.port !== null;
  }

  /** The host on the open port has answered: it runs. */
  get alive() {
    return this.port !== null && this.answered;
  }

  /** Open the port now unless it is open; cancels a pending backoff timer. */
  ensureConnected() {
    if (this.port) return;
    if (this.reconnectTimer !== null) {
      clearTimeout(this.reconnectTimer);
      this.reconnectTimer = null;
    }
    let port;
    try {
      port = this.connectFn(HOST_NAME);
    } catch (err) {
      this.lastError = String(err?.message ?? err);
      this.scheduleReconnect();
      return;
    }
    this.port = port;
    this.answered = false;
    this.connectCount += 1;
    port.onMessage.addListener((msg) => this.receive(port, msg));
    port.onDisconnect.addListener(() => this.disconnected(port));
    // Its answer says the host runs (receive() reports "connected" on it).
    this.request({ type: "ping" }).catch(() => {});
  }

  /**
   * Send a request to the host and wait for its reply.
   * @param {{type: string} & Record<string, unknown>} request without `id`
   * @param {{timeoutMs?: number, signal?: AbortSignal}} [options] when `signal` aborts
   *   while the request is in flight, the host is sent `cancel` for it and the request
   *   ends with the host's answer (the error code `cancelled` once it stopped)
   * @returns {Promise<any>} the `result` field of the reply
   */
  request(request, { timeoutMs, signal } = {}) {
    if (!request || typeof request.type !== "string") {
      return Promise.reject(new HostError("bad_message",
        `a host request needs a string "type", got ${JSON.stringify(request)}`));
    }
    this.ensureConnected();
    if (!this.port) {
      return Promise.reject(new HostError("host_unavailable",
        `the Trimtab host is not reachable (${this.lastError || "not connected"}); `
        + "run `trimtab install` and reload the extension"));
    }
    if (signal?.aborted) {
      return Promise.reject(new HostError("cancelled", `"${request.type}" was cancelled`));
    }
    const id = `x${this.nextId++}`;
    const ms = timeoutMs ?? TIMEOUTS[request.type] ?? DEFAULT_TIMEOUT;
    const onAbort = () => {
      if (this.inflight.has(id)) {
        this.request({ type: "cancel", request: id }).catch(() => {});
      }
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    const done = () => signal?.removeEventListener("abort", onAbort);
    return new Promise((resolve, reject) => {
      const expire = (why) => () => {
        this.inflight.delete(id);
        this.chunks.drop(id);
        done();
        reject(new HostError("timeout", why));
      };
      const entry = {
        resolve: (value) => { done(); resolve(value); },
        reject: (err) => { done(); reject(err); },
        timer: 0, type: request.type,
        /** Start the request's own time (the host runs). */
        start: () => {
          clearTimeout(entry.timer);
          entry.timer = setTimeout(expire(`the host did not answer "${request.type}" `
            + `within ${ms / 1000} s`), ms);
          entry.start = null;
        },
      };
      if (this.answered) {
        entry.start();
      } else {
        entry.timer = setTimeout(expire(`the host did not start within ${START_UP_MS / 1000} s `
          + `to answer "${request.type}"`), START_UP_MS);
      }
      this.inflight.set(id, entry);
      try {
        this.port.postMessage({ ...request, id });
      } catch (err) {
        clearTimeout(entry.timer);
        this.inflight.delete(id);
        done();
        reject(new HostError("host_unavailable",
          `could not send "${request.type}" to the host: ${err?.message ?? err}`));
      }
    });
  }

  /**
   * Send a message that expects no reply (the relay's answers to the host).
   * Throws a HostError when it cannot: no port is open, or Chrome refused the
   * message (over its 64 MiB limit of one message, or a port that just closed).
   * Chrome checks the size while it serializes the message, so the caller learns
   * of an oversized message without serializing it a second time.
   */
  post(message) {
    if (!this.port) {
      throw new HostError("host_unavailable",
        `the Trimtab host is not connected (${this.lastError || "no port"})`);
    }
    try {
      this.port.postMessage(message);
    } catch (err) {
      throw new HostError("host_unavailable",
        `could not post ${JSON.stringify(message?.type)} to the host: ${err?.message ?? err}`);
    }
  }

  receive(port, msg) {
    if (port !== this.port || !msg || typeof msg !== "object") return;
    // The host is alive and talking: the next outage starts from a short delay.
    this.backoffMs = BACKOFF_FIRST_MS;
    if (!this.answered) {
      this.answered = true;
      this.lastError = "";
      // The requests sent while it started get their own time from now.
      for (const entry of this.inflight.values()) entry.start?.();
      this.onStateChange("connected", "");
    }
    if (msg.type === "chunk") {
      let whole;
      try {
        whole = this.chunks.add(msg);
      } catch (err) {
        this.settle(msg.id, null, err);
        return;
      }
      if (whole) this.receive(port, whole);
      return;
    }
    if ((msg.type === "result" || msg.type === "error") && msg.id !== null
        && this.inflight.has(String(msg.id))) {
      if (msg.type === "result") {
        this.settle(msg.id, msg.result ?? {}, null);
      } else {
        const e = msg.error ?? {};
        this.settle(msg.id, null, new HostError(e.code ?? "internal",
          e.message ?? "the host reported an error without a message"));
      }
      return;
    }
    this.onMessage(msg);
  }

  settle(id, value, error) {
    const key = String(id);
    const entry = this.inflight.get(key);
    if (!entry) return;
    this.inflight.delete(key);
    clearTimeout(entry.timer);
    if (error) entry.reject(error);
    else entry.resolve(value);
  }

  disconnected(port) {
    if (port !== this.port) return;
    // Reading lastError marks it handled; it says why (host exited, not found...).
    const why = chrome.runtime?.lastError?.message ?? "the host exited";
    this.lastError = why;
    this.port = null;
    this.answered = false;
    this.chunks = new ChunkAssembler();
    const pending = [...this.inflight.entries()];
    this.inflight.clear();
    for (const [, entry] of pending) {
      clearTimeout(entry.timer);
      entry.reject(new HostError("host_unavailable",
        `the host disconnected while handling "${entry.type}": ${why}`));
    }
    this.onStateChange("disconnected", why);
    this.scheduleReconnect();
  }

  scheduleReconnect() {
    if (this.reconnectTimer !== null) return;
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, BACKOFF_MAX_MS);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.ensureConnected();
    }, delay);
  }

  /** Connection facts for the side panel's status line and for tests. */
  status() {
    return {
      connected: this.alive,
      lastError: this.lastError,
      connects: this.connectCount,
      inflight: this.inflight.size,
    };
  }
}
