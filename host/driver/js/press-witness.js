// needs: element, text
// Watches, from Trimtab's own world, which mouse presses of this element's document
// reach this element (or something inside it, or its label) and what gets the others:
// the page can neither see nor remove these listeners. Returns the record that
// press-witness-read.js reads (and stops), and press-witness-watch-pointer.js and
// press-witness-pointer-went.js ask whether the pointer stays on the element. The
// record begins watching the pointer at once, as `watchPointer(limit)` does, and comes
// back once the page rendered a frame: it is made where the pointer just arrived.
function(limit) {
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
  // What the still pointer went over outside the element since `watchPointer` began: null
  // while it stayed on the element. Chrome updates the hover under a still pointer when
  // a frame begins, before the frame's animation callbacks, so a layout that the hover
  // itself changes shows here as a trusted mouseover.
  let went = null;
  const over = (event) => {
    if (went === null && event.isTrusted && !reaches(event.composedPath())) {
      went = name(event.composedPath()[0]);
    }
  };
  // Begins watching the pointer and resolves once the page rendered a frame;
  // `pointerWent` ends the watch. The driver hit-tests in between, so that every frame
  // up to the hit test is watched: when the hover flips the layout at every frame, a
  // frame that fell between a watch already ended and the hit test could take the
  // hover off the element and bring the element back under the pointer, and both the
  // watch and the hit test would pass a point that flips again at the next frame.
  // A hidden document renders no frame and updates no hover; `limit` ms bound the wait.
  record.watchPointer = (limit) => new Promise((resolve) => {
    went = null;
    view.addEventListener('mouseover', over, true);
    if (element.ownerDocument.visibilityState === 'hidden') {
      resolve();
      return;
    }
    const timer = setTimeout(resolve, limit);
    view.requestAnimationFrame(() => {
      clearTimeout(timer);
      resolve();
    });
  });
  record.pointerWent = () => {
    view.removeEventListener('mouseover', over, true);
    return went;
  };
  record.stop = () => {
    for (const type of types) view.removeEventListener(type, listen, true);
    record.pointerWent();
  };
  return record.watchPointer(limit).then(() => record);
}
