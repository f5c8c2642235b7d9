// Asks a press-witness.js record whether the pointer stays on the element for a
// rendered frame: what it went over outside the element meanwhile, or null.
function(limit) {
  return this.steady(limit);
}
