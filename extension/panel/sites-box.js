// The "Allowed sites" settings: the sites the agent may always act on and the sites
// it may never act on. The host keeps the lists and applies them (`sites` reads them,
// `sites_set` stores them, host/PROTOCOL.md); this module shows and edits them. A host
// that does not know these requests yet gets a plain message and no controls. Beside
// them, the codes agents' JavaScript (`evaluate`) runs without a question, each on one
// site, shown whole (`evaluate_always`); the person can only take one off
// (`evaluate_always_remove`): an always is given only by answering a question.

import {
  alwaysCodesOf, listsOf, siteFromInput, sitesError, withNever, withoutSite,
} from "../shared/sites.js";
import { oneAtATime } from "../shared/serial.js";

/** What the section shows, readable by the end-to-end tests. */
export const sitesView = {
  /** @type {import("../shared/sites.js").SiteLists|null} null until loaded */
  lists: null,
  /** @type {import("../shared/sites.js").AlwaysCode[]|null} the codes evaluate runs
   *  unasked, each on one site; null until loaded */
  evaluate: null,
  note: "",
};

/**
 * @param {Document} doc the panel's document, holding the section's elements
 * @param {import("./worker-client.js").WorkerClient} worker
 * @returns {{load: () => Promise<void>}}
 */
export function mountSitesBox(doc, worker) {
  const $ = (id) => /** @type {HTMLElement} */ (doc.getElementById(id));
  const form = /** @type {HTMLFormElement} */ ($("sites-add"));
  const input = /** @type {HTMLInputElement} */ ($("sites-new"));

  function say(text) {
    sitesView.note = text;
    $("sites-note").textContent = text;
  }

  function show(lists) {
    sitesView.lists = lists;
    for (const which of /** @type {const} */ (["always", "never"])) {
      const list = $(`sites-${which}`);
      list.replaceChildren();
      if (lists[which].length === 0) {
        const li = doc.createElement("li");
        li.className = "muted";
        li.textContent = "none";
        list.append(li);
      }
      for (const site of lists[which]) {
        const li = doc.createElement("li");
        const name = doc.createElement("span");
        name.className = "site";
        name.textContent = site;
        const remove = doc.createElement("button");
        remove.type = "button";
        remove.textContent = "Remove";
        remove.dataset.site = site;
        remove.dataset.list = which;
        remove.setAttribute("aria-label", `Remove ${site} from the ${which === "always"
          ? "always allowed" : "never allowed"} sites`);
        remove.addEventListener("click", () => save((now) => withoutSite(now, which, site),
          `Removed ${site}.`));
        li.append(name, remove);
        list.append(li);
      }
    }
    form.hidden = false;
  }

  function unavailable(err) {
    sitesView.lists = null;
    $("sites-always").replaceChildren();
    $("sites-never").replaceChildren();
    form.hidden = true;
    say(sitesError(err));
  }

  async function load() {
    try {
      show(listsOf(await worker.host({ type: "sites" }, { timeoutMs: 10_000 })));
      say("");
    } catch (err) {
      unavailable(err);
    }
    try {
      showEvaluate(await worker.host({ type: "evaluate_always" }, { timeoutMs: 10_000 }));
    } catch {
      showEvaluate(null); // a host without the list: nothing to show
    }
  }

  /** The codes evaluate runs unasked: each its site, its code (the agent's text, as
   *  data, whole) and a Remove button. */
  function showEvaluate(reply) {
    const codes = alwaysCodesOf(reply);
    sitesView.evaluate = codes;
    $("sites-evaluate-box").hidden = codes === null;
    const list = $("sites-evaluate");
    list.replaceChildren();
    if (codes?.length === 0) {
      const li = doc.createElement("li");
      li.className = "muted";
      li.textContent = "none";
      list.append(li);
    }
    for (const { site, sha256, code } of codes ?? []) {
      const li = doc.createElement("li");
      li.className = "always-code";
      const name = doc.createElement("span");
      name.className = "site";
      name.textContent = site;
      const shown = doc.createElement("pre");
      shown.className = "question-code";
      shown.textContent = code;
      const remove = doc.createElement("button");
      remove.type = "button";
      remove.textContent = "Remove";
      remove.dataset.site = site;
      remove.dataset.sha256 = sha256;
      remove.dataset.list = "evaluate";
      remove.setAttribute("aria-label", `Ask again before running this code on ${site}`);
      remove.addEventListener("click", async () => {
        try {
          showEvaluate(await worker.host({ type: "evaluate_always_remove", site, sha256 },
            { timeoutMs: 10_000 }));
          say(`This code on ${site} is asked about again.`);
        } catch (err) {
          say(sitesError(err));
        }
      });
      const head = doc.createElement("div");
      head.className = "always-code-head";
      head.append(name, remove);
      li.append(head, shown);
      list.append(li);
    }
  }

  // One save at a time, each an edit of the lists the host stored last: two edits made
  // before the host answered the first (two Removes clicked in a row) both hold. Made
  // from the lists shown when clicked, the second would put back what the first took
  // off.
  const inOrder = oneAtATime();

  /** Save `edit` of the lists the host stored last, then say `done`. */
  function save(edit, done) {
    inOrder(async () => {
      if (!sitesView.lists) return; // the host's lists are not known: nothing to edit
      try {
        const stored = await worker.host({ type: "sites_set", ...edit(sitesView.lists) },
          { timeoutMs: 10_000 });
        show(listsOf(stored));
        say(done);
      } catch (err) {
        say(sitesError(err));
      }
    });
  }

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    if (!sitesView.lists) return;
    const typed = siteFromInput(input.value);
    if ("error" in typed) {
      say(typed.error);
      input.focus();
      return;
    }
    input.value = "";
    save((now) => withNever(now, typed.site), `${typed.site} is never allowed now.`);
  });

  return { load };
}
