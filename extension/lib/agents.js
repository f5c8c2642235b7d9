// Agents outside the browser (trimtab mcp, the command line): the person stays in
// control, and this module is where the extension enforces it. The host's link
// (host/link) only lets a client touch the tabs listed here, asks here about any
// other tab and before a submit, and ends every client's session on Stop.
//
// Host → extension: {type: "agents_ask", ask, client, session, tab, what, ...}
//                   {type: "agents_event", event: "connected"|"disconnected"|"call", ...}
// Extension → host: agents_tabs {tabs}, agents_answer {ask, allow}, agents_stop {reason}
//
// The pure parts (the shared list, the activity log, the wording of a question)
// are exported for `node --test`; `AgentsHub` wires them to chrome.* in the worker.

/** Actions kept per client for the side panel's list. */
export const RECENT_ACTIONS = 20;
/** Clients kept after they left, so the person can still see what they did. */
export const RECENT_CLIENTS = 10;
/** What a shared tab shows on the toolbar icon. */
export const SHARED_BADGE = "AGT";

const STORAGE_KEY = "trimtabSharedTabs";

/**
 * The shared tabs as the host wants them: id, title, URL, in id order.
 * @param {Map<number, {id: number, title?: string, url?: string}>} shared
 */
export function sharedList(shared) {
  return [...shared.values()]
    .map((tab) => ({ id: tab.id, title: String(tab.title ?? ""), url: String(tab.url ?? "") }))
    .sort((a, b) => a.id - b.id);
}

/**
 * Fold one host event into the clients' activity: connections and their recent
 * calls, newest last, bounded. Returns a new map; the old one is not changed.
 * @param {Map<number, {session: number, client: string, connected: boolean,
 *   actions: Array<{tool: string, tab: number, error: string|null, at: number}>}>} clients
 * @param {{event: string, session: number, client?: string, tab?: number,
 *   tool?: string, error?: string|null}} event
 * @param {number} now
 */
export function applyEvent(clients, event, now) {
  const next = new Map(clients);
  if (!Number.isInteger(event?.session)) return next;
  const known = next.get(event.session);
  const entry = known
    ? { ...known, actions: [...known.actions] }
    : { session: event.session, client: String(event.client ?? "a client"), connected: true,
        actions: [] };
  if (event.event === "connected") entry.connected = true;
  else if (event.event === "disconnected") entry.connected = false;
  else if (event.event === "call") {
    entry.actions.push({ tool: String(event.tool ?? "?"), tab: Number(event.tab),
      error: event.error == null ? null : String(event.error), at: now });
    entry.actions.splice(0, Math.max(0, entry.actions.length - RECENT_ACTIONS));
  } else {
    return clients;
  }
  next.set(event.session, entry);
  // Forget the oldest clients that left; connected ones always stay.
  const gone = [...next.values()].filter((c) => !c.connected);
  for (const old of gone.slice(0, Math.max(0, gone.length - RECENT_CLIENTS))) {
    next.delete(old.session);
  }
  return next;
}

/**
 * The question the side panel shows for one of the host's `agents_ask`.
 * @param {{client: string, tab: number, what?: string, tool?: string,
 *   reason?: string, element?: {tag?: string} | null}} ask
 * @param {{title?: string, url?: string} | undefined} tab what chrome.tabs says of it
 */
export function describeAsk(ask, tab) {
  const client = ask.client || "An outside agent";
  const where = tab?.title || tab?.url || `tab ${ask.tab}`;
  if (ask.what === "submit") {
    const on = ask.element?.tag ? ` on <${ask.element.tag}>` : "";
    return `${client} wants to run ${ask.tool ?? "an action"}${on} in “${where}”: ` +
      `${ask.reason ?? "it may submit a form"}. Allow?`;
  }
  return `${client} asks to read and act in “${where}”, which is not shared with ` +
    "agents. Allow for this session?";
}

/**
 * Check a host message addressed to this module.
 * @param {unknown} msg
 * @returns {"ask"|"event"|null}
 */
export function kindOf(msg) {
  const type = /** @type {{type?: unknown}} */ (msg)?.type;
  if (type === "agents_ask") return "ask";
  if (type === "agents_event") return "event";
  return null;
}

/**
 * The worker's side: shared tabs (kept in chrome.storage.session across worker
 * restarts), pending questions, connected clients; it tells the host and the panels.
 */
