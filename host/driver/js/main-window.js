// The window of the world this runs in: in the page's own world, the object whose
// listeners the page's scripts added.
window
