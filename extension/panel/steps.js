// How one step of a conversation looks in the Agent view: the task, what the model
// said and spent, a tool call in words with its result behind a toggle, a call not
// done, the answer, a retry, an error. Live steps and steps read back from the
// history look the same. Page-derived text goes on screen through textContent only.

import { el } from "./dom.js";
import { describeCall, describePlanned, faviconOf, tabWords } from "./step-words.js";

const fmt = (n) => n.toLocaleString("en-US");

/** A retry as the person reads it. */
export function retryWords({ status, seconds, attempt, of }) {
  return `The provider is busy (HTTP ${status}): retrying in ${seconds} s, `
    + `attempt ${attempt} of ${of}.`;
}

/**
 * A model call's tokens in words.
 * @param {{input: number, cacheRead: number, cacheWrite: number, output: number}} u
 * @param {number} [context] the context's size, when known
 */
export function modelWords(u, context) {
  return `${fmt(u.input + u.cacheRead + u.cacheWrite)} tokens in (${fmt(u.cacheRead)} `
    + `from cache, ${fmt(u.cacheWrite)} written to it), ${fmt(u.output)} out`
    + (context ? ` · context ≈ ${fmt(context)} tokens` : "");
}

/** What a compaction of the context did, in words. */
export function compactedWords({ replaced, before, after, budget }) {
  return `Context compacted: ${replaced} earlier page state${replaced === 1 ? "" : "s"} `
    + `replaced by one line each (≈ ${fmt(before)} → ${fmt(after)} tokens; `
    + `budget ${fmt(budget)}).`;
}

/** A tool call's figures under its details: cached or ran, its size, its image. */
export function toolMeta(step) {
  return `${step.cached ? "answered from cache" : "ran"} · ${step.chars.toLocaleString("en-US")}`
    + ` chars ≈ ${Math.ceil(step.chars / 4).toLocaleString("en-US")} tokens`
    + (step.image ? ` · image ${step.image.width}x${step.image.height} ≈ `
      + `${fmt(step.image.tokens)} tokens` : "")
    + (step.note ? ` · ${step.note}` : "");
}

/**
 * The tab a step acted in: its favicon (from the browser's cache) and its title and
 * site, quoted as the page's words. Kept in the step (`tabLabel`) as it was then, so
 * the history shows it after the tab changed or closed.
 * @param {{tab: number, tabLabel?: {title: string, url: string}}} step
 * @param {{live: boolean, tabsSeen: Map<number, {title: string, url: string}>}} options
 */
function tabLine(step, { live, tabsSeen }) {
  const line = el("div", "step-tab");
  const icon = document.createElement("img");
  icon.alt = "";
  icon.width = icon.height = 16;
  const words = el("span", "", "");
  line.append(icon, words);
  const show = (tab) => {
    words.textContent = tabWords(tab, step.tab);
    const src = faviconOf(tab?.url, (path) => chrome.runtime.getURL(path));
    icon.hidden = !src;
    if (src) icon.src = src;
  };
  const known = step.tabLabel ?? tabsSeen.get(step.tab) ?? null;
  show(known);
  if (live) {
    step.tabLabel = known ?? undefined;
    chrome.action.setBadgeText({ tabId: step.tab, text: "AI" }).catch(() => {});
    chrome.tabs.get(step.tab).then((tab) => {
      step.tabLabel = { title: tab.title ?? "", url: tab.url ?? "" };
      show(step.tabLabel);
    }, () => {});
  }
  return line;
}

/**
 * The list item of one step.
 * @param {any} step
 * @param {{live: boolean, pages: string[], tabsSeen: Map<number, {title: string, url: string}>,
 *          openSettings: () => void}} context the pages seen before this step (they
 *   name its elements), the task's tabs as last seen, and what "Open Settings" does
 */
export function stepItem(step, { live, pages, tabsSeen, openSettings }) {
  const li = el("li", `step ${step.kind}`);
  li.dataset.kind = step.kind;
  if (step.kind === "task") {
    li.append(el("div", "", step.text));
  } else if (step.kind === "model") {
    // The final answer is shown once, by the "done" step; here only what the model
    // said between its calls, and its tokens behind the toggle.
    if (step.text && !step.final) li.append(el("div", "say", step.text));
    const details = el("details");
    details.append(el("summary", "", step.final ? "model: answered" : "model: tokens"),
      el("div", "meta", modelWords(step.usage, step.context)));
    li.append(details);
  } else if (step.kind === "compacted") {
    li.append(el("div", "", compactedWords(step)));
  } else if (step.kind === "tool") {
    // In words first, named from the pages seen before this call; then its own result.
    const head = el("div", "say", describeCall(step.name, step.args, pages));
    if (step.cached) {
      const badge = el("span", "badge", "cached");
      badge.title = step.cachedFrom ? `from ${JSON.stringify(step.cachedFrom)}` : "";
      head.append(badge);
    }
    if (step.isError) head.append(el("span", "badge", "error"));
    li.append(head);
    if (Number.isInteger(step.tab)) li.append(tabLine(step, { live, tabsSeen }));
    li.dataset.cached = String(step.cached);
    const details = el("details");
    details.append(el("summary", "", "details"),
      el("code", "", `${step.name}(${JSON.stringify(step.args)})`),
      el("div", "meta", toolMeta(step)),
      el("pre", "", step.content));
    if (step.image?.url?.startsWith("data:image/")) {
      // What the model was shown, as it was shown (the host's JPEG or PNG).
      const picture = el("img", "shot");
      picture.src = step.image.url;
      picture.alt = `the screenshot the agent was shown (${step.image.width}x${step.image.height})`;
      details.append(picture);
    }
    li.append(details);
  } else if (step.kind === "declined") {
    // The host's words say why (refused, unanswered, nobody to ask).
    const head = el("div", "say", `Not done: ${describePlanned(step.name, step.args, pages)}`);
    const details = el("details");
    details.append(el("summary", "", "details"),
      el("code", "", `${step.name}(${JSON.stringify(step.args)})`));
    li.append(head, el("div", "meta", step.reason), details);
  } else if (step.kind === "unasked-submit") {
    li.classList.add("error");
    li.append(el("div", "", `${step.name} submitted a form that Trimtab did not expect to `
      + "submit, so you were not asked first. Check the page."));
  } else if (step.kind === "done") {
    // The answer, once, set apart from the steps that led to it.
    li.classList.add("answer");
    li.append(el("h3", "answer-title", "Answer"), el("div", "answer-text", step.text || "Done."));
  } else if (step.kind === "retry") {
    li.append(el("div", "", retryWords(step)));
  } else if (step.kind === "error") {
    li.classList.add("error");
    li.append(el("div", "", step.message));
    if (step.action === "settings") {
      // What to do about it, one click away: the key field, in view and focused.
      const open = el("button", "step-action", "Open Settings");
      open.type = "button";
      open.addEventListener("click", openSettings);
      li.append(el("div", "", "Check the API key (or the provider and model) in Settings, "
        + "save, then press Reply: the next call uses the new settings."), open);
    }
  }
  return li;
}
