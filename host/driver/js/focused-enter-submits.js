// needs: focus, forms
// Whether Enter now submits a form: the focus (through shadow roots and same-origin
// frames) is on a text field that belongs to a form.
enterSubmits(deepActiveElement(document, true))
