// needs: element, text
// Names the element a click would land on instead: tag, id, class, text.
function() {
  const el = elementOf(this);
  if (!el) return {tag: '#text', id: '', cls: '', text: ''};
  const text = squeeze(el.innerText || el.textContent || el.getAttribute('aria-label'));
  const cls = (el.getAttribute('class') || '').trim().split(/\s+/).slice(0, 2).join(' ');
  return {tag: el.localName, id: el.id || '', cls, text: text.length > 60
    ? text.slice(0, 57) + '...' : text};
}
