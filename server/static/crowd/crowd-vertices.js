/*
 * crowd-line, crowd-polyline and crowd-polygon: labelled shapes made of vertices.
 *
 * Answers, in the image's pixels: {lines | polylines | polygons: [{label, vertices:
 * [{x, y}, ...]}], inputImageProperties: {height, width}}, plus initialValueModified
 * when the page gave an initial-value. A line has two vertices, a polyline at least
 * two, a polygon at least three; an unfinished shape is left out of the answer.
 *
 * Mouse: click the image to start a shape and click again for each vertex; a line
 * ends at its second vertex, a polyline or polygon with a double click, Enter, or
 * (polygon) a click on its first vertex. Drag a vertex to move it, drag a shape's
 * outline to move the whole shape.
 * Keyboard: the annotator's keys (crowd-annotator.js), N adds a shape in the middle,
 * "," and "." select the previous/next vertex of the selected shape (arrows then move
 * that vertex only), + inserts a vertex after it, - removes it, Escape ends drawing.
 * Undo / redo (crowd-annotator.js) step through the vertices placed, also while a
 * shape is still being drawn.
 */
(function () {
  "use strict";
  var crowd = window.hitforgeCrowd;

  class VertexShapes extends crowd.ImageAnnotator {
    connectedCallback() {
      this._vertex = -1;
      this._drawing = -1;
      super.connectedCallback();
    }

    extraState() { return { drawing: this._drawing, vertex: this._vertex }; }
    restoreExtraState(state) {
      var drawing = state.drawing === undefined ? -1 : state.drawing;
      this._drawing = drawing < this._shapes.length ? drawing : -1;
      this._vertex = state.vertex === undefined ? -1 : state.vertex;
    }

    parseInitial(data) {
      return (Array.isArray(data) ? data : []).map(function (s) {
        return { label: String(s.label), vertices: (s.vertices || []).map(function (v) {
          return { x: Math.round(+v.x), y: Math.round(+v.y) };
        }) };
      });
    }

    finishedShapes() {
      var min = this.constructor.minVertices;
      return this._shapes.filter(function (s) { return s.vertices.length >= min; });
    }

    _finish() {
      var index = this._drawing;
      this._drawing = -1;
      if (index !== -1 && this._shapes[index].vertices.length < this.constructor.minVertices) {
        this._shapes.splice(index, 1);
        this._selected = -1;
      }
    }

    pointerDown(p, target) {
      var index = Number(target.dataset.index);
      var point = { x: Math.round(p.x), y: Math.round(p.y) };
      if (this._drawing !== -1) {
        var drawing = this._shapes[this._drawing];
        var first = drawing.vertices[0];
        var near = Math.abs(first.x - point.x) <= this.handleSize() && Math.abs(first.y - point.y) <= this.handleSize();
        var last = drawing.vertices[drawing.vertices.length - 1];
        var again = Math.abs(last.x - point.x) <= this.handleSize() && Math.abs(last.y - point.y) <= this.handleSize();
        // A click on the first vertex closes a polygon; a second click on the last one
        // (a double click) ends the shape.
        if ((this.constructor.closed && drawing.vertices.length >= 3 && near) ||
            (again && performance.now() - this._lastClick < 500)) {
          this._finish();
          return null;
        }
        this._lastClick = performance.now();
        drawing.vertices.push(point);
        this._vertex = drawing.vertices.length - 1;
        var at = this._drawing;
        if (drawing.vertices.length === this.constructor.maxVertices) this._finish();
        return { mode: "vertex", index: at, vertex: this._vertex };
      }
      if (target.classList.contains("handle")) {
        this._selected = index;
        this._vertex = Number(target.dataset.vertex);
        return { mode: "vertex", index: index, vertex: this._vertex };
      }
      if (target.classList.contains("shape")) {
        this._selected = index;
        this._vertex = -1;
        return { mode: "move", index: index, start: p, vertices: this._shapes[index].vertices.map((v) => Object.assign({}, v)) };
      }
      this._lastClick = performance.now();
      this._shapes.push({ label: this._label, vertices: [point] });
      this._selected = this._drawing = this._shapes.length - 1;
      this._vertex = 0;
      return { mode: "vertex", index: this._selected, vertex: 0 };
    }

    pointerMove(d, p) {
      if (!d) return;
      var shape = this._shapes[d.index];
      if (!shape) return;
      if (d.mode === "vertex") {
        shape.vertices[d.vertex] = { x: Math.round(p.x), y: Math.round(p.y) };
      } else {
        this._translate(shape, d.vertices, Math.round(p.x - d.start.x), Math.round(p.y - d.start.y));
      }
    }

    pointerUp() {}

    /* Move every vertex by (dx, dy), keeping the whole shape on the image. */
    _translate(shape, from, dx, dy) {
      var size = this.size();
      var xs = from.map(function (v) { return v.x; });
      var ys = from.map(function (v) { return v.y; });
      dx = Math.max(-Math.min.apply(null, xs), Math.min(dx, size.width - Math.max.apply(null, xs)));
      dy = Math.max(-Math.min.apply(null, ys), Math.min(dy, size.height - Math.max.apply(null, ys)));
      shape.vertices = from.map(function (v) { return { x: v.x + dx, y: v.y + dy }; });
    }

    createInMiddle(label) {
      var s = this.size();
      var q = function (fx, fy) { return { x: Math.round(s.width * fx), y: Math.round(s.height * fy) }; };
      this._finish();  // a shape being drawn ends (or goes, if it is too short) first
      this._vertex = -1;
      var shapes = {
        2: [q(1 / 3, 0.5), q(2 / 3, 0.5)],
        3: [q(0.375, 0.375), q(0.625, 0.375), q(0.625, 0.625), q(0.375, 0.625)],
      };
      return { label: label, vertices: this.constructor.closed ? shapes[3] : shapes[2].concat(this.constructor.maxVertices === 2 ? [] : [q(2 / 3, 0.375)]) };
    }

    arrowKey(shape, dx, dy) {
      if (this._vertex >= 0 && this._vertex < shape.vertices.length) {
        var v = shape.vertices[this._vertex];
        var size = this.size();
        v.x = Math.max(0, Math.min(v.x + dx, size.width));
        v.y = Math.max(0, Math.min(v.y + dy, size.height));
      } else {
        this._translate(shape, shape.vertices, dx, dy);
      }
      return true;
    }

    extraKey(e, shape) {
      var max = this.constructor.maxVertices;
      if (this._drawing !== -1 && (e.key === "Enter" || e.key === "Escape")) {
        this._finish();
      } else if (e.key === "Delete" || e.key === "Backspace") {
        if (this._drawing !== -1) this._finish();
        if (this._selected !== -1) this._shapes.splice(this._selected, 1);
        this._selected = this._vertex = -1;
      } else if (e.key === "[" || e.key === "]" || e.key === "Escape") {
        this._vertex = -1;  // then the common handling: another shape, or none
        return false;
      } else if (!shape) {
        return false;
      } else if (e.key === "," || e.key === ".") {
        var n = shape.vertices.length;
        this._vertex = e.key === "." ? (this._vertex + 1) % n : (this._vertex <= 0 ? n - 1 : this._vertex - 1);
      } else if (e.key === "+" && this._vertex >= 0 && (!max || shape.vertices.length < max)) {
        var a = shape.vertices[this._vertex];
        var b = shape.vertices[(this._vertex + 1) % shape.vertices.length];
        shape.vertices.splice(this._vertex + 1, 0, { x: Math.round((a.x + b.x) / 2), y: Math.round((a.y + b.y) / 2) });
        this._vertex += 1;
      } else if (e.key === "-" && this._vertex >= 0 && shape.vertices.length > this.constructor.minVertices) {
        shape.vertices.splice(this._vertex, 1);
        this._vertex = -1;
      } else {
        return false;
      }
      e.preventDefault();
      this._changed();
      return true;
    }

    draw(svg, shape, i, selected) {
      var colour = this.colour(shape.label);
      var points = shape.vertices.map(function (v) { return v.x + "," + v.y; }).join(" ");
      var closed = this.constructor.closed && i !== this._drawing;
      svg.appendChild(this.svgElement(closed ? "polygon" : "polyline", { class: "shape" + (selected ? " selected" : ""),
        points: points, stroke: colour, fill: closed ? colour : "none", "stroke-width": 3 }, i));
      if (!selected) return;
      var r = this.handleSize() / 2;
      shape.vertices.forEach((v, k) => {
        var handle = this.svgElement("rect", { class: "handle", x: v.x - r, y: v.y - r, width: 2 * r, height: 2 * r }, i);
        handle.dataset.vertex = k;
        if (k === this._vertex) handle.setAttribute("fill", colour);
        svg.appendChild(handle);
      });
    }

    describe(s) {
      return s.label + ": " + s.vertices.map(function (v) { return "(" + v.x + ", " + v.y + ")"; }).join(" ") +
        (this._shapes.indexOf(s) === this._drawing ? " (drawing)" : "");
    }
    answerOf(s) {
      return { label: s.label, vertices: s.vertices.map(function (v) { return { x: v.x, y: v.y }; }) };
    }
  }

  var KEYS = "Keys: 1-9 label, N new shape, [ ] select, , . vertex, arrows move, + add vertex, - remove vertex, " +
    "Delete remove, Ctrl+Z undo, Ctrl+Shift+Z redo.";

  class CrowdLine extends VertexShapes {}
  Object.assign(CrowdLine, { answerKey: "lines", listName: "Lines", minVertices: 2, maxVertices: 2, closed: false,
    help: "Click two points on the image to draw a line; drag a point to move it. " + KEYS });
  class CrowdPolyline extends VertexShapes {}
  Object.assign(CrowdPolyline, { answerKey: "polylines", listName: "Polylines", minVertices: 2, maxVertices: 0, closed: false,
    help: "Click on the image for each point; double-click or Enter ends the polyline. " + KEYS });
  class CrowdPolygon extends VertexShapes {}
  Object.assign(CrowdPolygon, { answerKey: "polygons", listName: "Polygons", minVertices: 3, maxVertices: 0, closed: true,
    help: "Click on the image for each corner; click the first corner, double-click or press Enter to close it. " + KEYS });
  crowd.define("crowd-line", CrowdLine);
  crowd.define("crowd-polyline", CrowdPolyline);
  crowd.define("crowd-polygon", CrowdPolygon);
})();
