// Where the focus is, when it is not in this element: a short description of the
// focused element for the model (tag, then its label, placeholder or text), or null.
function() {
  const doc = this.nodeType === 9 ? this : this.ownerDocument;
  let el = doc.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  for (let n = el; n; n = n.parentNode || n.host || null) if (n === this) return null;
  if (!el || el === doc.body || el === doc.documentElement) return 'nothing (the page took it away)';
  const words = (s) => (s || '').replace(/\s+/g, ' ').trim().slice(0, 60);
  const said = words(el.getAttribute('aria-label')) || words(el.getAttribute('placeholder'))
    || words(el.labels && el.labels[0] ? el.labels[0].textContent : '')
    || words(el.innerText || el.value);
  return '<' + el.localName + '>' + (said ? ' "' + said + '"' : '');
}
