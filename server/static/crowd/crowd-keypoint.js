/*
 * crowd-keypoint: place, move, relabel and delete labelled points on an image.
 *
 * Answer: {keypoints: [{label, x, y}], inputImageProperties: {height, width}}, in
 * the image's own pixels with the origin at its top left, plus
 * initialValueModified when the page gave an initial-value. Attributes: src,
 * labels, header, name, initial-value. Regions: short-instructions, full-instructions.
 *
 * Mouse: click the image to place a point with the chosen label, drag a point to
 * move it. Keyboard: the annotator's keys (crowd-annotator.js); N places a point
 * in the middle.
 */
(function () {
  "use strict";
  var crowd = window.hitforgeCrowd;

  class CrowdKeypoint extends crowd.ImageAnnotator {
    parseInitial(data) {
      var labels = this._labels;
      return (Array.isArray(data) ? data : []).map(function (k) {
        return { label: String(k.label), x: Math.round(+k.x), y: Math.round(+k.y) };
      }).filter(function (k) {
        return labels.indexOf(k.label) !== -1;  // AWS does not show a point whose label is not offered
      });
    }

    _clamp(point) {
      var size = this.size();
      point.x = Math.max(0, Math.min(point.x, size.width));
      point.y = Math.max(0, Math.min(point.y, size.height));
    }

    pointerDown(p, target) {
      if (target.classList.contains("shape")) {
        this._selected = Number(target.dataset.index);
        return { index: this._selected };
      }
      this._shapes.push({ label: this._label, x: Math.round(p.x), y: Math.round(p.y) });
      this._selected = this._shapes.length - 1;
      return { index: this._selected };
    }

    pointerMove(d, p) {
      var point = this._shapes[d.index];
      point.x = Math.round(p.x);
      point.y = Math.round(p.y);
    }

    pointerUp() {}

    createInMiddle(label) {
      var size = this.size();
      return { label: label, x: Math.round(size.width / 2), y: Math.round(size.height / 2) };
    }

    arrowKey(point, dx, dy) {
      point.x += dx;
      point.y += dy;
      this._clamp(point);
      return true;
    }

    draw(svg, point, i, selected) {
      var colour = this.colour(point.label);
      var r = this.handleSize() * (selected ? 0.7 : 0.5);
      svg.appendChild(this.svgElement("circle", { class: "shape" + (selected ? " selected" : ""), cx: point.x, cy: point.y,
        r: r, stroke: colour, fill: colour, "fill-opacity": 0.8 }, i));
    }

    describe(k) { return k.label + ": x " + k.x + ", y " + k.y; }
    answerOf(k) { return { label: k.label, x: k.x, y: k.y }; }
  }
  CrowdKeypoint.answerKey = "keypoints";
  CrowdKeypoint.listName = "Points";
  CrowdKeypoint.help = "Click the image to place a point; drag a point to move it. " +
    "Keys: 1-9 label, N new point, [ ] select, arrows move, Delete remove, Ctrl+Z undo, Ctrl+Shift+Z redo.";

  crowd.define("crowd-keypoint", CrowdKeypoint);
})();
