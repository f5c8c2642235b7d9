// needs: text
// Selects a <select>'s option by value or visible text, as the browser's popup does.
// The snapshot lists options with `\|` and `\\` escaped (FORMAT.md), so a name copied
// from `options="…"` is also tried with those escapes undone.
function(wanted) {
  const options = Array.from(this.options);
  const label = (o) => squeeze(o.label || o.text);
  const find = (name) => options.find((o) => o.value === name)
    || options.find((o) => label(o) === squeeze(name))
    || options.find((o) => label(o).toLowerCase() === squeeze(name).toLowerCase());
  const unescaped = wanted.replace(/\\([\\|])/g, '$1');
  const match = find(wanted) || (unescaped !== wanted ? find(unescaped) : undefined);
  if (!match) return {found: false, options: options.map(label)};
  if (match.disabled) return {found: false, disabled: true, text: label(match)};
  if (match.selected && !this.multiple) return {found: true, changed: false, text: label(match)};
  match.selected = true;
  this.dispatchEvent(new Event('input', {bubbles: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
  return {found: true, changed: true, text: label(match)};
}
