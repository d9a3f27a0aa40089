/*
 * The worker site's frame hand-off. A HIT frame that shows the "submitted" page
 * tells the work page around it, which then moves on to the HIT list (a sandboxed
 * HTMLQuestion frame cannot navigate the page itself, and has no cookies to show
 * the list inside the frame).
 */
(function () {
  "use strict";
  var frame = document.getElementById("hit-frame");
  if (frame && frame.dataset.next) {
    window.addEventListener("message", function (event) {
      if (event.source === frame.contentWindow && event.data === "hitforge:submitted") {
        window.location.assign(frame.dataset.next);
      }
    });
  }
  if (window.parent !== window && document.getElementById("submitted")) {
    window.parent.postMessage("hitforge:submitted", "*");
  }
})();
