// Resolves once a timer set now fires: every timer of the page that was already due
// has run before it (timers fire in the order they fall due).
new Promise((resolve) => setTimeout(resolve, 0))
