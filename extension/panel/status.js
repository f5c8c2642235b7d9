// The host status line in the header, and the command to run when the browser cannot
// find the host. It watches the worker's events about the host (panel/host-watch.js
// pings while the host is away) and puts what it learns in the state's `host`; the
// other views react to that field (settings reload what the host knows, the inspector
// reads the tab again).

import { $ } from "./dom.js";
import { HostWatch, hostHelp } from "./host-watch.js";

/**
 * Why Trimtab lost a tab, in words, from chrome.debugger's DetachReason.
 * @param {string} reason
 */
export function detachReason(reason) {
  if (reason === "canceled_by_user") return "the debugging was canceled from the browser's bar";
  if (reason === "target_closed") return "the tab was closed";
  return `the debugger was detached (${reason})`;
}

/**
 * @param {{store: import("./store.js").Store<ReturnType<typeof import("./store.js").panelState>>,
 *          worker: import("./worker-client.js").WorkerClient}} parts
 */
export function mountStatus({ store, worker }) {
  store.subscribe(["host"], ({ host }) => {
    if (!host) return;
    // What to run when the browser cannot find the host; gone once it is back.
    const help = host.state === "connected" ? null : hostHelp(host.detail || "");
    $("host-help").hidden = !help;
    if (help) {
      $("host-help-why").textContent = help.why;
      $("host-command").textContent = help.command;
    }
    const line = $("host-status");
    if (host.state === "connected") {
      line.textContent = host.again ? "host connected again" : "host connected";
      line.className = "status ok";
      line.title = "";
    } else {
      line.textContent = "host disconnected, retrying…";
      line.className = "status down";
      line.title = host.detail || "";
    }
  });

  const hostWatch = new HostWatch({
    ping: () => worker.host({ type: "ping" }, { timeoutMs: 5_000 }),
    onChange: (host) => store.update({ host }),
  });
  worker.onEvent((event) => {
    if (event.event === "host") {
      hostWatch.report(event.state, event.detail || "");
    } else if (event.event === "worker") {
      hostWatch.report("disconnected", "the extension's service worker stopped");
    }
  });

  $("host-copy").addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText($("host-command").textContent);
      $("host-copy").textContent = "Copied";
    } catch {
      // No clipboard (the panel lost focus): the command stays on screen to select.
      $("host-copy").textContent = "Select and copy";
    }
  });
}
