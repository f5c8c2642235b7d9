// Waits in the page observer's world until the DOM (in `scopes`, when any are given)
// has been quiet for `quietMs`, at most `capMs`: {settled, churn}, or null when no
// observer runs in this world yet (see page-observer.js, `quiet`). The action began at
// `beganAtMs` (milliseconds since the epoch, the host's clock, which is this machine's):
// how long ago is reckoned here, on arrival, since a loaded machine can deliver this call
// long after the host sent it, and a dialog the action opened meanwhile is its effect.
function(quietMs, capMs, beganAtMs, ...scopes) {
  const sinceMs = Math.max(0, Date.now() - beganAtMs);
  return globalThis.__trimtab ? globalThis.__trimtab.quiet(quietMs, capMs, scopes, sinceMs) : null;
}
