// The document that holds this node (its frame's).
function() {
  return this.ownerDocument;
}
