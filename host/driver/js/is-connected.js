// Whether this node is still in its document.
function() {
  return this.isConnected;
}
