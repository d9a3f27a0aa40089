/*
 * hitforge's local, offline crowd HTML elements.
 *
 * HIT pages reference https://assets.crowd.aws/crowd-html-elements.js (or its
 * -without-ce-polyfill variant); the worker site serves this file instead. It
 * loads the element files beside it in order: while the page is still being
 * parsed they are written into the page so they run before the page's next
 * script, as the single AWS file did.
 */
(function () {
  "use strict";
  var FILES = ["crowd-form.js", "crowd-base.js", "crowd-inputs.js", "crowd-classifier.js", "crowd-display.js",
    "crowd-annotator.js", "crowd-bounding-box.js", "crowd-keypoint.js",
    "crowd-vertices.js", "crowd-image-classifier.js", "crowd-label-mask.js", "crowd-segmentation.js",
    "crowd-entity-annotation.js", "crowd-ready.js"];
  var me = document.currentScript;
  var base = new URL(".", me ? me.src : window.location.href).href;
  // document.write is ignored from async (and script-inserted) scripts: those append instead.
  if (document.readyState === "loading" && me && !me.async && !me.defer) {
    FILES.forEach(function (file) {
      document.write('<script src="' + base + file + '"><\/script>');
    });
  } else {
    FILES.forEach(function (file) {
      var script = document.createElement("script");
      script.src = base + file;
      script.async = false;
      document.head.appendChild(script);
    });
  }
})();
