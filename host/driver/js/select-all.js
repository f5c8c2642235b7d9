// Selects the field's whole content (as Control+A would); says whether it had any.
function() {
  this.focus();
  if ('value' in this && typeof this.select === 'function') {
    this.select();
    return this.value.length > 0;
  }
  const range = document.createRange();
  range.selectNodeContents(this);
  const selection = this.ownerDocument.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
  return (this.textContent || '').length > 0;
}
