// The page observer: one MutationObserver per document, in an isolated world that the
// page's own scripts cannot see or patch. It reports changes through the binding
// (`open` at the first change of a burst, one more `open` at the end of each window
// that saw further changes, `close` when a window passes quietly), answers the
// revision token `PageRevisions.sync` reads, and tells `settle` when the DOM is quiet.
(binding, windowMs) => {
  if (globalThis.__trimtab) return;
  // Without the binding (a document the follower does not listen to) the observer
  // still serves `settle`; it just reports to no one.
  const report = typeof globalThis[binding] === "function" ? globalThis[binding] : () => {};
  let seq = 0, reported = 0, open = false, lastChange = performance.now();
  const quietWaiters = new Set();
  const send = (kind) => { try { report(kind); } catch (e) {} };
  const tick = () => {
    if (seq !== reported) { reported = seq; send("open"); setTimeout(tick, windowMs); }
    else { open = false; send("close"); }
  };
  const changed = (records) => {
    seq++;
    lastChange = performance.now();
    for (const waiter of quietWaiters) waiter(records);
    if (!open) { open = true; reported = seq; send("open"); setTimeout(tick, windowMs); }
  };
  const observer = new MutationObserver((records) => {
    for (const record of records) for (const node of record.addedNodes) watchShadows(node);
    changed(records);
  });
  const options = {subtree: true, childList: true, attributes: true, characterData: true};
  const watched = new WeakSet();
  // Returns how many shadow roots it started watching.
  const watchShadows = (root) => {
    if (!root || root.nodeType !== 1 && root.nodeType !== 9 && root.nodeType !== 11) return 0;
    let found = 0;
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
    for (let el = walker.currentNode; el; el = walker.nextNode()) {
      const shadow = el.shadowRoot;
      if (shadow && !watched.has(shadow)) {
        watched.add(shadow); observer.observe(shadow, options);
        found += 1 + watchShadows(shadow);
      }
    }
    return found;
  };
  observer.observe(document, options);
  watchShadows(document);
  const stateEvents = ["input", "change", "scroll", "load", "error", "toggle", "focusin",
                       "focusout", "transitionend", "animationend", "play", "pause", "close"];
  for (const type of stateEvents) {
    document.addEventListener(type, () => changed(null), {capture: true, passive: true});
  }
  addEventListener("resize", () => changed(null), {passive: true});
  const hash = (text) => {
    let h = 2166136261;
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
    return (h >>> 0).toString(36);
  };
  const controls = () => {
    const parts = [];
    for (const el of document.querySelectorAll("input,textarea,select")) {
      parts.push(el.value, el.checked ? "1" : "0",
                 el.selectedIndex === undefined ? "" : String(el.selectedIndex));
    }
    return hash(parts.join("\u0000"));
  };
  // A shadow root attached after its host was inserted is found only by a new walk,
  // here and when the document has loaded; what happened inside it before is unknown,
  // so finding one counts as a change.
  addEventListener("DOMContentLoaded", () => { if (watchShadows(document)) changed(null); });
  addEventListener("load", () => { if (watchShadows(document)) changed(null); });
  // Whether DOM mutations touch one of `scopes` (nodes); no scopes: any mutation does.
  // State events (records === null: focus, scroll, transitions) do not make the DOM
  // busy: a page whose animations never end still settles.
  const touches = (records, scopes) => {
    if (records === null) return false;
    if (!scopes.length) return true;
    for (const record of records) {
      for (const scope of scopes) {
        if (scope === record.target || scope.contains(record.target)
            || record.target.contains && record.target.contains(scope)) return true;
      }
    }
    return false;
  };
  globalThis.__trimtab = {
    revision() {
      if (watchShadows(document)) seq++;
      return [seq, controls(), scrollX, scrollY, innerWidth, innerHeight, location.href].join("|");
    },
    // Resolves true once `quietMs` pass without a change touching `scopes`, false when
    // `capMs` pass first.
    quiet(quietMs, capMs, scopes) {
      return new Promise((resolve) => {
        let timer = 0;
        const waiter = (records) => { if (touches(records, scopes)) arm(); };
        const finish = (settled) => {
          quietWaiters.delete(waiter); clearTimeout(timer); clearTimeout(limit);
          resolve(settled);
        };
        const arm = () => { clearTimeout(timer); timer = setTimeout(() => finish(true), quietMs); };
        const limit = setTimeout(() => finish(false), capMs);
        quietWaiters.add(waiter);
        arm();
      });
    },
    lastChange() { return performance.now() - lastChange; },
  };
}
