// What an in-page capture would cost: one walk of the document in the page, returning
// one string. It reads what DOMSnapshot.captureSnapshot gives the host (the node tree
// with open shadow roots, attributes and form state; each element's border box, the
// captured computed styles and its ::before/::after content; each text node's line
// boxes) and leaves out what a page script cannot read: paint order, which nodes have
// click listeners, closed shadow roots. `STYLES` is replaced by the bench.
(() => {
  const styles = STYLES;
  const rows = [];
  const range = document.createRange();
  const box = (r) => [r.x, r.y, r.width, r.height];
  const visit = (node, parent) => {
    const index = rows.length;
    switch (node.nodeType) {
      case Node.ELEMENT_NODE: {
        const computed = getComputedStyle(node);
        const attributes = [];
        for (const a of node.attributes) attributes.push(a.name, a.value);
        rows.push([
          parent,
          node.localName,
          attributes,
          box(node.getBoundingClientRect()),
          styles.map((name) => computed.getPropertyValue(name)),
          getComputedStyle(node, "::before").content,
          getComputedStyle(node, "::after").content,
          "value" in node ? String(node.value) : null,
          "checked" in node ? node.checked : null,
          "selected" in node ? node.selected : null,
        ]);
        if (node.shadowRoot) visit(node.shadowRoot, index);
        break;
      }
      case Node.TEXT_NODE: {
        range.selectNodeContents(node);
        rows.push([parent, "#text", node.data, Array.from(range.getClientRects(), box)]);
        return;
      }
      case Node.DOCUMENT_NODE:
      case Node.DOCUMENT_FRAGMENT_NODE:
        rows.push([parent, node.nodeName]);
        break;
      default:
        return;
    }
    for (let child = node.firstChild; child; child = child.nextSibling) visit(child, index);
  };
  visit(document, -1);
  return JSON.stringify(rows);
})()
