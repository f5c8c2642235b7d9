// needs: composed, focus, text
// Where the focus is, when it is not in this element: a short description of the
// focused element for the model (tag, then its label, placeholder or text), or null.
function() {
  const doc = this.nodeType === 9 ? this : this.ownerDocument;
  const el = deepActiveElement(doc, false);
  if (isComposedWithin(el, this)) return null;
  if (!el || el === doc.body || el === doc.documentElement) return 'nothing (the page took it away)';
  const words = (s) => squeeze(s).slice(0, 60);
  const said = words(el.getAttribute('aria-label')) || words(el.getAttribute('placeholder'))
    || words(el.labels && el.labels[0] ? el.labels[0].textContent : '')
    // A field by its name, never its value (it may be a password).
    || words(['input', 'textarea', 'select'].includes(el.localName)
      ? el.getAttribute('name') : el.innerText);
  return '<' + el.localName + '>' + (said ? ' "' + said + '"' : '');
}
