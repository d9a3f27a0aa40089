/*
 * crowd-semantic-segmentation and crowd-instance-segmentation: paint labels on
 * an image's pixels.
 *
 * Answers, in the image's own pixels:
 *   semantic: {labeledImage: {pngImageData}, labelMappings: {<label>: {color}},
 *              inputImageProperties: {height, width}} (+ initialValueModified
 *              when initial-value was given);
 *   instance: {labeledImage: {pngImageData}, instances: [{color, label}],
 *              inputImageProperties: {height, width}}.
 * pngImageData is a base64 PNG the size of the image: each painted pixel holds
 * its label's (or instance's) colour, opaque; unpainted pixels are transparent.
 * Attributes: src, labels, header, name, and on the semantic one initial-value
 * ({labelMappings, src}: an earlier mask to adjust). Regions: short-instructions,
 * full-instructions.
 *
 * The mask is kept as one label number per pixel (crowd-label-mask.js) and
 * written to the canvas directly, never drawn with the canvas's antialiased
 * paths, so every pixel is exactly one label's colour.
 *
 * Mouse: drag to paint with the brush or eraser, click with the fill tool to
 * fill the area of the same label around the point. Keyboard (image focused):
 * arrows move the cursor (Shift: 10 px), Space puts the pen down or lifts it
 * (moving with the pen down paints), Enter applies the tool once at the
 * cursor, B/E/F choose brush, eraser, fill, [ and ] change the brush size,
 * 1-9 choose the label, I adds an instance (instance segmentation), Ctrl+Z undoes,
 * Ctrl+Shift+Z or Ctrl+Y redoes (also the Undo and Redo buttons).
 */
