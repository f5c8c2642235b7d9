// The file input this element stands for: itself, the control of a <label>, or the one
// file input inside it (a "Choose file" button that wraps a hidden input). Null if none.
function() {
  const isFile = (el) => el && el.localName === 'input' && el.type === 'file';
  if (isFile(this)) return this;
  if (this.localName === 'label' && isFile(this.control)) return this.control;
  const inside = this.querySelectorAll ? this.querySelectorAll('input[type=file]') : [];
  return inside.length === 1 ? inside[0] : null;
}
