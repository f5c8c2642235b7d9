// What a file input accepts: several files or one, which types, whether it is disabled.
function() {
  return {multiple: this.multiple, accept: this.accept || '', disabled: this.disabled,
          files: Array.from(this.files || []).map((f) => f.name)};
}
