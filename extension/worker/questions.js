// The one queue of the host's open questions to the person, for the side panel's own
// agent and for outside agents alike. The host asks (`ask`) during a call and takes
// the question back (`withdraw`) when the call ends without the answer; this queue
// only keeps what is open, forwards it to the side panels and relays the answers.
// Nothing here decides anything: the host's answer to `answer` says whether it acted.
// While a question about an element is open, the element is highlighted in its tab
// (the host's `highlight` request), and the highlight goes when the question does.
//
// Free of chrome.* (the tab check is passed in), so it runs under `node --test`.

import { highlightsOf, questionOf } from "../shared/questions.js";

/** Why the worker says no at once when nobody can be asked. */
export const NO_PANEL = "no side panel is open";
export const PANEL_CLOSED = "the side panel was closed";

export class QuestionQueue {
  /**
   * @param {{host: {request: (request: object) => Promise<any>},
   *          broadcast: (event: object) => void,
   *          panelCount: () => number,
   *          tabExists: (tab: number) => Promise<boolean>}} options
   */
  constructor({ host, broadcast, panelCount, tabExists }) {
    this.host = host;
    this.broadcast = broadcast;
    this.panelCount = panelCount;
    this.tabExists = tabExists;
    /** Open questions by id, oldest first; `shown` once its tab was found.
     * @type {Map<string, {question: import("../shared/questions.js").Question,
     *                     shown: boolean}>} */
    this.open = new Map();
    /** The element each tab shows highlighted for a question now: tab → eid. */
    this.highlighted = new Map();
  }

  /** Handle a host message if it is a question or a withdrawal. @returns {boolean} */
  handle(msg) {
    if (msg?.type === "ask") {
      const question = questionOf(msg);
      if (question) this.asked(question);
      return true;
    }
    if (msg?.type === "withdraw") {
      const ask = String(msg.ask);
      const entry = this.open.get(ask);
      if (entry && this.open.delete(ask) && entry.shown) {
        this.notify({ ask, client: entry.question.client, why: String(msg.why ?? "") });
      }
      return true;
    }
    return false;
  }

  /** @param {import("../shared/questions.js").Question} question */
  asked(question) {
    // Nobody can be asked: say so at once rather than leave the call waiting for an
    // answer that cannot come.
    if (this.panelCount() === 0) {
      this.refuse(question.ask, NO_PANEL);
      return;
    }
    this.open.set(question.ask, { question, shown: false });
    this.tabExists(question.tab).then((exists) => {
      const entry = this.open.get(question.ask);
      if (!entry) return; // withdrawn meanwhile
      if (!exists) {
        this.open.delete(question.ask);
        this.refuse(question.ask, `there is no tab ${question.tab} (it was closed)`);
        return;
      }
      entry.shown = true;
      this.notify(null);
    });
  }

  refuse(ask, why) {
    this.host.request({ type: "answer", ask, allow: false, why }).catch(() => {});
  }

  /**
   * The person's answer. The host says whether the call was still waiting for it;
   * the question leaves the queue either way.
   * @returns {Promise<{waiting: boolean}>}
   */
  async answer(ask, allow, always) {
    const id = String(ask);
    if (this.open.delete(id)) this.notify(null);
    const request = { type: "answer", ask: id, allow: Boolean(allow) };
    // `always` (remember the site) only where the person was offered it.
    if (typeof always === "boolean") request.always = always;
    const result = await this.host.request(request);
    return { waiting: Boolean(result?.waiting) };
  }

  /** The questions to show, oldest first. */
  list() {
    return [...this.open.values()].filter((e) => e.shown).map((e) => e.question);
  }

  /** The host went away: every call that asked ended with it. */
  onHost(state) {
    if (state === "connected") return;
    // The host that drew the highlights is gone, and its overlays with it.
    this.highlighted.clear();
    if (this.open.size === 0) return;
    this.open.clear();
    this.notify({ ask: "", client: "", why: "the host disconnected" });
  }

  /** The last side panel closed: nobody sees the open questions any more. */
  onPanelsGone() {
    for (const ask of [...this.open.keys()]) {
      this.open.delete(ask);
      this.refuse(ask, PANEL_CLOSED);
    }
    this.highlight();
  }

  /** @param {{ask: string, client: string, why: string}|null} withdrawn */
  notify(withdrawn) {
    this.broadcast({ event: "questions", questions: this.list(), withdrawn });
    this.highlight();
  }

  /**
   * Highlight the element of each tab's open question, and clear the highlight of a
   * tab whose question left. A failure (the element is gone, the tab closed) only
   * means there is nothing to show.
   */
  highlight() {
    const wanted = highlightsOf(this.list());
    const send = (tab, eid) => {
      this.host.request({ type: "highlight", tab, eid }).catch(() => {});
    };
    for (const tab of [...this.highlighted.keys()]) {
      if (!wanted.has(tab)) {
        this.highlighted.delete(tab);
        send(tab, null);
      }
    }
    for (const [tab, eid] of wanted) {
      if (this.highlighted.get(tab) === eid) continue;
      this.highlighted.set(tab, eid);
      send(tab, eid);
    }
  }
}
