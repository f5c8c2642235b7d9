// Helpers the page-side scripts of trimtab.tab and trimtab.tools share. A script asks
// for some on its first line (`// needs: focus, text`) and the loader (`page_script`)
// puts those sections, in this file's order, in a closure around the script: each
// script stays one real function or expression, and no helper is copied into it.
// A section runs from its `// helper: <name>` line to the next one.

// helper: element
// The element a node is or is in: itself for an element, else its parent element (a
// text node's), or null.
function elementOf(node) {
  return node.nodeType === 1 ? node : node.parentElement;
}

// helper: composed
// The parent of a node in the composed tree: out of a shadow root to its host.
function composedParent(node) {
  return node.parentNode || node.host || null;
}

// Whether `node` is `ancestor` or inside it, crossing shadow roots on the way up.
function isComposedWithin(node, ancestor) {
  for (let n = node; n; n = composedParent(n)) if (n === ancestor) return true;
  return false;
}

// helper: focus
// The element that has the keyboard focus in `doc`, through open shadow roots and,
// with `throughFrames`, into same-origin frames (an <iframe> stays the answer when the
// focus is in a frame this world cannot enter); null when the document has none.
function deepActiveElement(doc, throughFrames) {
  let el = doc.activeElement;
  while (el) {
    if (el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
    else if (throughFrames && el.contentDocument && el.contentDocument.activeElement) {
      el = el.contentDocument.activeElement;
    } else break;
  }
  return el;
}

// helper: text
// A text with its whitespace runs folded to one space and its ends trimmed.
function squeeze(text) {
  return String(text || '').replace(/\s+/g, ' ').trim();
}

// helper: options
// How an option of a <select> reads: its label, else its text, whitespace folded.
// Needs the `text` helper.
function optionLabel(option) {
  return squeeze(option.label || option.text);
}

// The option of the <select> `select` that `wanted` names, or undefined: by value,
// else by its label, else by its label ignoring case; a name copied from the
// snapshot's `options="…"` (where `\|` and `\\` are escaped, FORMAT.md) is also
// tried with those escapes undone.
function optionNamed(select, wanted) {
  const options = Array.from(select.options);
  const find = (name) => options.find((o) => o.value === name)
    || options.find((o) => optionLabel(o) === squeeze(name))
    || options.find((o) => optionLabel(o).toLowerCase() === squeeze(name).toLowerCase());
  const unescaped = wanted.replace(/\\([\\|])/g, '$1');
  return find(wanted) || (unescaped !== wanted ? find(unescaped) : undefined);
}

// helper: matches
// Where `text` occurs in the text an element shows: its text nodes (not those of
// scripts, styles and templates) with whitespace runs folded to one space, matched
// case-sensitively first, then not. Returns {needle, hay, places, starts}: `places[i]`
// is the [text node, offset] of `hay[i]`, `starts` the indexes where a match begins.
// With `keep`, only the text nodes it keeps count (a page's visible text).
function textMatches(el, text, keep) {
  const needle = text.replace(/\s+/g, ' ').trim();
  const chars = [], places = [];
  const walker = el.ownerDocument.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  let space = true;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (parent && ['script', 'style', 'noscript', 'template'].includes(parent.localName)) continue;
    if (keep && !keep(node)) continue;
    const data = node.data;
    for (let i = 0; i < data.length; i++) {
      const blank = /\s/.test(data[i]);
      if (blank && space) continue;
      chars.push(blank ? ' ' : data[i]);
      places.push([node, i]);
      space = blank;
    }
  }
  const hay = chars.join('');
  let starts = [];
  for (const fold of [(s) => s, (s) => s.toLowerCase()]) {
    if (!needle || starts.length) break;
    const h = fold(hay), n = fold(needle);
    for (let i = h.indexOf(n); i >= 0; i = h.indexOf(n, i + 1)) starts.push(i);
  }
  return {needle, hay, places, starts};
}

// helper: forms
// The input types in which Enter submits the field's form.
const TEXT_INPUT_TYPES = ['text', 'search', 'email', 'url', 'tel', 'password', 'number'];

// The ARIA roles of controls that hold a checked state.
const TOGGLE_ROLES = ['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio'];

// Whether a click on `el` submits its form: a submit button or image input in a form.
function isSubmitButton(el) {
  return !!el && !!el.form && ((el.localName === 'button' && el.type === 'submit')
    || (el.localName === 'input' && (el.type === 'submit' || el.type === 'image')));
}

// Whether Enter in `el` submits its form: a text field that belongs to a form.
function enterSubmits(el) {
  return !!el && !!el.form && el.localName === 'input' && TEXT_INPUT_TYPES.includes(el.type);
}

// helper: secrets
// What tells whether a field holds a secret (a password, a card's number, code or
// expiry, a one-time code): its type, autocomplete tokens, and what its name, id and
// labels say; Trimtab decides from these in Python (trimtab.pipeline's `secret_kind`),
// so one rule holds everywhere. Null for an element that is not a form field.
function fieldHints(el) {
  if (!el || el.nodeType !== 1 || !['input', 'textarea', 'select'].includes(el.localName)) {
    return null;
  }
  const names = [el.getAttribute('name'), el.id, el.getAttribute('aria-label'),
    el.getAttribute('placeholder'), el.getAttribute('title')];
  for (const label of el.labels || []) names.push(label.textContent);
  for (const id of (el.getAttribute('aria-labelledby') || '').split(/\s+/)) {
    const named = id && el.ownerDocument.getElementById(id);
    if (named) names.push(named.textContent);
  }
  return {
    type: el.localName === 'input' ? el.type : el.localName,
    autocomplete: el.getAttribute('autocomplete') || '',
    names: names.filter(Boolean).map((n) => String(n).replace(/\s+/g, ' ').trim().slice(0, 200)),
  };
}
