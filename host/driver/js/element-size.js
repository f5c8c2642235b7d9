// The element's size now, in whole CSS pixels.
function() {
  const box = this.getBoundingClientRect();
  return {width: Math.round(box.width), height: Math.round(box.height)};
}
