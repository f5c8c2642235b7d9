// The Inspect view: what the agent would see of the active tab (the host's XML as a
// foldable tree, panel/xmlview.js), its figures, and the element under the pointer or
// the focus highlighted in the page. It also finds out whether the active tab is one
// Chrome keeps closed (the state's `closed`), which the chat's Run button obeys.

import { closedReason } from "../shared/tab-access.js";
import { $, activeTab } from "./dom.js";
import { loadSettings } from "../agent/model-settings.js";
import { detachReason } from "./status.js";
import { renderXml } from "./xmlview.js";

export const FIGURES = [
  ["tokens", "our tokens"],
  ["raw_tokens", "raw DOM tokens"],
  ["text_tokens", "visible text tokens"],
  ["dedup_saved", "dedup saved"],
  ["trim_saved", "trim saved"],
  ["elements", "elements in → out"],
];

/**
 * The figures of a snapshot as the view lists them, and the line under the toolbar:
 * the tab's title, the page's kind and how much smaller than the DOM it is.
 * @param {Record<string, unknown>} stats the host's `stats`
 * @param {string} kind the host's `kind`
 * @param {string} title the tab's title
 * @returns {{rows: Array<{key: string, label: string, value: string}>, line: string}}
 */
export function figuresOf(stats, kind, title) {
  const value = (key) => {
    if (key === "elements") {
      return `${stats.elements_in ?? "?"} → ${stats.elements_out ?? "?"}`;
    }
    const v = stats[key];
    return typeof v === "number" ? v.toLocaleString("en-US") : "–";
  };
  const rows = FIGURES.map(([key, label]) => ({ key, label, value: value(key) }));
  const note = [];
  if (kind) note.push(kind);
  if (typeof stats.tokens === "number" && typeof stats.raw_tokens === "number"
      && stats.tokens > 0) {
    note.push(`${(stats.raw_tokens / stats.tokens).toFixed(1)}× smaller than the DOM`);
  }
  return { rows, line: [title, ...note].filter(Boolean).join(" · ") };
}

/**
 * @param {{store: import("./store.js").Store<ReturnType<typeof import("./store.js").panelState>>,
 *          worker: import("./worker-client.js").WorkerClient}} parts
 */
