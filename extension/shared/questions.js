// The host's questions to the person (host/PROTOCOL.md, "Consent"): what one is, the
// words the side panel shows for it, the answers it offers and what each sends back.
// Pure, for the worker (which keeps the queue) and the panel (which shows it) alike.
//
// Host → extension: {type: "ask", ask, client, session, tab, what, tool, args, reason,
//                    element, eid, timeout, site?, choices?, request?, after?}
//                   {type: "withdraw", ask, why}
// Extension → host: {type: "answer", ask, allow, always?, why?} → {waiting: bool}
//
// Two kinds of words, kept apart on screen: Trimtab's own (who asks, the site, the
// method, the element's role: facts the host or the browser knows) and the page's
// (the element's text, a dialog's message, the tab's title, a request's address),
// which are shown only as quoted data, shortened, in a block of their own, and never
// inside Trimtab's sentences: a page must not be able to word the question.

/** Who asks when the question is about the side panel's own agent. */
export const PANEL_AGENT = "Trimtab agent";

/** Arguments longer than this are cut in the question (they are the model's words). */
export const ARGS_SHOWN = 200;

/** Page-written text longer than this is cut in the question, with an ellipsis. */
export const QUOTE_SHOWN = 120;

/** The kinds of question the host asks. */
export const KINDS = ["submit", "secret", "download", "evaluate", "tab", "site", "request"];

/** evaluate's code longer than this is cut in the question (the person reads it whole). */
export const CODE_SHOWN = 4000;

/** The answers a site question may offer (its `choices`); "no" is always offered. */
export const SITE_CHOICES = ["once", "always", "no"];

/**
 * @typedef {{method: string, url: string, site: string}} HeldRequest
 * @typedef {{ask: string, client: string, session: string, tab: number,
 *   what: "submit"|"secret"|"download"|"evaluate"|"tab"|"site"|"request", tool: string|null,
 *   args: object|null,
 *   reason: string, element: string|null, eid: string|null, timeout: number|null,
 *   site: string|null, request: HeldRequest|null, choices: string[]|null,
 *   after: boolean}} Question `after`: about what the page sends after the agent's
 *   action ended (the host's trailing window; the call may have answered already)
 * @typedef {{id: string, label: string, hint: string, allow: boolean,
 *   always?: boolean, safe: boolean}} Choice
 * @typedef {{label: string, text: string}} Quote one piece of page-written text:
 *   `label` is Trimtab's words for what it is, `text` the page's, shortened
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
  const r = /** @type {Record<string, unknown>} */ (
    m.request && typeof m.request === "object" ? m.request : {});
  return {
    ask: String(m.ask),
    client: text(m.client),
    session: m.session == null ? "" : String(m.session),
    tab: Number(m.tab),
    what: KINDS.includes(/** @type {string} */ (m.what))
      ? /** @type {Question["what"]} */ (m.what) : "submit",
    tool: typeof m.tool === "string" ? m.tool : null,
    args: m.args && typeof m.args === "object" ? /** @type {object} */ (m.args) : null,
    reason: text(m.reason),
    element: typeof m.element === "string" && m.element ? m.element : null,
    eid: typeof m.eid === "string" && m.eid ? m.eid : null,
    timeout: Number.isFinite(m.timeout) && Number(m.timeout) > 0 ? Number(m.timeout) : null,
    site: typeof m.site === "string" && m.site ? m.site : null,
    request: m.request && typeof m.request === "object"
      ? { method: text(r.method), url: text(r.url), site: text(r.site) } : null,
    choices: Array.isArray(m.choices)
      ? m.choices.filter((c) => SITE_CHOICES.includes(c)) : null,
    after: m.after === true,
  };
}

/**
 * The answers a question offers, the safe one first (it takes the focus, and Escape
 * gives it). A site question: No, Once (this task), Always (remembered); every other
 * question: Don't allow, Allow. The ids are the buttons' element ids.
 * @param {Question} q
 * @returns {Choice[]}
 */