export class AgentsHub {
  /**
   * @param {{host: {request: Function, connected: boolean},
   *          broadcast: (event: object) => void, panelCount: () => number}} options
   *   `panelCount` says how many side panels are open to ask the person in.
   */
  constructor({ host, broadcast, panelCount }) {
    this.host = host;
    this.broadcast = broadcast;
    this.panelCount = panelCount;
    /** @type {Map<number, {id: number, title: string, url: string}>} */
    this.shared = new Map();
    /** @type {Map<string, object>} */
    this.asks = new Map();
    this.clients = new Map();
    this.loaded = this.load();
    chrome.tabs.onRemoved.addListener((tabId) => {
      if (this.shared.delete(tabId)) this.changed();
    });
    chrome.tabs.onUpdated.addListener((tabId, info, tab) => {
      const known = this.shared.get(tabId);
      if (!known || (info.title === undefined && info.url === undefined)) return;
      this.shared.set(tabId, { id: tabId, title: tab.title ?? "", url: tab.url ?? "" });
      this.mark(tabId, true);
      this.changed();
    });
  }

  async load() {
    const stored = (await chrome.storage.session.get(STORAGE_KEY))[STORAGE_KEY] ?? [];
    for (const tab of stored) {
      try {
        const live = await chrome.tabs.get(tab.id);
        this.shared.set(tab.id, { id: tab.id, title: live.title ?? "", url: live.url ?? "" });
      } catch {
        // the tab closed while the worker slept
      }
    }
  }

  /** Handle a host message if it is ours. @returns {boolean} */
  handle(msg) {
    const kind = kindOf(msg);
    if (kind === "ask") {
      // No one can be asked, or nothing to ask about: say so at once rather than
      // leave the agent waiting for an answer that cannot come.
      const refuse = (why) => this.host.request({ type: "agents_answer",
        ask: String(msg.ask), allow: false, why }).catch(() => {});
      if (this.panelCount() === 0) {
        refuse("no Trimtab side panel is open to ask the person in");
        return true;
      }
      chrome.tabs.get(Number(msg.tab)).then(() => {
        this.asks.set(String(msg.ask), msg);
        this.notify();
      }, () => refuse(`there is no tab ${Number(msg.tab)} (it was closed, or never existed)`));
      return true;
    }
    if (kind === "event") {
      this.clients = applyEvent(this.clients, msg, Date.now());
      this.notify();
      return true;
    }
    return false;
  }

  /** The host (re)connected: it knows nothing of the shared tabs yet. */
  onHost(state) {
    if (state === "connected") this.push().catch(() => {});
    else {
      this.asks.clear();
      this.clients = new Map([...this.clients].map(([k, c]) => [k, { ...c, connected: false }]));
      this.notify();
    }
  }

  isShared(tabId) {
    return this.shared.has(tabId);
  }

  async share(tabId, on = true) {
    await this.loaded;
    if (on) {
      const tab = await chrome.tabs.get(tabId);
      this.shared.set(tabId, { id: tabId, title: tab.title ?? "", url: tab.url ?? "" });
    } else {
      this.shared.delete(tabId);
    }
    this.mark(tabId, on);
    await this.changed();
    return this.status();
  }

  async answer(ask, allow) {
    this.asks.delete(String(ask));
    this.notify();
    await this.host.request({ type: "agents_answer", ask: String(ask), allow: Boolean(allow) });
    return this.status();
  }

  /** Stop: end every outside session and share nothing any more. */
  async stop() {
    await this.loaded;
    for (const tabId of this.shared.keys()) this.mark(tabId, false);
    this.shared.clear();
    this.asks.clear();
    await this.changed();
    if (this.host.connected) {
      await this.host.request({ type: "agents_stop",
        reason: "the person stopped outside agents in Trimtab's side panel" });
    }
    return this.status();
  }

  status() {
    return {
      shared: sharedList(this.shared),
      asks: [...this.asks.values()],
      clients: [...this.clients.values()],
    };
  }

  mark(tabId, on) {
    chrome.action.setBadgeText({ tabId, text: on ? SHARED_BADGE : "" }).catch(() => {});
    chrome.action.setTitle({ tabId, title: on ? "Trimtab: shared with outside agents"
      : "Trimtab" }).catch(() => {});
  }

  async changed() {
    await chrome.storage.session.set({ [STORAGE_KEY]: sharedList(this.shared) });
    this.notify();
    await this.push().catch(() => {});
  }

  async push() {
    await this.loaded;
    if (this.host.connected) {
      await this.host.request({ type: "agents_tabs", tabs: sharedList(this.shared) });
    }
  }

  notify() {
    this.broadcast({ event: "agents", ...this.status() });
  }

  /** A side-panel op: {action: "status"|"share"|"answer"|"stop", ...}. */
  async op(msg) {
    switch (msg.action) {
      case "status":
        await this.loaded;
        return this.status();
      case "share":
        return await this.share(Number(msg.tab), msg.on !== false);
      case "answer":
        return await this.answer(msg.ask, msg.allow);
      case "stop":
        return await this.stop();
      default:
        throw new Error(`unknown agents action ${JSON.stringify(msg.action)}`);
    }
  }
}
