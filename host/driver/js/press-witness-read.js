// Stops a press-witness.js record and says what it saw: per event type, how many
// reached the element, and the first few that went elsewhere (type, tag, id, class, text).
function() {
  this.stop();
  return {inside: this.inside, elsewhere: this.elsewhere};
}
