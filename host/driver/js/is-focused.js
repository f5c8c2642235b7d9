// needs: composed, focus
// Whether the focus is on this element or inside it (shadow roots included).
function() {
  const doc = this.nodeType === 9 ? this : this.ownerDocument;
  return isComposedWithin(deepActiveElement(doc, false), this);
}
