// needs: forms, secrets
// What acting on this element may commit, read in Trimtab's isolated world (the
// page's scripts cannot patch what it sees): whether a click or a key on it submits
// its form, whether it is a control whose change a form's script may act on, and
// whether Trimtab cannot see what it is at all (focus inside another frame).
function() {
  const el = this;
  if (!el || el.nodeType !== 1) {
    return {tag: '', unknown: false, submitButton: false, inForm: false,
      implicitSubmit: false, changeScript: false, toggles: false, select: false,
      editable: false, activates: false, scriptHref: false, downloads: false};
  }
  const tag = el.localName;
  const buttonTypes = ['submit', 'image', 'button', 'reset'];
  // A click on a label (or inside one) clicks its control too.
  const label = el.closest('label');
  const control = label && label.control && label.control !== el ? label.control : null;
  const form = el.form || el.closest('form') || (control && control.form) || null;
  const inline = (e) => !!e && (e.hasAttribute('onchange') || e.hasAttribute('oninput'));
  const isToggle = (e) => !!e && e.localName === 'input'
    && (e.type === 'checkbox' || e.type === 'radio');
  const role = el.getAttribute('role') || '';
  const href = tag === 'a' || tag === 'area' ? (el.getAttribute('href') || '') : '';
  const submitter = isSubmitButton(el) ? el : isSubmitButton(control) ? control : null;
  return {
    tag,
    // Focus in a frame Trimtab's world cannot enter (another origin, a plugin).
    unknown: ['iframe', 'frame', 'object', 'embed'].includes(tag),
    submitButton: isSubmitButton(el) || isSubmitButton(control),
    inForm: !!form,
    // Enter in any field of a form (other than a button) submits it implicitly.
    implicitSubmit: !!el.form && tag === 'input' && !buttonTypes.includes(el.type),
    changeScript: inline(el) || inline(control) || inline(form),
    toggles: isToggle(el) || isToggle(control)
      || TOGGLE_ROLES.includes(role),
    select: tag === 'select',
    editable: tag === 'textarea' || el.isContentEditable === true
      || (tag === 'input' && !buttonTypes.includes(el.type)),
    // Enter and Space act like a click on these.
    activates: tag === 'button' || tag === 'summary' || !!href || role === 'button'
      || role === 'link' || (tag === 'input' && buttonTypes.includes(el.type)),
    scriptHref: /^\s*javascript:/i.test(href),
    // A click on a link with a download attribute (or on an icon inside one) saves
    // a file on the person's computer.
    downloads: !!el.closest('a[download][href], area[download][href]'),
    // Whether it holds a secret is decided in Python from these (`secret_kind`).
    hints: fieldHints(el),
    // Where its form would go, as the browser would send it.
    form: form ? submission(form, submitter || (enterSubmits(el) ? defaultButton(form) : null))
      : null,
  };

  // The form's action and method, its submitter's formaction and formmethod first,
  // read through the prototype's own getters: a field named "action" or "method"
  // shadows the form's properties of those names.
  function submission(f, button) {
    const own = (name) => Object.getOwnPropertyDescriptor(HTMLFormElement.prototype, name)
      .get.call(f);
    return {
      action: button && button.hasAttribute('formaction') ? button.formAction : own('action'),
      method: button && button.hasAttribute('formmethod') ? button.formMethod : own('method'),
    };
  }

  // Enter in a field submits as a click on the form's first submit button would.
  function defaultButton(f) {
    const elements = Object.getOwnPropertyDescriptor(HTMLFormElement.prototype, 'elements')
      .get.call(f);
    return [...elements].find(isSubmitButton) || null;
  }
}
