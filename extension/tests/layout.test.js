// The extension's folders follow its runtimes: worker/ (the service worker), panel/
// (the side panel page), agent/ (the agent loop, run by the panel and by the worker's
// scheduled runs) and shared/ (pure modules for all). This checks who may import whom, and that the manifest's entry
// points exist.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Which folders each folder's modules may import from. */
const MAY_IMPORT = {
  worker: ["worker", "agent", "shared"],
  panel: ["panel", "agent", "shared"],
  agent: ["agent", "shared"],
  shared: ["shared"],
};

function modules(folder) {
  return readdirSync(join(ROOT, folder), { recursive: true })
    .filter((name) => String(name).endsWith(".js"))
    .map((name) => join(ROOT, folder, String(name)));
}

/** The specifiers a module imports (static and dynamic), comments left out. */
function importsOf(source) {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const found = [];
  for (const m of code.matchAll(/\bimport\s*(?:[^"'();]*?\sfrom\s*)?["']([^"']+)["']/g)) {
    found.push(m[1]);
  }
  for (const m of code.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) found.push(m[1]);
  return found;
}

test("importsOf finds static and dynamic imports, not those in comments", () => {
  const source = [
    'import { a } from "./a.js";',
    'import "./side.js";',
    "import {\n  b,\n  c,\n} from '../shared/b.js';",
    "/** @param {import(\"../panel/x.js\").X} x */",
    "// import { z } from \"./z.js\";",
    'const m = await import("./lazy.js");',
  ].join("\n");
  assert.deepEqual(importsOf(source), ["./a.js", "./side.js", "../shared/b.js", "./lazy.js"]);
});

test("each runtime's modules import only from the folders it may use", () => {
  const wrong = [];
  for (const [folder, allowed] of Object.entries(MAY_IMPORT)) {
    for (const file of modules(folder)) {
      for (const spec of importsOf(readFileSync(file, "utf8"))) {
        const target = resolve(dirname(file), spec);
        const top = relative(ROOT, target).split(sep)[0];
        if (!existsSync(target)) wrong.push(`${relative(ROOT, file)} imports missing ${spec}`);
        else if (!allowed.includes(top)) wrong.push(`${relative(ROOT, file)} imports ${spec}`);
      }
    }
  }
  assert.deepEqual(wrong, []);
});

test("no module lives outside the runtime folders, and the manifest's entry points exist", () => {
  const loose = readdirSync(ROOT).filter((name) => name.endsWith(".js"));
  assert.deepEqual(loose, []);
  const manifest = JSON.parse(readFileSync(join(ROOT, "manifest.json"), "utf8"));
  const worker = manifest.background.service_worker;
  const panel = manifest.side_panel.default_path;
  assert.ok(worker.startsWith("worker/") && existsSync(join(ROOT, worker)), worker);
  assert.ok(panel.startsWith("panel/") && existsSync(join(ROOT, panel)), panel);
  const html = readFileSync(join(ROOT, panel), "utf8");
  for (const m of html.matchAll(/(?:src|href)="([^"]+)"/g)) {
    assert.ok(existsSync(join(ROOT, dirname(panel), m[1])), `${panel} needs ${m[1]}`);
  }
});

/** What a module writes when it uses each permission (an unused one widens the install
 *  prompt for nothing, and a used one the manifest lacks fails at run time). */
const PERMISSION_USE = {
  debugger: /chrome\.debugger\./,
  nativeMessaging: /chrome\.runtime\.connectNative\(/,
  sidePanel: /chrome\.sidePanel\./,
  tabs: /chrome\.tabs\./,
  tabGroups: /chrome\.tabGroups\b/,
  favicon: /\/_favicon\//,
  storage: /chrome\.storage\./,
  downloads: /chrome\.downloads\b/,
  declarativeNetRequest: /chrome\.declarativeNetRequest\b/,
  webNavigation: /chrome\.webNavigation\./,
  alarms: /chrome\.alarms\b/,
  notifications: /chrome\.notifications\./,
};

test("every permission the manifest asks for is used by some module, and known here", () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, "manifest.json"), "utf8"));
  const code = Object.keys(MAY_IMPORT).flatMap(modules)
    .map((file) => readFileSync(file, "utf8")).join("\n");
  const unknown = manifest.permissions.filter((p) => !(p in PERMISSION_USE));
  const unused = manifest.permissions.filter((p) => p in PERMISSION_USE
    && !PERMISSION_USE[p].test(code));
  assert.deepEqual({ unknown, unused }, { unknown: [], unused: [] });
});
