// needs: text, forms, secrets
// What an element is and may do: tag, type, role, states, whether it submits, and
// whether it is still in its document (`connected`: read with the rest, one round trip).
function() {
  const el = this;
  const tag = el.localName || '';
  const type = tag === 'input' ? el.type : (el.getAttribute('type') || '');
  const role = el.getAttribute('role') || '';
  const disabled = (typeof el.matches === 'function' && el.matches(':disabled'))
    || el.closest('[aria-disabled="true"]') !== null;
  const editable = tag === 'textarea' || (tag === 'input' && TEXT_INPUT_TYPES.includes(type))
    || el.isContentEditable === true || ['textbox', 'searchbox'].includes(role);
  const readonly = el.readOnly === true || el.getAttribute('aria-readonly') === 'true';
  let checked = null;
  if (tag === 'input' && (type === 'checkbox' || type === 'radio')) checked = el.checked;
  else if (TOGGLE_ROLES.includes(role))
    checked = el.getAttribute('aria-checked') === 'true';
  // The first 60 characters name it; a cut is marked, so no one reads a part as all.
  const full = squeeze(el.innerText || el.value || el.getAttribute('aria-label'));
  const text = full.length > 60 ? `${full.slice(0, 59)}…` : full;
  // A field's label names it where its value must not (a secret field).
  const hints = fieldHints(el);
  const label = !hints ? '' : squeeze(Array.from(el.labels || [], (l) => l.textContent).join(' ')
    || el.getAttribute('aria-label') || el.getAttribute('placeholder')
    || el.getAttribute('title') || el.getAttribute('name'));
  return {connected: el.isConnected, tag, type, role, disabled, editable, readonly, checked,
    submits: isSubmitButton(el), enterSubmits: enterSubmits(el), text, hints,
    label: label.slice(0, 60)};
}
