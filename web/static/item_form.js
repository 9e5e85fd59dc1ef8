// The form that adds a copy to a record. A barcode scanner types the label and
// Enter: in the Barcode field, Enter moves on to the field named by the field's
// data-enter-next instead of submitting the form. (Without this script, Enter
// presses the form's first button, "Check barcode", which saves nothing either.)
(function () {
  "use strict";
  var field = document.querySelector("input[data-enter-next]");
  if (!field) { return; }
  field.addEventListener("keydown", function (ev) {
    if (ev.key !== "Enter" || ev.isComposing || ev.altKey || ev.ctrlKey || ev.metaKey || ev.shiftKey) { return; }
    ev.preventDefault();
    var next = document.getElementById(field.getAttribute("data-enter-next"));
    if (next) { next.focus(); }
  });
})();
