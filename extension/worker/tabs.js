// A task's tabs as Chrome sees them (host/PROTOCOL.md, "Tabs"): the host owns which
// tabs belong to a task and decides everything about them; this module tells it what
// the browser and the person did (a tab opened from a tab the relay is attached to, a
// tab closed, a tab dragged out of its task's group) and runs its three tab requests
// (open a tab, close one, group a task's tabs under a title).
//
// One thing is done here before the host can answer, because the host cannot be fast
// enough: a tab opened from a tab the relay is attached to (a pop-up, a link with
// target="_blank") is attached at once and held (the relay's `hold`), so its first
// request does not leave the browser before the host's request guard is on in it; the
// host lets it run (at once when no agent's action opened it).

import { resultOf } from "./relay.js";

/**
 * @typedef {{id?: number, openerTabId?: number, windowId: number, index?: number,
 *            url?: string, pendingUrl?: string, groupId?: number}} TabInfo
 * @typedef {{
 *   get: (tabId: number) => Promise<TabInfo>,
 *   create: (props: object) => Promise<TabInfo>,
 *   remove: (tabId: number) => Promise<void>,
 *   group: (options: {tabIds: number[], groupId?: number,
 *           createProperties?: {windowId: number}}) => Promise<number>,
 * }} TabsApi
 * @typedef {{get: (windowId: number) => Promise<{type?: string}>}} WindowsApi
 * @typedef {{get: (groupId: number) => Promise<object>,
 *            update: (groupId: number, props: {title?: string}) => Promise<object>}} GroupsApi
 * @typedef {{attachedTabs: () => number[], hold: (tabId: number) => Promise<void>,
 *            detach: (tabId: number) => Promise<object>}} RelayFace
 */

/**
 * Whether a new tab may load a web page: its URL is not known yet (a pop-up's first
 * navigation is not reported at creation), about:blank (a page writes into it or
 * navigates it next), or http(s).
 * @param {string} url
 */
export function mayLoadTheWeb(url) {
  return url === "" || /^(https?:|about:blank)/i.test(url);
}

/**
 * The task tabs' part of the relay: events the host learns from, requests it sends.
 */
export class TabWatch {
  /**
   * @param {{post: (msg: object) => boolean|void, relay: RelayFace, tabs: TabsApi,
   *          windows: WindowsApi, groups: GroupsApi,
   *          ownTab?: (tabId: number) => Promise<void>}} options
   *   `post` sends one message to the host and drops it if there is none (false);
   *   `ownTab(tab)` takes a tab opened for the host out of every gate.
   */
  constructor({ post, relay, tabs, windows, groups, ownTab = async () => {} }) {
    this.post = post;
    this.ownTab = ownTab;
    this.relay = relay;
    this.tabs = tabs;
    this.windows = windows;
    this.groups = groups;
    /** Per tab in a task's group, that group: a tab that leaves it leaves the task. */
    this.grouped = new Map();
    /** The groups the host asked for, by the title it gave (a task's, or a client's). */
    this.groupOf = new Map();
    /** Tabs the host knows: attached, reported opened, grouped or opened for it. */
    this.known = new Set();
    /** Tabs this module opened for the host (cdp_new_tab): never reported as opened. */
    this.mine = new Set();
    /** Per tab being reported opened, its opener once the host was told. */
    this.telling = new Map();
  }

  /**
   * Wait until the host was told of a tab a task's tab opened (a gate's report of it
   * must come after): its opener, or null for a tab the host is not told of.
   * @param {number} tabId
   * @returns {Promise<number|null>}
   */
  async told(tabId) {
    return (await this.telling.get(tabId)) ?? null;
  }

  /**
   * Handle one host → extension message if it is a tab request.
   * @param {{type: string, id?: string|number}} msg
   * @returns {boolean}
   */
  handle(msg) {
    switch (msg.type) {
      case "cdp_new_tab":
        this.run(msg, () => this.newTab(/** @type {any} */ (msg)));
        return true;
      case "cdp_close_tab":
        this.run(msg, () => this.closeTab(/** @type {any} */ (msg)));
        return true;
      case "tab_group":
        this.run(msg, () => this.group(/** @type {any} */ (msg)));
        return true;
      default:
        return false;
    }
  }

