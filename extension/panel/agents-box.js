// The side panel's "Outside agents" box: share this tab, see connected clients and
// their recent actions, and Stop them all. The worker's AgentsHub (worker/agents.js)
// holds the state; this module only shows it. Their questions appear in the question
// bar (question-bar.js), like the panel agent's. Page- and client-derived text goes
// through textContent.

import { closedReason } from "../shared/tab-access.js";
import { describeCall } from "./step-words.js";

/** What the box shows, readable by the end-to-end tests. */
export const agentsView = { shared: [], clients: [], activeTab: null };

/**
 * @param {HTMLElement} root the (empty) element to fill
 * @param {import("./worker-client.js").WorkerClient} worker
 */
export function mountAgentsPanel(root, worker) {
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
  const stop = el("button", "", "Stop outside agents");
  stop.id = "agents-stop";
  stop.type = "button";
  const note = el("p", "muted", "");
  note.id = "agents-note";
  const clients = el("ul", "agents-clients");
  clients.id = "agents-clients";
  const bar = el("div", "toolbar");
  bar.append(share, stop);
  root.append(title, bar, note, clients);

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
  stop.addEventListener("click", () => call({ action: "stop" }));

  async function render(status) {
    Object.assign(agentsView, status);
    const tab = await activeTab();
    agentsView.activeTab = tab?.id ?? null;
    const isShared = Boolean(tab && status.shared.some((t) => t.id === tab.id));
    share.textContent = isShared ? "Stop sharing this tab" : "Share this tab with agents";
    // A page Chrome keeps closed cannot be shared: said before the click, not after.
    const closed = isShared ? "" : closedReason(tab?.url || tab?.pendingUrl);
    share.disabled = Boolean(closed);
    share.title = closed;
    stop.disabled = status.shared.length === 0 && !status.clients.some((c) => c.connected);
    note.textContent = failure || closed || (status.shared.length
      ? `Shared with outside agents: ${status.shared.map((t) => t.title || t.url).join(", ")}`
      : "No tab is shared with outside agents.");
    note.classList.toggle("error", Boolean(failure));
    // Nothing shared, nobody connected, nothing to say: a one-line chip, not a box.
    const idle = !failure && !closed && status.shared.length === 0
      && !status.clients.some((c) => c.connected);
    root.classList.toggle("idle", idle);
    title.textContent = idle ? "Outside agents: none" : "Outside agents";
    const titles = new Map(status.shared.map((t) => [t.id, t.title || t.url]));
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
  chrome.tabs.onActivated.addListener(() => render(agentsView));
  chrome.tabs.onUpdated.addListener((tabId, change, tab) => {
    if (change.url && tab.active) render(agentsView);
  });
  call({ action: "status" });
}
