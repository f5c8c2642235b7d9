// needs: text, options
// Finds, without choosing it, the option of a custom drop-down's hidden <select> that
// `wanted` names, as select-option.js does; says whether it is the chosen one already,
// and lists the options when none matches.
function(wanted) {
  const {match, label} = optionNamed(this, wanted);
  if (!match) return {found: false, options: Array.from(this.options, label)};
  return {found: true, disabled: match.disabled, chosen: match.selected, text: label(match),
    value: match.value};
}
