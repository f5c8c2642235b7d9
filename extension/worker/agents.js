// Agents outside the browser (trimtab mcp, the command line): the person stays in
// control, and this module is where the extension enforces it. The host's link
// (host/link) only lets a client touch the tabs listed here and ends every client's
// session on Stop; its questions (another tab, a submit) go through the one queue of
// questions (worker/questions.js) like the side panel agent's.
//
// Host → extension: {type: "agents_event", event: "connected"|"disconnected"|"acting"|"call",
//   ...}: a call is acting from its "acting" event until the "call" event of its number.
// Extension → host: agents_tabs {tabs}, agents_stop {reason} (every client),
//   agents_stop {session, reason} (one client; the others go on).
//
// The pure parts (the shared list, the activity log) are exported for `node --test`;
// `AgentsHub` wires them to chrome.* in the worker.

import { oneAtATime } from "../shared/serial.js";

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

/** Calls kept as acting now per client (the host lets a client have 16 in flight). */
const MAX_ACTING = 32;

/** Most elements kept of one call (fill names a field each). */
const MAX_ELEMENTS = 50;

/**
 * The elements of a host event, by id: tag, type and name as strings; anything else
 * the host did not send in that shape is left out.
 * @param {unknown} raw
 * @returns {Record<string, {tag: string, type: string, name: string}>}
 */
export function elementsOf(raw) {
  const found = {};
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return found;
  for (const [id, facts] of Object.entries(raw).slice(0, MAX_ELEMENTS)) {
    // An id is the host's, never this: assigning it would replace the object's prototype.
    if (id === "__proto__" || !facts || typeof facts !== "object") continue;
    found[id] = { tag: String(facts.tag ?? ""), type: String(facts.type ?? ""),
      name: String(facts.name ?? "") };
  }
  return found;
}

/**
 * Fold one host event into the clients' activity: connections, the calls acting now
 * and the recent calls, newest last, bounded. Returns a new map; the old one is not
 * changed.
 * @param {Map<number, {session: number, client: string, connected: boolean,
 *   acting: Array<{call: number, tab: number, tool: string, at: number}>,
 *   actions: Array<{tool: string, tab: number, args: object, elements: Record<string,
 *   {tag: string, type: string, name: string}>, error: string|null, at: number}>}>} clients
 * @param {{event: string, session: number, client?: string, tab?: number, call?: number,
 *   tool?: string, args?: object, elements?: object, error?: string|null}} event
 * @param {number} now
 */
export function applyEvent(clients, event, now) {
  const next = new Map(clients);
  if (!Number.isInteger(event?.session)) return next;
  const known = next.get(event.session);
  const entry = known
    ? { ...known, actions: [...known.actions], acting: [...(known.acting ?? [])] }
    : { session: event.session, client: String(event.client ?? "a client"), connected: true,
        actions: [], acting: [] };
  if (event.event === "connected") entry.connected = true;
  else if (event.event === "disconnected") {
    entry.connected = false;
    entry.acting = [];
  } else if (event.event === "acting") {
    // A call started: acting now, in its tab, until its "call" event.
    if (!Number.isInteger(event.call)) return clients;
    entry.acting.push({ call: event.call, tab: Number(event.tab), tool: String(event.tool ?? "?"),
      at: now });
    entry.acting.splice(0, Math.max(0, entry.acting.length - MAX_ACTING));
  } else if (event.event === "call") {
    entry.acting = entry.acting.filter((acting) => acting.call !== event.call);
    // The elements the call names as the client's view of the tab showed them (the
    // page's words, shown as text), and the arguments the host lets the log show.
    const args = event.args && typeof event.args === "object" && !Array.isArray(event.args)
      ? { ...event.args } : {};
    entry.actions.push({ tool: String(event.tool ?? "?"), tab: Number(event.tab), args,
      elements: elementsOf(event.elements),
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
 * The worker's side: shared tabs (kept in chrome.storage.session across worker
 * restarts) and connected clients; it tells the host and the panels.
 */
export class AgentsHub {
  /**
   * @param {{host: {request: Function, connected: boolean},
   *          broadcast: (event: object) => void}} options
   */
  constructor({ host, broadcast }) {
    this.host = host;
    this.broadcast = broadcast;
    /** @type {Map<number, {id: number, title: string, url: string}>} */
    this.shared = new Map();
    this.clients = new Map();
    /** Sends the lists of shared tabs one at a time (see `tell`). */
    this.inOrder = oneAtATime();
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
    if (msg?.type !== "agents_event") return false;
    this.clients = applyEvent(this.clients, msg, Date.now());
    this.notify();
    return true;
  }

  /** The host (re)connected: it knows nothing of the shared tabs yet. */
  onHost(state) {
    if (state === "connected") this.push().catch(() => {});
    else {
      this.clients = new Map([...this.clients].map(([k, c]) => [k, { ...c, connected: false }]));
      this.notify();
    }
  }

  isShared(tabId) {
    return this.shared.has(tabId);
  }

  /**
   * Share a tab (or stop sharing it). Sharing only counts once the host has the new
   * list: while the host is unreachable nothing is shared, and the error says why.
   */
  async share(tabId, on = true) {
    await this.loaded;
    if (on) {
      const tab = await chrome.tabs.get(tabId);
      const entry = { id: tabId, title: tab.title ?? "", url: tab.url ?? "" };
      await this.tell(() => sharedList(new Map([...this.shared, [tabId, entry]])));
      this.shared.set(tabId, entry);
    } else {
      this.shared.delete(tabId);
    }
    this.mark(tabId, on);
    await this.changed();
    return this.status();
  }

  /** Stop one client: end its session (its calls cancelled, its questions withdrawn);
   *  the others go on and the shared tabs stay shared. */
  async stopOne(session) {
    await this.loaded;
    if (!Number.isInteger(session)) throw new Error(`no client ${JSON.stringify(session)}`);
    await this.host.request({ type: "agents_stop", session,
      reason: "the person stopped this agent in Trimtab's side panel" });
    return this.status();
  }

  /** Stop: end every outside session and share nothing any more. */
  async stop() {
    await this.loaded;
    for (const tabId of this.shared.keys()) this.mark(tabId, false);
    this.shared.clear();
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
    if (this.host.connected) await this.tell(() => sharedList(this.shared));
  }

  /**
   * Send the host a list of shared tabs, made by `list` when it goes. A list made
   * before a share but sent after it would undo the share (a share made while the host
   * starts is sent beside the list its start asks for): one list at a time, each made
   * from the tabs shared when its turn comes.
   */
  tell(list) {
    return this.inOrder(() => this.host.request({ type: "agents_tabs", tabs: list() }));
  }

  notify() {
    this.broadcast({ event: "agents", ...this.status() });
  }

  /** A side-panel op: {action: "status"|"share"|"stop", ...}; "stop" with a `session`
   *  stops that client alone. */
  async op(msg) {
    switch (msg.action) {
      case "status":
        await this.loaded;
        return this.status();
      case "share":
        return await this.share(Number(msg.tab), msg.on !== false);
      case "stop":
        return msg.session === undefined ? await this.stop()
          : await this.stopOne(Number(msg.session));
      default:
        throw new Error(`unknown agents action ${JSON.stringify(msg.action)}`);
    }
  }
}
