// Downloads: what chrome.downloads reports, relayed to the host as `download` messages
// (host/PROTOCOL.md, "Downloads"), so that an agent's action is answered with the file
// it saved and where. The host decides what the agent is told and asked; nothing here
// opens, reads or moves a file.

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
