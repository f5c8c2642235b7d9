// The page's password fields, in this document and its open shadow roots: each
// field's name and value, read in Trimtab's isolated world (the DOM's own accessors,
// which the page's scripts cannot patch), so a posted password is never shown.
(() => {
  const found = [];
  const visit = (root) => {
    for (const input of root.querySelectorAll("input")) {
      if (input.type === "password" && (input.value || input.name)) {
        found.push({ name: input.name || input.id || "", value: input.value });
      }
    }
    for (const element of root.querySelectorAll("*")) {
      if (element.shadowRoot) visit(element.shadowRoot);
    }
  };
  visit(document);
  return found.slice(0, 32);
})()
