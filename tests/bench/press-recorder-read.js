// Stops a press-recorder.js record and gives its events: [type, on element, on goal].
function() {
  return this.stop();
}
