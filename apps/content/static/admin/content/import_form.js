// An import page's submit button reads "Validate" while "Validate only" is ticked, and "Import" otherwise.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const checkbox = document.getElementById("id_dry_run");
  const button = checkbox && checkbox.form && checkbox.form.querySelector("input[data-validate-label]");
  if (!button) {
    return;
  }
  const showLabel = () => {
    button.value = checkbox.checked ? button.dataset.validateLabel : button.dataset.importLabel;
  };
  checkbox.addEventListener("change", showLabel);
  // Browsers restore a ticked box on back/forward navigation without a change event.
  window.addEventListener("pageshow", showLabel);
  showLabel();
});
