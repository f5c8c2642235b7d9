// The person's site lists (host/PROTOCOL.md, `sites` and `sites_set`): the sites the
// agent may always act on, and the sites it may never act on. The host keeps and
// applies them; the side panel's "Allowed sites" settings show and edit them. Beside
// them, the codes `evaluate` runs without asking, each on one site (`evaluate_always`),
// which the settings show and can only take off. Pure.

/** What the side panel says when the host does not know the request yet. */
export const SITES_UNKNOWN = "The Trimtab host that runs now does not keep site lists: update "
  + "your Trimtab clone (git pull, then make install) and reopen this panel to edit them here.";

/**
 * @typedef {{always: string[], never: string[]}} SiteLists
 */

/**
 * The lists in a host reply, every entry a non-empty string (an entry may also come
 * as an object with a `site`), without duplicates.
 * @param {unknown} reply
 * @returns {SiteLists}
 */
export function listsOf(reply) {
  const r = /** @type {Record<string, unknown>} */ (reply ?? {});
  const list = (value) => {
    if (!Array.isArray(value)) return [];
    const out = [];
    for (const entry of value) {
      const site = typeof entry === "string" ? entry
        : entry && typeof entry === "object" && typeof entry.site === "string" ? entry.site : "";
      if (site && !out.includes(site)) out.push(site);
    }
    return out;
  };
  return { always: list(r.always), never: list(r.never) };
}

/**
 * A site the person typed, as the host's lists name sites (scheme and host: the host
 * keeps its registrable domain), or an error that says what is wrong.
 * @param {string} text "example.org", "https://www.example.org/a", "http://10.0.0.1:8080"
 * @returns {{site: string} | {error: string}}
 */
export function siteFromInput(text) {
  const raw = String(text ?? "").trim();
  if (!raw) return { error: "Type a site, such as example.org." };
  const withScheme = /^[a-z][a-z0-9+.-]*:/i.test(raw) && !/^[^/]*:\d+(\/|$)/.test(raw)
    ? raw : `https://${raw}`;
  let url;
  try {
    url = new URL(withScheme);
  } catch {
    return { error: `“${raw.slice(0, 80)}” is not a site address.` };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return { error: "Only http and https sites can be listed." };
  }
  if (!url.hostname || /\s/.test(raw)) return { error: `“${raw.slice(0, 80)}” is not a site address.` };
  return { site: `${url.protocol}//${url.host}` };
}

/**
 * The lists with `site` removed from one of them.
 * @param {SiteLists} lists
 * @param {"always"|"never"} which
 * @param {string} site
 * @returns {SiteLists}
 */
export function withoutSite(lists, which, site) {
  return { ...lists, [which]: lists[which].filter((s) => s !== site) };
}

/**
 * The lists with `site` added to the never list (and so taken off the always list).
 * @param {SiteLists} lists
 * @param {string} site
 * @returns {SiteLists}
 */
export function withNever(lists, site) {
  return {
    always: lists.always.filter((s) => s !== site),
    never: lists.never.includes(site) ? lists.never : [...lists.never, site],
  };
}

/**
 * @typedef {{site: string, sha256: string, code: string}} AlwaysCode one code that
 *   `evaluate` runs without asking on one site (the person's "Always for this code")
 */

/**
 * The codes in a host `evaluate_always` reply, each entry with a site, its code's
 * SHA-256 (64 hex digits, how the host names it for removal) and the code; null when
 * the reply has no such list (a host that does not keep it).
 * @param {unknown} reply
 * @returns {AlwaysCode[]|null}
 */
export function alwaysCodesOf(reply) {
  const entries = /** @type {Record<string, unknown>} */ (reply ?? {}).always;
  if (!Array.isArray(entries)) return null;
  return entries.filter((e) => e && typeof e === "object" && typeof e.site === "string"
    && e.site && typeof e.code === "string" && typeof e.sha256 === "string"
    && /^[0-9a-f]{64}$/.test(e.sha256))
    .map(({ site, sha256, code }) => ({ site, sha256, code }));
}

/**
 * What to tell the person when loading or saving the lists failed.
 * @param {{code?: string, message?: string}} err
 */
export function sitesError(err) {
  if (err?.code === "unknown_type") return SITES_UNKNOWN;
  if (err?.code === "bad_request") return `The host did not take that: ${err.message}`;
  return `Trimtab could not reach the site lists: ${err?.message ?? err}`;
}
