// A tool call in words a person reads at a glance ("Checked “Slate” (radio)", "Typed 2
// into Quantity", "Opened checkout.example.com"), from the call and the element's role
// and name as the page XML gives them: the XML the panel has seen (its own agent's
// steps), or the tag, type and name the host took from an outside agent's snapshot
// (its `agents_event`). One function words both logs. The words are built from page
// text, so they go on screen through textContent only.

const ENTITIES = { amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'" };
const unescape = (text) => text.replace(/&(amp|lt|gt|quot|apos);/g, (_, e) => ENTITIES[e]);

/** What a tag is called in words, when it is not the role's own name. */
const ROLES = { a: "link", input: "field", textarea: "text box", select: "list",
  clickable: "clickable", img: "image" };

/** Longest name shown; the rest is cut with an ellipsis. */
const MAX_NAME = 60;

function short(text) {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > MAX_NAME ? `${flat.slice(0, MAX_NAME - 1)}…` : flat;
}

function attribute(attrs, name) {
  const found = new RegExp(`\\b${name}="([^"]*)"`).exec(attrs);
  return found ? unescape(found[1]) : "";
}

/**
 * What an element of the page XML is, in words, from its tag and `type` attribute.
 * @param {string} tag
 * @param {string} type
 * @returns {string}
 */
export function roleOf(tag, type) {
  const name = tag.toLowerCase();
  if (name === "input" && ["checkbox", "radio", "search", "email", "password", "number"]
    .includes(type)) {
    return type === "checkbox" || type === "radio" ? type : `${type} field`;
  }
  if (name === "button" && type === "submit") return "submit button";
  return ROLES[name] ?? name;
}

/**
 * The element with `id` in one page XML: its role and name, or null.
 * A field's name is its `label`, else the visible text before it on its line (the
 * format's rule), else its placeholder.
 * @param {string} xml
 * @param {string} id
 * @returns {{role: string, name: string, secret: boolean} | null}
 */
export function elementIn(xml, id) {
  if (!xml || !id) return null;
  const safe = id.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const tag = new RegExp(`<([a-z][\\w-]*)\\b([^>]*?)\\bid="${safe}"([^>]*?)(/?)>`, "i")
    .exec(xml);
  if (!tag) return listedIn(xml, safe);
  const [whole, name, before, after, selfClosing] = tag;
  const attrs = `${before} ${after}`;
  const type = attribute(attrs, "type");
  const role = roleOf(name, type);
  let label = attribute(attrs, "label");
  if (!label && !selfClosing) {
    const end = xml.indexOf(`</${name}>`, tag.index + whole.length);
    if (end !== -1) label = unescape(xml.slice(tag.index + whole.length, end).replace(/<[^>]*>/g, ""));
  }
  if (!label) {
    const lineStart = xml.lastIndexOf("\n", tag.index) + 1;
    label = unescape(xml.slice(lineStart, tag.index).replace(/<[^>]*>/g, " "));
  }
  if (!label.trim()) label = attribute(attrs, "placeholder") || attribute(attrs, "icon");
  return { role, name: short(label), secret: type === "password" };
}

/** The lists of the format, one element per line (its id, a space, its text). */
const LISTS = { links: "a", buttons: "button" };

/**
 * A link or button of a `<links>` or `<buttons>` list, or null; the list's attributes
 * (`type="submit"`) hold for each of its elements.
 * @param {string} xml
 * @param {string} safe the id, escaped for a regular expression
 */
function listedIn(xml, safe) {
  // A page's text line may start with the same letters: only a line inside a list counts.
  for (const line of xml.matchAll(new RegExp(`^${safe} ([^<\\n]*)$`, "gm"))) {
    const before = xml.slice(0, line.index);
    const open = /<(links|buttons)\b([^>]*)>\n(?:[^<\n]*\n)*$/.exec(before);
    if (open) {
      return { role: roleOf(LISTS[open[1]], attribute(open[2], "type")),
        name: short(unescape(line[1])), secret: false };
    }
  }
  return null;
}

/**
 * The element in the newest of `pages` (newest first) that has it.
 * @param {string[]} pages
 * @param {string} id
 */
export function findElement(pages, id) {
  for (const xml of pages) {
    const found = elementIn(xml, id);
    if (found) return found;
  }
  return null;
}

/**
 * An element the host named for an outside agent's call (`{tag, type, name}` as that
 * agent's snapshot showed it), as `elementIn` would read it from the page XML.
 * @param {unknown} facts
 * @returns {{role: string, name: string, secret: boolean} | null}
 */
export function fromHost(facts) {
  if (!facts || typeof facts !== "object") return null;
  const type = String(facts.type ?? "");
  return { role: roleOf(String(facts.tag ?? ""), type), name: short(String(facts.name ?? "")),
    secret: type === "password" };
}

/**
 * What a call aimed at, in words: “Name” (role), or the id when nobody has seen the
 * element; a call without an id by the text or the point it aimed at.
 */
function named(found, id, a = {}) {
  if (typeof id !== "string") {
    if (typeof a.text === "string" && a.text) return `“${short(a.text)}”`;
    if (Number.isFinite(a.x) && Number.isFinite(a.y)) {
      return `the point (${Math.round(a.x)}, ${Math.round(a.y)})`;
    }
    return "an element";
  }
  if (!found) return `element ${id}`;
  return found.name ? `“${found.name}” (${found.role})` : `a ${found.role} (${id})`;
}

/** A field as the object of "into"/"in": its name, or what it is. */
function fieldName(found, id) {
  if (typeof id !== "string") return "a field";
  if (!found) return `element ${id}`;
  return found.name || `the ${found.role} ${id}`;
}

function siteOf(url) {
  try {
    return new URL(url).host || url;
  } catch {
    return url;
  }
}

/**
 * One tool call in words.
 * @param {string} name the tool
 * @param {Record<string, any>} args
 * @param {string[]} pages page XML seen so far, newest first
 * @param {Record<string, {tag: string, type: string, name: string}>} [elements] the
 *   elements the host named (an outside agent's call), by id; the others are looked
 *   for in `pages`
 * @returns {string}
 */
export function describeCall(name, args, pages, elements = {}) {
  const a = args ?? {};
  const find = (id) => {
    if (typeof id !== "string") return null;
    const told = elements && Object.hasOwn(elements, id) ? fromHost(elements[id]) : null;
    return told ?? findElement(pages, id);
  };
  const el = find(a.id);
  const text = (value) => short(String(value ?? ""));
  switch (name) {
    case "click": return `Clicked ${named(el, a.id, a)}`;
    case "double_click": return `Double-clicked ${named(el, a.id, a)}`;
    case "check": return `${a.on === false ? "Unchecked" : "Checked"} ${named(el, a.id, a)}`;
    case "hover": return `Pointed at ${named(el, a.id, a)}`;
    case "type":
      if (el?.secret) return `Typed a secret into ${fieldName(el, a.id)}`;
      // An outside agent's log is not told what it typed.
      if (a.text === undefined) return `Typed into ${fieldName(el, a.id)}`;
      if (a.text === "") return `Cleared ${fieldName(el, a.id)}`;
      return `Typed ${text(a.text)} into ${fieldName(el, a.id)}${a.submit ? " and submitted" : ""}`;
    case "select": return `Chose “${text(a.value)}” in ${fieldName(el, a.id)}`;
    case "fill": {
      const fields = Array.isArray(a.fields) ? a.fields : [];
      if (!fields.length) return "Filled a form";
      const names = fields.slice(0, 3).map((field) => fieldName(find(field?.id), field?.id));
      const more = fields.length > 3 ? ` and ${fields.length - 3} more` : "";
      return `Filled ${names.join(", ")}${more}`;
    }
    case "navigate": return `Opened ${siteOf(String(a.url ?? ""))}`;
    case "new_tab": return `Opened ${siteOf(String(a.url ?? ""))} in a new tab`;
    case "switch_tab": return `Switched to tab ${a.tab}`;
    case "close_tab": return `Closed tab ${a.tab}`;
    case "tabs": return "Listed the task's tabs";
    case "back": return "Went back a page";
    case "forward": return "Went forward a page";
    case "reload": return "Reloaded the page";
    case "capture_snapshot": return "Read the page";
    case "answer_dialog":
      return a.accept ? "Answered OK to the page's dialog" : "Dismissed the page's dialog";
    case "press": {
      const keys = [...(Array.isArray(a.modifiers) ? a.modifiers : []), a.key].join("+");
      return `Pressed ${keys}`;
    }
    case "drag": {
      const to = typeof a.to === "string" ? ` onto ${named(find(a.to), a.to)}` : "";
      return `Dragged ${named(el, a.id)}${to}`;
    }
    case "select_text": return `Selected “${text(a.text)}” in ${named(el, a.id)}`;
    case "upload": {
      // An outside agent's log is told how many files, not which (`files`).
      const n = Array.isArray(a.paths) ? a.paths.length
        : Number.isInteger(a.files) ? a.files : 0;
      return `Attached ${n} file${n === 1 ? "" : "s"} to ${named(el, a.id)}`;
    }
    case "screenshot": {
      const of = a.id ? ` of ${named(el, a.id)}` : a.full_page ? " of the whole page" : "";
      return `Took a screenshot${of}`;
    }
    case "console": return "Read the console";
    case "network": return "Read the network log";
    case "evaluate": return "Ran JavaScript on the page";
    case "scroll":
      return `Scrolled ${a.direction === "up" ? "up" : "down"}`
        + (a.id ? ` in ${named(el, a.id)}` : "");
    case "find": return a.text ? `Searched the page for “${text(a.text)}”`
      : `Looked for ${a.role ?? "elements"} on the page`;
    case "expand": return `Showed more of ${String(a.region ?? "the page").split(".")[0]}`;
    case "read": return a.id ? `Read ${named(el, a.id)}` : "Read more of a long text";
    case "wait_for":
      return a.text ? `Waited for “${text(a.text)}”` : `Waited for ${named(el, a.id)}`;
    default: return `Ran ${name}`;
  }
}

/** The past-tense verbs describeCall starts with, and their plain forms. */
const PLAIN = { Clicked: "click", "Double-clicked": "double-click", Checked: "check",
  Unchecked: "uncheck", Pointed: "point", Typed: "type", Cleared: "clear", Chose: "choose",
  Opened: "open", Went: "go", Reloaded: "reload", Read: "read", Answered: "answer",
  Dismissed: "dismiss", Pressed: "press", Dragged: "drag", Selected: "select",
  Attached: "attach", Scrolled: "scroll", Searched: "search", Looked: "look",
  Showed: "show", Waited: "wait", Ran: "run", Filled: "fill", Switched: "switch",
  Closed: "close", Listed: "list", Took: "take" };

/**
 * A call that did not happen, in words: "click “Order” (submit button)".
 * @param {string} name
 * @param {Record<string, any>} args
 * @param {string[]} pages
 */
export function describePlanned(name, args, pages) {
  const done = describeCall(name, args, pages);
  const [verb] = done.split(" ", 1);
  return verb in PLAIN ? PLAIN[verb] + done.slice(verb.length) : done;
}

/**
 * Which tab a step acted in, in words: "in “Provider: sign in” (127.0.0.1:8001)". The
 * title and the site are the page's, so they go on screen through textContent only.
 * @param {{title?: string, url?: string} | null | undefined} tab
 * @param {number} id the tab's id, named when nothing else is known
 * @returns {string}
 */
export function tabWords(tab, id) {
  const title = short(String(tab?.title ?? ""));
  const site = tab?.url ? siteOf(tab.url) : "";
  if (title && site) return `in “${title}” (${site})`;
  if (title || site) return `in “${title || site}”`;
  return `in tab ${id}`;
}

/**
 * Whether the steps so far acted in more than one tab: then each step names its tab
 * (a task in one tab has the bar's "Acting on" for that).
 * @param {Array<{kind: string, tab?: number}>} steps
 * @returns {boolean}
 */
export function spansTabs(steps) {
  const tabs = new Set();
  for (const step of steps) {
    if (step.kind === "tool" && Number.isInteger(step.tab)) tabs.add(step.tab);
  }
  return tabs.size > 1;
}

/**
 * The favicon Chrome keeps for a page, from the browser's own cache (the `favicon`
 * permission): never fetched from the page's server, so showing it tells no site
 * anything. Only http(s) pages have one; others get none.
 * @param {string | undefined} url
 * @param {(path: string) => string} extensionUrl chrome.runtime.getURL
 * @returns {string}
 */
export function faviconOf(url, extensionUrl) {
  if (!/^https?:\/\//i.test(String(url ?? ""))) return "";
  return extensionUrl(`/_favicon/?pageUrl=${encodeURIComponent(String(url))}&size=16`);
}

/**
 * The site of a URL as the bar and the settings name it: its host, or the URL itself
 * when it has none (or does not parse).
 * @param {string} url
 * @returns {string}
 */
export function siteName(url) {
  try {
    return new URL(url).host || url;
  } catch {
    return url;
  }
}
