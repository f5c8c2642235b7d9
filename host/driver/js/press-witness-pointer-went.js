// Ends the watch that press-witness-watch-pointer.js began: what the pointer went over
// outside the element meanwhile, or null.
function() {
  return this.pointerWent();
}
