// Contrast of the side panel's text, from its CSS custom properties: every text colour
// pair reaches 4.5:1 (WCAG AA) in the light and the dark scheme, and no rule outside
// the two palettes uses a colour of its own.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const CSS = readFileSync(join(dirname(fileURLToPath(import.meta.url)), "..", "panel",
  "sidepanel.css"), "utf8").replace(/\/\*[\s\S]*?\*\//g, "");

/** Text colour on background, where the panel draws one on the other. */
const PAIRS = [
  ["fg", "bg"], ["fg", "panel"], ["fg", "hl"],
  ["muted", "bg"], ["muted", "panel"],
  ["accent", "bg"], ["accent", "panel"],
  ["error", "bg"], ["error", "panel"],
  ["ok", "bg"],
  ["tag", "bg"], ["attr", "bg"], ["value", "bg"],
  ["on-accent", "accent"], ["acting-fg", "acting-bg"], ["on-risky", "risky"],
];

/** The custom properties of the first `:root { … }` in `css`. */
function properties(css) {
  const body = /:root\s*\{([^}]*)\}/.exec(css)?.[1] ?? "";
  return Object.fromEntries([...body.matchAll(/--([\w-]+)\s*:\s*([^;]+);/g)]
    .map(([, name, value]) => [name, value.trim()]));
}

const dark = /@media\s*\(prefers-color-scheme:\s*dark\)\s*\{([\s\S]*?\})\s*\}/.exec(CSS);
const light = properties(CSS.replace(dark?.[0] ?? "", ""));
const SCHEMES = { light, dark: { ...light, ...properties(dark?.[1] ?? "") } };

function luminance(hex) {
  const h = hex.replace("#", "");
  const full = h.length === 3 ? [...h].map((c) => c + c).join("") : h;
  const [r, g, b] = [0, 2, 4].map((i) => parseInt(full.slice(i, i + 2), 16) / 255)
    .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

export function contrast(a, b) {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

test("the contrast formula gives WCAG's figures", () => {
  assert.equal(contrast("#000000", "#ffffff").toFixed(1), "21.0");
  assert.equal(contrast("#777777", "#ffffff").toFixed(2), "4.48");
});

test("the dark scheme sets its own palette", () => {
  assert.ok(dark, "no prefers-color-scheme: dark block");
  for (const name of ["fg", "bg", "error", "accent", "tag", "attr", "value"]) {
    assert.notEqual(SCHEMES.dark[name], SCHEMES.light[name], name);
  }
});

for (const [scheme, colours] of Object.entries(SCHEMES)) {
  test(`every text colour pair reaches 4.5:1 in the ${scheme} scheme`, () => {
    const low = PAIRS.map(([fg, bg]) => [fg, bg, contrast(colours[fg], colours[bg])])
      .filter(([, , ratio]) => ratio < 4.5)
      .map(([fg, bg, ratio]) => `--${fg} on --${bg}: ${ratio.toFixed(2)}`);
    assert.deepEqual(low, []);
  });
}

test("rules use the palette only, and every text colour is in a checked pair", () => {
  const rules = CSS.replace(/:root\s*\{[^}]*\}/g, "");
  const literal = [...rules.matchAll(/(?:^|[;{\s])((?:background|color|border[\w-]*|outline)\s*:[^;}]*)/g)]
    .map((m) => m[1])
    .filter((decl) => /#[0-9a-f]{3,8}\b|\b(?:white|black|rgb|hsl)\b/i.test(decl));
  assert.deepEqual(literal, []);
  const texts = new Set([...rules.matchAll(/(?:^|[;{\s])color\s*:\s*var\(--([\w-]+)\)/g)]
    .map((m) => m[1]));
  const checked = new Set(PAIRS.map(([fg]) => fg));
  assert.deepEqual([...texts].filter((name) => !checked.has(name)), []);
});

test("every control gets a visible focus ring", () => {
  const ring = /:is\(([^)]*)\):focus-visible\s*\{([^}]*)\}/.exec(CSS);
  assert.ok(ring, "no :focus-visible rule");
  for (const control of ["button", "a", "input", "select", "textarea", "summary", "[tabindex]"]) {
    assert.ok(ring[1].split(",").map((s) => s.trim()).includes(control), control);
  }
  assert.match(ring[2], /outline:\s*3px solid var\(--focus\)/);
  for (const [scheme, colours] of Object.entries(SCHEMES)) {
    // A ring is a graphic: 3:1 against the page (WCAG 1.4.11).
    assert.ok(contrast(colours.focus, colours.bg) >= 3, scheme);
    assert.ok(contrast(colours.focus, colours.panel) >= 3, scheme);
  }
});