export function choicesOf(q) {
  if (q.what === "evaluate") {
    // Always covers this exact code on this site, nothing else; the host offers it
    // (`choices`) only where it can hold, and never for code the question cuts.
    const offered = (name) => name === "no" || ((!q.choices?.length || q.choices.includes(name))
      && !(name === "always" && codeCut(q)));
    return [
      { name: "no", id: "question-deny", label: "No", hint: "The code is not run.",
        allow: false, always: false, safe: true },
      { name: "once", id: "question-allow", label: "Once", hint: "Run this code, this once.",
        allow: true, always: false, safe: false },
      { name: "always", id: "question-always", label: "Always for this code",
        hint: "Run exactly this code on this site again without asking; any other code asks "
          + "again (Settings lists it).",
        allow: true, always: true, safe: false },
    ].filter((c) => offered(c.name)).map(({ name, ...choice }) => choice);
  }
  if (q.what === "site") {
    // The host may offer fewer answers (`choices`); No is always there.
    const offered = (name) => name === "no" || !q.choices?.length || q.choices.includes(name);
    return [
      { name: "no", id: "question-deny", label: "No",
        hint: "Refuse: the agent does not act there.", allow: false, always: false, safe: true },
      { name: "once", id: "question-allow", label: "Once",
        hint: "Allow this site for this task only.", allow: true, always: false, safe: false },
      { name: "always", id: "question-always", label: "Always",
        hint: "Allow this site and remember it (Settings, Allowed sites).",
        allow: true, always: true, safe: false },
    ].filter((c) => offered(c.name)).map(({ name, ...choice }) => choice);
  }
  return [
    { id: "question-deny", label: "Don't allow", hint: "Nothing is done.", allow: false,
      safe: true },
    { id: "question-allow", label: "Allow",
      hint: q.what === "tab" ? "Allow for this session." : "Allow this one action, once.",
      allow: true, safe: false },
  ];
}

/**
 * What the person's choice sends to the host: `always` only for a site question.
 * @param {Question} q
 * @param {Choice} choice
 * @returns {{allow: boolean, always?: boolean}}
 */
export function answerOf(q, choice) {
  return q.what === "site" || q.what === "evaluate"
    ? { allow: choice.allow, always: Boolean(choice.always) }
    : { allow: choice.allow };
}

/**
 * Page-written text as the question quotes it: on one line, at most `max` characters
 * (then cut with an ellipsis). Only ever put on screen with textContent.
 * @param {string} text
 * @param {number} [max]
 */
export function shorten(text, max = QUOTE_SHOWN) {
  const flat = String(text ?? "").replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1).trimEnd()}…` : flat;
}

const ENTITIES = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

/** The text an XML string stands for (its entities and character references read). */
export function unescapeXml(text) {
  return String(text).replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, name) => {
    if (name[0] === "#") {
      const code = name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16)
        : parseInt(name.slice(1), 10);
      return code >= 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

/** Trimtab's word for an element's role, from the HTML tags it knows. */
const ROLES = {
  a: "link", button: "button", input: "field", textarea: "text box", select: "list",
  option: "option", form: "form", img: "image", label: "label", summary: "summary",
  details: "details", iframe: "frame", li: "list item", td: "table cell",
  th: "table header", h1: "heading", h2: "heading", h3: "heading", h4: "heading",
  h5: "heading", h6: "heading", p: "paragraph", div: "element", span: "element",
  "js-dialog": "dialog",
};

/** What a page's JavaScript dialog of each type is called. */
const DIALOGS = {
  alert: "alert", confirm: "confirm dialog", prompt: "prompt",
  beforeunload: "“leave this page?” dialog",
};

const ONE_ELEMENT = /^<([a-z][a-z0-9-]{0,40})((?:\s+[a-z][a-z0-9_.:-]*="[^"<]*")*)\s*(?:\/>|>([^<]*)<\/\1>)$/;

/**
 * What the host's `element` (one element in Trimtab's XML, page strings escaped) says:
 * its role and id in Trimtab's words, and the page's words in it as quotes.
 * @param {string|null} element
 * @returns {{role: string, id: string, quotes: Quote[]}}
 */
export function elementOf(element) {
  if (!element) return { role: "", id: "", quotes: [] };
  const found = ONE_ELEMENT.exec(element.trim());
  if (!found) {
    // Not one plain element: all of it is shown as the page's, as it came.
    return { role: "element", id: "", quotes: [{ label: "element", text: shorten(element) }] };
  }
  const [, tag, rawAttributes, content] = found;
  const attributes = {};
  for (const [, name, value] of rawAttributes.matchAll(/([a-z][a-z0-9_.:-]*)="([^"]*)"/g)) {
    attributes[name] = unescapeXml(value);
  }
  const quotes = [];
  let role = ROLES[tag] ?? "element";
  if (!(tag in ROLES)) quotes.push({ label: "tag", text: shorten(tag) });
  if (tag === "js-dialog" && attributes.type in DIALOGS) role = DIALOGS[attributes.type];
  const id = attributes.id ?? "";
  const text = content === undefined ? "" : unescapeXml(content);
  if (text.trim()) {
    quotes.push({ label: tag === "js-dialog" ? "its message" : `the ${role}'s text`,
      text: shorten(text) });
  }
  for (const [name, value] of Object.entries(attributes)) {
    if (name === "id" || (tag === "js-dialog" && name === "type" && value in DIALOGS)) continue;
    quotes.push({ label: name === "message" ? "its message" : name, text: shorten(value) });
  }
  return { role, id, quotes };
}

