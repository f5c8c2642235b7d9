// Whether the page renders a frame within `withinMs`: true once an animation frame
// fires, false when the time passes first. A tab the person is not looking at whose
// page keeps animating (a ticker, a marquee) is rendered about once a second, and
// Chromium holds mouse moves and wheel turns for the next frame.
(withinMs) => new Promise((resolve) => {
  requestAnimationFrame(() => resolve(true));
  setTimeout(() => resolve(false), withinMs);
})
