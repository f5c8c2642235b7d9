// The document this node belongs to.
function() {
  return this.ownerDocument;
}
