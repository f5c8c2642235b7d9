// The CDP relay: the host decides every CDP command, this module only runs it on a
// tab with chrome.debugger and sends back results, events and detaches
// (host/PROTOCOL.md, "The CDP relay").

const DEBUGGER_VERSION = "1.3";

/** Fetch patterns of a new tab's hold: every request, at the request stage. */
export const HOLD_PATTERNS = [{ urlPattern: "*", requestStage: "Request" }];

/**
 * Turn a chrome.debugger failure into a CDP-style error object. Chrome puts the
 * protocol error as JSON text in the message ({"code":-32000,"message":"..."});
 * anything else (not attached, tab gone) keeps its text under the generic code.
 * @param {unknown} err
 * @returns {{code: number, message: string, data?: string}}
 */
export function cdpErrorOf(err) {
  const text = String(err?.message ?? err ?? "unknown error");
  try {
    const parsed = JSON.parse(text);
    if (parsed && typeof parsed.code === "number") {
      const out = { code: parsed.code, message: String(parsed.message ?? "") };
      if (parsed.data !== undefined) out.data = String(parsed.data);
      return out;
    }
  } catch {
    // not JSON: a chrome.debugger error in plain words
  }
  return { code: -32000, message: text };
}

/**
 * The `cdp_result` answering request `id` with what `action` gives, or its failure
 * as a CDP-style error (the host reads every request's result the same way).
 * @param {string|number|undefined} id
 * @param {() => Promise<object|void>} action
 */
export async function resultOf(id, action) {
  try {
    return { type: "cdp_result", id, result: (await action()) ?? {} };
  } catch (err) {
    return { type: "cdp_result", id, error: cdpErrorOf(err) };
  }
}

/**
 * Relays CDP between the host and chrome.debugger.
 */
export class CdpRelay {
  /**
   * @param {{send: (msg: object) => void,
   *          onDetached?: (tabId: number, reason: string) => void,
   *          debuggerApi?: typeof chrome.debugger}} options
   *   `send` posts one message to the host and throws if it cannot (no host, or
   *   Chrome refused the message); `onDetached` tells the side panel.
   */
  constructor({ send, onDetached = () => {}, debuggerApi }) {
    this.send = send;
    this.onDetached = onDetached;
    this.dbg = debuggerApi ?? chrome.debugger;
    /** Tabs this extension attached to. */
    this.attached = new Set();
    /** Per tab, the attach in progress: a second request for the tab waits for it
     *  instead of attaching again (which would detach the first one's session). */
    this.attaching = new Map();
    /** Per tab, the release of a host that went away (its input let go, then the
     *  detach): a new host's attach waits for it, or the old detach would end the new
     *  host's session. */
    this.releasing = new Map();
    /** Per tab, the input the host pressed and has not released yet (mouse buttons,
     *  keys), as the events that release it: if the host goes away mid-action,
     *  `releaseAll` lets go of them, so no button or key stays down in the tab. */
    this.held = new Map();
    /** Per new tab held before its first request (`hold`), until the host lets it run:
     *  its events so far, and whether the host turned its own Fetch on in it. */
    this.waiting = new Map();
    /** Per tab, the requests Fetch paused for the host that it has not decided yet, by
     *  session and request id: if the host goes away, they are failed before the
     *  debugger is detached, which would send them on (Chrome lets a request go when the
     *  session that paused it ends), undecided. */
    this.paused = new Map();
    this.onEvent = (source, method, params) => {
      if (source.tabId === undefined || !this.attached.has(source.tabId)) return;
      if (method === "Fetch.requestPaused") this.notePaused(source, params);
      const waiting = this.waiting.get(source.tabId);
      if (waiting) {
        // Kept for the host's guard, which listens once it set up (see `hold`).
        waiting.events.push({ session: source.sessionId ?? null, method, params });
        return;
      }
      this.reply({
        type: "cdp_event",
        tab: source.tabId,
        session: source.sessionId ?? null,
        method,
        params: params ?? {},
      });
    };
    this.onDetach = (source, reason) => {
      if (source.tabId === undefined) return;
      this.attached.delete(source.tabId);
      this.held.delete(source.tabId);
      this.waiting.delete(source.tabId);
      this.paused.delete(source.tabId);
      this.post({ type: "cdp_detached", tab: source.tabId, reason });
      this.onDetached(source.tabId, reason);
    };
    this.dbg.onEvent.addListener(this.onEvent);
    this.dbg.onDetach.addListener(this.onDetach);
  }

  /**
   * Handle one host → extension message if it is a relay command.
   * @param {object} msg
   * @returns {boolean} whether the message was a relay command
   */
  handle(msg) {
    switch (msg.type) {
      case "cdp":
        this.run(msg, () => this.command(msg));
        return true;
      case "cdp_attach":
        this.run(msg, () => this.attach(msg.tab));
        return true;
      case "cdp_detach":
        this.run(msg, () => this.detach(msg.tab));
        return true;
      default:
        return false;
    }
  }

