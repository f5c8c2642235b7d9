// How far the tab's document has loaded ("loading", "interactive": parsed, "complete"): a
// tab just opened is read once it has.
document.readyState
