// The bench's own check of where an action's presses go: records, for each mouse
// press, release and click of this element's document, whether it reached this
// element (or something inside it, or its label) or `goal` (a drag's drop target).
function(goal) {
  const element = this;
  const view = element.ownerDocument.defaultView;
  const types = ['mousedown', 'mouseup', 'click', 'dblclick', 'mouseover'];
  const within = (path, node) => !!node && path.some(
    (n) => n === node || (n.localName === 'label' && n.control === node));
  const record = {events: [], stop: null};
  const listen = (event) => {
    const path = event.composedPath();
    record.events.push([event.type, within(path, element), within(path, goal)]);
  };
  for (const type of types) view.addEventListener(type, listen, true);
  record.stop = () => {
    for (const type of types) view.removeEventListener(type, listen, true);
    return record.events;
  };
  return record;
}
