// The host's questions to the person (host/PROTOCOL.md, "Questions"): what one is,
// and the words the side panel shows for it. Pure, for the worker (which keeps the
// queue) and the panel (which shows it) alike.
//
// Host → extension: {type: "ask", ask, client, session, tab, what, tool, args, reason,
//                    element, timeout}
//                   {type: "withdraw", ask, why}
// Extension → host: {type: "answer", ask, allow, why?} → {waiting: bool}

/** Who asks when the question is about the side panel's own agent. */
export const PANEL_AGENT = "Trimtab agent";

/** Arguments longer than this are cut in the question (they are the model's words). */
export const ARGS_SHOWN = 200;

/**
 * @typedef {{ask: string, client: string, session: string, tab: number,
 *   what: "submit"|"tab", tool: string|null, args: object|null, reason: string,
 *   element: string|null, timeout: number|null}} Question
 */

/**
 * The question in a host `ask` message, with every field of the expected type, or
 * null when the message is not a question one can answer (no id).
 * @param {unknown} msg
 * @returns {Question|null}
 */
export function questionOf(msg) {
  const m = /** @type {Record<string, unknown>} */ (msg ?? {});
  if (m.type !== "ask" || (typeof m.ask !== "string" && typeof m.ask !== "number")) return null;
  const text = (v) => (typeof v === "string" ? v : "");
  return {
    ask: String(m.ask),
    client: text(m.client),
    session: m.session == null ? "" : String(m.session),
    tab: Number(m.tab),
    what: m.what === "tab" ? "tab" : "submit",
    tool: typeof m.tool === "string" ? m.tool : null,
    args: m.args && typeof m.args === "object" ? /** @type {object} */ (m.args) : null,
    reason: text(m.reason),
    element: typeof m.element === "string" && m.element ? m.element : null,
    timeout: Number.isFinite(m.timeout) && Number(m.timeout) > 0 ? Number(m.timeout) : null,
  };
}

/**
 * The words for one question: who asks, what they want where, what would happen,
 * the element, and how long the host waits. Every string may hold page text (the
 * tab's title, the element): the panel puts it on screen with textContent only.
 * @param {Question} q
 * @param {{title?: string, url?: string} | undefined} tab what chrome.tabs says of it
 * @returns {{who: string, want: string, reason: string, element: string, wait: string}}
 */
export function describeQuestion(q, tab) {
  const who = q.client || "An outside agent";
  const where = tab?.title || tab?.url || `tab ${q.tab}`;
  let want;
  if (q.what === "tab") {
    want = `${who} asks to read and act in “${where}”, which is not shared with agents. `
      + "Allow for this session?";
  } else {
    let args = q.args ? JSON.stringify(q.args) : "";
    if (args.length > ARGS_SHOWN) args = `${args.slice(0, ARGS_SHOWN)}…`;
    const call = q.tool ? `${q.tool}${args ? `(${args})` : ""}` : "an action";
    want = `${who} wants to run ${call} in “${where}”. Allow?`;
  }
  return {
    who,
    want,
    reason: q.reason ? `What would happen: ${q.reason}.` : "",
    element: q.element ?? "",
    wait: q.timeout ? `Trimtab waits ${q.timeout} s for your answer; no answer counts as no.`
      : "",
  };
}

/**
 * The one line shown after a question left without the person's answer.
 * @param {{client?: string}|undefined} q the question, when it was known
 * @param {string} why the host's words
 */
export function withdrawnLine(q, why) {
  return `The question from ${q?.client || "an agent"} was withdrawn: ${why || "its call ended"}.`;
}

/** What the panel says when an answer came after its question was withdrawn. */
export const ANSWERED_TOO_LATE = "That question had already been withdrawn; nothing was done.";
