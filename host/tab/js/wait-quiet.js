// Waits in the page observer's world until the DOM (in `scopes`, when any are given)
// has been quiet for `quietMs`, at most `capMs`: {settled, churn}, or null when no
// observer runs in this world yet (see page-observer.js, `quiet`).
function(quietMs, capMs, sinceMs, ...scopes) {
  return globalThis.__trimtab ? globalThis.__trimtab.quiet(quietMs, capMs, scopes, sinceMs) : null;
}
