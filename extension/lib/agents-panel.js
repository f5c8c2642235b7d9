// The side panel's "Outside agents" box: share this tab, answer an outside agent's
// question (naming the client), see connected clients and their recent actions,
// and Stop them all. The worker's AgentsHub (lib/agents.js) holds the state; this
// module only shows it. Page- and client-derived text goes through textContent.

import { describeAsk } from "./agents.js";

/** What the box shows, readable by the end-to-end tests. */
export const agentsView = { shared: [], asks: [], clients: [], activeTab: null };

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
  const asks = el("div", "agents-asks");
  asks.id = "agents-asks";
  const clients = el("ul", "agents-clients");
  clients.id = "agents-clients";
  const bar = el("div", "toolbar");
  bar.append(share, stop);
  root.append(title, bar, note, asks, clients);

  const call = (fields) => worker.call("agents", fields).then(render, (err) => {
    note.textContent = `Trimtab could not do that: ${err.message}`;
  });

  async function activeTab() {
    const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
    return tab ?? null;
  }

  share.addEventListener("click", async () => {
    const tab = await activeTab();
    if (!tab) return;
    const on = !agentsView.shared.some((t) => t.id === tab.id);
    await call({ action: "share", tab: tab.id, on });
  });
  stop.addEventListener("click", () => call({ action: "stop" }));

  async function render(status) {
    Object.assign(agentsView, status);
    const tab = await activeTab();
    agentsView.activeTab = tab?.id ?? null;
    const isShared = Boolean(tab && status.shared.some((t) => t.id === tab.id));
    share.textContent = isShared ? "Stop sharing this tab" : "Share this tab with agents";
    stop.disabled = status.shared.length === 0 && !status.clients.some((c) => c.connected);
    note.textContent = status.shared.length
      ? `Shared with outside agents: ${status.shared.map((t) => t.title || t.url).join(", ")}`
      : "No tab is shared with outside agents.";
    asks.replaceChildren();
    for (const ask of status.asks) {
      let info;
      try {
        info = await chrome.tabs.get(ask.tab);
      } catch {
        info = undefined;
      }
      const box = el("div", "confirm");
      box.dataset.ask = ask.ask;
      const allow = el("button", "agents-allow", "Allow");
      const deny = el("button", "agents-deny", "Deny");
      allow.type = deny.type = "button";
      allow.addEventListener("click", () => call({ action: "answer", ask: ask.ask, allow: true }));
      deny.addEventListener("click", () => call({ action: "answer", ask: ask.ask, allow: false }));
      box.append(el("p", "", describeAsk(ask, info)), allow, deny);
      asks.append(box);
    }
    clients.replaceChildren();
    for (const client of status.clients) {
      const item = el("li", client.connected ? "" : "muted",
        `${client.client}${client.connected ? "" : " (left)"}`);
      const steps = el("ol", "steps");
      for (const action of client.actions.slice(-5)) {
        const step = el("li", action.error ? "error" : "",
          `${action.tool} in tab ${action.tab}${action.error ? `: ${action.error}` : ""}`);
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
  call({ action: "status" });
}
