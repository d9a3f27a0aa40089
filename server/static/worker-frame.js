/*
 * The worker site's frame hand-off. A HIT frame that shows the "submitted" page
 * tells the work page around it, which then moves on to the HIT list, or to the next
 * HIT of the group when the worker ticked "accept the next HIT" (a sandboxed
 * HTMLQuestion frame cannot navigate the page itself, and has no cookies to show
 * the list inside the frame).
 */
(function () {
  "use strict";
  var frame = document.getElementById("hit-frame");
  if (frame && frame.dataset.next) {
    window.addEventListener("message", function (event) {
      if (event.source === frame.contentWindow && event.data === "hitforge:submitted") {
        // "Accept the next HIT of this group": the page posts its own form (it has the
        // session cookie and the CSRF token that the sandboxed frame lacks).
        var box = document.getElementById("accept-next-box");
        if (box && box.checked) {
          box.form.submit();
        } else {
          window.location.assign(frame.dataset.next);
        }
      }
    });
  }
  if (window.parent !== window && document.getElementById("submitted")) {
    window.parent.postMessage("hitforge:submitted", "*");
  }
})();
