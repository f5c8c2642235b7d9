// needs: text
// What a text field holds now: its value, or an editable area's text.
function() {
  if ('value' in this && typeof this.value === 'string') return this.value;
  return squeeze(this.innerText || this.textContent);
}
