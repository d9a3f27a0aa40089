/*
 * crowd-classifier ({label}) and crowd-classifier-multi-select ({labels: [...]}).
 * Regions: <classification-target>, <short-instructions>, <full-instructions header>.
 * Keyboard: Tab to the choices, arrow keys move (and, in the single choice, pick),
 * Space/Enter pick, and the digit keys 1-9 pick the category with that number.
 */
(function () {
  "use strict";
  var crowd = window.hitforgeCrowd;
  var REGIONS = ["classification-target", "short-instructions", "full-instructions", "worker-comment"];

  function whenParsed(fn) {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", fn);
    else queueMicrotask(fn);
  }

  class Classifier extends HTMLElement {
    connectedCallback() {
      if (this.shadowRoot) return;
      this._chosen = [];
      var multi = this.constructor.multi;
      var categories = crowd.parseList(this.getAttribute("categories")).map(String);
      var exclusion = this.getAttribute("exclusion-category");
      this._exclusion = null;
      if (multi && exclusion) {
        var text = /text\s*:\s*(['"])((?:(?!\1).)*)\1/.exec(exclusion);
        this._exclusion = text ? text[2] : exclusion;
        categories.push(this._exclusion);
      }
      this._categories = categories;
      var role = multi ? "checkbox" : "radio";
      var buttons = categories.map(function (c, i) {
        return "<button type=\"button\" role=\"" + role + "\" aria-checked=\"false\" tabindex=\"" + (i ? -1 : 0) +
          "\" data-index=\"" + i + "\">" + (i < 9 ? "<kbd>" + (i + 1) + "</kbd> " : "") + crowd.escape(c) + "</button>";
      }).join("");
      crowd.shadow(this,
        ":host{display:block;margin:.5em 0}.wrap{display:flex;gap:1em;flex-wrap:wrap}" +
        "aside{flex:0 0 14em;border-right:1px solid #ddd;padding-right:1em}main{flex:1;min-width:16em}" +
        "h2{font-size:16px;margin:.2em 0 .6em}.choices{display:flex;flex-direction:column;gap:.3em;margin-top:1em}" +
        "button{font:inherit;text-align:left;padding:.4em .6em;border:1px solid #999;border-radius:4px;background:#fff;cursor:pointer}" +
        "button[aria-checked=true]{background:#0b5cad;color:#fff;border-color:#0b5cad}kbd{font-size:11px;opacity:.7}" +
        "dialog{max-width:40em}.more{border:0;background:none;color:#0b5cad;text-decoration:underline;padding:0}" +
        this.extraCss(),
        "<div class=\"wrap\"><aside><slot name=\"short-instructions\"></slot>" +
        "<p><button type=\"button\" class=\"more\">View full instructions</button></p></aside>" +
        "<main><h2>" + crowd.escape(this.getAttribute("header") || "") + "</h2>" +
        this.targetHtml() +
        "<div class=\"choices\" role=\"" + (multi ? "group" : "radiogroup") + "\" aria-label=\"" +
        crowd.escape(this.getAttribute("header") || this.getAttribute("name") || "Categories") + "\">" + buttons + "</div>" +
        this.commentHtml() + "</main></div>" +
        "<dialog><h2 class=\"full-header\"></h2><slot name=\"full-instructions\"></slot>" +
        "<p><button type=\"button\" class=\"close\">Close</button></p></dialog><slot></slot>");
      var root = this.shadowRoot;
      this._choiceButtons = Array.from(root.querySelectorAll(".choices button"));
      this._choiceButtons.forEach((b) => b.addEventListener("click", () => this._pick(Number(b.dataset.index))));
      root.querySelector(".choices").addEventListener("keydown", (e) => this._key(e));
      this.addEventListener("keydown", (e) => {
        var digit = /^[1-9]$/.test(e.key) ? Number(e.key) - 1 : -1;
        var typing = e.composedPath()[0];
        if (digit < 0 || digit >= categories.length || /^(input|textarea|select)$/.test(typing.localName) ||
            typing.isContentEditable) return;
        e.preventDefault();
        this._pick(digit);
        this._choiceButtons[digit].focus();
      });
      var dialog = root.querySelector("dialog");
      root.querySelector(".more").addEventListener("click", () => dialog.showModal());
      root.querySelector(".close").addEventListener("click", () => dialog.close());
      whenParsed(() => {
        Array.from(this.children).forEach((child) => {
          if (REGIONS.indexOf(child.localName) !== -1) child.setAttribute("slot", child.localName);
          if (child.localName === "full-instructions") {
            root.querySelector(".full-header").textContent = child.getAttribute("header") || "Instructions";
          }
        });
        root.querySelector(".more").parentNode.hidden = !this.querySelector(":scope > full-instructions");
        this.parsed(root);
      });
      this.built(root);
    }
    /* Hooks for crowd-image-classifier: what is classified, a comment, and setting them up. */
    targetHtml() { return "<slot name=\"classification-target\"></slot>"; }
    commentHtml() { return "<slot name=\"worker-comment\"></slot>"; }
    extraCss() { return ""; }
    built() {}
    parsed() {}
    /** The answer's extra keys (the image classifiers' workerComment). */
    extraAnswer() { return {}; }
    _key(e) {
      var step = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1 }[e.key];
      var at = this._choiceButtons.indexOf(e.composedPath()[0]);
      if (!step || at === -1) return;
      e.preventDefault();
      var next = (at + step + this._choiceButtons.length) % this._choiceButtons.length;
      if (!this.constructor.multi) this._pick(next);
      this._choiceButtons.forEach(function (b, i) { b.tabIndex = i === next ? 0 : -1; });
      this._choiceButtons[next].focus();
    }
    _pick(index) {
      var label = this._categories[index];
      if (!this.constructor.multi) {
        this._chosen = [label];
      } else if (this._chosen.indexOf(label) !== -1) {
        this._chosen = this._chosen.filter(function (c) { return c !== label; });
      } else if (label === this._exclusion) {
        this._chosen = [label];  // "none of these" clears the other choices
      } else {
        var none = this._exclusion;
        this._chosen = this._chosen.filter(function (c) { return c !== none; }).concat([label]);
      }
      var chosen = this._chosen;
      this._choiceButtons.forEach(function (b, i) {
        b.setAttribute("aria-checked", String(chosen.indexOf(this._categories[i]) !== -1));
        b.tabIndex = i === index ? 0 : -1;
      }, this);
      this.dispatchEvent(new Event("change", { bubbles: true }));
    }
    get value() {
      if (this.constructor.multi) {
        return Object.assign({ labels: this._categories.filter((c) => this._chosen.indexOf(c) !== -1) }, this.extraAnswer());
      }
      return this._chosen.length ? Object.assign({ label: this._chosen[0] }, this.extraAnswer()) : undefined;
    }
    crowdAnswer() { return this.value; }
    crowdProblem() {
      if (this._chosen && this._chosen.length) return null;
      return "Choose " + (this.constructor.multi ? "at least one category" : "a category") + " for \u201c" +
        (this.getAttribute("header") || this.getAttribute("name")) + "\u201d.";
    }
    focus() { if (this._choiceButtons) this._choiceButtons[0].focus(); }
    crowdReset() { this._chosen = []; this._choiceButtons.forEach(function (b) { b.setAttribute("aria-checked", "false"); }); }
  }

  class CrowdClassifier extends Classifier {}
  CrowdClassifier.multi = false;
  class CrowdClassifierMultiSelect extends Classifier {}
  CrowdClassifierMultiSelect.multi = true;
  crowd.Classifier = Classifier;
  crowd.define("crowd-classifier", CrowdClassifier);
  crowd.define("crowd-classifier-multi-select", CrowdClassifierMultiSelect);
})();
