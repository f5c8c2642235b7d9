// The History box of the Agent view: the last tasks kept (panel/history.js holds
// them), each a button with its outcome, that shows the task again; and Clear.

import { $, el } from "./dom.js";
import { clearTasks, describeRecord, listTasks } from "./history.js";

/**
 * @param {{store: import("./store.js").Store<ReturnType<typeof import("./store.js").panelState>>,
 *          reopen: (id: string) => Promise<void>}} parts `reopen` shows a stored task
 */
export function mountHistoryBox({ store, reopen }) {
  async function showHistory() {
    const list = $("history-list");
    const tasks = await listTasks(chrome.storage.local);
    store.update({ history: tasks });
    list.replaceChildren();
    for (const record of tasks) {
      const li = el("li");
      const button = el("button", "", "");
      button.type = "button";
      button.dataset.id = record.id;
      const { outcome, line } = describeRecord(record);
      button.dataset.outcome = outcome;
      button.className = `entry ${outcome}`;
      button.title = record.title || record.url;
      button.append(el("div", "", record.task), el("div", "meta muted", line));
      button.addEventListener("click", () => reopen(record.id));
      li.append(button);
      list.append(li);
    }
    $("history-clear").disabled = tasks.length === 0;
  }

  $("history-clear").addEventListener("click", async () => {
    await clearTasks(chrome.storage.local);
    await showHistory();
  });

  return { showHistory };
}
