// Where a dragged item stands against this goal item among the goal's container's
// items in the flow (lifted ones, positioned out of it, left aside), read the same
// way for every sortable library:
// - order: the source's own place, 'before' or 'after' the goal, with `apart` the
//   items between them, when it is an item of the goal's container and lies in its
//   flow (null otherwise: elsewhere, or lifted);
// - slot: where a release now would put it, 'before' or 'after' when next to the
//   goal, 'apart' when elsewhere in the container, null when unknown: the source
//   itself while it lies in the flow (SortableJS moves the dragged item among the
//   others as the pointer goes), else a placeholder the library put among the items
//   in its stead while it lifts the item out of the flow (jQuery UI's
//   `ui-sortable-placeholder`);
// - index: the source's index among the container's children (-1 when not one);
// - axis, forward: the container's flow, 'x' when two items stand side by side (a row
//   of tiles, a grid's rows), else 'y'; forward -1 when the next item lies left of (or
//   above) the one before it (right to left, row-reverse), else 1.
function(source) {
  const view = this.ownerDocument.defaultView;
  const parent = this.parentElement;
  const found = {order: null, apart: 0, slot: null, index: -1, axis: 'y', forward: 1};
  if (!parent || !this.isConnected) return found;
  const items = [...parent.children];
  const inFlow = (element) => {
    const style = view.getComputedStyle(element);
    return style.display !== 'none' && style.position !== 'absolute' &&
      style.position !== 'fixed';
  };
  const flow = items.filter(inFlow);
  const goal = flow.indexOf(this);
  const side = (element) => {
    const at = flow.indexOf(element);
    if (at < 0 || goal < 0) return null;
    return {side: at < goal ? 'before' : 'after', apart: Math.abs(at - goal) - 1};
  };
  const slot = (placed) => placed && (placed.apart ? 'apart' : placed.side);
  if (source && source.parentElement === parent) {
    found.index = items.indexOf(source);
    const placed = side(source);
    if (placed) {
      [found.order, found.apart] = [placed.side, placed.apart];
      found.slot = slot(placed);
    }
  }
  if (found.slot === null) {
    const placeholder = flow.find((item) => item !== source && item !== this &&
      /placeholder/i.test(item.getAttribute('class') || ''));
    if (placeholder) found.slot = slot(side(placeholder));
  }
  // The flow's direction, from the first two consecutive items laid out apart.
  const boxes = flow.map((item) => item.getBoundingClientRect())
    .filter((box) => box.width > 0 && box.height > 0);
  for (let i = 1; i < boxes.length; i++) {
    const [a, b] = [boxes[i - 1], boxes[i]];
    const shared = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
    if (shared > Math.min(a.height, b.height) / 2 && a.left !== b.left) {
      found.axis = 'x';
      found.forward = b.left > a.left ? 1 : -1;
      return found;
    }
  }
  for (let i = 1; i < boxes.length; i++) {
    if (boxes[i].top !== boxes[i - 1].top) {
      found.forward = boxes[i].top > boxes[i - 1].top ? 1 : -1;
      break;
    }
  }
  return found;
}
