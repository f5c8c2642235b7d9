// The characters of this String object from `start` up to `end` (empty past its end).
function(start, end) {
  return this.slice(start, end);
}
