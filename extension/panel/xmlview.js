// Renders the host's compact XML as a foldable tree. Everything in it comes from
// the page, which is untrusted: it is put on screen only as text nodes
// (textContent), never parsed as HTML.

/**
 * Escape text the way it stands in the XML, so the view shows the real output.
 * @param {string} text
 * @param {boolean} inAttribute
 */
function escapeXml(text, inAttribute) {
  let out = text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  if (inAttribute) out = out.replace(/"/g, "&quot;");
  return out;
}

/**
 * @param {string} cls
 * @param {string} text
 */
function span(cls, text) {
  const el = document.createElement("span");
  el.className = cls;
  el.textContent = text;
  return el;
}

/**
 * The opening tag of `element` as spans; an `id` becomes a hoverable element id.
 * @param {Element} element
 * @param {boolean} selfClosing
 * @returns {HTMLElement}
 */
function openTag(element, selfClosing) {
  const line = document.createElement("span");
  line.append(span("punct", "<"), span("tag", element.tagName));
  for (const attr of element.attributes) {
    line.append(" ");
    if (attr.value === "" && attr.name !== "id") {
      // The format writes boolean states as bare names (`disabled`).
      line.append(span("attr", attr.name));
      continue;
    }
    line.append(span("attr", attr.name), span("punct", '="'));
    if (attr.name === "id") {
      line.append(eidSpan(attr.value));
    } else {
      line.append(span("value", escapeXml(attr.value, true)));
    }
    line.append(span("punct", '"'));
  }
  line.append(span("punct", selfClosing ? "/>" : ">"));
  return line;
}

function closeTag(element) {
  const line = document.createElement("span");
  line.append(span("punct", "</"), span("tag", element.tagName), span("punct", ">"));
  return line;
}

/** The lists of elements the format writes one per line: its id, a space, its text. */
const LISTS = new Set(["links", "buttons"]);

/**
 * The lines of a `<links>` or `<buttons>` list (one element per line: its id, a space,
 * its text).
 * @param {string} text the list's text content
 * @returns {{eid: string, text: string}[]}
 */
export function listedLinks(text) {
  const links = [];
  for (const line of text.split("\n")) {
    const space = line.indexOf(" ");
    if (space > 0) links.push({ eid: line.slice(0, space), text: line.slice(space + 1) });
  }
  return links;
}

/**
 * An element id as a hoverable span.
 * @param {string} value
 */
function eidSpan(value) {
  const eid = span("eid", escapeXml(value, true));
  eid.dataset.eid = value;
  eid.tabIndex = 0;
  return eid;
}

function lineDiv(depth, ...parts) {
  const div = document.createElement("div");
  div.className = "xml-line";
  div.style.paddingInlineStart = `${depth * 1.2}em`;
  div.append(...parts);
  return div;
}

/**
 * Append the lines of `node` (pretty-printed) to `out`.
 * @param {Node} node
 * @param {number} depth
 * @param {HTMLElement} out
 */
function renderNode(node, depth, out) {
  if (node.nodeType === Node.TEXT_NODE || node.nodeType === Node.CDATA_SECTION_NODE) {
    const text = node.nodeValue.trim();
    if (text) out.append(lineDiv(depth, span("text", escapeXml(text, false))));
    return;
  }
  if (node.nodeType !== Node.ELEMENT_NODE) return;
  const element = /** @type {Element} */ (node);
  if (element.tagName === "region") {
    out.append(renderRegion(element, depth));
    return;
  }
  if (LISTS.has(element.tagName)) {
    // One link per line, its id first: each id hoverable like an `id` attribute.
    out.append(lineDiv(depth, openTag(element, false)));
    for (const link of listedLinks(element.textContent ?? "")) {
      out.append(lineDiv(depth + 1, eidSpan(link.eid), " ",
        span("text", escapeXml(link.text, false))));
    }
    out.append(lineDiv(depth, closeTag(element)));
    return;
  }
  const children = [...element.childNodes].filter(
    (c) => c.nodeType === Node.ELEMENT_NODE || c.nodeValue.trim() !== "");
  if (children.length === 0) {
    out.append(lineDiv(depth, openTag(element, true)));
    return;
  }
  if (children.every((c) => c.nodeType !== Node.ELEMENT_NODE)) {
    const text = children.map((c) => c.nodeValue.trim()).join(" ");
    out.append(lineDiv(depth, openTag(element, false), span("text", escapeXml(text, false)),
      closeTag(element)));
    return;
  }
  out.append(lineDiv(depth, openTag(element, false)));
  for (const child of children) renderNode(child, depth + 1, out);
  out.append(lineDiv(depth, closeTag(element)));
}

/**
 * A region folds: `<details>` with the region's tag as its summary.
 * @param {Element} region
 * @param {number} depth
 */
function renderRegion(region, depth) {
  const hasContent = [...region.childNodes].some(
    (c) => c.nodeType === Node.ELEMENT_NODE || c.nodeValue.trim() !== "");
  if (!hasContent) {
    const line = lineDiv(depth, openTag(region, true));
    line.classList.add("region-collapsed");
    return line;
  }
  const details = document.createElement("details");
  details.className = "region";
  details.open = true;
  details.style.marginInlineStart = `${depth * 1.2}em`;
  const summary = document.createElement("summary");
  summary.append(openTag(region, false));
  details.append(summary);
  const body = document.createElement("div");
  for (const child of region.childNodes) renderNode(child, 1, body);
  body.append(lineDiv(0, closeTag(region)));
  details.append(body);
  return details;
}

/**
 * Parse `xmlText` and render it into `container` (replacing its content).
 * @param {string} xmlText
 * @param {HTMLElement} container
 * @returns {{ok: boolean, error?: string}} whether the XML parsed
 */
export function renderXml(xmlText, container) {
  container.replaceChildren();
  const doc = new DOMParser().parseFromString(xmlText, "application/xml");
  const error = doc.getElementsByTagName("parsererror")[0];
  if (error) {
    const pre = document.createElement("pre");
    pre.className = "xml-raw";
    pre.textContent = xmlText;
    container.append(pre);
    return { ok: false, error: error.textContent ?? "XML parse error" };
  }
  renderNode(doc.documentElement, 0, container);
  return { ok: true };
}
