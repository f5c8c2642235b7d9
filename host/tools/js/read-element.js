// needs: secrets
// Everything `read` shows of one element: text, link, options, value (a secret
// field's value is masked in Python, from `hints`).
function(limit) {
  const el = this;
  const tag = el.localName;
  const fold = (s) => (s || '').replace(/[ \t]+/g, ' ').replace(/\n\s*\n+/g, '\n').trim();
  const out = {tag, attrs: {}, text: '', options: null};
  if (tag === 'a' && el.href) out.attrs.href = el.href;
  if (tag === 'img') out.attrs.src = el.currentSrc || el.src;
  if (tag === 'select') {
    out.options = Array.from(el.options).map((o) => ({
      text: fold(o.label || o.text), value: o.value, selected: o.selected, disabled: o.disabled,
    }));
  } else if ('value' in el && ['input', 'textarea'].includes(tag)) {
    out.attrs.type = el.type;
    if (['checkbox', 'radio'].includes(el.type)) out.attrs.checked = String(el.checked);
    else out.text = el.type === 'password' ? '\u2022'.repeat(el.value.length) : el.value;
  } else {
    out.text = fold(el.innerText || el.textContent);
  }
  const title = el.getAttribute('title');
  if (title) out.attrs.title = title;
  const label = el.getAttribute('aria-label');
  if (label) out.attrs.label = label;
  out.hints = fieldHints(el);
  out.full = out.text.length;
  out.text = out.text.slice(0, limit);
  return out;
}
