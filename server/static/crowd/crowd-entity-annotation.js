/*
 * crowd-entity-annotation: label spans of a text.
 *
 * Answer: {entities: [{endOffset, label, startOffset}]} sorted by start, offsets
 * counted in Unicode code points (what Python's str indexes), the end exclusive.
 * Attributes: text, labels (strings, or {label, shortDisplayName, fullDisplayName}),
 * header, name, initial-value. Regions: short-instructions, full-instructions.
 * AWS meant it to be used without a <crowd-form>: then it brings its own form
 * and Submit button (crowd.ownForm), and a page's script may add fields to
 * shadowRoot.querySelector('crowd-form').form, as AWS's example does.
 *
 * Mouse: choose a label, drag across the text; click a labelled span to select
 * it, then a label changes its label. Keyboard (text focused): arrows move the
 * caret, Ctrl+arrows by word, Home/End; Shift extends the selection; Enter or
 * Space labels it; 1-9 choose the label (and relabel the selected span); [ and ]
 * select the previous/next span, Delete removes it, Escape clears.
 */
(function () {
  "use strict";
  var crowd = window.hitforgeCrowd;
  var COLOURS = ["#ffd166", "#8ecae6", "#b5e48c", "#f4a3c4", "#cdb4db", "#ffb4a2", "#a0c4ff", "#fdffb6", "#caffbf"];
  var WORD = /[\p{L}\p{N}_'\u2019-]/u;

  function whenParsed(fn) {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", fn);
    else queueMicrotask(fn);
  }

  function parseLabels(text) {
    var list;
    try {
      list = crowd.parseLoose(text || "[]");
    } catch (e) {
      list = crowd.parseList(text);
    }
    return (Array.isArray(list) ? list : []).map(function (item) {
      if (item && typeof item === "object") {
        var label = String(item.label);
        return { label: label, short: String(item.shortDisplayName || label), full: String(item.fullDisplayName || label) };
      }
      return { label: String(item), short: String(item), full: String(item) };
    });
  }

  class CrowdEntityAnnotation extends HTMLElement {
    connectedCallback() {
      if (this.shadowRoot) return;
      this._chars = Array.from(this.getAttribute("text") || "");  // code points, so offsets match AWS's
      this._labels = parseLabels(this.getAttribute("labels"));
      this._label = this._labels.length ? this._labels[0].label : "";
      this._entities = this._readInitial();
      this._caret = 0;
      this._anchor = null;
      this._selected = -1;
      var labels = this._labels.map(function (l, i) {
        return "<button type=\"button\" role=\"radio\" data-index=\"" + i + "\" style=\"--c:" + COLOURS[i % COLOURS.length] +
          "\">" + (i < 9 ? "<kbd>" + (i + 1) + "</kbd> " : "") + crowd.escape(l.full) + "</button>";
      }).join("");
      var chars = this._chars.map(function (c, i) {
        return "<span data-i=\"" + i + "\">" + crowd.escape(c) + "</span>";
      }).join("");
      crowd.shadow(this,
        ":host{display:block;margin:.5em 0}.wrap{display:flex;gap:1em;flex-wrap:wrap}aside{flex:0 0 13em}" +
        "main{flex:1;min-width:18em}h2{font-size:16px;margin:.2em 0 .5em}.labels{display:flex;gap:.3em;flex-wrap:wrap;margin-bottom:.6em}" +
        ".labels button{font:inherit;border:2px solid #555;background:var(--c);border-radius:4px;padding:.2em .6em;cursor:pointer}" +
        ".labels button[aria-checked=true]{outline:3px solid #0b5cad;outline-offset:1px;font-weight:600}kbd{font-size:11px;opacity:.7}" +
        ".text{white-space:pre-wrap;line-height:2.2;border:1px solid #bbb;border-radius:4px;padding:.6em;user-select:none;cursor:text}" +
        ".text:focus-visible{outline:3px solid #0b5cad;outline-offset:2px}.text span.ent{background:var(--c)}" +
        ".text span[data-tag]::before{content:attr(data-tag);font-size:10px;font-weight:600;vertical-align:super;margin-right:1px}" +
        ".text span.chosen{text-decoration:underline 2px}.text span.sel{background:#0b5cad;color:#fff}" +
        ".text:focus span.caret{box-shadow:-2px 0 0 #000}.text:focus.at-end::after{content:'';border-left:2px solid #000}" +
        ".status{font-size:13px;color:#333;min-height:1.2em}ol{padding-left:1.5em}li button{font:inherit;cursor:pointer}" +
        "li button.pick{border:0;background:none;text-align:left}li button.pick[aria-pressed=true]{font-weight:600}" +
        ".keys{font-size:12px;color:#555}.more{border:0;background:none;color:#0b5cad;text-decoration:underline;padding:0;font:inherit}",
        "<div class=\"wrap\"><aside><slot name=\"short-instructions\"></slot>" +
        "<p><button type=\"button\" class=\"more\">View full instructions</button></p>" +
        "<p class=\"keys\">Choose a label, then drag across the text (or move with the arrows, Shift+arrows to select, Enter to label). " +
        "1-9 label, [ ] select a span, Delete remove it.</p></aside>" +
        "<main><h2>" + crowd.escape(this.getAttribute("header") || "") + "</h2>" +
        "<div class=\"labels\" role=\"radiogroup\" aria-label=\"Label\">" + labels + "</div>" +
        "<div class=\"text\" tabindex=\"0\" role=\"application\" aria-label=\"Text to annotate\" aria-describedby=\"status\">" +
        chars + "</div><p class=\"status\" id=\"status\" role=\"status\"></p>" +
        "<ol class=\"entities\" aria-label=\"Entities\"></ol><slot></slot><div class=\"own-form\"></div></main></div>" +
        "<dialog aria-label=\"Instructions\"><slot name=\"full-instructions\"></slot>" +
        "<p><button type=\"button\" class=\"close\">Close</button></p></dialog>");
      var root = this.shadowRoot;
      this._textBox = root.querySelector(".text");
      this._spans = Array.from(this._textBox.children);
      root.querySelectorAll(".labels button").forEach((b) => {
        b.addEventListener("click", () => this._chooseLabel(Number(b.dataset.index)));
      });
      var dialog = root.querySelector("dialog");
      root.querySelector(".more").addEventListener("click", () => dialog.showModal());
      root.querySelector(".close").addEventListener("click", () => dialog.close());
      this._textBox.addEventListener("pointerdown", (e) => this._pointerDown(e));
      this._textBox.addEventListener("pointermove", (e) => this._pointerMove(e));
      window.addEventListener("pointerup", () => this._pointerUp());
      this._textBox.addEventListener("keydown", (e) => this._key(e));
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

    _readInitial() {
      if (!this.hasAttribute("initial-value")) return [];
      var data;
      try {
        data = crowd.parseLoose(this.getAttribute("initial-value"));
      } catch (e) {
        return [];  // a malformed initial-value starts from an unlabelled text
      }
      var n = this._chars.length;
      var known = this._labels.map(function (l) { return l.label; });
      var spans = (Array.isArray(data) ? data : []).map(function (d) {
        return { label: String(d.label), startOffset: Math.round(+d.startOffset), endOffset: Math.round(+d.endOffset) };
      }).filter(function (d) {
        return known.indexOf(d.label) !== -1 && d.startOffset >= 0 && d.endOffset <= n && d.startOffset < d.endOffset;
      });
      return spans.sort(function (a, b) { return a.startOffset - b.startOffset; });
    }

    _labelInfo(label) {
      var i = Math.max(0, this._labels.findIndex(function (l) { return l.label === label; }));
      return { colour: COLOURS[i % COLOURS.length], info: this._labels[i] || { short: label, full: label } };
    }

    _entityAt(i) {
      return this._entities.findIndex(function (e) { return e.startOffset <= i && i < e.endOffset; });
    }

    _charOf(e) {
      var el = this.shadowRoot.elementFromPoint(e.clientX, e.clientY);
      return el && el.parentNode === this._textBox && el.dataset.i !== undefined ? Number(el.dataset.i) : -1;
    }

    _pointerDown(e) {
      if (e.button !== 0) return;
      var i = this._charOf(e);
      if (i === -1) return;
      e.preventDefault();
      // No scroll on focus: a text partly out of view would move under the pointer, and the rest of
      // the drag would then read characters far from the ones dragged over.
      this._textBox.focus({ preventScroll: true });
      this._drag = { start: i, moved: false };
      this._anchor = i;
      this._caret = i;
      this._render();
    }

    _pointerMove(e) {
      if (!this._drag) return;
      var j = this._charOf(e);
      if (j === -1) return;
      if (j !== this._drag.start) this._drag.moved = true;
      if (!this._drag.moved) return;
      this._anchor = j >= this._drag.start ? this._drag.start : this._drag.start + 1;
      this._caret = j >= this._drag.start ? j + 1 : j;
      this._render();
    }

    _pointerUp() {
      var drag = this._drag;
      this._drag = null;
      if (!drag) return;
      if (drag.moved) {
        this._labelSelection();
      } else {
        // A click: select the labelled span under it, or just place the caret.
        this._selected = this._entityAt(drag.start);
        this._anchor = null;
        this._caret = drag.start;
        this._render();
      }
    }

    _chooseLabel(index) {
      this._label = this._labels[index].label;
      if (this._selected !== -1) {
        this._entities[this._selected].label = this._label;
        this._changed("Relabelled as " + this._labels[index].full + ".");
      } else {
        this._render();
      }
    }

    /* Label the selected characters (blanks at either end left out); spans it overlaps are replaced. */
    _labelSelection() {
      if (this._anchor === null || this._anchor === this._caret || !this._label) {
        this._say("Select some text first.");
        return;
      }
      var start = Math.min(this._anchor, this._caret);
      var end = Math.max(this._anchor, this._caret);
      while (start < end && /\s/u.test(this._chars[start])) start++;
      while (end > start && /\s/u.test(this._chars[end - 1])) end--;
      this._anchor = null;
      if (start === end) {
        this._render();
        return;
      }
      this._entities = this._entities.filter(function (e) { return e.endOffset <= start || e.startOffset >= end; });
      var entity = { label: this._label, startOffset: start, endOffset: end };
      this._entities.push(entity);
      this._entities.sort(function (a, b) { return a.startOffset - b.startOffset; });
      this._selected = this._entities.indexOf(entity);
      this._changed("Labelled \u201c" + this._chars.slice(start, end).join("") + "\u201d as " + this._labelInfo(this._label).info.full + ".");
    }

    _wordStep(from, dir) {
      var n = this._chars.length;
      var p = from;
      var isWord = (i) => i >= 0 && i < n && WORD.test(this._chars[i]);
      if (dir > 0) {
        while (p < n && !isWord(p)) p++;
        while (p < n && isWord(p)) p++;
      } else {
        while (p > 0 && !isWord(p - 1)) p--;
        while (p > 0 && isWord(p - 1)) p--;
      }
      return p;
    }

    _key(e) {
      var n = this._chars.length;
      var digit = /^[1-9]$/.test(e.key) ? Number(e.key) - 1 : -1;
      var move = null;
      if (e.key === "ArrowLeft" || e.key === "ArrowRight") {
        var dir = e.key === "ArrowRight" ? 1 : -1;
        move = e.ctrlKey || e.altKey ? this._wordStep(this._caret, dir) : Math.max(0, Math.min(n, this._caret + dir));
      } else if (e.key === "Home" || e.key === "End") {
        move = e.key === "Home" ? 0 : n;
      }
      if (move !== null) {
        if (e.shiftKey && this._anchor === null) this._anchor = this._caret;
        if (!e.shiftKey) this._anchor = null;
        this._caret = move;
        this._selected = -1;
        this._render();
        this._sayPosition();
      } else if (digit !== -1 && digit < this._labels.length) {
        this._chooseLabel(digit);
      } else if (e.key === "Enter" || e.key === " ") {
        this._labelSelection();
      } else if ((e.key === "[" || e.key === "]") && this._entities.length) {
        var count = this._entities.length;
        this._selected = e.key === "]" ? (this._selected + 1) % count : (this._selected - 1 + count) % count;
        this._anchor = null;
        this._caret = this._entities[this._selected].startOffset;
        this._render();
        this._say(this._describe(this._entities[this._selected]) + " selected.");
      } else if ((e.key === "Delete" || e.key === "Backspace") && this._selected !== -1) {
        var gone = this._entities.splice(this._selected, 1)[0];
        this._selected = -1;
        this._changed("Removed " + this._describe(gone) + ".");
      } else if (e.key === "Escape" && (this._selected !== -1 || this._anchor !== null)) {
        this._selected = -1;
        this._anchor = null;
        this._render();
      } else {
        return;
      }
      e.preventDefault();
    }

    _describe(entity) {
      return this._labelInfo(entity.label).info.full + ": \u201c" + this._chars.slice(entity.startOffset, entity.endOffset).join("") + "\u201d";
    }

    _sayPosition() {
      if (this._anchor !== null && this._anchor !== this._caret) {
        var a = Math.min(this._anchor, this._caret);
        var b = Math.max(this._anchor, this._caret);
        this._say("Selected \u201c" + this._chars.slice(a, b).join("") + "\u201d.");
      } else {
        var word = this._chars.slice(this._caret, this._wordStep(this._caret, 1)).join("").trim();
        this._say(this._caret >= this._chars.length ? "End of the text." : "Before \u201c" + word + "\u201d.");
      }
    }

    _say(text) { this.shadowRoot.querySelector(".status").textContent = text; }

    _changed(message) {
      this._render();
      if (message) this._say(message);
      this.dispatchEvent(new Event("change", { bubbles: true }));
    }

    _render() {
      var root = this.shadowRoot;
      root.querySelectorAll(".labels button").forEach((b, i) => {
        b.setAttribute("aria-checked", String(this._labels[i].label === this._label));
      });
      var a = this._anchor === null ? -1 : Math.min(this._anchor, this._caret);
      var b = this._anchor === null ? -1 : Math.max(this._anchor, this._caret);
      this._spans.forEach((span) => {
        span.className = "";
        span.removeAttribute("data-tag");
        span.style.removeProperty("--c");
      });
      this._entities.forEach((entity, k) => {
        var look = this._labelInfo(entity.label);
        for (var i = entity.startOffset; i < entity.endOffset; i++) {
          var span = this._spans[i];
          span.classList.add("ent");
          if (k === this._selected) span.classList.add("chosen");
          span.style.setProperty("--c", look.colour);
        }
        this._spans[entity.startOffset].dataset.tag = look.info.short;
      });
      for (var i = Math.max(0, a); i < b; i++) this._spans[i].classList.add("sel");
      if (this._caret < this._spans.length) this._spans[this._caret].classList.add("caret");
      this._textBox.classList.toggle("at-end", this._caret >= this._spans.length);
      var list = root.querySelector(".entities");
      list.textContent = "";
      this._entities.forEach((entity, k) => {
        var item = document.createElement("li");
        var pick = document.createElement("button");
        pick.type = "button";
        pick.className = "pick";
        pick.setAttribute("aria-pressed", String(k === this._selected));
        pick.textContent = this._describe(entity) + " (" + entity.startOffset + "\u2013" + entity.endOffset + ")";
        pick.addEventListener("click", () => {
          this._selected = k;
          this._caret = entity.startOffset;
          this._anchor = null;
          this._render();
          this._textBox.focus();
        });
        var remove = document.createElement("button");
        remove.type = "button";
        remove.textContent = "\u00d7";
        remove.setAttribute("aria-label", "Remove " + this._describe(entity));
        remove.addEventListener("click", () => {
          this._entities.splice(k, 1);
          this._selected = -1;
          this._changed("Removed " + this._describe(entity) + ".");
        });
        item.append(pick, " ", remove);
        list.appendChild(item);
      });
    }

    get value() {
      return { entities: this._entities.map(function (e) {
        return { endOffset: e.endOffset, label: e.label, startOffset: e.startOffset };
      }) };
    }
    crowdAnswer() { return this.value; }
    crowdReset() {
      this._entities = this._readInitial();
      this._selected = -1;
      this._anchor = null;
      this._render();
    }
    focus() { if (this._textBox) this._textBox.focus(); }
  }

  crowd.define("crowd-entity-annotation", CrowdEntityAnnotation);
})();
