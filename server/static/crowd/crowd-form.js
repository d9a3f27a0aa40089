/*
 * hitforge's crowd HTML elements: <crowd-form> and its answer formats.
 *
 * Served in place of https://assets.crowd.aws/crowd-html-elements.js (and its
 * -without-ce-polyfill variant) by server/worker_site/html_question.py; that
 * file (crowd-html-elements.js) loads this one and the element files.
 * The form posts to this site's /mturk/externalSubmit with the assignment id
 * and the signed token from the frame URL, exactly as externalHIT_v1.js does
 * (on an ExternalQuestion page, to turkSubmitTo's).
 */
(function () {
  "use strict";
  var crowd = (window.hitforgeCrowd = window.hitforgeCrowd || {});
  var NOT_AVAILABLE = "ASSIGNMENT_ID_NOT_AVAILABLE";
  var params = new URLSearchParams(window.location.search);
  // Native controls whose value is a string under their name (empty ones are left out).
  var SKIPPED_TYPES = ["submit", "button", "reset", "image", "file"];
  var SUBMITS = 'crowd-button[form-action="submit"], button[type="submit"], button:not([type]), input[type="submit"]';

  crowd.param = function (name) {
    return params.has(name) ? params.get(name) : "";
  };
  /* Where answers go: this site inside hitforge's HTMLQuestion frame (which carries the
   * signed token and may post nowhere else); on an ExternalQuestion page that loads these
   * elements from hitforge, turkSubmitTo's externalSubmit, as AWS's elements did. */
  crowd.submitTarget = function () {
    var submitTo = params.has("hitforgeToken") ? "" : crowd.param("turkSubmitTo");
    if (!/^(https?:)?\/\//.test(submitTo)) {
      return new URL("/mturk/externalSubmit", window.location.href).href;
    }
    return submitTo.replace(/\/+$/, "") + "/mturk/externalSubmit";
  };
  crowd.inPreview = function () {
    var id = crowd.param("assignmentId");
    return id === "" || id === NOT_AVAILABLE;
  };

  /* Merge {value: bool} objects (checkbox groups) and set everything else. */
  function put(answers, name, value) {
    var old = answers[name];
    if (old && typeof old === "object" && !Array.isArray(old) && value && typeof value === "object" &&
        !Array.isArray(value)) {
      Object.assign(old, value);
    } else {
      answers[name] = value;
    }
  }

  function nativeAnswer(el) {
    if (el.disabled) return undefined;
    var tag = el.localName;
    if (tag === "input") {
      var type = (el.getAttribute("type") || "text").toLowerCase();
      if (SKIPPED_TYPES.indexOf(type) !== -1) return undefined;
      // MTurk's serializer treated native choice inputs like crowd-radio-button.
      if (type === "radio" || type === "checkbox") {
        var choice = {};
        choice[el.getAttribute("value") === null ? "on" : el.value] = el.checked;
        return choice;
      }
    }
    if (tag === "select" && el.multiple) {
      var picked = Array.prototype.filter.call(el.options, function (o) { return o.selected; });
      return picked.length ? picked.map(function (o) { return o.value; }) : undefined;
    }
    return el.value === "" ? undefined : el.value;
  }

  /* The taskAnswers object: every named crowd element and native control, in document order. */
  crowd.collect = function (root) {
    var answers = {};
    var nodes = root.querySelectorAll("[name]");
    for (var i = 0; i < nodes.length; i++) {
      var el = nodes[i];
      var name = el.getAttribute("name");
      if (!name) continue;
      var value;
      if (typeof el.crowdAnswer === "function") {
        value = el.crowdAnswer();
      } else if (el.localName === "input" || el.localName === "select" || el.localName === "textarea") {
        value = nativeAnswer(el);
      } else {
        continue;
      }
      if (value !== undefined) put(answers, name, value);
    }
    return answers;
  };

  /*
   * An annotation element used on its own, with no form around it (AWS's
   * crowd-entity-annotation is meant to be used so): give it a crowd-form of its
   * own inside ``container`` (in its shadow root), answering the element under its
   * name plus whatever a page's script puts into that form. Inside a page's form
   * it does nothing: that form answers for it.
   */
  crowd.ownForm = function (host, container) {
    if (host.closest("crowd-form, form") || host._ownForm) return null;
    var form = document.createElement("crowd-form");
    form._hosts = [host];
    var answerFormat = host.getAttribute("answer-format");
    if (answerFormat) form.setAttribute("answer-format", answerFormat);
    host._ownForm = form;
    container.appendChild(form);
    return form;
  };

  /* flatten-objects: one field per dotted path; arrays stay JSON text under their key. */
  crowd.flatten = function (value, prefix, out) {
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      Object.keys(value).forEach(function (key) {
        crowd.flatten(value[key], prefix ? prefix + "." + key : key, out);
      });
    } else if (Array.isArray(value) || value === null) {
      out.push([prefix, JSON.stringify(value)]);
    } else {
      out.push([prefix, String(value)]);
    }
    return out;
  };

  function problems(root) {
    var found = [];
    root.querySelectorAll("*").forEach(function (el) {
      if (typeof el.crowdProblem === "function") {
        var problem = el.crowdProblem();
        if (problem) found.push([el, problem]);
      } else if (el.required && !el.disabled && (el.localName === "input" || el.localName === "select" ||
                 el.localName === "textarea") && !el.checkValidity()) {
        found.push([el, el.validationMessage || "This field is required."]);
      }
    });
    return found;
  }

  class CrowdForm extends HTMLElement {
    connectedCallback() {
      if (this._ready) return;
      this._ready = true;
      this.addEventListener("click", (event) => {
        var button = event.target.closest ? event.target.closest("button, input") : null;
        // Native submit buttons inside the crowd-form submit it, as they would a <form>.
        if (button && this.contains(button) && (button.type === "submit" || button.type === "image")) {
          event.preventDefault();
          this.submit();
        } else if (button && this.contains(button) && button.type === "reset") {
          // A crowd-form is no <form>: its native reset buttons would do nothing on their own.
          event.preventDefault();
          this.reset();
        }
      });
      this.addEventListener("keydown", (event) => {
        var t = event.composedPath()[0];  // the input itself, also inside a crowd-input
        if (event.key === "Enter" && !event.defaultPrevented && t.localName === "input" && SKIPPED_TYPES.indexOf(t.type) === -1 &&
            t.type !== "checkbox" && t.type !== "radio") {
          event.preventDefault();
          this.submit();
        }
      });
      // Children may still be parsing: add the button once the document is read.
      if (document.readyState === "loading") {
        document.addEventListener("DOMContentLoaded", () => this._ensureSubmitButton());
      } else {
        this._ensureSubmitButton();
      }
    }

    _ensureSubmitButton() {
      var has = this.querySelector(SUBMITS);
      if (!has) {
        var button = document.createElement("crowd-button");
        button.setAttribute("form-action", "submit");
        button.setAttribute("variant", "primary");
        button.textContent = "Submit";
        this.appendChild(button);
      }
      if (crowd.inPreview()) {
        // Only the submit buttons: the page's other buttons (examples, zoom...) keep working.
        this.querySelectorAll(SUBMITS)
          .forEach(function (b) {
            b.setAttribute("disabled", "");
            b.title = "Accept this HIT before submitting your answers.";
          });
      }
    }

    /** The answer object, as it would be posted now. */
    get value() {
      return this._answers();
    }

    /** Where a page adds fields: AWS's example appends its extra questions to crowd-form's ``.form``. */
    get form() {
      return this;
    }

    _answers() {
      var answers = {};
      (this._hosts || []).forEach(function (host) {
        var name = host.getAttribute("name");
        var value = name ? host.crowdAnswer() : undefined;
        if (value !== undefined) put(answers, name, value);
        // Questions the page put inside the element itself (shown in its default slot).
        var within = crowd.collect(host);
        Object.keys(within).forEach(function (key) { put(answers, key, within[key]); });
      });
      var inside = crowd.collect(this);
      Object.keys(inside).forEach(function (name) { put(answers, name, inside[name]); });
      return answers;
    }

    /** Every field back to what the page preset, as <form>.reset() does: a cancelable "reset" event first. */
    reset() {
      if (!this.dispatchEvent(new Event("reset", { bubbles: true, cancelable: true }))) return false;
      var fields = [];
      (this._hosts || []).forEach(function (host) { fields.push(host); fields.push.apply(fields, host.querySelectorAll("*")); });
      fields.push.apply(fields, this.querySelectorAll("*"));
      fields.forEach(function (el) {
        if (typeof el.crowdReset === "function") el.crowdReset();
        else if (el.localName === "input" && (el.type === "checkbox" || el.type === "radio")) el.checked = el.defaultChecked;
        else if (el.localName === "input" || el.localName === "textarea") el.value = el.defaultValue;
        else if (el.localName === "select") {
          Array.prototype.forEach.call(el.options, function (o) { o.selected = o.defaultSelected; });
          // A single select with no option marked selected shows its first one, as after a page load.
          if (!el.multiple && el.selectedIndex === -1 && el.options.length) el.selectedIndex = 0;
        }
      });
      this._showProblems([]);  // the problems were about answers that are gone
      return true;
    }

    submit() {
      if (crowd.inPreview() || this._sent) return false;
      var found = [];
      (this._hosts || []).forEach(function (host) {
        var own = typeof host.crowdProblem === "function" ? host.crowdProblem() : null;
        if (own) found.push([host, own]);
        found = found.concat(problems(host));  // required fields the page put inside the element
      });
      found = found.concat(problems(this));
      this._showProblems(found);
      if (found.length) return false;
      var event = new Event("submit", { bubbles: true, cancelable: true });
      if (!this.dispatchEvent(event)) return false;
      this._post();
      return true;
    }

    _showProblems(found) {
      var box = this.querySelector(":scope > .crowd-form-problems");
      if (!found.length) {
        if (box) box.remove();
        return;
      }
      if (!box) {
        box = document.createElement("div");
        box.className = "crowd-form-problems";
        box.setAttribute("role", "alert");
        box.style.cssText = "color:#b00020;border:1px solid #b00020;padding:.5em;margin:.5em 0";
        this.insertBefore(box, this.firstChild);
      }
      box.textContent = found.length === 1 ? found[0][1] : "Please fix " + found.length + " problems: " +
        found.map(function (p) { return p[1]; }).join(" ");
      if (found[0][0].focus) found[0][0].focus();
    }

    _post() {
      this._sent = true;
      var answers = this._answers();
      var fields;
      if ((this.getAttribute("answer-format") || "").toLowerCase() === "flatten-objects") {
        fields = crowd.flatten(answers, "", []);
      } else {
        fields = [["taskAnswers", JSON.stringify([answers])]];
      }
      fields.push(["assignmentId", crowd.param("assignmentId")]);
      if (params.has("hitforgeToken")) {
        fields.push(["hitforgeToken", crowd.param("hitforgeToken")]);
      }
      // A separate form outside the page's markup, so the requester's own forms do not nest it.
      var form = document.createElement("form");
      form.method = "post";
      form.acceptCharset = "UTF-8";
      form.action = crowd.submitTarget();
      form.style.display = "none";
      fields.forEach(function (pair) {
        var input = document.createElement("input");
        input.type = "hidden";
        input.name = pair[0];
        input.value = pair[1];
        form.appendChild(input);
      });
      document.body.appendChild(form);
      HTMLFormElement.prototype.submit.call(form);
    }
  }

  if (!customElements.get("crowd-form")) customElements.define("crowd-form", CrowdForm);
})();
