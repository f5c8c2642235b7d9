// Puts the caret at the end of the field, where a person appends.
function() {
  this.focus();
  try {
    if ('value' in this && typeof this.setSelectionRange === 'function') {
      this.setSelectionRange(this.value.length, this.value.length);
      return;
    }
  } catch (e) { return; }  // email and number fields have no selection API
  if (this.isContentEditable) {
    const range = document.createRange();
    range.selectNodeContents(this);
    range.collapse(false);
    const selection = this.ownerDocument.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }
}