  /** Answer a request with its result or a CDP-style error, as the relay does. */
  async run(msg, action) {
    this.post(await resultOf(msg.id, action));
  }

  /**
   * Open a tab for the host: beside its opener, in the opener's window when that is
   * a normal one (a pop-up window holds one tab), else where Chrome puts new tabs.
   * The host chose the URL, so the tab is not held and not reported as opened.
   * @param {{url: unknown, opener?: unknown, active?: unknown}} msg
   * @returns {Promise<{tab: number}>}
   */
  async newTab({ url, opener, active }) {
    if (typeof url !== "string" || !url) {
      throw new Error(`"cdp_new_tab" needs a "url", got ${JSON.stringify(url)}`);
    }
    /** @type {{url: string, active: boolean, windowId?: number, index?: number}} */
    const props = { url, active: active !== false };
    if (Number.isInteger(opener)) {
      const from = await this.tabs.get(/** @type {number} */ (opener));
      const win = await this.windows.get(from.windowId);
      if (win.type === "normal") {
        props.windowId = from.windowId;
        if (Number.isInteger(from.index)) props.index = /** @type {number} */ (from.index) + 1;
      }
    }
    // No openerTabId: the tab is the host's own, and onCreated must not take it for
    // one a page opened (it is marked as ours before Chrome can report it, too).
    const created = await this.tabs.create(props);
    const tab = /** @type {number} */ (created.id);
    this.mine.add(tab);
    this.known.add(tab);
    // The host loads the tab's pages itself, each request judged by its own guard
    // (redirects included): no gate of another action may keep them.
    await this.ownTab(tab);
    return { tab };
  }

  /**
   * Close a tab for the host; one already gone is closed, as asked.
   * @param {{tab: unknown}} msg
   */
  async closeTab({ tab }) {
    if (!Number.isInteger(tab)) {
      throw new Error(`"cdp_close_tab" needs an integer "tab", got ${JSON.stringify(tab)}`);
    }
    try {
      await this.tabs.remove(/** @type {number} */ (tab));
    } catch (err) {
      if (!/No tab with id/i.test(String(/** @type {any} */ (err)?.message ?? err))) throw err;
    }
    return {};
  }

  /**
   * Put a task's tabs in its group, titled for the person: the group the host asked
   * for before under this title when it still exists, else a new one. Chrome groups
   * tabs of normal windows only: a pop-up window's tab stays in its own window and
   * is named in `outside`, and still belongs to the task (the host decides that).
   * @param {{tabs: unknown, title: unknown}} msg
   * @returns {Promise<{group: number|null, outside: number[]}>}
   */
  async group({ tabs, title }) {
    if (!Array.isArray(tabs) || tabs.length === 0 || !tabs.every(Number.isInteger)) {
      throw new Error(`"tab_group" needs a list of tab ids, got ${JSON.stringify(tabs)}`);
    }
    if (typeof title !== "string") {
      throw new Error(`"tab_group" needs a "title", got ${JSON.stringify(title)}`);
    }
    /** @type {number[]} */
    const inWindows = [];
    /** @type {number[]} */
    const outside = [];
    /** @type {Map<number, number>} the normal window of each groupable tab */
    const windowOf = new Map();
    for (const tab of /** @type {number[]} */ (tabs)) {
      const info = await this.tabs.get(tab);
      const win = await this.windows.get(info.windowId);
      if (win.type === "normal") {
        inWindows.push(tab);
        windowOf.set(tab, info.windowId);
      } else {
        outside.push(tab);
      }
      this.known.add(tab);
    }
    if (inWindows.length === 0) return { group: null, outside };
    let group = await this.liveGroup(title);
    // A group lives in one window: tabs of another window start a group there.
    const first = /** @type {number} */ (windowOf.get(inWindows[0]));
    const here = inWindows.filter((tab) => windowOf.get(tab) === first);
    outside.push(...inWindows.filter((tab) => windowOf.get(tab) !== first));
    if (group !== null) {
      const info = /** @type {{windowId?: number}} */ (await this.groups.get(group));
      if (info.windowId !== first) group = null;
    }
    // A tab joining the group is noted once it is in: its own onUpdated (the move in)
    // finds no group noted for it yet, so it never reads as the person's drag out.
    // A new group is made in the tabs' own window: by default Chrome makes it in the
    // window focused last, which is the pop-up's while one is open, and refuses.
    const joined = await this.tabs.group(group === null
      ? { tabIds: here, createProperties: { windowId: first } }
      : { tabIds: here, groupId: group });
    for (const tab of here) this.grouped.set(tab, joined);
    this.groupOf.set(title, joined);
    await this.groups.update(joined, { title });
    return { group: joined, outside };
  }