(function () {
  "use strict";
  var crowd = window.hitforgeCrowd;
  var paint = crowd.labelMask;
  var colourFor = paint.colourFor;
  var rgbOf = paint.rgbOf;
  var TOOLS = { b: "brush", e: "eraser", f: "fill" };
  var UNDO_STEPS = 10;

  function whenParsed(fn) {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", fn);
    else queueMicrotask(fn);
  }

  class Segmentation extends HTMLElement {
    connectedCallback() {
      if (this.shadowRoot) return;
      this._labels = crowd.parseList(this.getAttribute("labels")).map(String);
      // Classes: what a pixel's number means (1-based). Semantic: one per label; instance: one per instance.
      this._classes = this.constructor.instances ? [] : this._labels.map(function (l, i) { return { label: l, color: colourFor(i) }; });
      this._current = this.constructor.instances ? -1 : (this._labels.length ? 0 : -1);
      this._tool = "brush";
      this._radius = 8;
      this._cursor = { x: 0, y: 0 };
      this._pen = false;
      this._undo = [];
      this._redo = [];
      this._initialMask = null;
      crowd.shadow(this,
        ":host{display:block;margin:.5em 0}.wrap{display:flex;gap:1em;flex-wrap:wrap}aside{flex:0 0 13em}main{flex:1;min-width:18em}" +
        "h2{font-size:16px;margin:.2em 0 .5em}.bar{display:flex;gap:.3em;flex-wrap:wrap;margin-bottom:.5em;align-items:center}" +
        ".bar button{font:inherit;border:2px solid var(--c,#555);background:#fff;border-radius:4px;padding:.2em .6em;cursor:pointer}" +
        ".bar button[aria-checked=true]{background:var(--c,#555);color:#fff}kbd{font-size:11px;opacity:.7}" +
        ".stage{position:relative;display:inline-block;line-height:0;outline-offset:3px;user-select:none;touch-action:none}" +
        ".stage:focus-visible{outline:3px solid #0b5cad}.stage img{max-width:100%;display:block}" +
        "canvas,svg{position:absolute;inset:0;width:100%;height:100%}canvas{opacity:.55;image-rendering:pixelated}svg{cursor:crosshair}" +
        ".status{font-size:13px;min-height:1.2em}.keys{font-size:12px;color:#555}" +
        ".more{border:0;background:none;color:#0b5cad;text-decoration:underline;padding:0;font:inherit}",
        "<div class=\"wrap\"><aside><slot name=\"short-instructions\"></slot>" +
        "<p><button type=\"button\" class=\"more\">View full instructions</button></p>" +
        "<p class=\"keys\">Drag to paint; the fill tool fills the area around a click. Keys: arrows move the cursor, " +
        "Space pen down/up, Enter apply once, B brush, E eraser, F fill, [ ] brush size, 1-9 label" +
        (this.constructor.instances ? ", I new instance" : "") + ", Ctrl+Z undo, Ctrl+Shift+Z redo.</p></aside>" +
        "<main><h2>" + crowd.escape(this.getAttribute("header") || "") + "</h2>" +
        "<div class=\"bar classes\" role=\"radiogroup\" aria-label=\"" + (this.constructor.instances ? "Instance" : "Label") + "\"></div>" +
        (this.constructor.instances ? "<div class=\"bar adders\"></div>" : "") +
        "<div class=\"bar\"><span class=\"tools\" role=\"radiogroup\" aria-label=\"Tool\">" +
        ["brush", "eraser", "fill"].map(function (t) {
          return "<button type=\"button\" role=\"radio\" data-tool=\"" + t + "\"><kbd>" + t.charAt(0).toUpperCase() + "</kbd> " +
            t.charAt(0).toUpperCase() + t.slice(1) + "</button>";
        }).join("") + "</span>" +
        "<label>Brush size <input type=\"range\" class=\"size\" min=\"1\" max=\"60\" value=\"8\"></label>" +
        "<button type=\"button\" class=\"undo\" aria-keyshortcuts=\"Control+Z\" disabled>Undo</button>" +
        "<button type=\"button\" class=\"redo\" aria-keyshortcuts=\"Control+Shift+Z Control+Y\" disabled>Redo</button></div>" +
        "<div class=\"stage\" tabindex=\"0\" role=\"application\" aria-label=\"Image to segment\" aria-describedby=\"status\">" +
        "<img alt=\"\"><canvas></canvas><svg><circle class=\"cursor\" fill=\"none\" stroke=\"#000\" stroke-dasharray=\"3 2\" " +
        "vector-effect=\"non-scaling-stroke\"></circle></svg></div>" +
        "<p class=\"status\" id=\"status\" role=\"status\"></p><ul class=\"painted\" aria-label=\"Painted\"></ul>" +
        "<div class=\"own-form\"></div></main></div>" +
        "<dialog aria-label=\"Instructions\"><slot name=\"full-instructions\"></slot>" +
        "<p><button type=\"button\" class=\"close\">Close</button></p></dialog>");
      var root = this.shadowRoot;
      this._img = root.querySelector("img");
      this._canvas = root.querySelector("canvas");
      this._svg = root.querySelector("svg");
      this._stage = root.querySelector(".stage");
      this._img.addEventListener("load", () => this._start());
      this._img.src = this.getAttribute("src") || "";
      root.querySelectorAll(".tools button").forEach((b) => b.addEventListener("click", () => this._chooseTool(b.dataset.tool)));
      root.querySelector(".size").addEventListener("input", (e) => { this._radius = Number(e.target.value); this._drawCursor(); });
      if (this.constructor.instances) {
        root.querySelector(".adders").innerHTML = this._labels.map(function (l, i) {
          return "<button type=\"button\" data-index=\"" + i + "\">Add " + crowd.escape(l) + " instance</button>";
        }).join("");
        root.querySelectorAll(".adders button").forEach((b) => b.addEventListener("click", () => this._addInstance(Number(b.dataset.index))));
      }
      root.querySelector(".undo").addEventListener("click", () => this.undo());
      root.querySelector(".redo").addEventListener("click", () => this.redo());
      var dialog = root.querySelector("dialog");
      root.querySelector(".more").addEventListener("click", () => dialog.showModal());
      root.querySelector(".close").addEventListener("click", () => dialog.close());
      this._svg.addEventListener("pointerdown", (e) => this._pointerDown(e));
      this._svg.addEventListener("pointermove", (e) => this._pointerMove(e));
      this._svg.addEventListener("pointerup", () => { if (this._stroke) this._changed(); this._stroke = null; });
      this._stage.addEventListener("keydown", (e) => this._key(e));
      whenParsed(() => {
        Array.from(this.children).forEach((child) => {
          if (child.localName === "short-instructions" || child.localName === "full-instructions") child.setAttribute("slot", child.localName);
        });
        root.querySelector(".more").parentNode.hidden = !this.querySelector(":scope > full-instructions");
        crowd.ownForm(this, root.querySelector(".own-form"));
      });
      this._renderBars();
    }

    /* The image has loaded: size the mask to its pixels (and read an initial mask). */
    _start() {
      var w = this._img.naturalWidth;
      var h = this._img.naturalHeight;
      this._w = w;
      this._h = h;
      this._mask = new Uint16Array(w * h);
      this._canvas.width = w;
      this._canvas.height = h;
      this._svg.setAttribute("viewBox", "0 0 " + w + " " + h);
      this._svg.setAttribute("preserveAspectRatio", "none");
      this._cursor = { x: Math.floor(w / 2), y: Math.floor(h / 2) };
      this._paintAll();
      this._drawCursor();
      if (!this.constructor.instances && this.hasAttribute("initial-value")) this._loadInitial();
    }

    _loadInitial() {
      var data;
      try {
        data = crowd.parseLoose(this.getAttribute("initial-value"));
      } catch (e) {
        return;
      }
      if (!data || typeof data !== "object") return;
      this._initialGiven = true;
      var mappings = data.labelMappings || {};
      var byColour = {};
      Object.keys(mappings).forEach((label) => {
        var index = this._labels.indexOf(label);
        if (index === -1 || !mappings[label] || !mappings[label].color) return;
        // Only a colour of the answer format (#rrggbb): the value comes from an earlier worker's answer.
        if (!/^#[0-9a-f]{6}$/i.test(String(mappings[label].color))) return;
        this._classes[index].color = String(mappings[label].color).toLowerCase();  // keep the earlier job's colours
        byColour[rgbOf(mappings[label].color).join(",")] = index + 1;
      });
      this._renderBars();
      this._initialMask = new Uint16Array(this._mask.length);
      if (!data.src) return;
      var img = new Image();
      img.crossOrigin = "anonymous";  // another origin's mask can only be read with CORS
      img.onload = () => {
        var canvas = document.createElement("canvas");
        canvas.width = this._w;
        canvas.height = this._h;
        var ctx = canvas.getContext("2d");
        ctx.imageSmoothingEnabled = false;
        ctx.drawImage(img, 0, 0, this._w, this._h);
        var pixels;
        try {
          pixels = ctx.getImageData(0, 0, this._w, this._h).data;
        } catch (e) {
          this._say("The earlier labels could not be read (the mask's server does not allow it).");
          return;
        }
        for (var i = 0; i < this._mask.length; i++) {
          if (pixels[4 * i + 3] < 128) continue;
          var cls = byColour[pixels[4 * i] + "," + pixels[4 * i + 1] + "," + pixels[4 * i + 2]];
          if (cls) this._mask[i] = cls;
        }
        this._initialMask = this._mask.slice();
        this._paintAll();
        this._summarise();
      };
      img.src = String(data.src);
    }

    _renderBars() {
      var root = this.shadowRoot;
      var bar = root.querySelector(".classes");
      bar.innerHTML = this._classes.map((c, i) => {
        var name = this.constructor.instances ? c.label + " #" + this._instanceNumber(i) : c.label;
        return "<button type=\"button\" role=\"radio\" data-index=\"" + i + "\" style=\"--c:" + crowd.escape(c.color) + "\" aria-checked=\"" +
          (i === this._current) + "\">" + (!this.constructor.instances && i < 9 ? "<kbd>" + (i + 1) + "</kbd> " : "") +
          crowd.escape(name) + "</button>";
      }).join("");
      bar.querySelectorAll("button").forEach((b) => b.addEventListener("click", () => {
        this._current = Number(b.dataset.index);
        this._renderBars();
      }));
      root.querySelectorAll(".tools button").forEach((b) => b.setAttribute("aria-checked", String(b.dataset.tool === this._tool)));
      root.querySelector(".size").value = String(this._radius);
    }

    _instanceNumber(index) {
      var label = this._classes[index].label;
      return this._classes.slice(0, index + 1).filter(function (c) { return c.label === label; }).length;
    }

    _addInstance(labelIndex) {
      var label = this._labels[labelIndex];
      this._classes.push({ label: label, color: colourFor(this._classes.length) });
      this._current = this._classes.length - 1;
      this._renderBars();
      this._say("New instance: " + label + " #" + this._instanceNumber(this._current) + ".");
    }

    _chooseLabel(labelIndex) {
      if (!this.constructor.instances) {
        this._current = labelIndex;
      } else {
        var label = this._labels[labelIndex];
        var last = -1;
        this._classes.forEach(function (c, i) { if (c.label === label) last = i; });
        if (last === -1) {
          this._addInstance(labelIndex);
          return;
        }
        this._current = last;
      }
      this._renderBars();
      this._say("Label: " + this._classes[this._current].label + ".");
    }

    _chooseTool(tool) {
      this._tool = tool;
      this._renderBars();
      this._say("Tool: " + tool + ".");
    }

    _point(e) {
      var r = this._svg.getBoundingClientRect();
      return {
        x: Math.max(0, Math.min(this._w - 1, Math.floor((e.clientX - r.left) * this._w / r.width))),
        y: Math.max(0, Math.min(this._h - 1, Math.floor((e.clientY - r.top) * this._h / r.height))),
      };
    }

    _pointerDown(e) {
      if (e.button !== 0 || !this._mask) return;
      e.preventDefault();
      // The point is read before the focus, which would scroll a picture partly out of view under the
      // pointer and so move the stroke away from where it was made; the focus itself does not scroll.
      var p = this._point(e);
      this._stage.focus({ preventScroll: true });
      this._svg.setPointerCapture(e.pointerId);
      this._cursor = p;
      this._remember();
      if (this._tool === "fill") {
        this._fill(p.x, p.y);
        this._changed();
        return;
      }
      this._stroke = p;
      this._dab(p.x, p.y);
      this._drawCursor();
    }

    _pointerMove(e) {
      if (!this._mask) return;
      var p = this._point(e);
      if (this._stroke) {
        this._line(this._stroke, p);
        this._stroke = p;
      }
      this._cursor = p;
      this._drawCursor();
    }

    /** The pixel value the tool paints: 0 erases. */
    _ink() {
      return this._tool === "eraser" ? 0 : this._current + 1;
    }

    _dab(cx, cy) {
      if (this._tool !== "eraser" && this._current === -1) return;
      var rect = paint.dab(this._mask, this._w, this._h, cx, cy, this._radius, this._ink());
      if (rect) this._paint(rect[0], rect[1], rect[2], rect[3]);
    }

    _line(a, b) {
      var steps = Math.max(1, Math.ceil(Math.hypot(b.x - a.x, b.y - a.y) / Math.max(1, this._radius / 2)));
      for (var i = 1; i <= steps; i++) {
        this._dab(Math.round(a.x + (b.x - a.x) * i / steps), Math.round(a.y + (b.y - a.y) * i / steps));
      }
    }

    _fill(sx, sy) {
      if (this._current === -1) return;
      if (paint.fill(this._mask, this._w, sx, sy, this._current + 1)) this._paintAll();
    }

    /* Called before each change to the mask: it can be undone, and what was undone can no longer be redone. */
    _remember() {
      this._undo.push(this._mask.slice());
      if (this._undo.length > UNDO_STEPS) this._undo.shift();
      this._redo = [];
    }

    /** Take back the last change to the mask. */
    undo() { this._step(this._undo, this._redo, "Undone."); }
    /** Paint again what undo took back. */
    redo() { this._step(this._redo, this._undo, "Redone."); }
    _step(from, to, said) {
      if (!this._mask || !from.length) return;
      to.push(this._mask);
      this._mask = from.pop();
      this._pen = false;
      this._paintAll();
      this._changed();
      this._say(said);
    }

    _paintAll() { this._paint(0, 0, this._w - 1, this._h - 1); }

    /* Write the mask's colours for a rectangle straight into the canvas (no antialiasing). */
    _paint(x0, y0, x1, y1) {
      if (x1 < x0 || y1 < y0) return;
      var ctx = this._canvas.getContext("2d");
      var w = x1 - x0 + 1;
      var h = y1 - y0 + 1;
      var image = ctx.createImageData(w, h);
      var colours = this._classes.map(function (c) { return rgbOf(c.color); });
      for (var y = 0; y < h; y++) {
        for (var x = 0; x < w; x++) {
          var v = this._mask[(y0 + y) * this._w + x0 + x];
          if (!v || !colours[v - 1]) continue;
          var o = 4 * (y * w + x);
          image.data[o] = colours[v - 1][0];
          image.data[o + 1] = colours[v - 1][1];
          image.data[o + 2] = colours[v - 1][2];
          image.data[o + 3] = 255;
        }
      }
      ctx.putImageData(image, x0, y0);
    }

    _drawCursor() {
      var c = this._svg.querySelector(".cursor");
      c.setAttribute("cx", this._cursor.x + 0.5);
      c.setAttribute("cy", this._cursor.y + 0.5);
      c.setAttribute("r", this._tool === "fill" ? 2 : this._radius);
    }

    _key(e) {
      if (!this._mask) return;
      var arrow = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }[e.key];
      var digit = /^[1-9]$/.test(e.key) ? Number(e.key) - 1 : -1;
      var key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
      if (arrow && !e.ctrlKey && !e.altKey) {
        var step = e.shiftKey ? 10 : 1;
        var to = { x: Math.max(0, Math.min(this._w - 1, this._cursor.x + arrow[0] * step)),
          y: Math.max(0, Math.min(this._h - 1, this._cursor.y + arrow[1] * step)) };
        if (this._pen) this._line(this._cursor, to);
        this._cursor = to;
        this._drawCursor();
        if (this._pen) this._changed();
        this._say("Cursor at x " + to.x + ", y " + to.y + (this._pen ? ", painting." : "."));
      } else if (key === " ") {
        this._pen = !this._pen;
        if (this._pen) {
          this._remember();
          this._dab(this._cursor.x, this._cursor.y);
          this._changed();
        }
        this._say(this._pen ? "Pen down: moving paints." : "Pen up.");
      } else if (key === "Enter") {
        this._remember();
        if (this._tool === "fill") this._fill(this._cursor.x, this._cursor.y);
        else this._dab(this._cursor.x, this._cursor.y);
        this._changed();
      } else if (TOOLS[key] && !e.ctrlKey) {
        this._chooseTool(TOOLS[key]);
        this._drawCursor();
      } else if (key === "[" || key === "]") {
        this._radius = Math.max(1, Math.min(60, this._radius + (key === "]" ? 1 : -1)));
        this._renderBars();
        this._drawCursor();
        this._say("Brush size " + this._radius + ".");
      } else if (digit !== -1 && digit < this._labels.length) {
        this._chooseLabel(digit);
      } else if (key === "i" && this.constructor.instances && this._labels.length) {
        var current = this._current === -1 ? 0 : this._labels.indexOf(this._classes[this._current].label);
        this._addInstance(current);
      } else if ((key === "z" || key === "y") && (e.ctrlKey || e.metaKey)) {
        if (key === "y" || e.shiftKey) this.redo();
        else this.undo();
      } else if (key === "Escape" && this._pen) {
        this._pen = false;
        this._say("Pen up.");
      } else {
        return;
      }
      e.preventDefault();
    }

    _say(text) { this.shadowRoot.querySelector(".status").textContent = text; }

    _changed() {
      this.shadowRoot.querySelector(".undo").disabled = !this._undo.length;
      this.shadowRoot.querySelector(".redo").disabled = !this._redo.length;
      this._summarise();
      this.dispatchEvent(new Event("change", { bubbles: true }));
    }

    /* How many pixels each label (instance) covers, listed under the image. */
    _counts() { return paint.counts(this._mask, this._classes.length); }

    _summarise() {
      var list = this.shadowRoot.querySelector(".painted");
      list.textContent = "";
      this._counts().forEach((n, i) => {
        if (!n) return;
        var c = this._classes[i];
        var item = document.createElement("li");
        item.textContent = (this.constructor.instances ? c.label + " #" + this._instanceNumber(i) : c.label) + ": " + n + " px";
        list.appendChild(item);
      });
    }

    _png() {
      var canvas = document.createElement("canvas");
      canvas.width = this._w;
      canvas.height = this._h;
      var ctx = canvas.getContext("2d");
      ctx.putImageData(this._canvas.getContext("2d").getImageData(0, 0, this._w, this._h), 0, 0);
      return canvas.toDataURL("image/png").replace(/^data:image\/png;base64,/, "");
    }

    get value() {
      if (!this._mask) return undefined;
      var answer = { labeledImage: { pngImageData: this._png() } };
      if (this.constructor.instances) {
        var counts = this._counts();
        answer.instances = this._classes.filter(function (c, i) { return counts[i] > 0; })
          .map(function (c) { return { color: c.color, label: c.label }; });
      } else {
        answer.labelMappings = {};
        this._classes.forEach(function (c) { answer.labelMappings[c.label] = { color: c.color }; });
      }
      answer.inputImageProperties = { height: this._h, width: this._w };
      if (this._initialGiven) {
        var before = this._initialMask;
        var now = this._mask;
        answer.initialValueModified = !before || before.length !== now.length || now.some(function (v, i) { return v !== before[i]; });
      }
      return answer;
    }
    crowdAnswer() { return this.value; }
    crowdReset() {
      if (!this._mask) return;
      this._mask = this._initialMask ? this._initialMask.slice() : new Uint16Array(this._mask.length);
      this._paintAll();
      this._summarise();
    }
    focus() { if (this._stage) this._stage.focus(); }
  }

  class CrowdSemanticSegmentation extends Segmentation {}
  CrowdSemanticSegmentation.instances = false;
  class CrowdInstanceSegmentation extends Segmentation {}
  CrowdInstanceSegmentation.instances = true;
  crowd.define("crowd-semantic-segmentation", CrowdSemanticSegmentation);
  crowd.define("crowd-instance-segmentation", CrowdInstanceSegmentation);
})();
