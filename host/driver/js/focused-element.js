// needs: focus
// The element that has the keyboard focus, through shadow roots and same-origin
// frames; an <iframe> when the focus is in a frame this world cannot enter, and the
// document's body (or root) when nothing has it.
deepActiveElement(document, true) || document.body || document.documentElement
