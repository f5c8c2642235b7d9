// A bounded context: when the conversation passes its token budget, page states
// that a later page superseded become one short record each.
//
// Kept whole: the person's messages, every model turn (its actions and answers),
// every result that is not a page state (find, read, errors, dialogs), the newest
// baseline and every diff after it (together they are the page as it is now).
// Replaced: each page state (a result whose `kind` is "baseline" or "diff") before
// the newest baseline, by a record of which step it was, what the agent did and the
// URL (the page's words, so in a page data block); a screenshot's image from before
// it is dropped (its text stays). One compaction drops everything
// superseded at once, so the prefix the providers cache changes once and is stable
// again until the budget is reached anew.
//
// The host compares each region with what the agent last saw of it and collapses an
// unchanged one to `unchanged="true"`, "as you last saw it": the agent tells it
// (`forget_views`, in agent.js) before a compacted history is sent, so that no later
// answer refers to a page state the model no longer holds. A region the kept pages
// themselves show as unchanged was last shown in full in a replaced state: the record
// says that `expand` shows it, and the ids the model kept stay valid.

import { imageTokens } from "../shared/cost.js";
import { wrapUntrusted } from "./untrusted.js";

/** The default budget of a conversation, in tokens. */
export const DEFAULT_BUDGET = 40_000;

/**
 * A conservative token estimate: o200k_base and Anthropic's tokenizer take about
 * 3.5-4 ASCII characters per token in XML and prose, and about one token per
 * character beyond ASCII (CJK, Arabic); this errs towards more tokens.
 * @param {string} text
 * @returns {number}
 */
export function estimateTokens(text) {
  let ascii = 0;
  let other = 0;
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) < 128) ascii += 1;
    else other += 1;
  }
  return Math.ceil(ascii / 3.2 + other);
}

/**
 * The page facts of a tool result, from the host's own fields, or null when it is
 * not a page state (text, an error).
 * @param {{kind?: unknown, is_error?: unknown}} result the host's `tool` reply
 * @param {string} url the page's URL after the call
 * @returns {{url: string, snapshot: string} | null}
 */
export function pageFacts(result, url) {
  if (result.is_error || (result.kind !== "baseline" && result.kind !== "diff")) return null;
  return { url: String(url ?? ""), snapshot: result.kind };
}

/**
 * The record that stands for a superseded page state: Trimtab's line, then the
 * page's URL in a page data block (a page writes its URL's query and fragment).
 * @param {{step: number, name: string, args: object, page: {url: string, snapshot: string}}} meta
 * @param {number} by the step whose baseline superseded it
 * @param {string} nonce the conversation's page data marker
 */
export function recordLine(meta, by, nonce) {
  const what = `${meta.name}(${JSON.stringify(meta.args ?? {})})`;
  return `[Step ${meta.step}: ${what} returned a page ${meta.page.snapshot}, removed to `
    + `keep the context small: the page of step ${by} supersedes it. Its ids stay valid; `
    + "expand(region) shows a region a later page shows as unchanged. Its URL:]\n"
    + wrapUntrusted(meta.page.url, nonce);
}

/**
 * The conversation with every superseded page state replaced by its record.
 * Entries are not mutated; untouched entries are the same objects.
 * @param {import("./requests.js").Entry[]} history whose tool results carry `meta`
 *   ({step, name, args, page}) as the agent records them
 * @param {string} nonce the conversation's page data marker
 * @returns {{history: import("./requests.js").Entry[], replaced: number}}
 */
export function compactHistory(history, nonce) {
  let newest = null;
  for (const entry of history) {
    if (entry.role !== "tool") continue;
    for (const r of entry.results) {
      if (r.meta?.page?.snapshot === "baseline" && !r.meta.compacted) newest = r;
    }
  }
  if (!newest) return { history, replaced: 0 };
  let replaced = 0;
  let before = true;
  const out = history.map((entry) => {
    if (entry.role !== "tool" || !before) return entry;
    let changed = false;
    const results = entry.results.map((r) => {
      if (r === newest) before = false;
      if (before && r.image) {
        // A screenshot from before the newest page state: its image goes, its words stay.
        changed = true;
        replaced += 1;
        const { image, ...rest } = r;
        return { ...rest, content: `${r.content}\n[Its ${image.width}x${image.height} image `
          + `was removed to keep the context small: the page of step ${newest.meta.step} `
          + "supersedes it.]" };
      }
      if (!before || !r.meta?.page || r.meta.compacted) return r;
      changed = true;
      replaced += 1;
      return { ...r, content: recordLine(r.meta, newest.meta.step, nonce),
        meta: { ...r.meta, compacted: true } };
    });
    return changed ? { ...entry, results } : entry;
  });
  return replaced ? { history: out, replaced } : { history, replaced };
}

/**
 * Tokens of a conversation as sent, by the estimate: the fixed prefix plus every
 * entry's text.
 * @param {{system: string, tools: object[], history: import("./requests.js").Entry[]}} request
 */
export function estimateRequest({ system, tools, history }) {
  let total = estimateTokens(system) + estimateTokens(JSON.stringify(tools));
  for (const entry of history) total += estimateEntry(entry);
  return total;
}

/** @param {import("./requests.js").Entry} entry */
export function estimateEntry(entry) {
  // A few tokens per message for the roles and framing.
  if (entry.role === "user") return estimateTokens(entry.text) + 4;
  if (entry.role === "assistant") return estimateTokens(JSON.stringify(entry.raw)) + 4;
  // An image by Anthropic's formula, the larger of the two for a screenshot's sizes.
  return entry.results.reduce((sum, r) => sum + estimateTokens(r.content) + 8
    + (r.image ? imageTokens("anthropic", r.image.width, r.image.height) : 0), 0);
}
