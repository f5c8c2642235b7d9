// The person's site lists as the side panel edits them (shared/sites.js).
import { test } from "node:test";
import assert from "node:assert/strict";

import {
  SITES_UNKNOWN, alwaysCodesOf, listsOf, siteFromInput, sitesError, withNever, withoutSite,
} from "../shared/sites.js";

test("listsOf reads the host's lists, leniently and without duplicates", () => {
  assert.deepEqual(listsOf({ always: ["https://a.example", "https://a.example", 3, ""],
    never: [{ site: "https://b.example" }, null] }),
  { always: ["https://a.example"], never: ["https://b.example"] });
  assert.deepEqual(listsOf(undefined), { always: [], never: [] });
  assert.deepEqual(listsOf({ always: "https://a.example" }), { always: [], never: [] });
});

test("siteFromInput names a typed site by its scheme and host, and refuses what is not one", () => {
  assert.deepEqual(siteFromInput(" example.org "), { site: "https://example.org" });
  assert.deepEqual(siteFromInput("https://www.example.org/a/b?c#d"),
    { site: "https://www.example.org" });
  assert.deepEqual(siteFromInput("http://10.0.0.1:8080/x"), { site: "http://10.0.0.1:8080" });
  assert.deepEqual(siteFromInput("localhost:3000"), { site: "https://localhost:3000" });
  // A look-alike is named in punycode, as the host names it.
  assert.deepEqual(siteFromInput("exаmple.com"), { site: "https://xn--exmple-4nf.com" });
  for (const bad of ["", "   ", "javascript:alert(1)", "file:///etc/passwd", "data:text/html,x",
    "exa mple.org", "https://"]) {
    assert.ok("error" in siteFromInput(bad), bad);
  }
});

test("removing a site and adding one to never keep the lists apart", () => {
  const lists = { always: ["https://a.example", "https://b.example"], never: ["https://c.example"] };
  assert.deepEqual(withoutSite(lists, "always", "https://a.example"),
    { always: ["https://b.example"], never: ["https://c.example"] });
  assert.deepEqual(withoutSite(lists, "never", "https://c.example"),
    { always: ["https://a.example", "https://b.example"], never: [] });
  // A site added to never leaves always; adding it twice keeps one entry.
  assert.deepEqual(withNever(lists, "https://b.example"),
    { always: ["https://a.example"], never: ["https://c.example", "https://b.example"] });
  assert.deepEqual(withNever(lists, "https://c.example"), lists);
});

test("a host that does not know the request gets a message that says what to do", () => {
  assert.equal(sitesError({ code: "unknown_type", message: "unknown request type 'sites'" }),
    SITES_UNKNOWN);
  assert.match(SITES_UNKNOWN, /update/);
  assert.equal(sitesError({ code: "bad_request", message: "sites_set: 'x' names no site" }),
    "The host did not take that: sites_set: 'x' names no site");
  assert.equal(sitesError({ code: "internal", message: "boom" }),
    "Trimtab could not reach the site lists: boom");
});

test("alwaysCodesOf reads the codes evaluate runs unasked, each with its site and digest", () => {
  const entry = { site: "https://a.example", sha256: "ab".repeat(32), code: "1 + 1" };
  assert.deepEqual(alwaysCodesOf({ always: [entry, { ...entry, extra: 1 },
    { ...entry, sha256: "AB".repeat(32) }, { ...entry, code: 5 }, { ...entry, site: "" }, null] }),
  [entry, entry]);
  assert.deepEqual(alwaysCodesOf({ always: [] }), []);
  // A host without the list (or an earlier one's list of whole sites): nothing to show.
  assert.equal(alwaysCodesOf({ sites: ["https://a.example"] }), null);
  assert.equal(alwaysCodesOf(undefined), null);
});
