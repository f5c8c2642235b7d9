// The element that has the keyboard focus, through shadow roots and same-origin
// frames; an <iframe> when the focus is in a frame this world cannot enter, and the
// document's body (or root) when nothing has it.
(() => {
  let el = document.activeElement;
  while (el) {
    if (el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
    else if (el.contentDocument && el.contentDocument.activeElement) {
      el = el.contentDocument.activeElement;
    } else break;
  }
  return el || document.body || document.documentElement;
})()
