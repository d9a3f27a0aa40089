/*
 * The pixel work behind the segmentation elements (crowd-segmentation.js): a
 * mask is a Uint16Array holding one number per image pixel (0 unpainted, n the
 * n-th label or instance), changed here pixel by pixel, never through the
 * canvas's antialiased drawing, so the answer's PNG holds exact label colours.
 */
(function () {
  "use strict";
  var crowd = window.hitforgeCrowd;
  // The label colours of AWS's own sample output (matplotlib's tab10, then tab20's lighter ones).
  var COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
    "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5"];

  /** The colour of the i-th label (or instance). */
  function colourFor(i) {
    if (i < COLOURS.length) return COLOURS[i];
    // Past the palette: spread the hues (golden angle) and step the lightness, so colours stay apart.
    var h = (i * 137.508) % 360;
    var s = 0.7;
    var l = 0.35 + 0.1 * (i % 4);
    var a = s * Math.min(l, 1 - l);
    var channel = function (n) {
      var k = (n + h / 30) % 12;
      return Math.round(255 * (l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))));
    };
    return "#" + [channel(0), channel(8), channel(4)].map(function (v) { return v.toString(16).padStart(2, "0"); }).join("");
  }

  function rgbOf(hex) {
    var n = parseInt(String(hex).replace("#", ""), 16);
    return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
  }

  /** Set a disc of ``radius`` (1 is one pixel) around (cx, cy) to ``ink``; the rectangle touched, or null. */
  function dab(mask, w, h, cx, cy, radius, ink) {
    var r = radius - 0.5;
    var x0 = Math.max(0, Math.ceil(cx - r));
    var x1 = Math.min(w - 1, Math.floor(cx + r));
    var y0 = Math.max(0, Math.ceil(cy - r));
    var y1 = Math.min(h - 1, Math.floor(cy + r));
    if (x1 < x0 || y1 < y0) return null;
    for (var y = y0; y <= y1; y++) {
      for (var x = x0; x <= x1; x++) {
        if ((x - cx) * (x - cx) + (y - cy) * (y - cy) <= r * r) mask[y * w + x] = ink;
      }
    }
    return [x0, y0, x1, y1];
  }

  /** Flood fill (4-connected) the area holding the seed's value with ``ink``; whether anything changed. */
  function fill(mask, w, sx, sy, ink) {
    var target = mask[sy * w + sx];
    if (target === ink) return false;
    var stack = [sy * w + sx];
    while (stack.length) {
      var i = stack.pop();
      if (mask[i] !== target) continue;
      mask[i] = ink;
      var x = i % w;
      if (x > 0) stack.push(i - 1);
      if (x < w - 1) stack.push(i + 1);
      if (i >= w) stack.push(i - w);
      if (i + w < mask.length) stack.push(i + w);
    }
    return true;
  }

  /** How many pixels hold each of the values 1..n (index 0 is value 1). */
  function counts(mask, n) {
    var found = new Array(n).fill(0);
    for (var i = 0; i < mask.length; i++) if (mask[i]) found[mask[i] - 1]++;
    return found;
  }

  crowd.labelMask = { colourFor: colourFor, rgbOf: rgbOf, dab: dab, fill: fill, counts: counts };
})();
