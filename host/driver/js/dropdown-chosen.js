// needs: text, options
// What a <select> holds now: its chosen option's value and text.
function() {
  const option = this.options[this.selectedIndex];
  return option ? {value: option.value, text: optionLabel(option)} : null;
}
