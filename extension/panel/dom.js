// The helpers the views of the side panel share. Text goes on screen only as
// textContent: page-derived words are never parsed as HTML.

/** The panel's element with this id. */
export const $ = (id) => /** @type {any} */ (document.getElementById(id));

/**
 * A new element with a class and a text, both optional.
 * @param {string} tag
 * @param {string} [className]
 * @param {string} [text]
 */
export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** The active tab of the panel's window, or null. */
export async function activeTab() {
  const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
  return tab ?? null;
}
