// Whether the focus is on this element or inside it (shadow roots included).
function() {
  const doc = this.nodeType === 9 ? this : this.ownerDocument;
  let el = doc.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  for (let n = el; n; n = n.parentNode || n.host || null) if (n === this) return true;
  return false;
}
