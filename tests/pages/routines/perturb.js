// The site "changed": what localStorage.perturb lists is applied when a page loads,
// so a routine recorded on the plain pages is replayed on the same URLs, changed.
(function () {
  const wanted = new Set((localStorage.getItem("perturb") || "").split(",").filter(Boolean));
  function apply() {
    if (wanted.has("rename")) {
      for (const el of document.querySelectorAll("[id], [class]")) {
        if (el.id && el.id !== "cart-count") el.id = el.id + "-v2";
        if (el.className) el.className = el.className.split(" ").map((c) => c + "-v2").join(" ");
      }
    }
    const rows = document.querySelector("#items tbody, #items-v2 tbody");
    if (rows && wanted.has("row")) {
      const row = rows.rows[0].cloneNode(true);
      row.cells[0].textContent = "Stove";
      row.cells[1].textContent = "30.00";
      row.querySelector("button").dataset.item = "Stove";
      rows.insertBefore(row, rows.rows[0]);
    }
    if (rows && wanted.has("reorder")) {
      for (const row of [...rows.rows].reverse()) rows.appendChild(row);
    }
    if (wanted.has("case")) {
      for (const b of document.querySelectorAll("button.add, button.add-v2")) b.textContent = "ADD TO CART";
    }
    if (wanted.has("wording")) {
      const place = document.querySelector("button[type=submit]");
      if (place) place.textContent = "Buy now";
    }
    if (wanted.has("banner")) {
      const banner = document.createElement("section");
      banner.setAttribute("aria-label", "Cookies");
      banner.innerHTML = "We use cookies. <button type=button>Accept cookies</button>";
      banner.querySelector("button").onclick = () => banner.remove();
      document.body.prepend(banner);
    }
    // The checkout's form sends the order elsewhere: another page, by POST, to another
    // site, or (late) to another page from a submit listener, after Trimtab looked.
    const order = document.querySelector("form");
    if (order && wanted.has("action")) order.setAttribute("action", "receipt.html");
    if (order && wanted.has("method")) order.setAttribute("method", "post");
    if (order && wanted.has("offsite")) {
      order.setAttribute("action", `http://pay.test:${location.port}/routines/done.html`);
    }
    if (order && wanted.has("late")) {
      order.addEventListener("submit", () => order.setAttribute("action", "receipt.html"));
    }
    if (wanted.has("menu")) {
      const link = document.querySelector("a.checkout, a.checkout-v2");
      if (link) {
        const menu = document.createElement("details");
        menu.innerHTML = "<summary>Menu</summary>";
        link.replaceWith(menu);
        menu.appendChild(link);
      }
    }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", apply);
  else apply();
})();
