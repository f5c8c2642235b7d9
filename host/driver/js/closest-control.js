// needs: element
// The nearest control around the node the hit test found.
function() {
  const el = elementOf(this);
  return el && el.closest('a,button,input,select,textarea,summary,[role],[onclick],[tabindex]');
}
