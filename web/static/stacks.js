// Small progressive enhancements; every page works without this file.
(function () {
  "use strict";
  // Print buttons are hidden until JavaScript can make them work.
  document.querySelectorAll(".print-button").forEach(function (b) {
    b.hidden = false;
    b.addEventListener("click", function () { window.print(); });
  });
})();
