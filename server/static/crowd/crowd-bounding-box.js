/*
 * crowd-bounding-box: draw, move, resize, relabel and delete boxes on an image.
 *
 * Answer: {boundingBoxes: [{label, left, top, width, height}], inputImageProperties:
 * {height, width}}, in the image's own pixels, plus initialValueModified when the
 * page gave an initial-value. Attributes: src, labels, header, name, initial-value.
 * Regions: short-instructions, full-instructions.
 *
 * Mouse: drag on the image to draw a box with the chosen label; drag a box to
 * move it, its corner handle to resize it; click a box to select it.
 * Keyboard (image focused): 1-9 choose a label (and relabel the selected box),
 * N or Enter draws a box in the middle, [ and ] select the previous/next box,
 * arrows move the selected box (Shift: 10 px), Alt+arrows resize it, Delete or
 * Backspace removes it, Escape deselects.
 */
(function () {
  "use strict";
  var crowd = window.hitforgeCrowd;
  var COLOURS = ["#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4", "#f032e6", "#9a6324", "#800000"];
  var SVG = "http://www.w3.org/2000/svg";
  var MIN_SIZE = 3;

  function whenParsed(fn) {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", fn);
    else queueMicrotask(fn);
  }

  /* initial-value: JSON, or the JSON-like text with single quotes and bare keys. */
  function parseBoxes(text) {
    if (!text) return [];
    var data;
    try {
      data = JSON.parse(text);
    } catch (e) {
      data = JSON.parse(text.replace(/'/g, "\"").replace(/([{,]\s*)([A-Za-z_]\w*)\s*:/g, "$1\"$2\":"));
    }
    return (Array.isArray(data) ? data : []).map(function (b) {
      return { label: String(b.label), left: Math.round(+b.left), top: Math.round(+b.top),
        width: Math.round(+b.width), height: Math.round(+b.height) };
    });
  }

  class CrowdBoundingBox extends HTMLElement {
    connectedCallback() {
      if (this.shadowRoot) return;
      this._labels = crowd.parseList(this.getAttribute("labels")).map(String);
      this._label = this._labels[0] || "";
      this._initial = this.hasAttribute("initial-value") ? parseBoxes(this.getAttribute("initial-value")) : null;
      this._boxes = (this._initial || []).map(function (b) { return Object.assign({}, b); });
      this._selected = -1;
      var labels = this._labels.map(function (l, i) {
        return "<button type=\"button\" role=\"radio\" data-index=\"" + i + "\" style=\"--c:" + COLOURS[i % COLOURS.length] +
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
        "rect.box{fill-opacity:.12;stroke-width:2;vector-effect:non-scaling-stroke;cursor:move}" +
        "rect.box.selected{stroke-dasharray:6 3;fill-opacity:.25}rect.handle{fill:#fff;stroke:#000;cursor:nwse-resize;vector-effect:non-scaling-stroke}" +
        "ol{padding-left:1.5em}li button{font:inherit;border:0;background:none;cursor:pointer;text-align:left}" +
        "li button[aria-pressed=true]{font-weight:600}.keys{font-size:12px;color:#555}.more{border:0;background:none;color:#0b5cad;text-decoration:underline;padding:0;font:inherit}",
        "<div class=\"wrap\"><aside><slot name=\"short-instructions\"></slot>" +
        "<p><button type=\"button\" class=\"more\">View full instructions</button></p>" +
        "<p class=\"keys\">Drag on the image to draw a box; drag a box to move it, its corner to resize it. " +
        "Keys: 1-9 label, N new box, [ ] select, arrows move, Alt+arrows resize, Delete remove.</p></aside>" +
        "<main><h2>" + crowd.escape(this.getAttribute("header") || "") + "</h2>" +
        "<div class=\"labels\" role=\"radiogroup\" aria-label=\"Label\">" + labels + "</div>" +
        "<div class=\"stage\" tabindex=\"0\" role=\"application\" aria-label=\"Image to annotate\">" +
        "<img alt=\"\"><svg></svg></div><ol class=\"boxes\" aria-label=\"Boxes\"></ol></main></div>" +
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
      var dialog = root.querySelector("dialog");
      root.querySelector(".more").addEventListener("click", () => dialog.showModal());
      root.querySelector(".close").addEventListener("click", () => dialog.close());
      this._svg.addEventListener("pointerdown", (e) => this._down(e));
      this._svg.addEventListener("pointermove", (e) => this._move(e));
      this._svg.addEventListener("pointerup", () => this._up());
      this._stage.addEventListener("keydown", (e) => this._key(e));
      whenParsed(() => {
        Array.from(this.children).forEach((child) => {
          if (child.localName === "short-instructions" || child.localName === "full-instructions") {
            child.setAttribute("slot", child.localName);
          }
        });
        root.querySelector(".more").parentNode.hidden = !this.querySelector(":scope > full-instructions");
      });
      this._render();
    }

    _size() { return { width: this._img.naturalWidth, height: this._img.naturalHeight }; }

    _point(e) {
      var r = this._svg.getBoundingClientRect();
      var size = this._size();
      return { x: (e.clientX - r.left) * size.width / r.width, y: (e.clientY - r.top) * size.height / r.height };
    }

    _clamp(box) {
      var size = this._size();
      box.width = Math.max(1, Math.min(box.width, size.width));
      box.height = Math.max(1, Math.min(box.height, size.height));
      box.left = Math.max(0, Math.min(box.left, size.width - box.width));
      box.top = Math.max(0, Math.min(box.top, size.height - box.height));
    }

    _down(e) {
      if (e.button !== 0 || !this._size().width) return;
      e.preventDefault();
      this._stage.focus();
      var p = this._point(e);
      var index = Number(e.target.dataset.index);
      this._svg.setPointerCapture(e.pointerId);
      if (e.target.classList.contains("handle")) {
        this._drag = { mode: "resize", index: index, start: p, box: Object.assign({}, this._boxes[index]) };
      } else if (e.target.classList.contains("box")) {
        this._selected = index;
        this._drag = { mode: "move", index: index, start: p, box: Object.assign({}, this._boxes[index]) };
      } else {
        this._boxes.push({ label: this._label, left: Math.round(p.x), top: Math.round(p.y), width: 0, height: 0 });
        this._selected = this._boxes.length - 1;
        this._drag = { mode: "draw", index: this._selected, start: p };
      }
      this._render();
    }

    _move(e) {
      var d = this._drag;
      if (!d) return;
      var p = this._point(e);
      var size = this._size();
      var box = this._boxes[d.index];
      if (d.mode === "draw") {
        var x = Math.max(0, Math.min(p.x, size.width));
        var y = Math.max(0, Math.min(p.y, size.height));
        box.left = Math.round(Math.min(x, d.start.x));
        box.top = Math.round(Math.min(y, d.start.y));
        box.width = Math.round(Math.abs(x - d.start.x));
        box.height = Math.round(Math.abs(y - d.start.y));
      } else if (d.mode === "move") {
        box.left = Math.round(d.box.left + p.x - d.start.x);
        box.top = Math.round(d.box.top + p.y - d.start.y);
        this._clamp(box);
      } else {
        box.width = Math.round(Math.min(Math.max(MIN_SIZE, d.box.width + p.x - d.start.x), size.width - box.left));
        box.height = Math.round(Math.min(Math.max(MIN_SIZE, d.box.height + p.y - d.start.y), size.height - box.top));
      }
      this._render();
    }

    _up() {
      var d = this._drag;
      this._drag = null;
      if (d && d.mode === "draw") {
        var box = this._boxes[d.index];
        // A click without a drag selects nothing new: it is not a box.
        if (box.width < MIN_SIZE || box.height < MIN_SIZE) {
          this._boxes.splice(d.index, 1);
          this._selected = -1;
        }
      }
      this._render();
      if (d) this.dispatchEvent(new Event("change", { bubbles: true }));
    }

    _chooseLabel(index) {
      this._label = this._labels[index];
      if (this._selected !== -1) this._boxes[this._selected].label = this._label;
      this._render();
    }

    _key(e) {
      var size = this._size();
      var box = this._selected !== -1 ? this._boxes[this._selected] : null;
      var step = e.shiftKey ? 10 : 1;
      var arrows = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }[e.key];
      var digit = /^[1-9]$/.test(e.key) ? Number(e.key) - 1 : -1;
      if (digit !== -1 && digit < this._labels.length) {
        this._chooseLabel(digit);
      } else if ((e.key === "n" || e.key === "N" || e.key === "Enter") && size.width && this._label) {
        var w = Math.round(size.width / 4);
        var h = Math.round(size.height / 4);
        this._boxes.push({ label: this._label, left: Math.round((size.width - w) / 2),
          top: Math.round((size.height - h) / 2), width: w, height: h });
        this._selected = this._boxes.length - 1;
      } else if ((e.key === "[" || e.key === "]") && this._boxes.length) {
        var n = this._boxes.length;
        this._selected = e.key === "]" ? (this._selected + 1) % n : (this._selected - 1 + n) % n;
      } else if (arrows && box && e.altKey) {
        box.width += arrows[0] * step;
        box.height += arrows[1] * step;
        box.width = Math.max(MIN_SIZE, Math.min(box.width, size.width - box.left));
        box.height = Math.max(MIN_SIZE, Math.min(box.height, size.height - box.top));
      } else if (arrows && box) {
        box.left += arrows[0] * step;
        box.top += arrows[1] * step;
        this._clamp(box);
      } else if ((e.key === "Delete" || e.key === "Backspace") && box) {
        this._boxes.splice(this._selected, 1);
        this._selected = -1;  // so the next label key cannot relabel a box by surprise
      } else if (e.key === "Escape" && box) {
        this._selected = -1;
      } else {
        return;
      }
      e.preventDefault();
      this._render();
      this.dispatchEvent(new Event("change", { bubbles: true }));
    }

    _render() {
      var root = this.shadowRoot;
      var size = this._size();
      var labels = this._labels;
      root.querySelectorAll(".labels button").forEach((b, i) => {
        b.setAttribute("aria-checked", String(labels[i] === this._label));
      });
      var svg = this._svg;
      svg.setAttribute("viewBox", "0 0 " + (size.width || 1) + " " + (size.height || 1));
      svg.setAttribute("preserveAspectRatio", "none");
      svg.textContent = "";
      var list = root.querySelector(".boxes");
      list.textContent = "";
      this._boxes.forEach((box, i) => {
        var colour = COLOURS[Math.max(0, labels.indexOf(box.label)) % COLOURS.length];
        var rect = document.createElementNS(SVG, "rect");
        rect.setAttribute("class", "box" + (i === this._selected ? " selected" : ""));
        [["x", box.left], ["y", box.top], ["width", box.width], ["height", box.height]].forEach(function (a) {
          rect.setAttribute(a[0], a[1]);
        });
        rect.setAttribute("stroke", colour);
        rect.setAttribute("fill", colour);
        rect.dataset.index = i;
        svg.appendChild(rect);
        if (i === this._selected) {
          var r = this._img.clientWidth ? 5 * size.width / this._img.clientWidth : 5;
          var handle = document.createElementNS(SVG, "rect");
          handle.setAttribute("class", "handle");
          handle.setAttribute("x", box.left + box.width - r);
          handle.setAttribute("y", box.top + box.height - r);
          handle.setAttribute("width", 2 * r);
          handle.setAttribute("height", 2 * r);
          handle.dataset.index = i;
          svg.appendChild(handle);
        }
        var item = document.createElement("li");
        var pick = document.createElement("button");
        pick.type = "button";
        pick.setAttribute("aria-pressed", String(i === this._selected));
        pick.textContent = box.label + ": left " + box.left + ", top " + box.top + ", " + box.width + " \u00d7 " + box.height;
        pick.addEventListener("click", () => { this._selected = i; this._render(); this._stage.focus(); });
        item.appendChild(pick);
        list.appendChild(item);
      });
    }

    get value() {
      var size = this._size();
      var answer = {
        boundingBoxes: this._boxes.map(function (b) {
          return { height: b.height, label: b.label, left: b.left, top: b.top, width: b.width };
        }),
        inputImageProperties: { height: size.height, width: size.width },
      };
      if (this._initial) answer.initialValueModified = JSON.stringify(this._boxes) !== JSON.stringify(this._initial);
      return answer;
    }
    crowdAnswer() { return this.value; }
    crowdReset() {
      this._boxes = (this._initial || []).map(function (b) { return Object.assign({}, b); });
      this._selected = -1;
      this._render();
    }
    focus() { if (this._stage) this._stage.focus(); }
  }

  crowd.define("crowd-bounding-box", CrowdBoundingBox);
})();
