// needs: element, composed
// Whether the node the hit test found is this element, inside it, or its label.
function(hit) {
  if (isComposedWithin(hit, this)) return true;
  const start = elementOf(hit);
  const label = start && start.closest('label');
  return !!label && label.control === this;
}
