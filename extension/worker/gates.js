// Gates (host/PROTOCOL.md, "Tabs"): while an agent's action runs in a tab, the host
// asks for a gate on it, and the browser itself keeps every tab that opens meanwhile
// from loading a first document outside the task's sites, before the request is sent.
//
// Why the browser, and not the relay's hold: chrome.debugger cannot attach to a tab
// before Chrome reports it, so a pop-up's first request can leave before the hold is
// on (a race the hold loses now and then). A declarativeNetRequest session rule is in
// place before the action's input is sent, and Chrome applies it before the request
// exists on the network (before DevTools' own interception, too).
//
// A gate is one session rule: block main-frame requests, except in the tabs that
// existed when it was set (and those the host let through since), and except to the
// domains the host named. A document it kept a tab from is reported to the host
// (`tab_gated`), which decides: `tab_pass` loads it after all (the tab keeps its
// opener: a sign-in pop-up can still talk to its page), or the host closes the tab.

import { resultOf } from "./relay.js";

/**
 * @typedef {{id: number, excluded: number[], domains: string[]}} Gate
 * @typedef {{
 *   updateSessionRules: (options: {removeRuleIds?: number[], addRules?: object[]}) =>
 *     Promise<void>,
 *   getSessionRules: () => Promise<{id: number}[]>,
 * }} RulesApi
 * @typedef {{
 *   query: (filter: object) => Promise<{id?: number}[]>,
 *   update: (tabId: number, props: {url: string}) => Promise<object>,
 * }} GateTabsApi
 */

/**
 * The session rule of one gate.
 * @param {number} id the rule's id
 * @param {number[]} excluded tabs the gate leaves alone
 * @param {string[]} domains where a new tab may still load a first document (and
 *   their subdomains); empty: nowhere
 */
export function gateRule(id, excluded, domains) {
  /** @type {Record<string, unknown>} */
  const condition = { resourceTypes: ["main_frame"], excludedTabIds: [...excluded] };
  if (domains.length) condition.excludedRequestDomains = [...domains];
  return { id, priority: 1, action: { type: "block" }, condition };
}

/**
 * Whether a navigation error is a document a rule kept from loading in a main frame.
 * @param {{frameId?: number, error?: string}} details chrome.webNavigation's
 */
export function keptByRule(details) {
  return details.frameId === 0 && /ERR_BLOCKED_BY_CLIENT/.test(String(details.error ?? ""));
}

/**
 * The host's gates, and what they kept.
 */
export class TabGates {
  /**
   * @param {{post: (msg: object) => boolean|void, rules: RulesApi, tabs: GateTabsApi,
   *          told: (tabId: number) => Promise<number|null>,
   *          hostsOwn: (tabId: number) => boolean}} options
   *   `told(tab)` waits until the host was told of a tab a task's tab opened, and
   *   gives its opener (null: a tab the host was not told of); `hostsOwn(tab)`: a
   *   tab opened for the host (its URL is the host's choice: let through at once).
   */
  constructor({ post, rules, tabs, told, hostsOwn }) {
    this.post = post;
    this.rules = rules;
    this.tabs = tabs;
    this.told = told;
    this.hostsOwn = hostsOwn;
    /** @type {Map<number, Gate>} per acting tab, its gate */
    this.gates = new Map();
    /** Tabs the host let through: no gate keeps them any more. */
    this.passed = new Set();
    this.nextRule = 1;
    /** Settles once rules a previous worker left are gone (see `clear`). */
    this.ready = this.clear();
  }

  /**
   * Handle one host → extension message if it is a gate request.
   * @param {{type: string, id?: string|number}} msg
   * @returns {boolean}
   */
  handle(msg) {
    const run = (/** @type {() => Promise<object>} */ action) => {
      resultOf(msg.id, action).then((reply) => this.post(reply));
    };
    switch (msg.type) {
      case "tab_gate":
        run(() => this.gate(/** @type {any} */ (msg)));
        return true;
      case "tab_pass":
        run(() => this.pass(/** @type {any} */ (msg)));
        return true;
      default:
        return false;
    }
  }

