/*
 * Loaded last: every crowd element is defined now. Pages written for AWS's
 * elements wait for 'all-crowd-elements-ready' on the document (AWS's
 * crowd-entity-annotation example moves its extra questions into the
 * element's own form then), so it is fired once the page is parsed.
 */
(function () {
  "use strict";
  function ready() { document.dispatchEvent(new Event("all-crowd-elements-ready")); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", ready);
  else setTimeout(ready, 0);
})();
