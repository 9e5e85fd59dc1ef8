// Small progressive enhancements; every page works without this file.
(function () {
  "use strict";
  // Print buttons are hidden until JavaScript can make them work.
  document.querySelectorAll(".print-button").forEach(function (b) {
    b.hidden = false;
    b.addEventListener("click", function () { window.print(); });
  });
  // A short chime when a checkin has just found a hold, where the browser allows
  // sound (autoplay rules may block it; the page says "Hold found" regardless).
  var found = document.querySelector(".hold-found[data-chime]");
  if (found && window.Audio) {
    var chime = new Audio(found.getAttribute("data-chime"));
    var p = chime.play();
    if (p && p.catch) { p.catch(function () {}); }
  }
})();
