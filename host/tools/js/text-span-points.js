// needs: matches
// Where a person would press and let go to select the `occurrence`-th (1-based) match
// of `text` within this element with the mouse: just inside its first character and
// just inside its last one, in the viewport of this element's frame, carried out
// through same-origin iframes (a cross-origin one is the caller's to add). Matching
// is select-text.js's (the `matches` helper). Returns {found, count, selected, near,
// start: {x, y}, end: {x, y}}; a form field, whose text has no boxes of its own,
// answers {field: true}.
function(text, occurrence) {
  if (('value' in this) && typeof this.setSelectionRange === 'function'
      && typeof this.value === 'string') {
    return {field: true};
  }
  const doc = this.ownerDocument;
  const {needle, hay, places, starts} = textMatches(this, text);
  if (starts.length < occurrence) {
    return {found: false, count: starts.length, selected: '', near: hay.trim().slice(0, 120)};
  }
  const at = starts[occurrence - 1];
  const box = ([node, offset]) => {
    const range = doc.createRange();
    range.setStart(node, offset);
    range.setEnd(node, offset + 1);
    const rects = Array.from(range.getClientRects()).filter((r) => r.width > 0 && r.height > 0);
    return rects.length ? rects[0] : range.getBoundingClientRect();
  };
  // Same-origin frames up to the top (or the first cross-origin one) add their place.
  let dx = 0, dy = 0;
  for (let view = doc.defaultView; view && view !== view.parent; view = view.parent) {
    let owner = null;
    try { owner = view.frameElement; } catch (e) { owner = null; }
    if (!owner) break;
    const rect = owner.getBoundingClientRect();
    const style = owner.ownerDocument.defaultView.getComputedStyle(owner);
    dx += rect.left + owner.clientLeft + parseFloat(style.paddingLeft);
    dy += rect.top + owner.clientTop + parseFloat(style.paddingTop);
  }
  const first = box(places[at]), last = box(places[at + needle.length - 1]);
  const inset = (rect) => Math.min(2, rect.width / 4);
  return {
    found: true,
    count: starts.length,
    selected: hay.slice(at, at + needle.length),
    near: '',
    start: {x: dx + first.left + inset(first), y: dy + first.top + first.height / 2},
    end: {x: dx + last.right - inset(last), y: dy + last.top + last.height / 2},
  };
}
