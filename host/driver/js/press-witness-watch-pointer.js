// Begins watching, with a press-witness.js record, whether the pointer stays on the
// element; resolves once the page rendered a frame (press-witness-pointer-went.js
// ends the watch).
function(limit) {
  return this.watchPointer(limit);
}
