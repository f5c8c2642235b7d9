// Downloads: what chrome.downloads reports, relayed to the host as `download` messages
// (host/PROTOCOL.md, "Downloads"), so that an agent's action is answered with the file
// it saved and where. The host decides what the agent is told and asked; nothing here
// opens, reads or moves a file.

import { resultOf } from "./relay.js";

const STATES = new Set(["in_progress", "complete", "interrupted"]);

/** The last part of a path or URL path: the file's name. */
function baseName(path) {
  const parts = String(path || "").split(/[\\/]/);
  return parts[parts.length - 1] || "";
}

/**
 * The host's `download` message for one chrome.downloads.DownloadItem.
 * @param {object} item a DownloadItem (id, url, finalUrl, filename, mime, totalBytes,
 *   fileSize, state)
 * @returns {{type: "download", tab: null, download: number, url: string, name: string,
 *   size: number|null, mime: string, path: string|null, state: string}}
 */
export function downloadMessage(item) {
  const url = item.finalUrl || item.url || "";
  let name = baseName(item.filename);
  if (!name) {
    try {
      name = decodeURIComponent(baseName(new URL(url).pathname));
    } catch {
      name = "";
    }
  }
  const size = item.totalBytes >= 0 ? item.totalBytes : item.fileSize >= 0 ? item.fileSize : null;
  const state = STATES.has(item.state) ? item.state : "in_progress";
  return {
    type: "download",
    // chrome.downloads does not say which tab started a download: the host matches it
    // to the response its request guard let go by URL.
    tab: null,
    download: item.id,
    url,
    name,
    size,
    mime: item.mime || "",
    path: state === "complete" && item.filename ? item.filename : null,
    state,
  };
}

/**
 * Relay every download's start and changes to the host with `send` (a message the
 * host cannot take now, because it is not connected, is dropped: it was told of
 * downloads only to answer calls in flight).
 * @param {object} downloadsApi chrome.downloads, or a test's stand-in
 * @param {(message: object) => void} send
 */
export function relayDownloads(downloadsApi, send) {
  const post = (item) => {
    try {
      send(downloadMessage(item));
    } catch {
      // the host is away
    }
  };
  downloadsApi.onCreated.addListener(post);
  downloadsApi.onChanged.addListener(async (delta) => {
    // A change names only what changed: the item as it is now says the rest.
    const [item] = await downloadsApi.search({ id: delta.id });
    if (item) post(item);
  });
}

/**
 * The scheme of a download's URL, as the host's question names it ("blob", "data",
 * "https", …; "" when the URL does not parse).
 * @param {string} url
 */
export function schemeOf(url) {
  const match = /^([a-z][a-z0-9+.-]*):/i.exec(String(url || ""));
  return match ? match[1].toLowerCase() : "";
}

/** The origin a download came from: a blob's own, else its referrer's ("" unknown). */
function originOf(item) {
  for (const url of [item.url, item.referrer]) {
    try {
      const inner = String(url || "").replace(/^blob:/i, "");
      const origin = new URL(inner).origin;
      if (origin && origin !== "null") return origin;
    } catch {
      // not a URL with an origin (data:, about:)
    }
  }
  return "";
}

/**
 * Downloads an agent's action starts, held until the host decided (host/PROTOCOL.md,
 * "Downloads"): while the host has a gate on an acting tab (`acting()`), a download
 * that tab's page starts waits in `onDeterminingFilename` (Chrome saves nothing under
 * its name until `suggest` is called; what it wrote so far is its own temporary file)
 * and is reported `download_held`; the host's `download_decide` lets it go (`suggest`:
 * saved once, under the name it had) or cancels and erases it (nothing saved).
 * `chrome.downloads` does not say which tab started a download: it is the acting tab
 * when only one acts, else the one whose page is of the download's origin (a blob's
 * own, or its referrer's); one no acting tab claims is the person's, and goes on.
 */
export class DownloadHolds {
  /**
   * @param {{downloads: object, post: (msg: object) => boolean|void,
   *          acting: () => number[], tabUrl: (tab: number) => Promise<string>}} options
   *   `downloads`: chrome.downloads or a test's stand-in; `acting()`: the tabs an
   *   action runs in now; `tabUrl(tab)`: a tab's URL ("" when unknown).
   */
  constructor({ downloads, post, acting, tabUrl }) {
    this.downloads = downloads;
    this.post = post;
    this.acting = acting;
    this.tabUrl = tabUrl;
    /** @type {Map<number, (suggestion?: object) => void>} held downloads' `suggest` */
    this.held = new Map();
  }

  /** Register the listener (at once, as a service worker's must be). */
  listen() {
    this.downloads.onDeterminingFilename.addListener((item, suggest) => this.onDetermining(item, suggest));
  }

  /**
   * Chrome asks where to save `item`: hold it when an acting tab's page started it.
   * @returns {boolean} true: `suggest` is called later (the download waits)
   */
  onDetermining(item, suggest) {
    const acting = this.acting();
    if (!acting.length) return false;
    this.claim(item, acting).then((tab) => {
      if (tab === null) {
        suggest();
        return;
      }
      this.held.set(item.id, suggest);
      const message = downloadMessage(item);
      const told = this.post({ type: "download_held", tab, download: item.id,
        url: message.url, name: message.name, size: message.size, mime: message.mime,
        scheme: schemeOf(message.url) });
      // No host to decide: nothing is saved, as with a host that does not answer.
      if (told === false) this.decide({ download: item.id, allow: false }).catch(() => {});
    }, () => suggest());
    return true;
  }

  /** The acting tab that started `item`, or null (the person's own download). */
  async claim(item, acting) {
    if (acting.length === 1) return acting[0];
    const origin = originOf(item);
    if (!origin) return null;
    for (const tab of acting) {
      try {
        if (new URL(await this.tabUrl(tab)).origin === origin) return tab;
      } catch {
        // a tab gone, or one with no URL yet
      }
    }
    return null;
  }

  /**
   * Handle one host → extension message if it is a download decision.
   * @param {{type: string, id?: string|number}} msg
   * @returns {boolean}
   */
  handle(msg) {
    if (msg.type !== "download_decide") return false;
    resultOf(msg.id, () => this.decide(/** @type {any} */ (msg))).then((reply) => this.post(reply));
    return true;
  }

  /**
   * Let a held download go (`allow`) or cancel and erase it.
   * @param {{download: unknown, allow: unknown}} msg
   */
  async decide({ download, allow }) {
    if (!Number.isInteger(download)) {
      throw new Error(`"download_decide" needs an integer "download", got ${JSON.stringify(download)}`);
    }
    if (typeof allow !== "boolean") {
      throw new Error(`"download_decide" needs a boolean "allow", got ${JSON.stringify(allow)}`);
    }
    const id = /** @type {number} */ (download);
    const suggest = this.held.get(id);
    this.held.delete(id);
    if (allow) {
      if (!suggest) throw new Error(`download ${id} is not held`);
      suggest();
      return {};
    }
    await this.downloads.cancel(id).catch(() => {});
    await this.downloads.erase({ id }).catch(() => {});
    return {};
  }

  /** The host is gone: nothing it held is decided any more, so nothing is saved. */
  async clear() {
    const ids = [...this.held.keys()];
    await Promise.all(ids.map((download) => this.decide({ download, allow: false })));
  }
}
