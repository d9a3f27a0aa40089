/*
 * The worker site's frame hand-off, and "accept the next HIT of this group".
 *
 * A HIT frame that shows the "submitted" page tells the work page around it, which
 * then moves on to the HIT list, or to the next HIT of the group when the worker
 * ticked "accept the next HIT" (a sandboxed HTMLQuestion frame cannot navigate the
 * page itself, and has no cookies to show the list inside the frame).
 *
 * A HIT page that posts to the whole window instead (a campaign's page, MTurk's
 * target="_top" hand-off) replaces the work page before it can act: so the box's
 * state is also kept in this tab's sessionStorage, per HIT group, and the submitted
 * page, shown at the top, accepts the next HIT itself when the box was ticked.
 */
(function () {
  "use strict";
  var KEY = "hitforge:accept-next:";
  function remember(box) {
    var group = box.form && box.form.dataset.hitTypeId;
    if (!group) {
      return;
    }
    try {
      if (box.checked) {
        window.sessionStorage.setItem(KEY + group, "1");
      } else {
        window.sessionStorage.removeItem(KEY + group);
      }
    } catch (e) {
      // Storage refused (private mode): the in-frame hand-off still works.
    }
  }
  var box = document.getElementById("accept-next-box");
  if (box) {
    remember(box);
    box.addEventListener("change", function () { remember(box); });
  }
  var frame = document.getElementById("hit-frame");
  if (frame && frame.dataset.next) {
    window.addEventListener("message", function (event) {
      if (event.source === frame.contentWindow && event.data === "hitforge:submitted") {
        // "Accept the next HIT of this group": the page posts its own form (it has the
        // session cookie and the CSRF token that the sandboxed frame lacks).
        if (box && box.checked) {
          box.form.submit();
        } else {
          window.location.assign(frame.dataset.next);
        }
      }
    });
  }
  var submitted = document.getElementById("submitted");
  if (window.parent !== window && submitted) {
    window.parent.postMessage("hitforge:submitted", "*");
  } else if (submitted) {
    var next = document.getElementById("accept-next");
    var wanted = false;
    try {
      wanted = !!(next && window.sessionStorage.getItem(KEY + next.dataset.hitTypeId));
    } catch (e) {
      wanted = false;
    }
    if (wanted) {
      // Once: a reload of this page must not accept yet another HIT (the next HIT's work page
      // stores the box's state again).
      try {
        window.sessionStorage.removeItem(KEY + next.dataset.hitTypeId);
      } catch (e) {
        // nothing stored to remove
      }
      next.submit();
    }
  }
})();
