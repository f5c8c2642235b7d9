// Whether Enter now submits a form: the focus (through shadow roots and same-origin
// frames) is on a text field that belongs to a form.
function() {
  let el = document.activeElement;
  while (el) {
    if (el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
    else if (el.contentDocument && el.contentDocument.activeElement) {
      el = el.contentDocument.activeElement;
    }
    else break;
  }
  return !!el && el.localName === 'input' && !!el.form
    && ['text', 'search', 'email', 'url', 'tel', 'password', 'number'].includes(el.type);
}
