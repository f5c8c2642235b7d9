// What the page itself now holds selected in this element's document: the text of
// its selection, or of a field's selected range when this element is a field.
function() {
  if (('value' in this) && typeof this.selectionStart === 'number'
      && typeof this.value === 'string') {
    return this.value.slice(this.selectionStart, this.selectionEnd);
  }
  const selection = this.ownerDocument.getSelection();
  return selection ? selection.toString() : '';
}
