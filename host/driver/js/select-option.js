// needs: text, options
// Selects a <select>'s option by value or visible text (`optionNamed`), as the
// browser's popup does.
function(wanted) {
  const match = optionNamed(this, wanted);
  if (!match) return {found: false, options: Array.from(this.options, optionLabel)};
  const text = optionLabel(match);
  if (match.disabled) return {found: false, disabled: true, text};
  if (match.selected && !this.multiple) return {found: true, changed: false, text};
  match.selected = true;
  this.dispatchEvent(new Event('input', {bubbles: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
  return {found: true, changed: true, text};
}
