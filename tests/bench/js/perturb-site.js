// The site "changed" since a routine was recorded (the routines bench's perturbed
// pages): a cookie banner above everything, and every id nothing in the page refers to
// renamed. What a person reads and where they click stay as they were.
(() => {
  const referenced = new Set();
  for (const el of document.querySelectorAll("[for], [href^='#'], [aria-labelledby], [aria-describedby], [aria-controls], [list], [form]")) {
    for (const name of ["for", "aria-labelledby", "aria-describedby", "aria-controls", "list", "form"]) {
      for (const id of (el.getAttribute(name) || "").split(/\s+/)) if (id) referenced.add(id);
    }
    const href = el.getAttribute("href") || "";
    if (href.startsWith("#")) referenced.add(decodeURIComponent(href.slice(1)));
  }
  // The site's own scripts and styles change with its ids in a redesign: an id named
  // anywhere else in the page (a script, a style) is theirs and stays.
  const source = document.documentElement.outerHTML;
  const named = (id) => source.split(id).length - 1;
  for (const el of document.querySelectorAll("[id]")) {
    if (!referenced.has(el.id) && named(el.id) === 1) el.id = `${el.id}-v2`;
  }
  const banner = document.createElement("section");
  banner.setAttribute("aria-label", "Cookies");
  banner.textContent = "We use cookies to improve this site. ";
  const accept = document.createElement("button");
  accept.type = "button";
  accept.textContent = "Accept cookies";
  accept.addEventListener("click", () => banner.remove());
  banner.appendChild(accept);
  document.body.prepend(banner);
})();