/** The site of a URL as Trimtab names it (its scheme and host), or "". */
export function siteOf(url) {
  try {
    const u = new URL(url);
    return u.host ? `${u.protocol}//${u.host}` : "";
  } catch {
    return "";
  }
}

/**
 * The words for one question. Trimtab's own: who asks, what they want where (`want`),
 * why Trimtab asks (`reason`, the host's words), the facts it knows (`facts`), how
 * long it waits (`wait`). The page's, quoted apart (`quotes`): the element's text, a
 * dialog's message, the tab's title, a request's address.
 * @param {Question} q
 * @param {{title?: string, url?: string} | undefined} tab what chrome.tabs says of it
 * @returns {{who: string, want: string, reason: string, facts: string, quotes: Quote[],
 *   code: string, hint: string, wait: string, choices: Choice[]}}
 */
export function describeQuestion(q, tab) {
  const who = q.client || "An outside agent";
  const tabSite = siteOf(tab?.url ?? "");
  const where = tabSite ? `a tab on ${tabSite}` : `tab ${q.tab}`;
  const element = elementOf(q.element);
  const quotes = [...element.quotes];
  let want;
  if (q.what === "tab") {
    want = `${who} asks to read and act in ${where}, which is not shared with agents. `
      + "Allow for this session?";
  } else if (q.what === "evaluate") {
    // The code is the model's, shown whole apart (`code`), never inside these words.
    want = `${who} wants to run JavaScript in ${q.site ? `a tab on ${q.site}` : where}, `
      + "where it can read and change anything. Allow?";
  } else if (q.what === "site") {
    const site = q.site || q.request?.site || "another site";
    // The host's reason says why it asks (the sites the task may act on, a look-alike).
    want = `Allow ${who} to act on ${site}?`;
  } else if (q.what === "request" && q.request?.method && q.after) {
    // The action is over (the page sends this on its own timer): said as such, with
    // the element by its role only; its text is quoted below, apart.
    const site = q.request.site || siteOf(q.request.url) || "a site";
    want = `After ${who} ${doneInWords(q, element)} (${where}), the page wants to send `
      + `${q.request.method} to ${site}. Allow?`;
    if (q.request.url) quotes.push({ label: "address", text: shorten(q.request.url) });
  } else if (q.what === "request" && q.request?.method) {
    const site = q.request.site || siteOf(q.request.url) || "a site";
    want = `${who}'s ${q.tool ?? "action"} in ${where} would send ${q.request.method} `
      + `to ${site}. Allow?`;
    if (q.request.url) quotes.push({ label: "address", text: shorten(q.request.url) });
  } else if (q.what === "download" && q.request?.url) {
    // The file's name, size and type are the site's: quoted from the element, apart.
    const site = q.request.site || siteOf(q.request.url) || "a site";
    want = `${who}'s ${q.tool ?? "action"} in ${where} would save a file from ${site} `
      + "on this computer. Allow?";
    quotes.push({ label: "address", text: shorten(q.request.url) });
  } else if (actionInWords(q, element)) {
    want = `${who} wants to ${actionInWords(q, element)} (${where}). Allow?`;
  } else {
    // A secret question is about typing into a password or card field: what would be
    // typed is not shown on screen.
    const shown = q.what === "secret" && q.args ? { ...q.args, text: "•••" } : q.args;
    let args = shown ? JSON.stringify(shown) : "";
    if (args.length > ARGS_SHOWN) args = `${args.slice(0, ARGS_SHOWN)}…`;
    const call = q.tool ? `${q.tool}${args ? `(${args})` : ""}` : "an action";
    want = `${who} wants to run ${call} in ${where}. Allow?`;
  }
  const facts = [];
  if (q.after) facts.push("Sent after the action ended; the agent may have moved on");
  if (!element.role && q.tool === "press" && q.what === "submit") {
    facts.push("Acts on: whatever has the keyboard focus in the page");
  }
  if (element.role) {
    facts.push(`Acts on: ${/^[aeiou]/.test(element.role) ? "an" : "a"} ${element.role}`
      + (element.id ? ` (id ${element.id}, highlighted in the page)` : ""));
  }
  if (tab?.title) quotes.push({ label: "tab title", text: shorten(tab.title) });
  const choices = choicesOf(q);
  return {
    who,
    want,
    reason: q.reason ? `What would happen: ${q.reason.replace(/\.$/, "")}.` : "",
    facts: facts.join(" · "),
    quotes,
    code: codeOf(q),
    hint: hintOf(q, choices),
    wait: q.timeout ? `Trimtab waits ${q.timeout} s for your answer; no answer counts as no.`
      : "",
    choices,
  };
}