  async run(msg, action) {
    let reply;
    try {
      if (!Number.isInteger(msg.tab)) {
        throw new Error(`"${msg.type}" needs an integer "tab", got ${JSON.stringify(msg.tab)}`);
      }
      reply = { type: "cdp_result", id: msg.id, result: (await action()) ?? {} };
    } catch (err) {
      reply = { type: "cdp_result", id: msg.id, error: cdpErrorOf(err) };
    }
    this.reply(reply);
  }

  /**
   * Post one message to the host. A result Chrome refuses to post (over its 64 MiB
   * limit of one message, which is also the host's largest frame) becomes an error
   * result, or the host's command would never settle; an event that cannot be
   * posted is dropped, not split. Chrome measures the message while it serializes
   * it, so a result is serialized once, by Chrome, not first here to be measured:
   * a large page's DOM is several megabytes of JSON.
   */
  reply(message) {
    try {
      this.send(message);
    } catch (err) {
      if (message.type !== "cdp_result" || message.error) return;
      this.post({
        type: "cdp_result",
        id: message.id,
        error: { code: -32000, message: `the CDP result could not be sent to the host: `
          + `${err?.message ?? err}` },
      });
    }
  }

  /** Post one message, dropping it if the host is gone (it learns nothing more).
   *  @returns {boolean} whether it was posted */
  post(message) {
    try {
      this.send(message);
      return true;
    } catch {
      // no host to tell: a new one starts with a fresh relay state
      return false;
    }
  }

  async command(msg) {
    if (typeof msg.method !== "string" || !msg.method) {
      throw new Error(`"cdp" needs a method name, got ${JSON.stringify(msg.method)}`);
    }
    /** @type {chrome.debugger.DebuggerSession} */
    const target = { tabId: msg.tab };
    if (msg.session) target.sessionId = msg.session;
    this.noteInput(msg.tab, msg.method, msg.params ?? {});
    this.noteDecided(msg.tab, msg.session ?? null, msg.method, msg.params ?? {});
    const waiting = msg.session ? undefined : this.waiting.get(msg.tab);
    if (waiting && msg.method === "Fetch.enable") waiting.hostFetch = true;
    if (waiting && msg.method === "Fetch.disable") waiting.events = [];
    if (waiting && msg.method === "Runtime.runIfWaitingForDebugger") {
      // The hold is the relay's, not the browser's: it answers, and lets the tab run.
      // (Sent to Chrome, the command would wait as long as the tab's first document is
      // paused: with no document yet, the tab's Runtime does not answer.)
      await this.letRun(msg.tab);
      return {};
    }
    return await this.dbg.sendCommand(target, msg.method, msg.params ?? {});
  }

  /**
   * Attach to a tab a task's tab just opened and hold it before its first request
   * leaves the browser, as a browser holds a target auto-attached with
   * waitForDebuggerOnStart (which chrome.debugger cannot do for a new tab): Fetch
   * pauses every request of the tab, and its events wait here, until the host sends
   * the tab Runtime.runIfWaitingForDebugger (host/PROTOCOL.md, "Tabs").
   * @param {number} tabId
   */
  async hold(tabId) {
    this.waiting.set(tabId, { events: [], hostFetch: false });
    try {
      await this.attach(tabId);
      await this.dbg.sendCommand({ tabId }, "Fetch.enable", { patterns: HOLD_PATTERNS });
    } catch (err) {
      this.waiting.delete(tabId);
      throw err;
    }
  }

  /**
   * The host let a held tab run. With its own Fetch on (its request guard), the
   * requests the hold paused are its to decide: their events reach it now, after it
   * set up its listener. Without, it wants the tab unguarded: the hold lets them go.
   * @param {number} tabId
   */
  async letRun(tabId) {
    const waiting = this.waiting.get(tabId);
    if (!waiting) return;
    this.waiting.delete(tabId);
    if (waiting.hostFetch) {
      for (const { session, method, params } of waiting.events) {
        this.reply({ type: "cdp_event", tab: tabId, session, method, params: params ?? {} });
      }
      return;
    }
    this.paused.delete(tabId); // the hold's own: let go below, as the host wants
    try {
      await this.dbg.sendCommand({ tabId }, "Fetch.disable", {});
    } catch {
      // The tab closed: nothing is held any more.
    }
  }

  /**
   * Remember a request Fetch paused in a tab, until the host decides it.
   * @param {chrome.debugger.DebuggerSession} source
   * @param {Record<string, any>} params
   */
  notePaused(source, params) {
    const tab = /** @type {number} */ (source.tabId);
    let paused = this.paused.get(tab);
    if (!paused) this.paused.set(tab, (paused = new Map()));
    const session = source.sessionId ?? null;
    const requestId = params?.requestId;
    // A document failed as "blocked" shows the browser's error page; aborted, the page
    // stays as it is (the host fails documents so too).
    const reason = params?.resourceType === "Document" ? "Aborted" : "BlockedByClient";
    paused.set(`${session}\u0000${requestId}`, { session, requestId, reason });
  }

