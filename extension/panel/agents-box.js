// The side panel's "Outside agents" box: share this tab, see every agent acting now
// (this side panel's task and each connected outside client, on which tab) with a Stop
// for each and one for all, and the clients' recent actions. The worker's AgentsHub
// (worker/agents.js) holds the clients' state; the panel's own task is the chat's
// (store.js). Their questions appear in the question bar (question-bar.js), like the
// panel agent's. Page- and client-derived text goes through textContent.

import { closedReason } from "../shared/tab-access.js";
import { describeCall } from "./step-words.js";

/** What the box shows, readable by the end-to-end tests. */
export const agentsView = { shared: [], clients: [], activeTab: null, acting: [] };

/**
 * Every agent acting now, as the side panel lists it: the side panel's own task first
 * (while it runs), then each connected outside client, with the tabs its calls act in
 * now (oldest call first) and what they run; a client with no call now is listed as
 * connected, so it can be stopped before its next call.
 * @param {Array<{session: number, client: string, connected: boolean,
 *   acting?: Array<{tab: number, tool: string}>}>} clients
 * @param {{tab: number|null, working?: string}|null} panelTask the task running in this
 *   side panel (the tab it acts in now), or null
 * @returns {Array<{who: string, session: number|null, tabs: number[], doing: string}>}
 */
export function actingNow(clients, panelTask) {
  const rows = [];
  if (panelTask) {
    rows.push({ who: "Trimtab's agent (this side panel)", session: null,
      tabs: panelTask.tab == null ? [] : [panelTask.tab],
      doing: panelTask.working || "working" });
  }
  for (const client of clients) {
    if (!client.connected) continue;
    const acting = client.acting ?? [];
    rows.push({ who: client.client, session: client.session,
      tabs: [...new Set(acting.map((call) => call.tab))],
      doing: acting.length
        ? `running ${[...new Set(acting.map((call) => call.tool))].join(", ")}`
        : "connected, no call now" });
  }
  return rows;
}

/**
 * @param {HTMLElement} root the (empty) element to fill
 * @param {import("./worker-client.js").WorkerClient} worker
 * @param {import("./store.js").Store<ReturnType<typeof import("./store.js").panelState>>}
 *   store the panel's state: its own task, which the box lists and stops too
 */
