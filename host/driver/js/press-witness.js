// needs: element, text
// Watches, from Trimtab's own world, which mouse presses of this element's document
// reach this element (or something inside it, or its label) and what gets the others:
// the page can neither see nor remove these listeners. Returns the record that
// press-witness-read.js reads (and stops).
function() {
  const element = this;
  const view = element.ownerDocument.defaultView;
  const types = ['mousedown', 'mouseup', 'click', 'dblclick'];
  const record = {inside: {}, elsewhere: [], stop: null};
  const reaches = (path) => path.some(
    (node) => node === element || (node.localName === 'label' && node.control === element));
  const name = (node) => {
    const el = node && elementOf(node);
    if (!el) return {tag: 'document', id: '', cls: '', text: ''};
    const text = squeeze(el.innerText || el.textContent || el.getAttribute('aria-label'));
    const cls = (el.getAttribute('class') || '').trim().split(/\s+/).slice(0, 2).join(' ');
    return {tag: el.localName, id: el.id || '', cls,
            text: text.length > 60 ? text.slice(0, 57) + '...' : text};
  };
  const listen = (event) => {
    const path = event.composedPath();
    if (reaches(path)) {
      record.inside[event.type] = (record.inside[event.type] || 0) + 1;
    } else if (record.elsewhere.length < 8) {
      record.elsewhere.push(Object.assign({type: event.type}, name(path[0])));
    }
  };
  for (const type of types) view.addEventListener(type, listen, true);
  record.stop = () => {
    for (const type of types) view.removeEventListener(type, listen, true);
  };
  return record;
}
