// Service worker: one native port to the host, the CDP relay, the one queue of the
// host's questions to the person, the side panel's way to reach the host, and the
// routines that run on a schedule. It holds no page logic: the host decides every CDP
// command and when to ask.

import { HostConnection, HostError } from "./native.js";
import { CdpRelay } from "./relay.js";
import { AgentsHub } from "./agents.js";
import { QuestionQueue } from "./questions.js";
import { TabGates } from "./gates.js";
import { TabWatch } from "./tabs.js";
import { DownloadHolds, relayDownloads } from "./downloads.js";
import { RoutineScheduler } from "./routines.js";

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
    if (!relay.handle(msg) && !tabs.handle(msg) && !gates.handle(msg)
      && !holds.handle(msg) && !questions.handle(msg) && !agents.handle(msg)) {
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
      gates.clear().catch(() => {});
      holds.clear().catch(() => {});
    }
    broadcast({ event: "host", state, detail });
    questions.onHost(state);
    agents.onHost(state);
  },
});

const relay = new CdpRelay({
  send: (msg) => host.post(msg),
  onDetached: (tab, reason) => broadcast({ event: "detached", tab, reason }),
});

// A task's tabs: what the browser and the person did to them, told to the host, and
// the host's requests to open, close and group them. The listeners are registered at
// once, as a service worker's must be to be woken by the event.
const tabs = new TabWatch({
  post: (msg) => relay.post(msg),
  relay,
  tabs: chrome.tabs,
  windows: chrome.windows,
  groups: chrome.tabGroups,
  ownTab: (tabId) => gates.letThrough(tabId),
});
chrome.tabs.onCreated.addListener((tab) => { tabs.onCreated(tab).catch(() => {}); });
chrome.tabs.onRemoved.addListener((tabId) => { tabs.onRemoved(tabId); gates.onRemoved(tabId); });

// While an action runs, the browser keeps tabs opening meanwhile from loading a first
// document outside the task's sites; the host decides on what it kept.
const gates = new TabGates({
  post: (msg) => relay.post(msg),
  rules: chrome.declarativeNetRequest,
  tabs: chrome.tabs,
  told: (tabId) => tabs.told(tabId),
  hostsOwn: (tabId) => tabs.mine.has(tabId),
});
chrome.webNavigation.onErrorOccurred.addListener((details) => {
  gates.onNavigationError(details).catch(() => {});
});
chrome.tabs.onUpdated.addListener((tabId, change) => tabs.onUpdated(tabId, change));

// The host's questions to the person, for the panel's agent and outside agents alike.
const questions = new QuestionQueue({
  host,
  broadcast,
  panelCount: () => panels.size,
  tabExists: (tab) => chrome.tabs.get(tab).then(() => true, () => false),
});

// Outside agents (trimtab mcp): the tabs the person shared, their clients, Stop.
const agents = new AgentsHub({ host, broadcast });

// What the browser downloads, for the host to tell an agent where the file its action
// saved went (host/PROTOCOL.md, "Downloads").
relayDownloads(chrome.downloads, (msg) => host.post(msg));
// A download an acting tab's page starts waits for the host's decision, whatever made
// it (a blob, a data: URL, a response); the gates say which tabs act now.
const holds = new DownloadHolds({
  downloads: chrome.downloads,
  post: (msg) => relay.post(msg),
  acting: () => [...gates.gates.keys()],
  tabUrl: (tab) => chrome.tabs.get(tab).then((t) => t.url || t.pendingUrl || "", () => ""),
});
holds.listen();

// Routines on a schedule: each an alarm; a run opens its own background tab and goes
// through the host, its questions in the side panel (none answered: no).
const routines = new RoutineScheduler({
  host,
  storage: chrome.storage.local,
  alarms: chrome.alarms,
  tabs: chrome.tabs,
  groups: chrome.tabGroups,
  notify: (id, title, message) => {
    chrome.notifications.create(id, {
      type: "basic", iconUrl: chrome.runtime.getURL("icons/trimtab-128.png"), title, message,
    }).catch(() => {});
  },
});
chrome.alarms.onAlarm.addListener((alarm) => { routines.onAlarm(alarm).catch(() => {}); });
// A run the browser's closing cut short is said at its next start.
chrome.runtime.onStartup.addListener(() => { routines.onStartup().catch(() => {}); });
routines.restore().catch(() => {});