  /** The group last made under `title`, if the person has not closed it since. */
  async liveGroup(title) {
    const group = this.groupOf.get(title);
    if (group === undefined) return null;
    try {
      await this.groups.get(group);
      return group;
    } catch {
      this.groupOf.delete(title);
      return null;
    }
  }

  /**
   * Chrome created a tab. Opened from a tab the relay is attached to, it is held, then
   * reported: only the host knows whether an agent's action opened it (then its guard
   * judges the tab's first request) or not (then it lets the tab run at once).
   * @param {TabInfo} tab
   */
  async onCreated(tab) {
    const id = tab.id;
    const opener = tab.openerTabId;
    if (id === undefined || opener === undefined || this.mine.has(id)) return;
    if (!this.relay.attachedTabs().includes(opener)) return;
    this.known.add(id);
    /** @type {(opener: number) => void} */
    let done = () => {};
    this.telling.set(id, new Promise((resolve) => { done = resolve; }));
    try {
      await this.report(tab, id, opener);
    } finally {
      done(opener);
    }
  }

  /**
   * Hold a tab a task's tab opened, then tell the host of it.
   * @param {TabInfo} tab
   * @param {number} id
   * @param {number} opener
   */
  async report(tab, id, opener) {
    const url = tab.pendingUrl || tab.url || "";
    // The hold first, before anything else is awaited: the tab's first request is on
    // its way already, and the hold wins that race by milliseconds. Only a tab that
    // may load a web page is held (its URL is not known yet, or is one): an extension's
    // page or the new tab page sends nothing a site rule could stop.
    let waiting = false;
    if (mayLoadTheWeb(url)) {
      try {
        await this.relay.hold(id);
        waiting = true;
      } catch {
        // Closed already, or another debugger has it: the host learns it is not held.
      }
    }
    let popup = false;
    try {
      popup = (await this.windows.get(tab.windowId)).type === "popup";
    } catch {
      // the window closed already; the tab's close follows
    }
    const told = this.post({ type: "tab_opened", tab: id, opener, url, popup, waiting });
    // A hold no host heard of would never end: let the tab go.
    if (waiting && told === false) await this.relay.detach(id).catch(() => {});
  }

  /**
   * A tab closed: the host hears of it when it knew the tab.
   * @param {number} tabId
   */
  onRemoved(tabId) {
    const knew = this.known.has(tabId) || this.grouped.has(tabId)
      || this.relay.attachedTabs().includes(tabId);
    this.known.delete(tabId);
    this.grouped.delete(tabId);
    this.mine.delete(tabId);
    this.telling.delete(tabId);
    if (knew) this.post({ type: "tab_closed", tab: tabId });
  }

  /**
   * A tab changed: one that left its task's group (the person dragged it out, or
   * ungrouped it, or moved it to another window) leaves the task.
   * @param {number} tabId
   * @param {{groupId?: number}} change
   */
  onUpdated(tabId, change) {
    if (change.groupId === undefined) return;
    const group = this.grouped.get(tabId);
    if (group === undefined || change.groupId === group) return;
    this.grouped.delete(tabId);
    this.post({ type: "tab_left", tab: tabId });
  }
}
