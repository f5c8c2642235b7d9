// needs: text
// Where a custom drop-down's open list shows the option `text`: the innermost element
// a person sees whose whole text is that option's (whitespace folded, any case),
// outside any <select>; an item of a list (role option, or <li>) first. The face
// (`this`) shows the chosen option, never the one asked for (that is not clicked), so
// its own open list counts too (choices.js draws it inside the face), after any list
// outside it (Selectric's beside it, Select2's at the end of the page). Null while
// none shows.
function(text) {
  const face = this;
  const doc = face.ownerDocument;
  const view = doc.defaultView;
  const wanted = squeeze(text).toLowerCase();
  const seen = (el) => {
    if (!el.getClientRects().length) return false;
    const box = el.getBoundingClientRect();
    return box.width >= 1 && box.height >= 1 && view.getComputedStyle(el).visibility === 'visible';
  };
  const found = [];
  for (const el of doc.body ? doc.body.querySelectorAll('*') : []) {
    if (el.closest('select, option, script, style, template')) continue;
    if (squeeze(el.textContent).toLowerCase() !== wanted || !seen(el)) continue;
    // The innermost: a child showing the same text replaces its parent.
    const last = found[found.length - 1];
    if (last && last.contains(el)) found.pop();
    found.push(el);
  }
  const outside = found.filter((el) => !face.contains(el));
  const inside = found.filter((el) => face.contains(el));
  const choices = outside.length ? outside : inside;
  // The list's item itself when it shows just that text (its whole box is the target).
  const inItem = choices.find((el) => el.closest('[role="option"], li'));
  if (!inItem) return choices[0] || null;
  const item = inItem.closest('[role="option"], li');
  return squeeze(item.textContent).toLowerCase() === wanted ? item : inItem;
}
