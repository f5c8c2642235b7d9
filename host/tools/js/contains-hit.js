// Whether the node the hit test found is this element, inside it, or its label.
function(hit) {
  for (let n = hit; n; n = n.parentNode || n.host || null) {
    if (n === this) return true;
  }
  const start = hit.nodeType === 1 ? hit : hit.parentElement;
  const label = start && start.closest('label');
  return !!label && label.control === this;
}
