/*
 * Form-input crowd elements: crowd-button, crowd-input, crowd-text-area,
 * crowd-checkbox, crowd-radio-button, crowd-radio-group, crowd-toggle-button,
 * crowd-slider. Each named one answers crowdAnswer() for <crowd-form>
 * (undefined leaves it out) and, where it can be invalid, crowdProblem().
 */
(function () {
  "use strict";
  var crowd = window.hitforgeCrowd;

  class CrowdButton extends HTMLElement {
    static get observedAttributes() { return ["disabled", "variant", "loading"]; }
    connectedCallback() {
      if (!this.shadowRoot) {
        // href makes it a link styled as a button (with target), as AWS documents.
        var href = this.getAttribute("href");
        var tag = href !== null ? "a" : "button";
        var iconUrl = this.getAttribute("icon-url");
        var icon = iconUrl ? "<img class=\"icon\" alt=\"\" src=\"" + crowd.escape(iconUrl) + "\">"
          : this.getAttribute("icon") ? "<span class=\"icon\" aria-hidden=\"true\">" + crowd.escape(crowd.glyph(this.getAttribute("icon"))) + "</span>"
          : "";
        var right = this.getAttribute("icon-align") === "right";
        var attrs = href !== null ? " href=\"" + crowd.escape(href) + "\"" +
          (this.hasAttribute("target") ? " target=\"" + crowd.escape(this.getAttribute("target")) + "\"" : "") : " type=\"button\"";
        crowd.shadow(this,
          "button,a{font:inherit;padding:.45em 1.1em;border-radius:4px;border:1px solid #888;background:#fff;cursor:pointer;" +
          "color:inherit;text-decoration:none;display:inline-flex;gap:.35em;align-items:center}" +
          ".primary{background:#0b5cad;color:#fff;border-color:#0b5cad}" +
          ".link{border:0;background:none;color:#0b5cad;text-decoration:underline}.icon img,img.icon{width:1.1em;height:1.1em}" +
          "button[disabled]{opacity:.5;cursor:not-allowed}.spinner{display:none}[aria-busy=true] .spinner{display:inline}",
          "<" + tag + attrs + " part=\"button\"><span class=\"spinner\" aria-hidden=\"true\">\u231b</span>" +
          (right ? "" : icon) + "<slot></slot>" + (right ? icon : "") + "</" + tag + ">");
        this.shadowRoot.querySelector(tag).addEventListener("click", (event) => {
          if (this.disabled || this.hasAttribute("loading")) return;
          var form = this.closest("crowd-form");
          var action = this.getAttribute("form-action");
          if (form && action === "submit") form.submit();
          else if (form && action === "reset") form.reset();
        });
      }
      this.attributeChangedCallback();
    }
    attributeChangedCallback() {
      var button = this.shadowRoot && this.shadowRoot.querySelector("button, a");
      if (!button) return;
      // loading wins over disabled: a busy button cannot be pressed either.
      var loading = this.hasAttribute("loading");
      if (button.localName === "button") button.disabled = this.disabled || loading;
      else if (this.disabled || loading) button.setAttribute("aria-disabled", "true");
      button.setAttribute("aria-busy", String(loading));
      button.className = this.getAttribute("variant") || "normal";
    }
    focus() { this.shadowRoot.querySelector("button, a").focus(); }
  }
  crowd.boolProp(CrowdButton, "disabled");
  crowd.define("crowd-button", CrowdButton);

  /* crowd-input and crowd-text-area share the text-field behaviour. */
  class TextField extends HTMLElement {
    connectedCallback() {
      if (this._field) return;
      var multi = this.localName === "crowd-text-area";
      var attrs = "";
      ["type", "placeholder", "min", "max", "step", "pattern", "autofocus", "rows", "autocomplete", "accept", "multiple", "capture"].forEach((a) => {
        if (this.hasAttribute(a) && !(multi && a === "type")) attrs += " " + a + "=\"" + crowd.escape(this.getAttribute(a)) + "\"";
      });
      if (this.hasAttribute("max-length")) attrs += " maxlength=\"" + crowd.escape(this.getAttribute("max-length")) + "\"";
      if (this.hasAttribute("min-length")) attrs += " minlength=\"" + crowd.escape(this.getAttribute("min-length")) + "\"";
      var label = this.getAttribute("label") || "";
      var control = multi ? "<textarea" + attrs + "></textarea>" : "<input" + attrs + ">";
      crowd.shadow(this,
        ":host{display:block;margin:.4em 0}label{display:block}span.label{display:block;color:#444;margin-bottom:.2em}" +
        "input,textarea{font:inherit;width:100%;box-sizing:border-box;padding:.35em}" +
        ".counter{font-size:12px;color:#666;text-align:right}.counter[hidden]{display:none}" +
        ".error{font-size:12px;color:#b00020}.error[hidden]{display:none}",
        "<label><span class=\"label\">" + crowd.escape(label) + "</span>" + control + "</label>" +
        "<div class=\"error\" id=\"error\" hidden></div><div class=\"counter\" hidden></div>");
      this._field = this.shadowRoot.querySelector(multi ? "textarea" : "input");
      this._field.value = this._pending !== undefined ? this._pending : (this.getAttribute("value") || "");
      this._field.defaultValue = this.getAttribute("value") || "";
      if (!label) this._field.setAttribute("aria-label", this.getAttribute("placeholder") || this.getAttribute("name") || "");
      this._field.disabled = this.hasAttribute("disabled");
      this._field.required = this.hasAttribute("required");
      var allowed = this.getAttribute("allowed-pattern");
      if (allowed) {
        var one = new RegExp(allowed);
        this._field.addEventListener("beforeinput", (event) => {
          if (event.data && !Array.from(event.data).every(function (ch) { return one.test(ch); })) event.preventDefault();
        });
      }
      if (multi) {
        // It grows with its text, as AWS's did, up to max-rows (then it scrolls).
        var grow = () => {
          var lines = this._field.value.split("\n").length;
          var maxRows = parseInt(this.getAttribute("max-rows") || "0", 10) || Infinity;
          this._field.rows = Math.min(Math.max(lines, parseInt(this.getAttribute("rows") || "2", 10)), maxRows);
        };
        this._field.addEventListener("input", grow);
        grow();
      }
      this._field.addEventListener("input", () => this._count());
      if (this.hasAttribute("auto-validate")) {
        // Checked as the worker types once the field has been left, and when it is left.
        this._field.setAttribute("aria-describedby", "error");
        this._field.addEventListener("blur", () => { this._touched = true; this._validate(); });
        this._field.addEventListener("input", () => { if (this._touched) this._validate(); });
      }
      if (this.hasAttribute("auto-focus") && this.getAttribute("auto-focus") !== "false") {
        setTimeout(() => this._field.focus(), 0);
      }
      this._field.addEventListener("change", () => this.dispatchEvent(new Event("change", { bubbles: true })));
      this._count();
    }
    _count() {
      var counter = this.shadowRoot.querySelector(".counter");
      if (!this.hasAttribute("char-counter")) return;
      var max = this.getAttribute("max-length");
      counter.hidden = false;
      counter.textContent = this._field.value.length + (max ? " / " + max : "");
    }
    get value() { return this._field ? this._field.value : (this._pending !== undefined ? this._pending : this.getAttribute("value") || ""); }
    set value(text) {
      if (this._field) { this._field.value = text == null ? "" : String(text); this._count(); }
      else this._pending = text == null ? "" : String(text);
    }
    focus() { if (this._field) this._field.focus(); }
    crowdAnswer() { return this.disabled || this.value === "" ? undefined : this.value; }
    crowdProblem() {
      if (this.disabled || !this._field) return null;
      var name = this.getAttribute("label") || this.getAttribute("name") || "field";
      if (this.required && this.value === "") return "\u201c" + name + "\u201d is required.";
      var problem = this._invalid();
      if (problem && this.hasAttribute("auto-validate")) this._validate();
      return problem ? "\u201c" + name + "\u201d: " + problem : null;
    }
    /* Why the value is not accepted (min-length included: the browser checks it only after typing), or null. */
    _invalid() {
      var min = parseInt(this.getAttribute("min-length") || "0", 10);
      var tooShort = this.value !== "" && this.value.length < min;
      if (!tooShort && this._field.checkValidity()) return null;
      return this.getAttribute("error-message") ||
        (tooShort ? "at least " + min + " characters are needed." : this._field.validationMessage);
    }
    _validate() {
      var problem = this._invalid();
      var box = this.shadowRoot.querySelector(".error");
      box.hidden = !problem;
      box.textContent = problem || "";
      this._field.setAttribute("aria-invalid", String(!!problem));
    }
    crowdReset() { this.value = this.getAttribute("value") || ""; }
  }
  crowd.boolProp(TextField, "disabled");
  Object.defineProperty(TextField.prototype, "required", {
    get: function () { return this.hasAttribute("required"); },
    set: function (on) { this.toggleAttribute("required", !!on); if (this._field) this._field.required = !!on; },
  });
  class CrowdInput extends TextField {}
  class CrowdTextArea extends TextField {}
  crowd.define("crowd-input", CrowdInput);
  crowd.define("crowd-text-area", CrowdTextArea);

  /*
   * A choice that answers {"<value>": checked}: crowd-checkbox, crowd-radio-button,
   * crowd-toggle-button. The host carries the ARIA role, so its text is its name.
   */
  class Choice extends HTMLElement {
    static get observedAttributes() { return ["checked", "disabled", "invalid"]; }
    connectedCallback() {
      if (!this.shadowRoot) {
        crowd.shadow(this, this.constructor.css, this.constructor.html);
        this.setAttribute("role", this.constructor.role);
        this._initial = this.checked;
        this.addEventListener("click", () => this._activate());
        this.addEventListener("keydown", (event) => {
          if (event.key === " " || (event.key === "Enter" && this.constructor.role !== "radio")) {
            event.preventDefault();
            this._activate();
          }
        });
      }
      if (!this.hasAttribute("tabindex") && !this._inGroup()) this.setAttribute("tabindex", "0");
      this.attributeChangedCallback();
    }
    attributeChangedCallback() {
      this.setAttribute("aria-checked", String(this.checked));
      this.setAttribute("aria-disabled", String(this.disabled));
      // invalid (documented for crowd-toggle-button): in the alert colour while off.
      if (this.hasAttribute("invalid")) this.setAttribute("aria-invalid", String(!this.checked));
    }
    _inGroup() { return false; }
    _activate() {
      if (this.disabled) return;
      this.toggle();
      this.dispatchEvent(new Event("change", { bubbles: true }));
    }
    toggle() { this.checked = !this.checked; }
    get value() { return this.hasAttribute("value") ? this.getAttribute("value") : "on"; }
    set value(v) { this.setAttribute("value", v); }
    crowdAnswer() {
      var answer = {};
      answer[this.value] = this.checked;
      return answer;
    }
    crowdProblem() {
      return this.required && !this.checked && !this.disabled
        ? "\u201c" + (this.textContent.trim() || this.getAttribute("name")) + "\u201d must be checked." : null;
    }
    crowdReset() { this.checked = this._initial; }
  }
  crowd.boolProp(Choice, "checked");
  crowd.boolProp(Choice, "disabled");
  crowd.boolProp(Choice, "required");
  var BOX = ":host{display:inline-flex;align-items:center;gap:.4em;cursor:pointer;margin:.2em .6em .2em 0;outline-offset:2px}" +
    ":host([aria-disabled=true]){opacity:.5;cursor:not-allowed}" +
    ".box{width:16px;height:16px;border:2px solid #555;display:inline-block;box-sizing:border-box}";

  class CrowdCheckbox extends Choice {}
  CrowdCheckbox.role = "checkbox";
  CrowdCheckbox.css = BOX + ".box{border-radius:3px}:host([checked]) .box{background:#0b5cad;border-color:#0b5cad}";
  CrowdCheckbox.html = "<span class=\"box\"></span><slot></slot>";
  crowd.define("crowd-checkbox", CrowdCheckbox);

  class CrowdToggleButton extends Choice {}
  CrowdToggleButton.role = "switch";
  CrowdToggleButton.css = BOX + ".box{width:30px;border-radius:8px;position:relative}" +
    ".box::after{content:'';position:absolute;top:1px;left:1px;width:10px;height:10px;border-radius:50%;background:#555}" +
    ":host([checked]) .box{background:#0b5cad;border-color:#0b5cad}:host([checked]) .box::after{left:15px;background:#fff}" +
    ":host([invalid]:not([checked])) .box{border-color:#b00020}:host([invalid]:not([checked])) .box::after{background:#b00020}";
  CrowdToggleButton.html = "<span class=\"box\"></span><slot></slot>";
  crowd.define("crowd-toggle-button", CrowdToggleButton);

  /*
   * Radio buttons are exclusive within their crowd-radio-group, or, outside any
   * group, with the other buttons of the same name. Arrow keys move the choice.
   */
  class CrowdRadioButton extends Choice {
    _inGroup() { return !!this.closest("crowd-radio-group"); }
    _peers() {
      var group = this.closest("crowd-radio-group");
      if (group) return group._buttons();
      var name = this.getAttribute("name");
      var form = this.closest("crowd-form") || document;
      return Array.from(form.querySelectorAll("crowd-radio-button")).filter(function (b) {
        return !b.closest("crowd-radio-group") && name && b.getAttribute("name") === name;
      });
    }
    toggle() {
      var me = this;
      this._peers().forEach(function (b) { if (b !== me) b.checked = false; });
      this.checked = true;
      var group = this.closest("crowd-radio-group");
      if (group) group._rove();
    }
  }
  CrowdRadioButton.role = "radio";
  CrowdRadioButton.css = BOX + ".box{border-radius:50%}:host([checked]) .box{border:5px solid #0b5cad}";
  CrowdRadioButton.html = "<span class=\"box\"></span><slot></slot>";
  crowd.define("crowd-radio-button", CrowdRadioButton);

  class CrowdRadioGroup extends HTMLElement {
    connectedCallback() {
      if (this._ready) return;
      this._ready = true;
      this.setAttribute("role", "radiogroup");
      this.style.display = this.style.display || "block";
      this.addEventListener("keydown", (event) => {
        var step = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1 }[event.key];
        var buttons = this._buttons().filter(function (b) { return !b.disabled; });
        var at = buttons.indexOf(event.target);
        if (!step || at === -1) return;
        event.preventDefault();
        var next = buttons[(at + step + buttons.length) % buttons.length];
        next._activate();
        next.focus();
      });
      // Buttons are parsed after the group: set the roving tab stop once they are there.
      var rove = () => this._rove();
      if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", rove);
      else queueMicrotask(rove);
    }
    _buttons() { return Array.from(this.querySelectorAll("crowd-radio-button")); }
    _rove() {
      var buttons = this._buttons();
      var stop = buttons.find(function (b) { return b.checked; }) || buttons[0];
      buttons.forEach(function (b) { b.setAttribute("tabindex", b === stop ? "0" : "-1"); });
    }
    get value() {
      var on = this._buttons().find(function (b) { return b.checked; });
      return on ? on.value : "";
    }
  }
  crowd.define("crowd-radio-group", CrowdRadioGroup);

  /*
   * crowd-slider: a native range input (arrow keys, Home/End), optional pin and number box.
   * The track is drawn under the (transparent) range input so that secondary-progress
   * (e.g. how much of a video is buffered) can be shown in it, coloured by the page's
   * --crowd-slider-secondary-color, as AWS documents.
   */
  class CrowdSlider extends HTMLElement {
    static get observedAttributes() { return ["secondary-progress", "disabled"]; }
    connectedCallback() {
      if (this._range) return;
      var attrs = "";
      ["min", "max", "step"].forEach((a) => {
        if (this.hasAttribute(a)) attrs += " " + a + "=\"" + crowd.escape(this.getAttribute(a)) + "\"";
      });
      var label = this.getAttribute("label") || this.getAttribute("name") || "";
      crowd.shadow(this,
        ":host{display:flex;align-items:center;gap:.6em;margin:.4em 0}" +
        ".bar{position:relative;flex:1;display:flex;align-items:center;min-height:20px}" +
        ".track{position:absolute;left:8px;right:8px;height:4px;border-radius:2px;background:#ccc;overflow:hidden}" +
        ".track div{position:absolute;top:0;bottom:0;left:0}" +
        ".secondary{background:var(--crowd-slider-secondary-color,var(--paper-slider-secondary-color,#9ec5ea))}" +
        ".primary{background:#0b5cad}:host([disabled]) .primary{background:#999}" +
        "input[type=range]{-webkit-appearance:none;appearance:none;background:transparent;position:relative;width:100%;margin:0}" +
        "input[type=range]::-webkit-slider-thumb{-webkit-appearance:none;width:16px;height:16px;border-radius:50%;background:#0b5cad}" +
        "input[type=range]::-moz-range-thumb{width:16px;height:16px;border:0;border-radius:50%;background:#0b5cad}" +
        "input[type=range]:focus-visible{outline:2px solid #0b5cad;outline-offset:2px}" +
        "input[type=number]{width:5em;font:inherit}.pin{min-width:2.5em;text-align:center}",
        "<div class=\"bar\"><div class=\"track\" part=\"track\"><div class=\"secondary\" part=\"secondary-progress\"></div>" +
        "<div class=\"primary\" part=\"progress\"></div></div>" +
        "<input type=\"range\"" + attrs + " aria-label=\"" + crowd.escape(label) + "\"></div>" +
        (this.hasAttribute("pin") ? "<output class=\"pin\"></output>" : "") +
        (this.hasAttribute("editable") ? "<input type=\"number\"" + attrs + " aria-label=\"" + crowd.escape(label) + " value\">" : ""));
      this._range = this.shadowRoot.querySelector("input[type=range]");
      this._number = this.shadowRoot.querySelector("input[type=number]");
      // Without a value it starts at min, as AWS's slider did (a native range starts half way).
      this._range.value = this._pending !== undefined ? this._pending : (this.getAttribute("value") || this._range.min || 0);
      this._range.addEventListener("input", () => { this._moved = true; this._show(); });
      this._range.addEventListener("change", () => this.dispatchEvent(new Event("change", { bubbles: true })));
      if (this._number) {
        this._number.addEventListener("change", () => {
          this._range.value = this._number.value;
          this._moved = true;
          this._show();
          this.dispatchEvent(new Event("change", { bubbles: true }));
        });
      }
      this.attributeChangedCallback();
    }
    attributeChangedCallback() {
      if (!this._range) return;
      this._range.disabled = this.hasAttribute("disabled");
      if (this._number) this._number.disabled = this._range.disabled;
      this._show();
    }
    /* Where ``value`` sits along the track, in percent. */
    _percent(value) {
      var min = Number(this._range.min || 0);
      var max = Number(this._range.max || 100);
      var at = max > min ? (Number(value) - min) * 100 / (max - min) : 0;
      return Math.max(0, Math.min(100, isNaN(at) ? 0 : at));
    }
    _show() {
      var pin = this.shadowRoot.querySelector(".pin");
      if (pin) pin.textContent = this._range.value;
      if (this._number) this._number.value = this._range.value;
      this.shadowRoot.querySelector(".primary").style.width = this._percent(this._range.value) + "%";
      var secondary = this.getAttribute("secondary-progress");
      this.shadowRoot.querySelector(".secondary").style.width = (secondary === null ? 0 : this._percent(secondary)) + "%";
    }
    get value() { return this._range ? Number(this._range.value) : Number(this._pending || this.getAttribute("value") || 0); }
    set value(v) {
      if (this._range) { this._range.value = v; this._show(); } else this._pending = String(v);
    }
    get secondaryProgress() { return Number(this.getAttribute("secondary-progress") || 0); }
    set secondaryProgress(v) { this.setAttribute("secondary-progress", String(v)); }
    focus() { if (this._range) this._range.focus(); }
    crowdAnswer() { return this.hasAttribute("disabled") ? undefined : this.value; }
    /* required: the worker must set it, unless the page preset a value (AWS: the default without input). */
    crowdProblem() {
      if (!this.required || this.hasAttribute("disabled") || this._moved || this.hasAttribute("value") || this._pending !== undefined) return null;
      return "\u201c" + (this.getAttribute("label") || this.getAttribute("name") || "slider") + "\u201d needs a value: move the slider.";
    }
    crowdReset() { this.value = this.getAttribute("value") || (this._range && this._range.min) || 0; this._moved = false; }
  }
  crowd.boolProp(CrowdSlider, "disabled");
  crowd.boolProp(CrowdSlider, "required");
  crowd.define("crowd-slider", CrowdSlider);
})();
