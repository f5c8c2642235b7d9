// The one place the side panel shows the host's questions to the person, for its own
// agent and for outside agents alike: a box in the bar pinned at the bottom of the
// panel, so it is always in view. A new question takes the keyboard focus, on its
// safe answer (Don't allow, or No for a site), which Escape gives too; a withdrawn
// question leaves at once. The worker's queue (worker/questions.js) holds the
// questions and highlights their element in the page; this module only shows them and
// relays the answer. Trimtab's words and the page's are kept apart: page text (the
// element's text, a dialog's message, the tab's title) is quoted in a block of its
// own, shortened, and goes on screen through textContent only.

import {
  ANSWERED_TOO_LATE, answerOf, choicesOf, describeQuestion, withdrawnLine,
} from "../shared/questions.js";

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
 * @returns {{answer: (ask: string, allow: boolean, always?: boolean)
 *   => Promise<{waiting: boolean}|null>}}
 */
export function mountQuestionBar(doc, worker, { afterAnswer = () => {} } = {}) {
  const $ = (id) => /** @type {HTMLElement} */ (doc.getElementById(id));
  const box = $("question");
  const buttons = $("question-buttons");
  const note = $("question-note");

  function say(text) {
    questionView.note = text;
    note.textContent = text;
    note.hidden = !text;
  }

  function setText(id, text) {
    $(id).textContent = text;
    $(id).hidden = !text;
  }

  /** The answer buttons of a question, the safe one first (and focused). */
  function showChoices(question) {
    const made = choicesOf(question).map((choice) => {
      const button = doc.createElement("button");
      button.type = "button";
      button.id = choice.id;
      button.textContent = choice.label;
      button.title = choice.hint;
      button.className = choice.safe ? "safe" : "risky";
      button.addEventListener("click", () => {
        if (questionView.shown?.ask !== question.ask) return;
        const { allow, always } = answerOf(question, choice);
        answer(question.ask, allow, always);
      });
      return button;
    });
    const [safe, ...others] = made;
    const group = doc.createElement("span");
    group.className = "question-others";
    group.append(...others);
    buttons.replaceChildren(safe, group);
    return safe;
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
    setText("question-want", words.want);
    setText("question-reason", words.reason);
    setText("question-facts", words.facts);
    const list = $("question-quotes");
    list.replaceChildren();
    for (const quote of words.quotes) {
      const dt = doc.createElement("dt");
      const dd = doc.createElement("dd");
      dt.textContent = quote.label;
      dd.textContent = `“${quote.text}”`;
      list.append(dt, dd);
    }
    $("question-quoted").hidden = words.quotes.length === 0;
    // evaluate's code: as text only, whole, in a block of its own.
    $("question-code").textContent = words.code;
    $("question-code-box").hidden = !words.code;
    $("question-wait").textContent = words.wait;
    setText("question-hint", words.hint);
    const safe = showChoices(question);
    box.hidden = false;
    safe.focus();
  }

  function render() {
    const first = questionView.open[0] ?? null;
    const more = questionView.open.length - 1;
    $("question-more").textContent = more > 0
      ? `${more} more question${more === 1 ? "" : "s"} after this one.` : "";
    if (first?.ask === questionView.shown?.ask) return;
    const hadFocus = box.contains(doc.activeElement);
    questionView.shown = first;
    // The buttons answer the question they were made for: none shows until the new
    // question's own are in place.
    buttons.replaceChildren();
    if (first) {
      if (hadFocus) box.focus(); // Escape still answers no while the words load
      show(first);
      return;
    }
    box.hidden = true;
    if (hadFocus) afterAnswer();
  }

  /**
   * Send the person's answer; say so when the question had already been withdrawn.
   * `always` goes only with a site question's answer (remember the site) and an
   * evaluate question's (remember this code on this site).
   * @returns {Promise<{waiting: boolean}|null>} null when it did not reach the host
   */
  async function answer(ask, yes, always) {
    for (const button of buttons.querySelectorAll("button")) button.disabled = true;
    questionView.open = questionView.open.filter((q) => q.ask !== ask);
    render();
    try {
      const result = await worker.call("questions", { action: "answer", ask, allow: yes,
        ...(typeof always === "boolean" ? { always } : {}) });
      say(result.waiting ? "" : ANSWERED_TOO_LATE);
      return result;
    } catch (err) {
      say(`Your answer did not reach the Trimtab host: ${err.message}`);
      return null;
    }
  }

  box.addEventListener("keydown", (e) => {
    // The safe answer is the default one: Escape anywhere in the box, Enter on the box.
    const shown = questionView.shown;
    if (!shown) return;
    if (e.key === "Escape" || (e.key === "Enter" && e.target === box)) {
      e.preventDefault();
      const safe = choicesOf(shown).find((c) => c.safe);
      const { allow, always } = answerOf(shown, /** @type {any} */ (safe));
      answer(shown.ask, allow, always);
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
