// Which tabs the browser lets an extension's debugger into: Chrome keeps its own pages
// (chrome://, other extensions, the Web Store) out of reach, so the panel says so up
// front instead of letting a task or a share fail on them.

/** URL schemes whose pages chrome.debugger cannot attach to. */
const CLOSED_SCHEMES = ["chrome:", "chrome-untrusted:", "chrome-search:", "chrome-extension:",
  "devtools:", "edge:", "brave:", "view-source:", "about:"];
/** Sites Chrome closes to extensions. */
const CLOSED_HOSTS = ["chromewebstore.google.com"];

/**
 * Why Trimtab cannot act on a tab at `url`, in words for the person; "" when it can.
 * An unknown URL ("", still loading) is not refused here: the attach itself says.
 * @param {string|undefined} url
 * @returns {string}
 */
export function closedReason(url) {
  if (!url) return "";
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    return "";
  }
  if (parsed.href === "about:blank") return "";
  if (CLOSED_SCHEMES.includes(parsed.protocol)) {
    return `Chrome does not let extensions read or act on its own pages (${parsed.protocol}//…). `
      + "Switch to a web page to inspect it, run a task or share it.";
  }
  if (CLOSED_HOSTS.includes(parsed.host)
      || (parsed.host === "chrome.google.com" && parsed.pathname.startsWith("/webstore"))) {
    return "Chrome does not let extensions read or act on the Chrome Web Store. "
      + "Switch to another page to inspect it, run a task or share it.";
  }
  return "";
}
