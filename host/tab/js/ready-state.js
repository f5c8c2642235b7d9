// Whether the tab's document finished loading: a tab just opened is read once it has.
document.readyState
