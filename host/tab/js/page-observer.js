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
  // Names this document in the token: two documents never share one, whatever they hold.
  // (`crypto.randomUUID` exists only in secure contexts; a plain http page has none.)
  const documentKey = crypto.getRandomValues(new Uint32Array(2)).join(".");
  const quietWaiters = new Set();
  const send = (kind) => { try { report(kind); } catch (e) {} };
  const tick = () => {
    if (seq !== reported) { reported = seq; send("open"); setTimeout(tick, windowMs); }
    else { open = false; send("close"); }
  };
  // Recent changes per element: how many since the run of changes it is in began (a gap
  // of RUN_GAP_MS ends a run). An element in a long run (a ticker, a clock) is churn:
  // waits note it and do not wait for it.
  const RUN_GAP_MS = 1500, CHURN_RUN = 3;
  const runs = new Map();
  let pruned = performance.now();
  const owner = (node) => node.nodeType === 1 ? node : node.parentElement || node.parentNode;
  const note = (records, now) => {
    for (const record of records) {
      const el = owner(record.target);
      if (!el) continue;
      const run = runs.get(el);
      if (run && now - run.last < RUN_GAP_MS) { run.count++; run.last = now; }
      else runs.set(el, {first: now, last: now, count: 1});
    }
    if (now - pruned > RUN_GAP_MS) {
      pruned = now;
      for (const [el, run] of runs) if (now - run.last >= RUN_GAP_MS) runs.delete(el);
    }
  };
  // Dialogs opened lately, with when: a wait that begins after an action's dialog
  // opened (a slow host, a loaded machine) still counts that dialog's changes.
  const DIALOGS_KEPT_MS = 10000;
  let recentDialogs = [];
  const changed = (records) => {
    seq++;
    lastChange = performance.now();
    if (records) {
      note(records, lastChange);
      for (const record of records) {
        for (const el of opened(record)) recentDialogs.push({el, at: lastChange});
      }
      recentDialogs = recentDialogs.filter((d) => lastChange - d.at < DIALOGS_KEPT_MS);
    }
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
  // Navigations to another document that this one began (a form submitted, a link
  // followed, `location` set). The browser reports one only once it has started it,
  // a task after the action's input and possibly after a whole quiet wait: `quiet`
  // tells `settle` of each one, once, so that it waits for that report.
  let leftAt = -Infinity, leaving = 0, leavingTold = 0;
  const leavingWaiters = new Set();
  if (globalThis.navigation) {
    navigation.addEventListener("navigate", (event) => {
      if (event.destination.sameDocument || event.downloadRequest !== null) return;
      leaving++; leftAt = performance.now();
      // A navigation the page cancelled or that another replaced never leaves.
      const mine = leaving;
      event.signal.addEventListener("abort", () => {
        if (mine === leaving && leavingTold < leaving) { leaving--; leftAt = -Infinity; }
      });
      for (const waiter of leavingWaiters) waiter();
    });
  }
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
  // Where an action may have had its effect: the element, its form, its landmark.
  const LANDMARKS = "main,nav,header,footer,aside,form,dialog,[role=main],[role=navigation]," +
    "[role=banner],[role=contentinfo],[role=complementary],[role=region],[role=search]," +
    "[role=dialog],[role=alertdialog]";
  const DIALOGS = "dialog,[role=dialog],[role=alertdialog],[aria-modal=true]";
  const widen = (nodes) => {
    const out = new Set();
    for (const node of nodes) {
      if (!node || !node.isConnected) continue;
      out.add(node);
      const el = owner(node);
      if (!el || !el.closest) continue;
      if (el.form) out.add(el.form);
      const form = el.closest("form");
      if (form) out.add(form);
      const landmark = el.parentElement && el.parentElement.closest(LANDMARKS);
      if (landmark && landmark !== document.body) out.add(landmark);
    }
    return out;
  };
  const inside = (node, scopes) => {
    for (const scope of scopes) {
      if (scope === node || scope.contains(node) || node.contains && node.contains(scope)) {
        return true;
      }
    }
    return false;
  };
  // Dialogs a change opened (inserted, or shown by an attribute): the action's effect.
  const opened = (record) => {
    const found = [];
    if (record.type === "attributes") {
      const el = record.target;
      if (el.matches && el.matches(DIALOGS)) found.push(el);
      return found;
    }
    for (const node of record.addedNodes) {
      if (node.nodeType !== 1) continue;
      if (node.matches(DIALOGS)) found.push(node);
      found.push(...node.querySelectorAll(DIALOGS));
    }
    return found;
  };
  const describe = (el) => {
    let text = "<" + el.localName;
    if (el.id) text += ' id="' + el.id.slice(0, 40) + '"';
    else if (el.classList && el.classList.length) {
      text += ' class="' + [...el.classList].slice(0, 3).join(" ").slice(0, 60) + '"';
    }
    return text + ">";
  };
  globalThis.__trimtab = {
    revision() {
      if (watchShadows(document)) seq++;
      const state = [seq, controls(), scrollX, scrollY, innerWidth, innerHeight, location.href];
      return [documentKey, ...state].join("|");
    },
    // Resolves {settled, churn, leaving} once `quietMs` pass without a change that counts, or at
    // `capMs` with settled false. With `scopes` (nodes the action touched) only changes
    // in them, their forms and landmarks, or in dialogs opened meanwhile count; without,
    // any change does. A change to an element in a run of changes that began before the
    // action (`sinceMs` ago) or that changed CHURN_RUN times during the wait is churn:
    // named in `churn`, never waited for. State events (focus, scroll, transitions)
    // never count: a page whose animations never end still settles. `leaving`: the
    // wait ended because this document began a navigation to another one.
    quiet(quietMs, capMs, scopes, sinceMs) {
      const start = performance.now();
      const began = start - (sinceMs || 0);
      let within = scopes && scopes.length ? widen(scopes) : null;
      // Dialogs opened since the action began, before this wait did, are its effect too.
      if (within) {
        for (const {el, at} of recentDialogs) if (at >= began && el.isConnected) within.add(el);
      }
      // The action removed what it touched: its effect may be anywhere.
      if (within && !within.size) within = null;
      const during = new Map();
      const churn = new Map();
      return new Promise((resolve) => {
        let timer = 0;
        // A navigation begun since the action began ends the wait at once: the page is
        // leaving, and `settle` waits for the browser to report the navigation.
        const left = () => {
          if (leaving === leavingTold || leftAt < began) return false;
          leavingTold = leaving;
          finish(false, true);
          return true;
        };
        const waiter = (records) => {
          if (records === null) return;
          let counts = false;
          const now = performance.now();
          for (const record of records) {
            if (within) for (const dialog of opened(record)) within.add(dialog);
            const el = owner(record.target);
            if (!el) continue;
            const times = (during.get(el) || 0) + 1;
            during.set(el, times);
            const run = runs.get(el);
            if (times > CHURN_RUN || (run && run.first < began && run.count > CHURN_RUN)) {
              churn.set(el, (churn.get(el) || 0) + 1);
              continue;
            }
            if (!within || inside(record.target, within)) counts = true;
          }
          if (counts && now - start < capMs) arm();
        };
        const finish = (settled, leavingNow = false) => {
          quietWaiters.delete(waiter); leavingWaiters.delete(left);
          clearTimeout(timer); clearTimeout(limit);
          const named = [...churn].sort((a, b) => b[1] - a[1]).slice(0, 3)
            .map(([el, n]) => describe(el) + " " + n + "x");
          resolve({settled, churn: named, leaving: leavingNow});
        };
        const arm = (wait = quietMs) => {
          clearTimeout(timer); timer = setTimeout(() => finish(true), wait);
        };
        const limit = setTimeout(() => finish(false), capMs);
        if (left()) return;
        quietWaiters.add(waiter);
        leavingWaiters.add(left);
        // The quiet since the action began (and since the last change) already counts.
        arm(Math.max(0, quietMs - Math.min(start - lastChange, sinceMs || 0)));
      });
    },
    lastChange() { return performance.now() - lastChange; },
  };
}
