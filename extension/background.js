// Service worker: one native port to the host, the CDP relay, and the side panel's
// way to reach the host. It holds no page logic: the host decides every CDP command.

import { HostConnection, HostError } from "./lib/native.js";
import { CdpRelay } from "./lib/relay.js";
import { AgentsHub } from "./lib/agents.js";

/** Side-panel ports, for broadcasting events (detaches, host state). */
const panels = new Set();

function broadcast(event) {
  for (const port of panels) {
    try {
      port.postMessage(event);
    } catch {
      panels.delete(port);
    }
  }
}

const host = new HostConnection({
  onMessage: (msg) => {
    if (!relay.handle(msg) && !agents.handle(msg)) {
      // Nothing else is addressed to the extension; a reply to a request that
      // already timed out lands here too and is dropped on purpose.
      console.debug("trimtab: ignored host message", msg.type);
    }
  },
  onStateChange: (state, detail) => {
    if (state === "disconnected") {
      // Whatever the host was doing in a tab stops here: let go of its input and
      // its debugger sessions (a new host attaches again when it needs a tab).
      relay.releaseAll("host_disconnected").catch(() => {});
    }
    broadcast({ event: "host", state, detail });
    agents.onHost(state);
  },
});

const relay = new CdpRelay({
  send: (msg) => host.post(msg),
  onDetached: (tab, reason) => broadcast({ event: "detached", tab, reason }),
});

// Outside agents (trimtab mcp): the tabs the person shared, their questions, Stop.
const agents = new AgentsHub({ host, broadcast, panelCount: () => panels.size });

/**
 * Answer one side-panel message.
 * @param {{op: string, request?: object, timeoutMs?: number}} msg
 */
async function answer(msg) {
  switch (msg.op) {
    case "host":
      return await host.request(msg.request, { timeoutMs: msg.timeoutMs });
    case "status":
      return { ...host.status(), attached: relay.attachedTabs() };
    case "agents":
      return await agents.op(msg);
    default:
      throw new HostError("bad_message", `unknown side-panel op ${JSON.stringify(msg.op)}`);
  }
}

chrome.runtime.onConnect.addListener((port) => {
  if (port.name !== "sidepanel" || port.sender?.id !== chrome.runtime.id) return;
  panels.add(port);
  port.onDisconnect.addListener(() => {
    panels.delete(port);
    // Tabs stay debugged (with the browser's bar showing) only while a panel is
    // open: when the last one closes the host forgets them and detaches.
    if (panels.size > 0) return;
    for (const tab of relay.attachedTabs()) {
      if (agents.isShared(tab)) continue; // outside agents still use it
      host.request({ type: "release", tab }).catch(() => {});
    }
  });
  port.onMessage.addListener(async (msg) => {
    let reply;
    try {
      reply = { id: msg.id, ok: true, result: await answer(msg) };
    } catch (err) {
      reply = {
        id: msg.id,
        ok: false,
        error: { code: err?.code ?? "internal", message: String(err?.message ?? err) },
      };
    }
    try {
      port.postMessage(reply);
    } catch {
      // the panel closed while the request ran
    }
  });
  port.postMessage({ event: "host", state: host.connected ? "connected" : "disconnected",
    detail: host.lastError });
});

chrome.sidePanel.setPanelBehavior({ openPanelOnActionClick: true }).catch(() => {});

// The relay must be ready when the host starts sending commands, and the port
// keeps this worker alive while the host runs.
host.ensureConnected();

// A handle for debugging from the worker's console and for the end-to-end tests,
// which drive the worker over CDP (Runtime.evaluate in the service_worker target).
globalThis.trimtab = { host, relay, panels, agents };
