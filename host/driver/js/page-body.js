// The document's body: where a quote with no region is looked for.
document.body
