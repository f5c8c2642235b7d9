// What an element is and may do: tag, type, role, states, whether it submits, and
// whether it is still in its document (`connected`: read with the rest, one round trip).
function() {
  const el = this;
  const tag = el.localName || '';
  const type = tag === 'input' ? el.type : (el.getAttribute('type') || '');
  const role = el.getAttribute('role') || '';
  const disabled = (typeof el.matches === 'function' && el.matches(':disabled'))
    || el.closest('[aria-disabled="true"]') !== null;
  const textTypes = ['text', 'search', 'email', 'url', 'tel', 'password', 'number'];
  const editable = tag === 'textarea' || (tag === 'input' && textTypes.includes(type))
    || el.isContentEditable === true || ['textbox', 'searchbox'].includes(role);
  const readonly = el.readOnly === true || el.getAttribute('aria-readonly') === 'true';
  let checked = null;
  if (tag === 'input' && (type === 'checkbox' || type === 'radio')) checked = el.checked;
  else if (['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio'].includes(role))
    checked = el.getAttribute('aria-checked') === 'true';
  const submits = !!el.form && ((tag === 'button' && el.type === 'submit')
    || (tag === 'input' && (type === 'submit' || type === 'image')));
  const enterSubmits = !!el.form && tag === 'input' && textTypes.includes(type);
  const text = (el.innerText || el.value || el.getAttribute('aria-label') || '')
    .replace(/\s+/g, ' ').trim().slice(0, 60);
  return {connected: el.isConnected, tag, type, role, disabled, editable, readonly, checked,
    submits, enterSubmits, text};
}