  /**
   * The host decided a paused request (sent it on, failed or answered it), or turned
   * Fetch off in a session, which lets every request paused there go.
   * @param {number} tab
   * @param {string|null} session
   * @param {string} method
   * @param {Record<string, any>} params
   */
  noteDecided(tab, session, method, params) {
    const paused = this.paused.get(tab);
    if (!paused || !method.startsWith("Fetch.")) return;
    if (method === "Fetch.disable") {
      for (const [key, request] of paused) if (request.session === session) paused.delete(key);
    } else if (params.requestId !== undefined) {
      paused.delete(`${session}\u0000${params.requestId}`);
    }
    if (paused.size === 0) this.paused.delete(tab);
  }

  /**
   * Remember a press until its release (noted before sending: if the host dies while
   * the press is in flight, it is released all the same).
   * @param {number} tabId
   * @param {string} method
   * @param {Record<string, any>} params
   */
  noteInput(tabId, method, params) {
    let held = this.held.get(tabId);
    if (method === "Input.dispatchMouseEvent") {
      const key = `mouse:${params.button ?? "left"}`;
      if (params.type === "mousePressed") {
        held ??= this.held.set(tabId, new Map()).get(tabId);
        held.set(key, { method, params: { ...params, type: "mouseReleased" } });
      } else if (params.type === "mouseReleased") {
        held?.delete(key);
      }
    } else if (method === "Input.dispatchKeyEvent") {
      const key = `key:${params.code || params.key}`;
      if (params.type === "keyDown" || params.type === "rawKeyDown") {
        held ??= this.held.set(tabId, new Map()).get(tabId);
        const { key: name, code, windowsVirtualKeyCode, modifiers } = params;
        held.set(key, { method, params: { type: "keyUp", key: name, code,
          windowsVirtualKeyCode, modifiers } });
      } else if (params.type === "keyUp") {
        held?.delete(key);
      }
    }
    if (held && held.size === 0) this.held.delete(tabId);
  }

  /**
   * The host is gone (it exited or crashed): release every button and key it held
   * down and detach from every tab, so no tab is left debugged with input stuck.
   * @param {string} reason
   */
  async releaseAll(reason) {
    const releases = [...this.attached].map((tabId) => {
      const release = this.release(tabId, reason).finally(() => this.releasing.delete(tabId));
      this.releasing.set(tabId, release);
      return release;
    });
    await Promise.all(releases);
  }

  /** Let go of what the gone host held in one tab (a page busy in its mousedown
   *  handler takes the release late), fail the requests it had not decided (nobody
   *  can any more: the page sees them fail, the site never gets them), then detach
   *  from it. */
  async release(tabId, reason) {
    for (const { method, params } of this.held.get(tabId)?.values() ?? []) {
      try {
        await this.dbg.sendCommand({ tabId }, method, params);
      } catch {
        // the tab is gone or hung: detaching below ends its input state anyway
      }
    }
    this.held.delete(tabId);
    const undecided = [...(this.paused.get(tabId)?.values() ?? [])];
    this.paused.delete(tabId);
    await Promise.all(undecided.map(async ({ session, requestId, reason }) => {
      /** @type {chrome.debugger.DebuggerSession} */
      const target = { tabId };
      if (session) target.sessionId = session;
      try {
        await this.dbg.sendCommand(target, "Fetch.failRequest",
          { requestId, errorReason: reason });
      } catch {
        // already gone on (the tab closed, the request ended): nothing to fail
      }
    }));
    await this.detach(tabId);
    this.onDetached(tabId, reason);
  }

  async attach(tabId) {
    // A new host that wants a tab the gone host still held waits for its release.
    await this.releasing.get(tabId);
    if (this.attached.has(tabId)) return {};
    // Two requests for a tab the host has not attached yet (the side panel's snapshot
    // and the agent's tool call, after a host restart) share one attach.
    let pending = this.attaching.get(tabId);
    if (!pending) {
      pending = this.attachOnce(tabId).finally(() => this.attaching.delete(tabId));
      this.attaching.set(tabId, pending);
    }
    await pending;
    return {};
  }

  async attachOnce(tabId) {
    try {
      await this.dbg.attach({ tabId }, DEBUGGER_VERSION);
    } catch (err) {
      // After a service-worker restart our own earlier attach may still hold the tab:
      // detaching succeeds only for a session of this extension, so this never takes
      // a tab from another debugger.
      if (!String(err?.message ?? "").includes("already attached")) throw err;
      try {
        await this.dbg.detach({ tabId });
      } catch {
        throw err;
      }
      await this.dbg.attach({ tabId }, DEBUGGER_VERSION);
    }
    this.attached.add(tabId);
  }

  async detach(tabId) {
    if (!this.attached.has(tabId)) return {};
    this.attached.delete(tabId);
    this.held.delete(tabId);
    this.waiting.delete(tabId);
    this.paused.delete(tabId);
    try {
      await this.dbg.detach({ tabId });
    } catch {
      // Already gone (tab closed): detached is what the host asked for.
    }
    return {};
  }

  /** Tabs attached right now, for the side panel and tests. */
  attachedTabs() {
    return [...this.attached];
  }
}
