// The nearest control around the node the hit test found.
function() {
  const el = this.nodeType === 1 ? this : this.parentElement;
  return el && el.closest('a,button,input,select,textarea,summary,[role],[onclick],[tabindex]');
}