/**
 * What Once and Always mean for this question, in Trimtab's words ("" when it offers
 * neither). An evaluate question says that Always covers only this code.
 * @param {Question} q
 * @param {Choice[]} choices the answers it offers
 */
function hintOf(q, choices) {
  const words = q.what === "site"
    ? { once: "Once: for this task only.", always: "Always: remembered in Settings, Allowed sites." }
    : q.what === "evaluate"
      ? { once: "Once: this code, this time.",
        always: "Always: only this exact code, on this site, runs again without asking; any "
          + "other code asks again." }
      : null;
  if (!words) return "";
  const offers = (id) => choices.some((c) => c.id === id);
  return [offers("question-allow") ? words.once : "", offers("question-always") ? words.always : ""]
    .filter(Boolean).join(" ");
}

/**
 * The code an evaluate question is about, as the person reads it: whole up to
 * `CODE_SHOWN` characters (then cut, and said so); "" for any other question.
 * @param {Question} q
 */
export function codeOf(q) {
  if (q.what !== "evaluate") return "";
  const code = typeof q.args?.["expression"] === "string" ? q.args["expression"] : "";
  return codeCut(q)
    ? `${code.slice(0, CODE_SHOWN)}\n… (cut: ${code.length} characters in all)` : code;
}

/**
 * Whether an evaluate question's code is too long to be shown whole (then Always is
 * not offered: the person cannot say always to code they did not see).
 * @param {Question} q
 */
function codeCut(q) {
  const code = q.args?.["expression"];
  return typeof code === "string" && code.length > CODE_SHOWN;
}

/** What a tool did to "the X below", once its action is over, in Trimtab's words. */
const DONE = { click: "clicked", double_click: "double-clicked", type: "typed into",
  press: "pressed a key in", select: "chose an option in", check: "checked",
  drag: "dragged", upload: "attached a file to", fill: "filled in",
  answer_dialog: "answered" };

/**
 * The action a trailing question follows, in words: "typed into the field below".
 * @param {Question} q
 * @param {{role: string}} element
 */
export function doneInWords(q, element) {
  const verb = DONE[q.tool ?? ""];
  if (verb && element.role) return `${verb} the ${element.role} below`;
  if (q.tool === "fill") return "filled in a form";
  if (q.tool === "press") return "pressed a key";
  return q.tool ? `used ${q.tool}` : "acted";
}

/** What a tool does to "the X below", in Trimtab's words. */
const VERBS = { click: "click", double_click: "double-click", hover: "point at",
  check: "check", drag: "drag", upload: "attach a file to", select_text: "select text in" };

/**
 * The action a question is about, in words, naming its element by the role Trimtab
 * gives it ("click the button below": its text is quoted below, apart), or "" when
 * the tool has no such words (then the call is shown as it is).
 * @param {Question} q
 * @param {{role: string}} element
 */
function actionInWords(q, element) {
  const a = q.args ?? {};
  const target = element.role ? `the ${element.role} below` : "";
  if (q.tool in VERBS && target) return `${VERBS[q.tool]} ${target}`;
  if (q.tool === "type" && target) {
    // What the agent would type is its own (never the page's) and a secret's is hidden.
    const text = q.what === "secret" || typeof a.text !== "string" ? ""
      : ` “${shorten(a.text, 40)}”`;
    return `type${text} into ${target}${a.submit ? " and press Enter" : ""}`;
  }
  if (q.tool === "select" && target && typeof a.value === "string") {
    return `choose “${shorten(a.value, 40)}” in ${target}`;
  }
  if (q.tool === "press" && typeof a.key === "string") {
    const keys = [...(Array.isArray(a.modifiers) ? a.modifiers : []), a.key].join("+");
    return `press ${shorten(keys, 40)}${target ? ` in ${target}` : ""}`;
  }
  if (q.tool === "answer_dialog" && element.role) {
    return `${a.accept ? "press OK on" : "dismiss"} the ${element.role} below`;
  }
  return "";
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

/**
 * Which element each tab should show highlighted while questions are open: the
 * oldest shown question's element in that tab (one overlay per tab).
 * @param {Question[]} questions oldest first
 * @returns {Map<number, string>} tab → eid
 */
export function highlightsOf(questions) {
  const found = new Map();
  for (const q of questions) {
    if (!found.has(q.tab) && q.eid) found.set(q.tab, q.eid);
    if (!found.has(q.tab)) found.set(q.tab, "");
  }
  for (const [tab, eid] of found) if (!eid) found.delete(tab);
  return found;
}
