// needs: element, matches
// The `occurrence`-th (1-based) match of the quote `text` in the visible text under
// this element (a region's, or the body), matched as select-text.js matches (spacing
// folded, case-sensitive first). Text inside the `skip` elements, before `after` or
// after `before` (an implicit region's neighbours) does not count. With `want`
// 'element' it answers the innermost element holding the whole match; else
// {count, found, selected, start: {x, y}, end: {x, y}, inView, rect}: where a person
// presses (just inside the first character) and lets go (just inside the last), in
// this document's viewport, and the match's box from that element's top left.
function(text, occurrence, want, after, before, ...skip) {
  const doc = this.ownerDocument;
  const view = doc.defaultView;
  const keep = (node) => {
    const parent = node.parentElement;
    if (!parent || skip.some((outer) => outer && outer.contains(node))) return false;
    if (after && !(after.compareDocumentPosition(node) & Node.DOCUMENT_POSITION_FOLLOWING)) {
      return false;
    }
    if (before && !(before.compareDocumentPosition(node) & Node.DOCUMENT_POSITION_PRECEDING)) {
      return false;
    }
    // Only what a person sees: the snapshot the quote was read from shows no more.
    return parent.checkVisibility({visibilityProperty: true, checkVisibilityCSS: true});
  };
  const {needle, hay, places, starts} = textMatches(this, text, keep);
  if (!starts.length || starts.length < occurrence) {
    return want === 'element' ? null : {count: starts.length, found: false};
  }
  const at = starts[occurrence - 1];
  const [firstNode, firstOffset] = places[at];
  const [lastNode, lastOffset] = places[at + needle.length - 1];
  const range = doc.createRange();
  range.setStart(firstNode, firstOffset);
  range.setEnd(lastNode, lastOffset + 1);
  const holder = elementOf(range.commonAncestorContainer);
  if (want === 'element') return holder;
  const box = (node, offset) => {
    const one = doc.createRange();
    one.setStart(node, offset);
    one.setEnd(node, offset + 1);
    const rects = Array.from(one.getClientRects()).filter((r) => r.width > 0 && r.height > 0);
    return rects.length ? rects[0] : one.getBoundingClientRect();
  };
  const first = box(firstNode, firstOffset), last = box(lastNode, lastOffset);
  const inset = (rect) => Math.min(2, rect.width / 4);
  const start = {x: first.left + inset(first), y: first.top + first.height / 2};
  const end = {x: last.right - inset(last), y: last.top + last.height / 2};
  const inside = (p) => p.x >= 0 && p.y >= 0 && p.x < view.innerWidth && p.y < view.innerHeight;
  const whole = range.getBoundingClientRect(), outer = holder.getBoundingClientRect();
  return {
    count: starts.length,
    found: true,
    selected: hay.slice(at, at + needle.length),
    start,
    end,
    inView: inside(start) && inside(end),
    rect: {
      x: whole.left - outer.left,
      y: whole.top - outer.top,
      width: Math.max(1, whole.width),
      height: Math.max(1, whole.height),
    },
  };
}
