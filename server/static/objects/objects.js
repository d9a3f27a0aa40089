/*
 * The objects template's editor (hits/templates/objects/page.html).
 *
 * Each picture's objects live in its hidden field objects-<slot> as JSON:
 * [{label, box: [x, y, w, h], description}] in the image's own pixels. The
 * boxes drawn over the picture and the list beside it are two views of that
 * one list; every edit rewrites the field, so what is submitted is what is shown.
 *
 * Mouse: drag a box to move it, a corner to resize it, an empty spot to draw.
 * Keyboard (on a focused box): arrows move (Alt: by ten), Shift+arrows resize,
 * Space selects for merging, Enter goes to the label, Delete removes.
 * Merging follows hits/templates/objects/geometry.py:merge_objects.
 */
(function () {
  "use strict";
  var script = document.currentScript;
  var MIN_SIZE = Number(script && script.dataset.minSize) || 4;
  var LABEL_MAX = Number(script && script.dataset.labelMax) || 80;
  var DESCRIPTION_MAX = Number(script && script.dataset.descriptionMax) || 1000;
  var COLOURS = ["#ffd400", "#00e5ff", "#ff4fd8", "#7dff4f", "#ff8a00", "#b99bff"];

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) { node.textContent = text; }
    return node;
  }

  function normalLabel(label) {
    return String(label).toLowerCase().split(/\s+/).filter(Boolean).join(" ").replace(/^(a|an|the)\s+/, "");
  }

  /* The merge rule of geometry.merge_objects: union box, commonest label (tie: largest piece), descriptions once. */
  function merge(objects) {
    var left = Infinity, top = Infinity, right = -Infinity, bottom = -Infinity;
    var counts = {};
    objects.forEach(function (o) {
      left = Math.min(left, o.box[0]);
      top = Math.min(top, o.box[1]);
      right = Math.max(right, o.box[0] + o.box[2]);
      bottom = Math.max(bottom, o.box[1] + o.box[3]);
      if (String(o.label).trim()) { counts[normalLabel(o.label)] = (counts[normalLabel(o.label)] || 0) + 1; }
    });
    var best = 0;
    Object.keys(counts).forEach(function (k) { best = Math.max(best, counts[k]); });
    var label = "", area = -1;
    objects.forEach(function (o) {
      var a = o.box[2] * o.box[3];
      if (String(o.label).trim() && counts[normalLabel(o.label)] === best && a > area) {
        label = String(o.label).trim();
        area = a;
      }
    });
    var seen = {}, texts = [];
    objects.forEach(function (o) {
      var t = String(o.description || "").split(/\s+/).filter(Boolean).join(" ");
      if (t && !seen[t.toLowerCase()]) { seen[t.toLowerCase()] = true; texts.push(t); }
    });
    return { label: label, box: [left, top, right - left, bottom - top], description: texts.join(" ") };
  }

  function Editor(root) {
    this.root = root;
    this.slot = Number(root.dataset.objectsSlot);
    this.number = this.slot + 1;
    this.width = Number(root.dataset.width);
    this.height = Number(root.dataset.height);
    this.preview = root.dataset.preview === "1";
    this.field = root.querySelector("[data-objects-field]");
    this.stage = root.querySelector("[data-stage]");
    this.layer = root.querySelector("[data-layer]");
    this.list = root.querySelector("[data-list]");
    this.status = root.querySelector("[data-status]");
    var parsed = [];
    try { parsed = JSON.parse(this.field.value || "[]"); } catch (e) { parsed = []; }
    this.objects = (Array.isArray(parsed) ? parsed : []).map(function (o) {
      var box = Array.isArray(o.box) ? o.box.slice(0, 4).map(Number) : [0, 0, 0, 0];
      while (box.length < 4) { box.push(0); }
      return { label: String(o.label || ""), box: box, description: String(o.description || ""), picked: false };
    });
    this.drag = null;
    this.bind();
    this.render();
  }

  Editor.prototype.say = function (text) { this.status.textContent = text; };

  Editor.prototype.save = function () {
    this.field.value = JSON.stringify(this.objects.map(function (o) {
      return { label: o.label, box: o.box.slice(), description: o.description };
    }));
  };

  Editor.prototype.name = function (i) {
    var label = this.objects[i].label.trim();
    return "object " + (i + 1) + (label ? " (" + label + ")" : "");
  };

  Editor.prototype.clamp = function (box) {
    box[2] = Math.max(MIN_SIZE, Math.min(box[2], this.width));
    box[3] = Math.max(MIN_SIZE, Math.min(box[3], this.height));
    box[0] = Math.max(0, Math.min(box[0], this.width - box[2]));
    box[1] = Math.max(0, Math.min(box[1], this.height - box[3]));
    return box;
  };

  Editor.prototype.boxText = function (i) {
    var b = this.objects[i].box;
    return "x " + Math.round(b[0]) + ", y " + Math.round(b[1]) + ", " + Math.round(b[2]) + " by " +
      Math.round(b[3]) + " pixels";
  };

  /* Rebuild both views (after adding, deleting or merging). */
  Editor.prototype.render = function () {
    var self = this;
    this.layer.textContent = "";
    this.list.textContent = "";
    this.objects.forEach(function (o, i) {
      self.layer.appendChild(self.boxNode(i));
      self.list.appendChild(self.entryNode(i));
    });
    if (!this.objects.length) {
      this.list.appendChild(el("li", { class: "objects-empty" }, "No objects yet: add one."));
    }
    this.save();
  };

  Editor.prototype.boxNode = function (i) {
    var node = el("div", { class: "objects-box", "data-index": String(i), role: "group",
      "aria-roledescription": "box" });
    node.style.setProperty("--box-colour", COLOURS[i % COLOURS.length]);
    node.appendChild(el("span", { class: "objects-tag", "aria-hidden": "true" }));
    if (!this.preview) {
      node.tabIndex = 0;
      ["nw", "ne", "sw", "se"].forEach(function (corner) {
        node.appendChild(el("span", { class: "objects-handle " + corner, "data-corner": corner, "aria-hidden": "true" }));
      });
    }
    this.place(node, i);
    return node;
  };

  /* Position a box node and refresh every text that tells where object i is. */
  Editor.prototype.place = function (node, i) {
    var o = this.objects[i];
    node.style.left = (100 * o.box[0] / this.width) + "%";
    node.style.top = (100 * o.box[1] / this.height) + "%";
    node.style.width = (100 * o.box[2] / this.width) + "%";
    node.style.height = (100 * o.box[3] / this.height) + "%";
    node.classList.toggle("picked", o.picked);
    node.querySelector(".objects-tag").textContent = (i + 1) + (o.label.trim() ? " " + o.label.trim() : "");
    node.setAttribute("aria-label", "Object " + (i + 1) + ": " + (o.label.trim() || "no label yet") + ", " +
      this.boxText(i) + (o.picked ? ", selected for merging" : ""));
  };

  Editor.prototype.update = function (i) {
    var node = this.layer.querySelector('.objects-box[data-index="' + i + '"]');
    if (node) { this.place(node, i); }
    var entry = this.list.querySelector('li[data-index="' + i + '"]');
    if (entry) {
      var b = this.objects[i].box;
      entry.querySelectorAll("input[data-coordinate]").forEach(function (input) {
        var v = Math.round(b[Number(input.dataset.coordinate)]);
        if (document.activeElement !== input) { input.value = String(v); }
      });
      entry.querySelector("input[data-pick]").checked = this.objects[i].picked;
    }
    this.save();
  };

  Editor.prototype.entryNode = function (i) {
    var self = this, o = this.objects[i], n = i + 1, p = this.number;
    var li = el("li", { class: "objects-entry", "data-index": String(i) });
    li.style.setProperty("--box-colour", COLOURS[i % COLOURS.length]);
    li.appendChild(el("h3", { class: "objects-entry-title" }, "Object " + n));
    var labelId = "obj-" + this.slot + "-" + i + "-label";
    li.appendChild(el("label", { for: labelId }, "Object " + n + " label"));
    var label = el("input", { type: "text", id: labelId, maxlength: String(LABEL_MAX), autocomplete: "off",
      "data-label": "" });
    label.value = o.label;
    label.addEventListener("input", function () { o.label = label.value; self.update(i); });
    li.appendChild(label);
    var descId = "obj-" + this.slot + "-" + i + "-description";
    li.appendChild(el("label", { for: descId }, "Object " + n + " description"));
    var desc = el("textarea", { id: descId, rows: "2", maxlength: String(DESCRIPTION_MAX), "data-description": "" });
    desc.value = o.description;
    desc.addEventListener("input", function () { o.description = desc.value; self.save(); });
    li.appendChild(desc);
    var box = el("fieldset", { class: "objects-coordinates" });
    box.appendChild(el("legend", {}, "Object " + n + " box, in pixels"));
    [["x", "left edge"], ["y", "top edge"], ["width", "width"], ["height", "height"]].forEach(function (pair, k) {
      var id = "obj-" + self.slot + "-" + i + "-" + pair[0];
      var wrap = el("span", { class: "objects-coordinate" });
      wrap.appendChild(el("label", { for: id }, pair[0]));
      var input = el("input", { type: "number", id: id, step: "1", min: "0", inputmode: "numeric",
        "data-coordinate": String(k), "aria-label": "Object " + n + " " + pair[1] + " (" + pair[0] + "), picture " + p });
      input.value = String(Math.round(o.box[k]));
      input.addEventListener("change", function () {
        var v = Number(input.value);
        if (!isFinite(v)) { input.value = String(Math.round(o.box[k])); return; }
        o.box[k] = v;
        self.clamp(o.box);
        input.value = String(Math.round(o.box[k]));
        self.update(i);
      });
      wrap.appendChild(input);
      box.appendChild(wrap);
    });
    li.appendChild(box);
    var pickLabel = el("label", { class: "objects-pick" });
    var pick = el("input", { type: "checkbox", "data-pick": "" });
    pick.checked = o.picked;
    pick.addEventListener("change", function () { o.picked = pick.checked; self.update(i); });
    pickLabel.appendChild(pick);
    pickLabel.appendChild(document.createTextNode(" Select object " + n + " for merging"));
    li.appendChild(pickLabel);
    var remove = el("button", { type: "button", class: "objects-delete", "data-delete": "" }, "Delete object " + n);
    remove.addEventListener("click", function () { self.remove(i); });
    li.appendChild(remove);
    if (this.preview) {
      li.querySelectorAll("input, textarea, button").forEach(function (c) { c.disabled = true; });
    }
    return li;
  };

  Editor.prototype.focusBox = function (i) {
    var node = this.layer.querySelector('.objects-box[data-index="' + i + '"]');
    if (node) { node.focus(); }
  };

  Editor.prototype.remove = function (i) {
    var gone = this.name(i);
    this.objects.splice(i, 1);
    this.render();
    this.say("Deleted " + gone + ". " + this.objects.length + " objects left.");
    if (this.objects.length) { this.focusBox(Math.min(i, this.objects.length - 1)); }
    else { this.root.querySelector('[data-action="add"]').focus(); }
  };

  Editor.prototype.add = function (box) {
    this.objects.push({ label: "", box: this.clamp(box), description: "", picked: false });
    this.render();
    var i = this.objects.length - 1;
    this.say("Added object " + (i + 1) + " at " + this.boxText(i) + ". Give it a label and a description.");
    return i;
  };

  Editor.prototype.mergePicked = function () {
    var picked = [];
    this.objects.forEach(function (o, i) { if (o.picked) { picked.push(i); } });
    if (picked.length < 2) {
      this.say("Select at least two objects for merging first (" + picked.length + " selected).");
      return;
    }
    var self = this;
    var merged = merge(picked.map(function (i) { return self.objects[i]; }));
    var names = picked.map(function (i) { return i + 1; }).join(", ");
    merged.picked = false;
    merged.box = this.clamp(merged.box);
    this.objects[picked[0]] = merged;
    for (var k = picked.length - 1; k > 0; k--) { this.objects.splice(picked[k], 1); }
    this.render();
    this.say("Merged objects " + names + " into object " + (picked[0] + 1) + ": check its label and description.");
    this.focusBox(picked[0]);
  };

  /* Picture pixels under a pointer event. */
  Editor.prototype.point = function (e) {
    var r = this.stage.getBoundingClientRect();
    return {
      x: Math.max(0, Math.min(this.width, (e.clientX - r.left) * this.width / r.width)),
      y: Math.max(0, Math.min(this.height, (e.clientY - r.top) * this.height / r.height))
    };
  };

  Editor.prototype.bind = function () {
    var self = this;
    this.root.querySelector('[data-action="add"]').addEventListener("click", function () {
      var w = Math.round(self.width / 4), h = Math.round(self.height / 4);
      var i = self.add([Math.round((self.width - w) / 2), Math.round((self.height - h) / 2), w, h]);
      self.focusBox(i);
    });
    this.root.querySelector('[data-action="merge"]').addEventListener("click", function () { self.mergePicked(); });
    if (this.preview) { return; }
    this.stage.addEventListener("pointerdown", function (e) { self.pointerDown(e); });
    this.stage.addEventListener("pointermove", function (e) { self.pointerMove(e); });
    this.stage.addEventListener("pointerup", function (e) { self.pointerUp(e); });
    this.stage.addEventListener("pointercancel", function (e) { self.pointerUp(e); });
    this.layer.addEventListener("keydown", function (e) { self.keyDown(e); });
  };

  Editor.prototype.pointerDown = function (e) {
    if (e.button !== 0) { return; }
    var target = e.target;
    var boxNode = target.closest ? target.closest(".objects-box") : null;
    var p = this.point(e);
    e.preventDefault();
    this.stage.setPointerCapture(e.pointerId);
    if (boxNode) {
      var i = Number(boxNode.dataset.index);
      boxNode.focus();
      this.drag = { mode: target.dataset.corner ? "resize" : "move", corner: target.dataset.corner, index: i,
        start: p, box: this.objects[i].box.slice() };
    } else {
      this.objects.push({ label: "", box: [p.x, p.y, 0, 0], description: "", picked: false });
      var n = this.objects.length - 1;
      this.layer.appendChild(this.boxNode(n));
      this.drag = { mode: "draw", index: n, start: p };
    }
  };

  Editor.prototype.pointerMove = function (e) {
    var d = this.drag;
    if (!d) { return; }
    var p = this.point(e), o = this.objects[d.index], b = d.box;
    if (d.mode === "draw") {
      o.box = [Math.min(p.x, d.start.x), Math.min(p.y, d.start.y), Math.abs(p.x - d.start.x), Math.abs(p.y - d.start.y)]
        .map(Math.round);
    } else if (d.mode === "move") {
      o.box = this.clamp([Math.round(b[0] + p.x - d.start.x), Math.round(b[1] + p.y - d.start.y), b[2], b[3]]);
    } else {
      // Resize from one corner: the opposite corner stays where it was.
      var left = b[0], top = b[1], right = b[0] + b[2], bottom = b[1] + b[3];
      var dx = p.x - d.start.x, dy = p.y - d.start.y;
      if (d.corner.indexOf("w") >= 0) { left = Math.min(left + dx, right - MIN_SIZE); } else { right = Math.max(right + dx, left + MIN_SIZE); }
      if (d.corner.indexOf("n") >= 0) { top = Math.min(top + dy, bottom - MIN_SIZE); } else { bottom = Math.max(bottom + dy, top + MIN_SIZE); }
      left = Math.max(0, left); top = Math.max(0, top);
      right = Math.min(this.width, right); bottom = Math.min(this.height, bottom);
      o.box = [Math.round(left), Math.round(top), Math.round(right - left), Math.round(bottom - top)];
    }
    var node = this.layer.querySelector('.objects-box[data-index="' + d.index + '"]');
    if (node) { this.place(node, d.index); }
  };

  Editor.prototype.pointerUp = function (e) {
    var d = this.drag;
    if (!d) { return; }
    this.drag = null;
    if (this.stage.hasPointerCapture(e.pointerId)) { this.stage.releasePointerCapture(e.pointerId); }
    var o = this.objects[d.index];
    if (d.mode === "draw") {
      if (o.box[2] < MIN_SIZE || o.box[3] < MIN_SIZE) {  // a click, not a box
        this.objects.splice(d.index, 1);
        this.render();
        return;
      }
      this.render();
      this.say("Drew object " + (d.index + 1) + " at " + this.boxText(d.index) + ". Give it a label and a description.");
      var label = this.list.querySelector('li[data-index="' + d.index + '"] input[data-label]');
      if (label) { label.focus(); }
      return;
    }
    this.update(d.index);
    this.say((d.mode === "move" ? "Moved " : "Resized ") + this.name(d.index) + " to " + this.boxText(d.index) + ".");
  };

  Editor.prototype.keyDown = function (e) {
    var node = e.target.closest ? e.target.closest(".objects-box") : null;
    if (!node || e.ctrlKey || e.metaKey || e.isComposing) { return; }
    var i = Number(node.dataset.index), o = this.objects[i];
    var moves = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
    if (moves[e.key]) {
      e.preventDefault();
      var step = e.altKey ? 10 : 1, dx = moves[e.key][0] * step, dy = moves[e.key][1] * step;
      if (e.shiftKey) {
        o.box[2] += dx;
        o.box[3] += dy;
        o.box[2] = Math.min(o.box[2], this.width - o.box[0]);
        o.box[3] = Math.min(o.box[3], this.height - o.box[1]);
      } else {
        o.box[0] += dx;
        o.box[1] += dy;
      }
      this.clamp(o.box);
      this.update(i);
      this.say((e.shiftKey ? "Resized " : "Moved ") + this.name(i) + " to " + this.boxText(i) + ".");
    } else if (e.key === "Delete" || e.key === "Backspace") {
      e.preventDefault();
      this.remove(i);
    } else if (e.key === " " || e.key === "Spacebar") {
      e.preventDefault();
      o.picked = !o.picked;
      this.update(i);
      this.say((o.picked ? "Selected " : "Unselected ") + this.name(i) + " for merging.");
    } else if (e.key === "Enter" || e.key === "F2") {
      e.preventDefault();
      var label = this.list.querySelector('li[data-index="' + i + '"] input[data-label]');
      if (label) { label.focus(); }
    }
  };

  document.querySelectorAll("[data-objects-slot]").forEach(function (root) {
    var editor = new Editor(root);
    root.objectsEditor = editor;  // for tests and for people debugging a page in the console
  });
  var form = document.getElementById("task-form");
  if (form) {
    // The fields already hold every edit; saving once more costs nothing and survives odd event orders.
    form.addEventListener("submit", function () {
      document.querySelectorAll("[data-objects-slot]").forEach(function (root) {
        if (root.objectsEditor) { root.objectsEditor.save(); }
      });
    });
  }
})();
