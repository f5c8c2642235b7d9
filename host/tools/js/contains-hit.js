// needs: composed
// Whether the node the hit test found is this element, inside it, or its label.
function(hit) {
  if (isComposedWithin(hit, this)) return true;
  const start = hit.nodeType === 1 ? hit : hit.parentElement;
  const label = start && start.closest('label');
  return !!label && label.control === this;
}
