// needs: matches
// Selects the `occurrence`-th (1-based) match of `text` within this element, as a person
// selects a word with the mouse: a field's value through its selection API, else a range
// over the element's text nodes (whitespace runs match any whitespace; case-sensitive
// first, then not). An editable area gets the focus first, so that shortcuts (Control+B,
// Control+C) apply to the selection. Returns {found, count, selected, near}.
function(text, occurrence) {
  const doc = this.ownerDocument;
  if (('value' in this) && typeof this.setSelectionRange === 'function'
      && typeof this.value === 'string') {
    const value = this.value, starts = [];
    for (const fold of [(s) => s, (s) => s.toLowerCase()]) {
      const n = fold(text);
      for (let i = fold(value).indexOf(n); i >= 0 && n; i = fold(value).indexOf(n, i + 1)) starts.push(i);
      if (starts.length) break;
    }
    if (starts.length < occurrence) {
      return {found: false, count: starts.length, selected: '', near: value.slice(0, 120)};
    }
    const at = starts[occurrence - 1];
    this.focus();
    this.setSelectionRange(at, at + text.length);
    return {found: true, count: starts.length, selected: value.slice(at, at + text.length), near: ''};
  }
  const {needle, hay, places, starts} = textMatches(this, text);
  if (starts.length < occurrence) {
    return {found: false, count: starts.length, selected: '', near: hay.trim().slice(0, 120)};
  }
  const at = starts[occurrence - 1];
  const [startNode, startOffset] = places[at];
  const [endNode, endOffset] = places[at + needle.length - 1];
  const editable = this.isContentEditable ? this : null;
  if (editable) {
    let host = editable;
    while (host.parentElement && host.parentElement.isContentEditable) host = host.parentElement;
    host.focus();
  }
  const range = doc.createRange();
  range.setStart(startNode, startOffset);
  range.setEnd(endNode, endOffset + 1);
  const selection = doc.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
  return {found: true, count: starts.length, selected: selection.toString(), near: ''};
}
