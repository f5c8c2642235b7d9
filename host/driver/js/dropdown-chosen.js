// needs: text
// What a <select> holds now: its chosen option's value and text.
function() {
  const option = this.options[this.selectedIndex];
  return option ? {value: option.value, text: squeeze(option.label || option.text)} : null;
}
