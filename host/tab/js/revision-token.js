// The page observer's revision token (a new one after each change it saw), or null
// when no observer runs in this world yet.
globalThis.__trimtab ? globalThis.__trimtab.revision() : null
