// needs: composed
// The nodes an event on this element passes through, out of shadow roots, up to the
// window: their listeners are the scripts that may act on it.
function() {
  const path = [];
  let node = this;
  while (node) {
    path.push(node);
    if (node.nodeType === 9) {
      if (node.defaultView) path.push(node.defaultView);
      break;
    }
    node = composedParent(node);
  }
  return path;
}
