// needs: text
// Finds, without choosing it, the option of a custom drop-down's hidden <select> that
// `wanted` names, by value or text as select-option.js does (escapes of the snapshot's
// `options="…"` undone too); says whether it is the chosen one already, and lists
// the options when none matches.
function(wanted) {
  const options = Array.from(this.options);
  const label = (o) => squeeze(o.label || o.text);
  const find = (name) => options.find((o) => o.value === name)
    || options.find((o) => label(o) === squeeze(name))
    || options.find((o) => label(o).toLowerCase() === squeeze(name).toLowerCase());
  const unescaped = wanted.replace(/\\([\\|])/g, '$1');
  const match = find(wanted) || (unescaped !== wanted ? find(unescaped) : undefined);
  if (!match) return {found: false, options: options.map(label)};
  return {found: true, disabled: match.disabled, chosen: match.selected, text: label(match),
    value: match.value};
}
