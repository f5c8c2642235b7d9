// Where a person takes a resizable element to resize it: the corner CSS `resize` draws
// inside its border, or the grip a library drew as a child at its edge (a resize
// cursor says so; of several, the one nearest the bottom-right corner); null when it
// has none. In viewport coordinates of the element's frame, with the element's size.
function() {
  const view = this.ownerDocument.defaultView;
  const style = view.getComputedStyle(this);
  const box = this.getBoundingClientRect();
  const size = {width: Math.round(box.width), height: Math.round(box.height)};
  const clips = style.overflowX !== 'visible' || style.overflowY !== 'visible';
  if (style.resize !== 'none' && clips) {
    // A few pixels inside the corner where the scrollbars meet: the resizer.
    return {x: box.right - parseFloat(style.borderRightWidth) - 3,
      y: box.bottom - parseFloat(style.borderBottomWidth) - 3, ...size};
  }
  // As the pipeline reads grips (trimtab.pipeline._grips): thin, at the edge it pulls.
  const axes = {se: 'both', nw: 'both', ne: 'both', sw: 'both', nwse: 'both', nesw: 'both',
    e: 'h', w: 'h', ew: 'h', col: 'h', n: 'v', s: 'v', ns: 'v', row: 'v'};
  const near = (a, b) => Math.abs(a - b) <= 4;
  let best = null;
  for (const child of this.children) {
    const axis = axes[view.getComputedStyle(child).cursor.replace(/-resize$/, '')];
    const grip = child.getBoundingClientRect();
    if (!axis || grip.width < 1 || grip.height < 1 || Math.min(grip.width, grip.height) > 20) {
      continue;
    }
    const side = near(grip.right, box.right) || near(grip.left, box.left);
    const end = near(grip.bottom, box.bottom) || near(grip.top, box.top);
    if (!(axis === 'h' ? side : axis === 'v' ? end : side && end)) continue;
    const x = grip.left + grip.width / 2, y = grip.top + grip.height / 2;
    if (!best || x + y > best.x + best.y) best = {x, y};
  }
  return best && {...best, ...size};
}
