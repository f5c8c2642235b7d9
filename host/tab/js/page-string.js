// A string the page computes, `html` (the document's markup) or `text` (the body's
// visible text): itself when it has at most `limit` characters, else a String object
// that the host reads a slice at a time (no global of the page is touched).
(which, limit) => {
  const root = document.documentElement;
  const s = String(which === 'html'
    ? (root ? root.outerHTML : '')
    : (document.body ? document.body.innerText : ''));
  return s.length <= limit ? s : new String(s);
}
