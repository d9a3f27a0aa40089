/*
 * The shared part of hitforge's image annotation elements (crowd-bounding-box,
 * crowd-keypoint): labels, instructions, the image with an SVG overlay in the
 * image's own pixels, the list of shapes, and the keys they have in common.
 *
 * Keyboard (image focused): 1-9 choose a label (and relabel the selected shape),
 * N or Enter adds a shape in the middle, [ and ] select the previous/next shape,
 * arrows move the selected one (Shift: 10 px), Delete or Backspace removes it,
 * Escape deselects. Subclasses add their own mouse handling and keys.
 *
 * Undo and redo (the Undo / Redo buttons, Ctrl+Z, Ctrl+Shift+Z or Ctrl+Y) step
 * through every change to the shapes, a vertex placed while a polygon is still
 * being drawn included, as AWS's annotation tools let workers do.
 */
(function () {
  "use strict";
  var crowd = window.hitforgeCrowd;
  var UNDO_STEPS = 200;  // enough for one HIT's work; older steps are dropped
  var COLOURS = ["#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4", "#f032e6", "#9a6324", "#800000"];
  crowd.SVG = "http://www.w3.org/2000/svg";

  function whenParsed(fn) {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", fn);
    else queueMicrotask(fn);
  }

  /* initial-value: JSON, or the JSON-like text with single quotes and bare keys. */
  crowd.parseLoose = function (text) {
    try {
      return JSON.parse(text);
    } catch (e) {
      // Single quotes, bare keys, trailing commas and // comments, as in AWS's examples.
      return JSON.parse(text.replace(/(^|[\s,{[])\/\/[^\n]*/g, "$1").replace(/'/g, "\"").replace(/([{,]\s*)([A-Za-z_]\w*)\s*:/g, "$1\"$2\":")
        .replace(/,\s*([}\]])/g, "$1"));
    }
  };

  class ImageAnnotator extends HTMLElement {
    connectedCallback() {
      if (this.shadowRoot) return;
      this._labels = crowd.parseList(this.getAttribute("labels")).map(String);
      this._labelColours = crowd.parseList(this.getAttribute("label-colors")).map(String);
      this._label = this._labels[0] || "";
      this._initial = this.hasAttribute("initial-value") ? this._readInitial() : null;
      this._shapes = (this._initial || []).map(function (s) { return JSON.parse(JSON.stringify(s)); });
      this._selected = -1;
      this._history = [this._snapshot()];
      this._step = 0;
      var labels = this._labels.map((l, i) => {
        return "<button type=\"button\" role=\"radio\" data-index=\"" + i + "\" style=\"--c:" + crowd.escape(this.colour(l)) +
          "\">" + (i < 9 ? "<kbd>" + (i + 1) + "</kbd> " : "") + crowd.escape(l) + "</button>";
      }).join("");
      crowd.shadow(this,
        ":host{display:block;margin:.5em 0}.wrap{display:flex;gap:1em;flex-wrap:wrap}" +
        "aside{flex:0 0 13em}main{flex:1;min-width:18em}h2{font-size:16px;margin:.2em 0 .5em}" +
        ".labels{display:flex;gap:.3em;flex-wrap:wrap;margin-bottom:.5em}" +
        ".labels button{font:inherit;border:2px solid var(--c);background:#fff;border-radius:4px;padding:.2em .6em;cursor:pointer}" +
        ".labels button[aria-checked=true]{background:var(--c);color:#fff}kbd{font-size:11px;opacity:.7}" +
        ".stage{position:relative;display:inline-block;line-height:0;outline-offset:3px;user-select:none;touch-action:none}" +
        ".stage img{max-width:100%;display:block}svg{position:absolute;inset:0;width:100%;height:100%;cursor:crosshair}" +
        ".shape{fill-opacity:.12;stroke-width:2;vector-effect:non-scaling-stroke;cursor:move}" +
        ".shape.selected{stroke-dasharray:6 3;fill-opacity:.35}.handle{fill:#fff;stroke:#000;cursor:nwse-resize;vector-effect:non-scaling-stroke}" +
        "ol{padding-left:1.5em}li button{font:inherit;border:0;background:none;cursor:pointer;text-align:left}" +
        ".toolbar{display:flex;gap:.3em 1em;flex-wrap:wrap;align-items:flex-start;justify-content:space-between}" +
        ".history{display:flex;gap:.3em;margin-bottom:.5em}.history button{font:inherit;padding:.15em .6em;cursor:pointer}" +
        "li button[aria-pressed=true]{font-weight:600}.keys{font-size:12px;color:#555}.more{border:0;background:none;color:#0b5cad;text-decoration:underline;padding:0;font:inherit}",
        "<div class=\"wrap\"><aside><slot name=\"short-instructions\"></slot>" +
        "<p><button type=\"button\" class=\"more\">View full instructions</button></p>" +
        "<p class=\"keys\">" + crowd.escape(this.constructor.help) + "</p></aside>" +
        "<main><h2>" + crowd.escape(this.getAttribute("header") || "") + "</h2>" +
        "<div class=\"toolbar\"><div class=\"labels\" role=\"radiogroup\" aria-label=\"Label\">" + labels + "</div>" +
        "<div class=\"history\"><button type=\"button\" class=\"undo\" aria-keyshortcuts=\"Control+Z\">Undo</button>" +
        "<button type=\"button\" class=\"redo\" aria-keyshortcuts=\"Control+Shift+Z Control+Y\">Redo</button></div></div>" +
        "<div class=\"stage\" tabindex=\"0\" role=\"application\" aria-label=\"Image to annotate\">" +
        "<img alt=\"\"><svg></svg></div><ol class=\"shapes\" aria-label=\"" + crowd.escape(this.constructor.listName) +
        "\"></ol><div class=\"own-form\"></div></main></div>" +
        "<dialog aria-label=\"Instructions\"><slot name=\"full-instructions\"></slot>" +
        "<p><button type=\"button\" class=\"close\">Close</button></p></dialog>");
      var root = this.shadowRoot;
      this._img = root.querySelector("img");
      this._svg = root.querySelector("svg");
      this._stage = root.querySelector(".stage");
      this._img.addEventListener("load", () => this._render());
      this._img.src = this.getAttribute("src") || "";
      root.querySelectorAll(".labels button").forEach((b) => {
        b.addEventListener("click", () => this._chooseLabel(Number(b.dataset.index)));
      });
      root.querySelector(".undo").addEventListener("click", () => this.undo());
      root.querySelector(".redo").addEventListener("click", () => this.redo());
      var dialog = root.querySelector("dialog");
      root.querySelector(".more").addEventListener("click", () => dialog.showModal());
      root.querySelector(".close").addEventListener("click", () => dialog.close());
      this._svg.addEventListener("pointerdown", (e) => {
        if (e.button !== 0 || !this.size().width) return;
        e.preventDefault();
        // The point is read before the focus, which would scroll a picture partly out of view under
        // the pointer (the point then landed up to a picture's height away from the click).
        var point = this._point(e);
        this._stage.focus({ preventScroll: true });
        this._svg.setPointerCapture(e.pointerId);
        this._drag = this.pointerDown(point, e.target);
        this._render();
      });
      this._svg.addEventListener("pointermove", (e) => {
        if (!this._drag) return;
        this.pointerMove(this._drag, this._point(e));
        this._render();
      });
      this._svg.addEventListener("pointerup", () => {
        var drag = this._drag;
        this._drag = null;
        if (drag) this.pointerUp(drag);
        this._changed();
      });
      this._stage.addEventListener("keydown", (e) => this._key(e));
      whenParsed(() => {
        Array.from(this.children).forEach((child) => {
          if (child.localName === "short-instructions" || child.localName === "full-instructions") {
            child.setAttribute("slot", child.localName);
          }
        });
        root.querySelector(".more").parentNode.hidden = !this.querySelector(":scope > full-instructions");
        crowd.ownForm(this, root.querySelector(".own-form"));
      });
      this._render();
    }

    /*
     * initial-value: an array of shapes, or (as AWS documents for lines and
     * polylines) an object holding the array under the answer's key.
     */
    _readInitial() {
      var data;
      try {
        data = crowd.parseLoose(this.getAttribute("initial-value"));
      } catch (e) {
        return null;  // unreadable: start empty rather than leave the worker without a tool
      }
      var key = this.constructor.answerKey;
      if (data && !Array.isArray(data) && typeof data === "object" && Array.isArray(data[key])) data = data[key];
      return this.parseInitial(data);
    }

    /** Keys of the element's own, before the common ones; true when handled. */
    extraKey() { return false; }
    /** The shapes as answered (an element may leave unfinished ones out). */
    finishedShapes() { return this._shapes; }

    size() { return { width: this._img.naturalWidth, height: this._img.naturalHeight }; }
    colour(label) {
      var index = Math.max(0, this._labels.indexOf(label));
      return this._labelColours[index] || COLOURS[index % COLOURS.length];  // label-colors, where given
    }
    /** The size of a handle, in image pixels, that shows as 10 screen pixels. */
    handleSize() { return this._img.clientWidth ? 10 * this.size().width / this._img.clientWidth : 10; }

    _point(e) {
      var r = this._svg.getBoundingClientRect();
      var size = this.size();
      var x = (e.clientX - r.left) * size.width / r.width;
      var y = (e.clientY - r.top) * size.height / r.height;
      return { x: Math.max(0, Math.min(x, size.width)), y: Math.max(0, Math.min(y, size.height)) };
    }

    _changed() {
      this._record();
      this._render();
      this.dispatchEvent(new Event("change", { bubbles: true }));
    }

    /** What undo brings back; elements with more state (a shape being drawn) add theirs. */
    _snapshot() {
      return Object.assign({ shapes: JSON.stringify(this._shapes), selected: this._selected }, this.extraState());
    }
    extraState() { return {}; }
    restoreExtraState() {}

    /* A step in the history when the shapes (or what is being drawn) changed since the last one. */
    _record() {
      var now = this._snapshot();
      var last = this._history[this._step];
      // Choosing a vertex or a shape is not a step; a shape finished (no longer drawn) is.
      if (last && last.shapes === now.shapes && last.drawing === now.drawing) return;
      this._history.splice(this._step + 1);  // a new change after undoing drops what could be redone
      this._history.push(now);
      if (this._history.length > UNDO_STEPS) this._history.shift();
      this._step = this._history.length - 1;
    }
    _restore(snapshot) {
      this._shapes = JSON.parse(snapshot.shapes);
      this._selected = snapshot.selected < this._shapes.length ? snapshot.selected : -1;
      this.restoreExtraState(snapshot);
      this._drag = null;
      this._render();
      this.dispatchEvent(new Event("change", { bubbles: true }));
    }
    /** Take back the last change to the shapes. */
    undo() {
      if (this._step <= 0) return;
      this._step -= 1;
      this._restore(this._history[this._step]);
    }
    /** Do again what undo took back. */
    redo() {
      if (this._step >= this._history.length - 1) return;
      this._step += 1;
      this._restore(this._history[this._step]);
    }

    _chooseLabel(index) {
      this._label = this._labels[index];
      if (this._selected !== -1) this._shapes[this._selected].label = this._label;
      this._changed();
    }

    _key(e) {
      var key = e.key.toLowerCase();
      if ((e.ctrlKey || e.metaKey) && !e.altKey && (key === "z" || key === "y")) {
        e.preventDefault();
        if (key === "y" || e.shiftKey) this.redo();
        else this.undo();
        return;
      }
      var shape = this._selected !== -1 ? this._shapes[this._selected] : null;
      var step = e.shiftKey ? 10 : 1;
      var arrow = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }[e.key];
      var digit = /^[1-9]$/.test(e.key) ? Number(e.key) - 1 : -1;
      if (digit !== -1 && digit < this._labels.length) {
        this._chooseLabel(digit);
        e.preventDefault();
        return;
      }
      if (this.extraKey(e, shape, step)) {
        // handled by the element
      } else if ((e.key === "n" || e.key === "N" || e.key === "Enter") && this.size().width && this._label) {
        this._shapes.push(this.createInMiddle(this._label));
        this._selected = this._shapes.length - 1;
      } else if ((e.key === "[" || e.key === "]") && this._shapes.length) {
        var n = this._shapes.length;
        this._selected = e.key === "]" ? (this._selected + 1) % n : (this._selected - 1 + n) % n;
      } else if (arrow && shape && this.arrowKey(shape, arrow[0] * step, arrow[1] * step, e)) {
        // handled by the element
      } else if ((e.key === "Delete" || e.key === "Backspace") && shape) {
        this._shapes.splice(this._selected, 1);
        this._selected = -1;  // so the next label key cannot relabel a shape by surprise
      } else if (e.key === "Escape" && shape) {
        this._selected = -1;
      } else {
        return;
      }
      e.preventDefault();
      this._changed();
    }

    _render() {
      var root = this.shadowRoot;
      var size = this.size();
      root.querySelector(".undo").disabled = !this._history || this._step <= 0;
      root.querySelector(".redo").disabled = !this._history || this._step >= this._history.length - 1;
      root.querySelectorAll(".labels button").forEach((b, i) => {
        b.setAttribute("aria-checked", String(this._labels[i] === this._label));
      });
      var svg = this._svg;
      svg.setAttribute("viewBox", "0 0 " + (size.width || 1) + " " + (size.height || 1));
      svg.setAttribute("preserveAspectRatio", "none");
      svg.textContent = "";
      var list = root.querySelector(".shapes");
      list.textContent = "";
      this._shapes.forEach((shape, i) => {
        this.draw(svg, shape, i, i === this._selected);
        var item = document.createElement("li");
        var pick = document.createElement("button");
        pick.type = "button";
        pick.setAttribute("aria-pressed", String(i === this._selected));
        pick.textContent = this.describe(shape);
        pick.addEventListener("click", () => { this._selected = i; this._render(); this._stage.focus(); });
        item.appendChild(pick);
        list.appendChild(item);
      });
    }

    /** An SVG element with ``attrs``, tagged with the shape's index for the mouse handlers. */
    svgElement(tag, attrs, index) {
      var el = document.createElementNS(crowd.SVG, tag);
      Object.keys(attrs).forEach(function (k) { el.setAttribute(k, attrs[k]); });
      el.dataset.index = index;
      return el;
    }

    get value() {
      var size = this.size();
      var answer = {};
      answer[this.constructor.answerKey] = this.finishedShapes().map((s) => this.answerOf(s));
      answer.inputImageProperties = { height: size.height, width: size.width };
      if (this._initial) answer.initialValueModified = JSON.stringify(this._shapes) !== JSON.stringify(this._initial);
      return answer;
    }
    crowdAnswer() { return this.value; }
    crowdReset() {
      this._shapes = (this._initial || []).map(function (s) { return JSON.parse(JSON.stringify(s)); });
      this._selected = -1;
      this.restoreExtraState({});
      this._history = [this._snapshot()];
      this._step = 0;
      this._render();
    }
    focus() { if (this._stage) this._stage.focus(); }
  }

  crowd.ImageAnnotator = ImageAnnotator;
})();
