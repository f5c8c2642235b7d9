// needs: text, options
// Finds, without choosing it, the option of a custom drop-down's hidden <select> that
// `wanted` names, as select-option.js does; says whether it is the chosen one already,
// and lists the options when none matches.
function(wanted) {
  const match = optionNamed(this, wanted);
  if (!match) return {found: false, options: Array.from(this.options, optionLabel)};
  return {found: true, disabled: match.disabled, chosen: match.selected,
    text: optionLabel(match), value: match.value};
}
