// The one place the side panel shows the host's questions to the person, for its own
// agent and for outside agents alike: a box in the bar pinned at the bottom of the
// panel, so it is always in view. A new question takes the keyboard focus; Deny is
// the safe default (Escape, or Enter on the box itself); a withdrawn question leaves
// at once. The worker's queue (worker/questions.js) holds the questions; this module
// only shows them and relays the answer. Page text (the tab's title, the element)
// goes on screen through textContent only.

import { ANSWERED_TOO_LATE, describeQuestion, withdrawnLine } from "../shared/questions.js";

/** What the bar shows, readable by the end-to-end tests. */
export const questionView = {
  /** @type {import("../shared/questions.js").Question[]} */
  open: [],
  /** @type {import("../shared/questions.js").Question|null} */
  shown: null,
  note: "",
};

/**
 * @param {Document} doc the panel's document, holding the bar's question elements
 * @param {import("./worker-client.js").WorkerClient} worker
 * @param {{afterAnswer?: () => void}} [options] where the focus goes once the box closes
 * @returns {{answer: (ask: string, allow: boolean) => Promise<{waiting: boolean}|null>}}
 */
export function mountQuestionBar(doc, worker, { afterAnswer = () => {} } = {}) {
  const $ = (id) => /** @type {HTMLElement} */ (doc.getElementById(id));
  const box = $("question");
  const allow = /** @type {HTMLButtonElement} */ ($("question-allow"));
  const deny = /** @type {HTMLButtonElement} */ ($("question-deny"));
  const note = $("question-note");

  function say(text) {
    questionView.note = text;
    note.textContent = text;
    note.hidden = !text;
  }

  async function show(question) {
    let tab;
    try {
      tab = await chrome.tabs.get(question.tab);
    } catch {
      tab = undefined;
    }
    if (questionView.shown?.ask !== question.ask) return; // answered or withdrawn meanwhile
    const words = describeQuestion(question, tab);
    $("question-want").textContent = words.want;
    $("question-reason").textContent = words.reason;
    $("question-reason").hidden = !words.reason;
    $("question-element").textContent = words.element;
    $("question-element").hidden = !words.element;
    $("question-wait").textContent = words.wait;
    allow.disabled = deny.disabled = false;
    box.hidden = false;
    box.focus();
  }

  function render() {
    const first = questionView.open[0] ?? null;
    const more = questionView.open.length - 1;
    $("question-more").textContent = more > 0
      ? `${more} more question${more === 1 ? "" : "s"} after this one.` : "";
    if (first?.ask === questionView.shown?.ask) return;
    const hadFocus = box.contains(doc.activeElement);
    questionView.shown = first;
    if (first) {
      show(first);
      return;
    }
    box.hidden = true;
    if (hadFocus) afterAnswer();
  }

  /**
   * Send the person's answer; say so when the question had already been withdrawn.
   * @returns {Promise<{waiting: boolean}|null>} null when it did not reach the host
   */
  async function answer(ask, yes) {
    allow.disabled = deny.disabled = true;
    questionView.open = questionView.open.filter((q) => q.ask !== ask);
    render();
    try {
      const result = await worker.call("questions", { action: "answer", ask, allow: yes });
      say(result.waiting ? "" : ANSWERED_TOO_LATE);
      return result;
    } catch (err) {
      say(`Your answer did not reach the Trimtab host: ${err.message}`);
      return null;
    }
  }

  allow.addEventListener("click", () => {
    if (questionView.shown) answer(questionView.shown.ask, true);
  });
  deny.addEventListener("click", () => {
    if (questionView.shown) answer(questionView.shown.ask, false);
  });
  box.addEventListener("keydown", (e) => {
    // The safe answer is the default one: Escape anywhere in the box, Enter on the box.
    if (!questionView.shown) return;
    if (e.key === "Escape" || (e.key === "Enter" && e.target === box)) {
      e.preventDefault();
      answer(questionView.shown.ask, false);
    }
  });

  worker.onEvent((event) => {
    if (event.event === "questions") {
      questionView.open = Array.isArray(event.questions) ? event.questions : [];
      if (event.withdrawn) say(withdrawnLine(event.withdrawn, event.withdrawn.why));
      render();
    } else if (event.event === "worker" || (event.event === "host" && event.state !== "connected")) {
      // The worker or the host went away, and every open question with it.
      questionView.open = [];
      render();
    }
  });
  return { answer };
}