export function mountAgentsPanel(root, worker, store) {
  const { state } = store;
  const el = (tag, className, text) => {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const title = el("h2", "", "Outside agents");
  const share = el("button", "", "Share this tab with agents");
  share.id = "agents-share";
  share.type = "button";
  const stop = el("button", "", "Stop all agents");
  stop.id = "agents-stop";
  stop.type = "button";
  const note = el("p", "muted", "");
  note.id = "agents-note";
  // Every agent acting now, each with its own Stop.
  const acting = el("ul", "agents-acting");
  acting.id = "agents-acting";
  acting.setAttribute("aria-label", "Agents acting now");
  const clients = el("ul", "agents-clients");
  clients.id = "agents-clients";
  const bar = el("div", "toolbar");
  bar.append(share, stop);
  root.append(title, bar, note, acting, clients);

  // Why the person's last action failed: shown until their next one succeeds, through
  // every status update in between.
  let failure = "";
  const call = (fields, failed = "Trimtab could not do that") =>
    worker.call("agents", fields).then((status) => {
      failure = "";
      return render(status);
    }, (err) => {
      failure = `${failed}: ${err.message}`;
      return render(agentsView);
    });

  async function activeTab() {
    const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
    return tab ?? null;
  }

  share.addEventListener("click", async () => {
    const tab = await activeTab();
    if (!tab) return;
    const on = !agentsView.shared.some((t) => t.id === tab.id);
    await call({ action: "share", tab: tab.id, on },
      on ? "This tab was not shared" : "Could not stop sharing this tab");
  });
  // Stop all: the side panel's task too, and every outside client (nothing stays shared).
  stop.addEventListener("click", () => {
    if (state.running) state.agent?.stop("stopped by you");
    return call({ action: "stop" });
  });

  /** The side panel's own task while it runs: the tab it acts in now. */
  const panelTask = () => (state.running && state.agent
    ? { tab: state.agent.current, working: state.working } : null);

  // Renders overlap (each waits for the browser's tabs): only the latest one draws, so
  // an older status never replaces a newer one on screen.
  let renders = 0;

  async function render(status) {
    Object.assign(agentsView, status);
    const generation = ++renders;
    const tab = await activeTab();
    if (generation !== renders) return;
    agentsView.activeTab = tab?.id ?? null;
    const isShared = Boolean(tab && status.shared.some((t) => t.id === tab.id));
    share.textContent = isShared ? "Stop sharing this tab" : "Share this tab with agents";
    // A page Chrome keeps closed cannot be shared: said before the click, not after.
    const closed = isShared ? "" : closedReason(tab?.url || tab?.pendingUrl);
    share.disabled = Boolean(closed);
    share.title = closed;
    const rows = actingNow(status.clients, panelTask());
    agentsView.acting = rows;
    stop.disabled = status.shared.length === 0 && rows.length === 0;
    note.textContent = failure || closed || (status.shared.length
      ? `Shared with outside agents: ${status.shared.map((t) => t.title || t.url).join(", ")}`
      : "No tab is shared with outside agents.");
    note.classList.toggle("error", Boolean(failure));
    // Nothing shared, nobody connected, nothing to say: a one-line chip, not a box.
    const idle = !failure && !closed && status.shared.length === 0 && rows.length === 0;
    root.classList.toggle("idle", idle);
    title.textContent = idle ? "Outside agents: none" : "Outside agents";
    const titles = new Map(status.shared.map((t) => [t.id, t.title || t.url]));
    // A tab an agent acts in that is not shared (the person was asked, or the task
    // opened it): named by its title as the browser has it.
    const unnamed = [...new Set(rows.flatMap((row) => row.tabs))].filter((t) => !titles.has(t));
    const named = await Promise.all(unnamed.map((t) => chrome.tabs.get(t).catch(() => null)));
    if (generation !== renders) return;
    for (const found of named) {
      if (found && (found.title || found.url)) titles.set(found.id, found.title || found.url);
    }
    const tabName = (tab) => (titles.has(tab) ? `“${titles.get(tab)}”` : `tab ${tab}`);
    acting.replaceChildren();
    for (const row of rows) {
      const where = row.tabs.length ? ` in ${row.tabs.map(tabName).join(", ")}` : "";
      const item = el("li", "", "");
      item.append(el("span", "", `${row.who}: ${row.doing}${where}`));
      const stopOne = el("button", "agent-stop", "Stop");
      stopOne.type = "button";
      stopOne.title = `Stop ${row.who}`;
      if (row.session === null) {
        stopOne.dataset.panel = "true";
        stopOne.addEventListener("click", () => state.agent?.stop("stopped by you"));
      } else {
        stopOne.dataset.session = String(row.session);
        stopOne.addEventListener("click", () => call({ action: "stop", session: row.session },
          `${row.who} was not stopped`));
      }
      item.append(stopOne);
      acting.append(item);
    }
    clients.replaceChildren();
    for (const client of status.clients) {
      const item = el("li", client.connected ? "" : "muted",
        `${client.client}${client.connected ? "" : " (left)"}`);
      const steps = el("ol", "steps");
      for (const action of client.actions.slice(-5)) {
        // The tab by its title (the page's words, as text), and when.
        const where = titles.has(action.tab) ? `“${titles.get(action.tab)}”` : `tab ${action.tab}`;
        const when = action.at ? ` · ${new Date(action.at).toLocaleTimeString("en-GB")}` : "";
        // In words, by the panel's own steps' function: "Clicked “Buy now” (button)",
        // from the elements the host named as the agent's snapshot showed them.
        const words = describeCall(action.tool, action.args ?? {}, [], action.elements ?? {});
        const step = el("li", action.error ? "error" : "",
          `${words} in ${where}${when}${action.error ? `: ${action.error}` : ""}`);
        steps.append(step);
      }
      item.append(steps);
      clients.append(item);
    }
  }

  worker.onEvent((event) => {
    if (event.event === "agents") render(event);
  });
  // The side panel's own task starts, acts in another tab, ends.
  store.subscribe(["running", "working"], () => render(agentsView));
  chrome.tabs.onActivated.addListener(() => render(agentsView));
  chrome.tabs.onUpdated.addListener((tabId, change, tab) => {
    if (change.url && tab.active) render(agentsView);
  });
  call({ action: "status" });
}