  /**
   * Set, replace or (`domains` null) lift the gate of an action in `tab`.
   * @param {{tab: unknown, domains: unknown}} msg
   */
  async gate({ tab, domains }) {
    if (!Number.isInteger(tab)) {
      throw new Error(`"tab_gate" needs an integer "tab", got ${JSON.stringify(tab)}`);
    }
    const lifted = domains === null;
    if (!lifted && !(Array.isArray(domains) && domains.every((d) => typeof d === "string" && d))) {
      throw new Error(`"tab_gate" needs a list of domains or null, got ${JSON.stringify(domains)}`);
    }
    await this.ready;
    const acting = /** @type {number} */ (tab);
    const old = this.gates.get(acting);
    if (lifted) {
      this.gates.delete(acting);
      if (old) await this.rules.updateSessionRules({ removeRuleIds: [old.id] });
      return {};
    }
    const existing = (await this.tabs.query({})).map((t) => t.id).filter(Number.isInteger);
    const gate = {
      id: old?.id ?? this.nextRule++,
      excluded: [...new Set([...existing, ...this.passed])].map(Number),
      domains: [.../** @type {string[]} */ (domains)],
    };
    this.gates.set(acting, gate);
    await this.rules.updateSessionRules({
      removeRuleIds: [gate.id],
      addRules: [gateRule(gate.id, gate.excluded, gate.domains)],
    });
    return {};
  }

  /**
   * Let a tab a gate kept go to `url` after all: out of every gate first, then loaded.
   * @param {{tab: unknown, url: unknown}} msg
   */
  async pass({ tab, url }) {
    if (!Number.isInteger(tab)) {
      throw new Error(`"tab_pass" needs an integer "tab", got ${JSON.stringify(tab)}`);
    }
    if (typeof url !== "string" || !/^https?:/i.test(url)) {
      throw new Error(`"tab_pass" needs an http(s) "url", got ${JSON.stringify(url)}`);
    }
    await this.letThrough(/** @type {number} */ (tab));
    await this.tabs.update(/** @type {number} */ (tab), { url });
    return {};
  }

  /** Take `tab` out of every gate. @param {number} tab */
  async letThrough(tab) {
    this.passed.add(tab);
    const addRules = [];
    for (const gate of this.gates.values()) {
      if (!gate.excluded.includes(tab)) gate.excluded.push(tab);
      addRules.push(gateRule(gate.id, gate.excluded, gate.domains));
    }
    if (addRules.length) {
      await this.rules.updateSessionRules({
        removeRuleIds: addRules.map((rule) => rule.id),
        addRules,
      });
    }
  }

  /**
   * A main frame failed to load: if a rule kept it, tell the host (after it heard of
   * the tab), or take the host's own tab out of every gate (not loaded again here: the
   * host loads its tabs under its own guard, and the kept URL may be a redirect's).
   * @param {{tabId: number, frameId?: number, url: string, error?: string}} details
   */
  async onNavigationError(details) {
    const tab = details.tabId;
    if (!keptByRule(details) || this.passed.has(tab)) return;
    if (this.hostsOwn(tab)) {
      await this.letThrough(tab);
      return;
    }
    const opener = await this.told(tab);
    // Another extension's rule, with no gate of ours and no tab of a task: not ours.
    if (this.gates.size === 0 && opener === null) return;
    this.post({ type: "tab_gated", tab, opener, url: details.url });
  }

  /** A tab closed: it needs no exception any more. @param {number} tab */
  onRemoved(tab) {
    this.passed.delete(tab);
  }

  /**
   * Lift every gate: the host that set them is gone, or this worker just started
   * (session rules outlive a service worker, and a stale gate would keep the
   * person's new tabs from loading for the rest of the browser's session).
   */
  async clear() {
    this.gates.clear();
    const stale = (await this.rules.getSessionRules()).map((rule) => rule.id);
    if (stale.length) await this.rules.updateSessionRules({ removeRuleIds: stale });
  }
}
