// needs: element, composed, text
// Names the element a click would land on instead: tag, id, class, text. Given the
// element it covers, also the layer it belongs to (its highest ancestor that does not
// hold the covered element: a picker, a pop-up, a banner) and what says what that is:
// its role and name, whether it is a colour picker or a pop-up the browser closes, and
// whether it fills the window.
function(covered) {
  const el = elementOf(this);
  if (!el) return {tag: '#text', id: '', cls: '', text: ''};
  const short = (text) => text.length > 60 ? text.slice(0, 57) + '...' : text;
  const classes = (node) =>
    (node.getAttribute('class') || '').trim().split(/\s+/).slice(0, 2).join(' ');
  const facts = {tag: el.localName, id: el.id || '', cls: classes(el),
    text: short(squeeze(el.innerText || el.textContent || el.getAttribute('aria-label')))};
  if (!covered) return facts;
  const doc = el.ownerDocument;
  let layer = el;
  for (let up = composedParent(layer); up; up = composedParent(up)) {
    if (up.nodeType !== 1) continue;  // a shadow root: on to its host
    if (up === doc.body || up === doc.documentElement || isComposedWithin(covered, up)) break;
    layer = up;
  }
  const byIds = (ids) => squeeze(ids.split(/\s+/).map(
    (id) => (doc.getElementById(id) || {}).textContent || '').join(' '));
  const name = squeeze(layer.getAttribute('aria-label')
    || byIds(layer.getAttribute('aria-labelledby') || '') || layer.getAttribute('title'));
  // A colour picker says so in its classes or ids, holds a colour field, or draws a
  // hue strip: a gradient through four saturated colours or more.
  const view = doc.defaultView;
  const inside = [layer, ...layer.querySelectorAll('*')].slice(0, 80);
  const colourWords = /colou?r|(^|[-_\s])hue|saturation|swatch|palette/i;
  const hueStrip = (style) => {
    if (!/gradient/.test(style.backgroundImage)) return false;
    const hues = new Set();
    for (const [, r, g, b] of style.backgroundImage.matchAll(/rgba?\((\d+), (\d+), (\d+)/g)) {
      const channels = [+r, +g, +b];
      if (Math.max(...channels) - Math.min(...channels) >= 200) hues.add(channels.join());
    }
    return hues.size >= 4;
  };
  const picker = inside.some((node) =>
    colourWords.test((node.getAttribute('class') || '') + ' ' + node.id)
    || (node.localName === 'input' && node.type === 'color')
    || hueStrip(view.getComputedStyle(node)));
  const box = layer.getBoundingClientRect();
  const position = view.getComputedStyle(layer).position;
  return {...facts, layer: {
    tag: layer.localName, id: layer.id || '', cls: classes(layer), same: layer === el,
    text: short(squeeze(layer.innerText || layer.textContent)),
    role: (layer.getAttribute('role') || '').trim().split(/\s+/)[0].toLowerCase()
      || (layer.localName === 'dialog' ? 'dialog' : ''),
    name: short(name), picker,
    popover: layer.hasAttribute('popover') || layer.localName === 'dialog',
    floating: position === 'absolute',
    full: box.width * box.height >= 0.8 * view.innerWidth * view.innerHeight,
  }};
}
