/*
 * crowd-bounding-box: draw, move, resize, relabel and delete boxes on an image.
 *
 * Answer: {boundingBoxes: [{height, label, left, top, width}], inputImageProperties:
 * {height, width}}, in the image's own pixels, plus initialValueModified when the
 * page gave an initial-value. Attributes: src, labels, header, name, initial-value.
 * Regions: short-instructions, full-instructions.
 *
 * Mouse: drag on the image to draw a box with the chosen label; drag a box to
 * move it, its corner handle to resize it; click a box to select it.
 * Keyboard: the annotator's keys (crowd-annotator.js), N draws a quarter-size
 * box in the middle, and Alt+arrows resize the selected box.
 */
(function () {
  "use strict";
  var crowd = window.hitforgeCrowd;
  var MIN_SIZE = 3;

  class CrowdBoundingBox extends crowd.ImageAnnotator {
    parseInitial(data) {
      return (Array.isArray(data) ? data : []).map(function (b) {
        return { label: String(b.label), left: Math.round(+b.left), top: Math.round(+b.top),
          width: Math.round(+b.width), height: Math.round(+b.height) };
      });
    }

    _clamp(box) {
      var size = this.size();
      box.width = Math.max(MIN_SIZE, Math.min(box.width, size.width));
      box.height = Math.max(MIN_SIZE, Math.min(box.height, size.height));
      box.left = Math.max(0, Math.min(box.left, size.width - box.width));
      box.top = Math.max(0, Math.min(box.top, size.height - box.height));
    }

    pointerDown(p, target) {
      var index = Number(target.dataset.index);
      if (target.classList.contains("handle")) {
        return { mode: "resize", index: index, start: p, box: Object.assign({}, this._shapes[index]) };
      }
      if (target.classList.contains("shape")) {
        this._selected = index;
        return { mode: "move", index: index, start: p, box: Object.assign({}, this._shapes[index]) };
      }
      this._shapes.push({ label: this._label, left: Math.round(p.x), top: Math.round(p.y), width: 0, height: 0 });
      this._selected = this._shapes.length - 1;
      return { mode: "draw", index: this._selected, start: p };
    }

    pointerMove(d, p) {
      var size = this.size();
      var box = this._shapes[d.index];
      if (d.mode === "draw") {
        box.left = Math.round(Math.min(p.x, d.start.x));
        box.top = Math.round(Math.min(p.y, d.start.y));
        box.width = Math.round(Math.abs(p.x - d.start.x));
        box.height = Math.round(Math.abs(p.y - d.start.y));
      } else if (d.mode === "move") {
        box.left = Math.round(d.box.left + p.x - d.start.x);
        box.top = Math.round(d.box.top + p.y - d.start.y);
        this._clamp(box);
      } else {
        box.width = Math.round(Math.min(Math.max(MIN_SIZE, d.box.width + p.x - d.start.x), size.width - box.left));
        box.height = Math.round(Math.min(Math.max(MIN_SIZE, d.box.height + p.y - d.start.y), size.height - box.top));
      }
    }

    pointerUp(d) {
      var box = this._shapes[d.index];
      // A click without a drag is not a box.
      if (d.mode === "draw" && (box.width < MIN_SIZE || box.height < MIN_SIZE)) {
        this._shapes.splice(d.index, 1);
        this._selected = -1;
      }
    }

    createInMiddle(label) {
      var size = this.size();
      var w = Math.round(size.width / 4);
      var h = Math.round(size.height / 4);
      return { label: label, left: Math.round((size.width - w) / 2), top: Math.round((size.height - h) / 2), width: w, height: h };
    }

    arrowKey(box, dx, dy, e) {
      if (e.altKey) {
        box.width += dx;
        box.height += dy;
      } else {
        box.left += dx;
        box.top += dy;
      }
      this._clamp(box);
      return true;
    }

    draw(svg, box, i, selected) {
      var colour = this.colour(box.label);
      svg.appendChild(this.svgElement("rect", { class: "shape" + (selected ? " selected" : ""), x: box.left, y: box.top,
        width: box.width, height: box.height, stroke: colour, fill: colour }, i));
      if (selected) {
        var r = this.handleSize() / 2;
        svg.appendChild(this.svgElement("rect", { class: "handle", x: box.left + box.width - r, y: box.top + box.height - r,
          width: 2 * r, height: 2 * r }, i));
      }
    }

    describe(b) { return b.label + ": left " + b.left + ", top " + b.top + ", " + b.width + " \u00d7 " + b.height; }
    answerOf(b) { return { height: b.height, label: b.label, left: b.left, top: b.top, width: b.width }; }
  }
  CrowdBoundingBox.answerKey = "boundingBoxes";
  CrowdBoundingBox.listName = "Boxes";
  CrowdBoundingBox.help = "Drag on the image to draw a box; drag a box to move it, its corner to resize it. " +
    "Keys: 1-9 label, N new box, [ ] select, arrows move, Alt+arrows resize, Delete remove, " +
    "Ctrl+Z undo, Ctrl+Shift+Z redo.";

  crowd.define("crowd-bounding-box", CrowdBoundingBox);
})();