/**
 * Answer one side-panel message.
 * @param {{op: string, request?: object, timeoutMs?: number, action?: string,
 *          ask?: string, allow?: boolean, always?: boolean}} msg
 * @param {AbortSignal} signal aborted when the panel cancels this message or closes
 */
async function answer(msg, signal) {
  switch (msg.op) {
    case "host":
      return await host.request(msg.request, { timeoutMs: msg.timeoutMs, signal });
    case "status":
      return { ...host.status(), attached: relay.attachedTabs() };
    case "agents":
      return await agents.op(msg);
    case "routines":
      return await routines.op(msg);
    case "questions":
      if (msg.action === "answer") {
        return await questions.answer(msg.ask, msg.allow, msg.always);
      }
      return { questions: questions.list() };
    default:
      throw new HostError("bad_message", `unknown side-panel op ${JSON.stringify(msg.op)}`);
  }
}

chrome.runtime.onConnect.addListener((port) => {
  if (port.name !== "sidepanel" || port.sender?.id !== chrome.runtime.id) return;
  panels.add(port);
  /** This panel's messages in progress, by its message id: `cancel` aborts one. */
  const running = new Map();
  port.onDisconnect.addListener(() => {
    panels.delete(port);
    // What the closed panel was waiting for (its agent's tool call) ends with it.
    for (const controller of running.values()) controller.abort();
    running.clear();
    // Tabs stay debugged (with the browser's bar showing) only while a panel is
    // open: when the last one closes the host forgets them and detaches.
    if (panels.size > 0) return;
    questions.onPanelsGone();
    for (const tab of relay.attachedTabs()) {
      if (agents.isShared(tab)) continue; // outside agents still use it
      host.request({ type: "release", tab }).catch(() => {});
    }
  });
  port.onMessage.addListener(async (msg) => {
    if (msg.op === "cancel") {
      running.get(msg.of)?.abort();
      return;
    }
    const controller = new AbortController();
    running.set(msg.id, controller);
    let reply;
    try {
      reply = { id: msg.id, ok: true, result: await answer(msg, controller.signal) };
    } catch (err) {
      reply = {
        id: msg.id,
        ok: false,
        error: { code: err?.code ?? "internal", message: String(err?.message ?? err) },
      };
    } finally {
      running.delete(msg.id);
    }
    try {
      port.postMessage(reply);
    } catch {
      // the panel closed while the request ran
    }
  });
  // A panel that opens while the host is away tries it at once, not after the backoff.
  host.ensureConnected();
  // "connecting": a port is open and the host has not answered yet; its answer, or the
  // port closing, is broadcast when it comes.
  const now = host.alive ? "connected" : host.connected ? "connecting" : "disconnected";
  port.postMessage({ event: "host", state: now, detail: host.lastError });
  port.postMessage({ event: "questions", questions: questions.list(), withdrawn: null });
});

chrome.sidePanel.setPanelBehavior({ openPanelOnActionClick: true }).catch(() => {});

// The relay must be ready when the host starts sending commands, and the port
// keeps this worker alive while the host runs.
host.ensureConnected();
// Should Chrome stop this worker all the same (the port closed, the worker idled), an
// alarm wakes it, and waking connects the host: outside agents get their browser back
// within 30 s (Chrome's shortest period) with nobody at the browser. Created once, so a
// wake does not push the next one back.
const WAKE_ALARM = "trimtab-wake";
chrome.alarms.get(WAKE_ALARM)
  .then((alarm) => alarm ?? chrome.alarms.create(WAKE_ALARM, { periodInMinutes: 0.5 }))
  .catch(() => {});

// A handle for debugging from the worker's console and for the end-to-end tests,
// which drive the worker over CDP (Runtime.evaluate in the service_worker target).
globalThis.trimtab = { host, relay, tabs, panels, agents, questions, routines };