export function mountInspector({ store, worker }) {
  const { state } = store;

  function showInspectError(message) {
    store.update({ inspectError: message });
    const line = $("inspect-error");
    line.textContent = message;
    line.hidden = !message;
  }

  function renderFigures() {
    const { rows, line } = figuresOf(state.stats, state.kind, state.tab?.title ?? "");
    const dl = $("figures");
    dl.replaceChildren();
    for (const { key, label, value } of rows) {
      const div = document.createElement("div");
      const dt = document.createElement("dt");
      const dd = document.createElement("dd");
      dt.textContent = label;
      dd.textContent = value;
      dd.dataset.figure = key;
      div.append(dt, dd);
      dl.append(div);
    }
    $("inspect-tab").textContent = line;
  }

  /**
   * Say up front when the active tab is one Chrome keeps closed (the chat disables
   * Run for a new task and says why beside it).
   * @param {chrome.tabs.Tab|null} tab
   */
  function showClosed(tab) {
    store.update({ closed: closedReason(tab?.url || tab?.pendingUrl) });
  }
  store.subscribe(["closed"], ({ closed }) => {
    $("copy").disabled = Boolean(closed);
  });

  /** Empty the view of another page's XML and figures; title the tab shown. */
  function clearInspect(tab) {
    store.update({ xml: "", kind: "", stats: {}, pinned: null });
    $("figures").replaceChildren();
    $("xml").replaceChildren();
    $("inspect-tab").textContent = tab?.title ?? "";
  }

  async function refresh() {
    store.update({ refreshes: state.refreshes + 1 });
    const tab = await activeTab();
    store.update({ tab });
    if (!tab?.id) {
      showInspectError("No active tab in this window.");
      return;
    }
    showClosed(tab);
    store.update({ shownTab: tab.id });
    if (state.closed) {
      // Nothing of the previous tab stays on screen under the reason.
      clearInspect(tab);
      showInspectError(state.closed);
      return;
    }
    $("refresh").disabled = true;
    try {
      const { pageBudget } = await loadSettings();
      const result = await worker.host({ type: "snapshot", tab: tab.id,
        ...(pageBudget === null ? {} : { budget: pageBudget }) });
      if (state.tab?.id !== tab.id) return; // the person switched tabs meanwhile
      store.update({ xml: String(result.xml ?? ""), kind: String(result.kind ?? ""),
        stats: result.stats ?? {} });
      showInspectError("");
      renderFigures();
      const parsed = renderXml(state.xml, $("xml"));
      if (!parsed.ok) showInspectError(`The host's XML did not parse: ${parsed.error}`);
    } catch (err) {
      if (state.tab?.id !== tab.id) return;
      // The tab may have become a page Chrome keeps closed meanwhile: say that instead.
      const now = await chrome.tabs.get(tab.id).catch(() => tab);
      showClosed(now);
      clearInspect(now);
      showInspectError(state.closed || `Could not read this tab: ${err.message}`);
    } finally {
      $("refresh").disabled = false;
    }
  }

  async function highlight(eid) {
    if (!state.tab?.id || state.highlighted === eid) return;
    store.update({ highlighted: eid });
    try {
      const result = await worker.host({ type: "highlight", tab: state.tab.id, eid });
      if (eid && result?.found === false) {
        showInspectError(`Element ${eid} is no longer on the page; refresh.`);
      }
    } catch (err) {
      showInspectError(`Could not highlight ${eid}: ${err.message}`);
    }
  }

  const xmlView = $("xml");
  xmlView.addEventListener("mouseover", (e) => {
    const eid = e.target?.dataset?.eid;
    if (eid) highlight(eid);
  });
  xmlView.addEventListener("mouseout", (e) => {
    if (e.target?.dataset?.eid) highlight(state.pinned);
  });
  // By keyboard as by mouse: focus highlights, Enter or Space pins.
  xmlView.addEventListener("focusin", (e) => {
    const eid = e.target?.dataset?.eid;
    if (eid) highlight(eid);
  });
  xmlView.addEventListener("focusout", (e) => {
    if (e.target?.dataset?.eid) highlight(state.pinned);
  });
  xmlView.addEventListener("keydown", (e) => {
    if ((e.key === "Enter" || e.key === " ") && e.target?.dataset?.eid) {
      e.preventDefault();
      e.target.click();
    }
  });
  xmlView.addEventListener("click", (e) => {
    const eid = e.target?.dataset?.eid;
    if (!eid) return;
    for (const pinned of xmlView.querySelectorAll(".eid.pinned")) pinned.classList.remove("pinned");
    store.update({ pinned: state.pinned === eid ? null : eid });
    if (state.pinned) e.target.classList.add("pinned");
    highlight(state.pinned);
  });

  $("refresh").addEventListener("click", refresh);
  $("copy").addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(state.xml);
      $("inspect-tab").textContent = "Copied the XML.";
    } catch (err) {
      showInspectError(`Could not copy: ${err.message}`);
    }
  });

  chrome.tabs.onActivated.addListener(async ({ windowId }) => {
    const win = await chrome.windows.getCurrent();
    if (windowId !== win.id) return;
    if (state.view === "inspect") refresh();
    else showClosed(await activeTab());
  });
  chrome.tabs.onUpdated.addListener(async (tabId, change, tab) => {
    if (change.url && tab.active) {
      const win = await chrome.windows.getCurrent();
      if (tab.windowId !== win.id) return;
      // A tab that turns into a closed page (or out of one) is seen at once.
      const closed = closedReason(tab.url || tab.pendingUrl);
      if (state.view === "inspect" && closed !== state.closed && !state.running) refresh();
      else showClosed(tab);
    }
  });
  chrome.tabs.onUpdated.addListener((tabId, change) => {
    if (tabId === state.tab?.id && change.status === "complete" && state.view === "inspect"
        && !state.running) {
      refresh();
    }
  });

  worker.onEvent((event) => {
    if (event.event === "questions") {
      // A question's highlight (the worker's) replaced or cleared the inspector's: the
      // next hover draws it again.
      store.update({ highlighted: null });
    } else if (event.event === "detached"
        && (state.tab?.id === event.tab || state.shownTab === event.tab)) {
      // A closed tab is not a tab to explain: Chrome shows another one, and so does the
      // view. This news and Chrome's onActivated come in either order; both end on the
      // tab Chrome shows now.
      if (event.reason === "target_closed") refresh();
      else showInspectError(`Trimtab lost access to this tab: ${detachReason(event.reason)}.`);
    }
  });
  // What failed while the host was gone is stale now (whatever the view: the error
  // must not wait there for the next visit).
  store.subscribe(["host"], ({ host }) => {
    if (host?.state === "connected" && host.again && state.inspectError) refresh();
  });

  return { refresh };
}
