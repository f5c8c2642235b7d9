// needs: element, text
// Watches, from Trimtab's own world, which mouse presses of this element's document
// reach this element (or something inside it, or its label) and what gets the others:
// the page can neither see nor remove these listeners. Returns the record that
// press-witness-read.js reads (and stops) and press-witness-steady.js asks whether the
// pointer stays on the element.
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
  // Resolves, once the page rendered a frame, with what the still pointer went over
  // meanwhile outside the element (null: it stayed on it). Chrome updates the hover
  // under a still pointer when a frame begins, before the frame's animation callbacks,
  // so a layout that the hover itself changes shows here as a trusted mouseover. A
  // hidden document renders no frame and updates no hover; `limit` ms bound the wait.
  record.steady = (limit) => new Promise((resolve) => {
    let left = null;
    const over = (event) => {
      if (left === null && event.isTrusted && !reaches(event.composedPath())) {
        left = name(event.composedPath()[0]);
      }
    };
    let timer = 0;
    const done = () => {
      clearTimeout(timer);
      view.removeEventListener('mouseover', over, true);
      resolve(left);
    };
    view.addEventListener('mouseover', over, true);
    if (element.ownerDocument.visibilityState === 'hidden') {
      done();
      return;
    }
    timer = setTimeout(done, limit);
    view.requestAnimationFrame(done);
  });
  record.stop = () => {
    for (const type of types) view.removeEventListener(type, listen, true);
  };
  return record;
}
